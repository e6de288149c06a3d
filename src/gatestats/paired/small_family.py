r"""``compare_many`` (and so ``rank``) with one trial per case in Python numbers, while numpy is not loaded.

Issue 28, item 2: ``gatestats rank`` (and ``compare`` of several pairs) on systems that ran each case once
needs no array. Each pair is :mod:`gatestats.paired.small`'s comparison (the same doubles as numpy's path,
proved there), the values read once for the whole family; the correction is Holm's or Bonferroni's on those
p-values in Python numbers (:func:`adjusted_pvalues`: the same doubles as
:func:`~gatestats.paired.multiplicity.adjust_pvalues`), and the rest is numpy's path's own code
(:func:`~gatestats.paired.multiplicity.finished_family`, the decisions and the simultaneous intervals, which
the table intervals compute from the 2x2 table alone).

It applies where :func:`~gatestats.paired.small.small_comparison` does (``k = 1``, no margin, a conditional
test, a table interval, not ``shared_versions_only``, no ``case_version`` and no ``case_group``, one valid
trial for every case of the family's systems), with the ``holm`` or ``bonferroni`` correction, every system
asked for with records, at least one shared case and at most
:data:`~gatestats.paired.binomial.EXACT_MAX_TRIALS` discordant ones in every pair, and at most
:data:`SMALL_FAMILY_VALUES` pairs x cases. Anything else returns ``None`` and
:func:`~gatestats.paired.multiplicity.compare_many` takes numpy's path, unchanged (its errors too).
tests/paired/test_small_family.py checks both paths field by field, bit for bit.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final

from gatestats.paired.multiplicity import (
    MultipleComparison,
    _pairs,
    _resolution_level,
    finished_family,
    raw_pvalues,
)
from gatestats.paired.result import Comparison, ComparisonOptions
from gatestats.paired.small import _offered, one_trial_values, pair_comparison
from gatestats.vocabulary import SIMULTANEOUS_METHODS, ComparisonFamily, Correction, FrameLike, Metric

__all__ = ["SMALL_CORRECTIONS", "SMALL_FAMILY_VALUES", "adjusted_pvalues", "small_family"]

#: The corrections the path offers: the family-wise ones ``rank`` offers and simultaneous intervals follow.
SMALL_CORRECTIONS: Final = SIMULTANEOUS_METHODS
#: The most pairs x cases the path takes: above it numpy's arrays cost less than its import.
SMALL_FAMILY_VALUES: Final = 50_000


def adjusted_pvalues(pvalues: Sequence[float], correction: Correction) -> list[float]:
    r"""Holm's or Bonferroni's adjusted p-values in Python numbers: :func:`~gatestats.paired.adjust_pvalues`'s doubles.

    numpy's path sorts the p-values stably, multiplies each by the integer :math:`m - j` (Holm) or :math:`m`
    (Bonferroni), takes the running maximum (Holm) and caps at 1. Here the same: a stable sort, the same
    products (an integer times a double, rounded once), the same maxima and minima (exact).

    Parameters
    ----------
    pvalues
        The raw p-values, each in [0, 1].
    correction
        ``holm`` or ``bonferroni``.

    Returns
    -------
    list of float
        The adjusted p-values, in the order given.

    Raises
    ------
    ValueError
        Another correction.

    Examples
    --------
    >>> adjusted_pvalues([0.01, 0.04, 0.03], "holm")
    [0.03, 0.06, 0.06]
    >>> adjusted_pvalues([0.01, 0.04, 0.5], "bonferroni")
    [0.03, 0.12, 1.0]
    """
    if correction not in SMALL_CORRECTIONS:
        msg = f"correction must be one of {list(SMALL_CORRECTIONS)} (got {correction!r})"
        raise ValueError(msg)
    m = len(pvalues)
    out = [0.0] * m
    running = -math.inf
    for step, i in enumerate(sorted(range(m), key=pvalues.__getitem__)):
        if correction == "bonferroni":
            out[i] = min(1.0, m * pvalues[i])
            continue
        running = max(running, (m - step) * pvalues[i])
        out[i] = min(1.0, running)
    return out


def small_family(
    records: FrameLike,
    wanted: list[str] | None,
    baseline: str | None,
    options: ComparisonOptions,
    kind: tuple[ComparisonFamily, Correction],
    *,
    metric: Metric,
    k: int,
    system_column: str,
    shared_versions_only: bool,
) -> MultipleComparison | None:
    """:func:`~gatestats.paired.compare_many`'s family, before its simultaneous intervals, in Python numbers.

    Parameters
    ----------
    records
        Run records (``DataFrame`` or ``LazyFrame``).
    wanted
        The systems asked for, the baseline among them (``None``: every system of the records).
    baseline
        The baseline of a ``vs_baseline`` family (else ``None``).
    options
        The validated options of every comparison.
    kind
        ``(family, correction)``, checked.
    metric, k, system_column, shared_versions_only
        As :func:`~gatestats.paired.compare_many`.

    Returns
    -------
    MultipleComparison or None
        The family numpy's path gives, the same values; ``None`` outside the path (module docstring), where
        numpy's path applies.

    Raises
    ------
    TypeError, ValueError, UnknownSystemError
        As :func:`~gatestats.paired.pairing.build_case_table` (the same checks, shared), and ``ValueError`` for
        ``test='midp'`` with a one-sided alternative (as numpy's path).

    Examples
    --------
    >>> import polars as pl
    >>> records = pl.DataFrame({"system": ["a", "a", "b", "b", "c", "c"], "case_id": ["x", "y"] * 3,
    ...     "case_version": None, "case_group": None, "trial": 0, "attempt": 0,
    ...     "outcome": ["passed", "failed", "failed", "passed", "passed", "passed"]})
    >>> family = small_family(records, None, None, ComparisonOptions(), ("all_pairs", "holm"),
    ...     metric="pass_hat_k", k=1, system_column="system", shared_versions_only=False)
    >>> [(x.baseline, x.candidate, x.b, x.c, x.pvalue_adjusted) for x in family.comparisons]
    [('a', 'b', 1, 1, 1.0), ('a', 'c', 0, 1, 1.0), ('b', 'c', 0, 1, 1.0)]
    """
    family, correction = kind
    if correction not in SMALL_CORRECTIONS or not _offered(options, k=k, shared_versions_only=shared_versions_only):
        return None
    values = one_trial_values(records, wanted, metric=metric, k=k, system_column=system_column)
    if values is None:
        return None
    names = tuple(wanted) if wanted is not None else tuple(sorted(values))
    if len(names) < 2 or any(x not in values for x in names) or (baseline is not None and baseline not in values):
        return None  # numpy's path names what is missing
    pairs = _pairs(names, family, baseline)
    cases = sorted(set().union(*(values[x].keys() for x in names)))
    if len(pairs) * len(cases) > SMALL_FAMILY_VALUES:
        return None
    level = _resolution_level(options, correction, len(pairs))
    items: list[Comparison] = []
    for b, c in pairs:
        item = pair_comparison(
            (values[b], values[c]), (b, c), options, estimate=(metric, k), resolution_alpha=level, cases=cases
        )
        if item is None:
            return None
        items.append(item)
    adjusted = adjusted_pvalues(raw_pvalues(items), correction)
    return finished_family(items, adjusted, names, options, kind, baseline)
