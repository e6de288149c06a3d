r"""``compare`` with one trial per case in Python numbers, while numpy is not loaded (issue 28, item 2).

``gatestats compare`` on one pair of systems, each case run once, needs no array: the 2x2 table
:math:`a, b, c, d` decides everything (the exact and mid-p McNemar tests are exact rationals rounded
once, :mod:`~gatestats.paired.binomial`; Tango's, the SCAS and Newcombe's intervals and the conditional
odds ratio are computed in Python from the table). Only the pairing and the means went through numpy.
:func:`small_comparison` does those in Python and returns the same :class:`Comparison`, so the command
starts without numpy's import (≈ 0.05-0.1 CPU-s, 1 BLAS thread).

The values are the same doubles as numpy's path:

* each case's value is :math:`c/n` with :math:`n = 1`, so 0.0 or 1.0, as
  :func:`~gatestats.estimators.case_values` gives at :math:`k = 1`;
* the per-case differences are -1.0, 0.0 or 1.0, and every sum of them (numpy's pairwise sum, or
  Python's in turn) is an exact integer, so each mean is that integer divided by :math:`n`, rounded once;
* the cases are in the order of numpy's path: sorted by ``case_id`` (polars sorts strings by their
  UTF-8 bytes, Python by code points: the same order); with no ``case_version`` a case's label is its id;
* the p-values are the same rational values rounded once, clipped to [0, 1] as numpy's path clips.

It applies only where that holds: ``k = 1``, no margin, a conditional test (``auto``, ``midp``,
``exact``), an interval from the 2x2 table (``auto``, ``tango``, ``scas``, ``newcombe``), not
``shared_versions_only``, two different systems both with records, every record of the two without
``case_version`` and ``case_group``, one valid trial for each of their cases, at least one shared case
and at most :data:`~gatestats.paired.binomial.EXACT_MAX_TRIALS` discordant ones. Anything else returns
``None`` and :func:`~gatestats.paired.compare.compare` takes numpy's path, unchanged (its errors too).
tests/paired/test_small_compare.py checks both paths field by field, bit for bit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from gatestats.paired.binomial import EXACT_MAX_TRIALS
from gatestats.paired.compare import (
    _TIE,
    _fields,
    _finished,
    _Measured,
    _pvalue_fields,
    _resolve_test,
)
from gatestats.paired.mcnemar import exact_pvalues
from gatestats.paired.odds_ratio import conditional_odds_ratio
from gatestats.paired.pairing import checked_per_case
from gatestats.paired.result import Comparison, ComparisonOptions, _table_interval
from gatestats.paired.trials import _TIE as _SIGN_TIE
from gatestats.vocabulary import FrameLike, Metric

__all__ = ["SMALL_INTERVALS", "SMALL_TESTS", "one_trial_values", "pair_comparison", "small_comparison"]

#: The tests the path offers: the conditional ones (a permutation test needs numpy's generator).
SMALL_TESTS: Final = ("auto", "midp", "exact")
#: The intervals the path offers: those computed from the 2x2 table.
SMALL_INTERVALS: Final = ("auto", "tango", "scas", "newcombe")


def _offered(options: ComparisonOptions, *, k: int, shared_versions_only: bool) -> bool:
    """Whether the options are within the path (the records are looked at after)."""
    return (
        type(k) is int
        and k == 1
        and not shared_versions_only
        and options.margin is None
        and options.test in SMALL_TESTS
        and options.interval in SMALL_INTERVALS
    )


def one_trial_values(
    records: FrameLike, systems: Sequence[str] | None, *, metric: Metric, k: int, system_column: str
) -> dict[str, dict[str, float]] | None:
    """Each system's value per case id (0.0 or 1.0), or ``None`` when a record or a case is outside the path.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``).
    systems
        The systems to read (``None``: every system of the records).
    metric, k, system_column
        As :func:`~gatestats.paired.pairing.build_case_table` (checked by the same function).

    Returns
    -------
    dict or None
        System -> case id -> its value, for each system with records (a system without any is absent);
        ``None`` when a case has a version, a group or other than one valid trial.

    Raises
    ------
    TypeError, ValueError, UnknownSystemError
        As :func:`~gatestats.paired.pairing.checked_per_case`.
    """
    import polars as pl  # noqa: PLC0415 - loaded by every reading command already

    chosen = None if systems is None else list(systems)
    per_case = checked_per_case(records, metric=metric, k=k, systems=chosen, system_column=system_column)
    simple = per_case.select(
        pl.col("case_id").is_not_null().all()
        & pl.col("case_version").is_null().all()
        & pl.col("case_group").is_null().all()
        & (pl.col("n") == 1).all()
    ).item()
    if not simple:
        return None
    values: dict[str, dict[str, float]] = {}
    for system, case_id, c in per_case.select("system", "case_id", "c").iter_rows():
        values.setdefault(system, {})[case_id] = c / 1  # c / n at n = 1: case_values' pass rate
    return values


def _pvalues(ub: int, uc: int, options: ComparisonOptions) -> tuple[float, float]:
    """The exact and mid-p p-values (mcnemar_pvalues' exact rationals), clipped to [0, 1] as it clips them."""
    exact, midp = exact_pvalues(ub, uc, options.alternative)
    return min(max(exact, 0.0), 1.0), min(max(midp, 0.0), 1.0)


def small_comparison(
    records: FrameLike,
    systems: tuple[str, str],
    options: ComparisonOptions,
    *,
    metric: Metric,
    k: int,
    shared_versions_only: bool,
    system_column: str,
) -> Comparison | None:
    """:func:`~gatestats.paired.compare.compare` of one pair with one trial per case, in Python numbers.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``).
    systems
        ``(baseline, candidate)``.
    options
        The validated options of the comparison.
    metric, k, shared_versions_only, system_column
        As :func:`~gatestats.paired.compare.compare`.

    Returns
    -------
    Comparison or None
        The comparison numpy's path gives, the same values; ``None`` outside the path (the module
        docstring lists when), where numpy's path applies.

    Raises
    ------
    TypeError, ValueError, UnknownSystemError
        As :func:`~gatestats.paired.pairing.build_case_table` (the same checks, shared), and
        ``ValueError`` for ``test='midp'`` with a one-sided alternative (as numpy's path).

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"system": ["a", "a", "b", "b"], "case_id": ["x", "y", "x", "y"],
    ...     "case_version": None, "case_group": None, "trial": 0, "attempt": 0,
    ...     "outcome": ["passed", "failed", "failed", "passed"]})
    >>> r = small_comparison(records, ("a", "b"), ComparisonOptions(), metric="pass_hat_k", k=1,
    ...     shared_versions_only=False, system_column="system")
    >>> r.b, r.c, r.diff, r.flips_pass_to_fail
    (1, 1, 0.0, ('x',))
    """
    if systems[0] == systems[1] or not _offered(options, k=k, shared_versions_only=shared_versions_only):
        return None
    values = one_trial_values(records, systems, metric=metric, k=k, system_column=system_column)
    if values is None or systems[0] not in values or systems[1] not in values:
        return None
    pair = (values[systems[0]], values[systems[1]])
    return pair_comparison(pair, systems, options, estimate=(metric, k), resolution_alpha=None)


def pair_comparison(
    values: tuple[dict[str, float], dict[str, float]],
    systems: tuple[str, str],
    options: ComparisonOptions,
    *,
    estimate: tuple[Metric, int],
    resolution_alpha: float | None,
    cases: Sequence[str] | None = None,
) -> Comparison | None:
    """:func:`~gatestats.paired.compare.compare_pair` of two systems' values per case, in Python numbers.

    Parameters
    ----------
    values
        The baseline's and the candidate's value per case id (:func:`one_trial_values`).
    systems
        ``(baseline, candidate)``.
    options
        The validated options of the comparison (within the path: :func:`small_comparison`'s module docstring).
    estimate
        ``(metric, k)``, as recorded in the comparison.
    resolution_alpha
        As :func:`~gatestats.paired.compare.compare_pair`.
    cases
        Every case id of either system, sorted, when the caller holds them (a family: sorted once); ``None``:
        sorted here.

    Returns
    -------
    Comparison or None
        The comparison numpy's path gives; ``None`` without a shared case or with more than
        :data:`~gatestats.paired.binomial.EXACT_MAX_TRIALS` discordant ones (numpy's path then answers or raises).

    Raises
    ------
    ValueError
        ``test='midp'`` with a one-sided alternative (as numpy's path).
    """
    on_b, on_c = values
    ordered = sorted(on_b.keys() | on_c.keys()) if cases is None else [x for x in cases if x in on_b or x in on_c]
    paired = [x for x in ordered if x in on_b and x in on_c]
    vb, vc = [on_b[x] for x in paired], [on_c[x] for x in paired]
    diffs = tuple(y - x for x, y in zip(vb, vc, strict=True))
    scale = _SIGN_TIE * max(1.0, max((abs(x) for x in diffs), default=0.0))
    ub, uc = sum(x < -scale for x in diffs), sum(x > scale for x in diffs)
    if not paired or ub + uc > EXACT_MAX_TRIALS:
        return None
    test = _resolve_test(options, one_trial=True, clustered=False)
    pvalues = _pvalue_fields(test, uc, _pvalues(ub, uc, options), (None, None), options)
    unpaired = (tuple(x for x in ordered if x not in on_c), tuple(x for x in ordered if x not in on_b), ())
    fields = _fields(options, systems, estimate, unpaired)
    measured = _measured(paired, (vb, vc), diffs, options)
    return _finished(fields, pvalues, measured, options, n_discordant=ub + uc, resolution_alpha=resolution_alpha)


def _measured(
    paired: list[str], values: tuple[list[float], list[float]], diffs: tuple[float, ...], options: ComparisonOptions
) -> _Measured:
    """What :func:`~gatestats.paired.compare.compare_pair` measures on the paired cases, from their values."""
    vb, vc = values
    worse, better = [x < -_TIE for x in diffs], [x > _TIE for x in diffs]
    n, b, c = len(paired), sum(worse), sum(better)
    a = sum(x == 1 and y == 1 for x, y in zip(vb, vc, strict=True))
    d = sum(x == 0 and y == 0 for x, y in zip(vb, vc, strict=True))
    return {
        "design": "one_trial",
        "n_pairs": n,
        "n_units": n,
        "clustered": False,
        "a": a,
        "b": b,
        "c": c,
        "d": d,
        "n_ties": n - b - c,
        "p_baseline": sum(vb) / n,  # exact sums of 0.0 and 1.0: the integer over n, rounded once (module docstring)
        "p_candidate": sum(vc) / n,
        "diff": sum(diffs) / n,
        "interval": _table_interval(a, b, c, d, options),
        "odds_ratio": conditional_odds_ratio(b, c, **options.level),
        "noninferiority": None,
        "flips_pass_to_fail": tuple(x for x, w in zip(paired, worse, strict=True) if w),
        "flips_fail_to_pass": tuple(x for x, w in zip(paired, better, strict=True) if w),
        "_diffs": diffs,
        "_groups": None,
    }
