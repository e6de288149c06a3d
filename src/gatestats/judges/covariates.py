r"""Judge bias by covariate: does the judge's disagreement with people depend on a record field?

For each labelled item with a parseable verdict, the judge *disagrees* with people when its verdict
is not the label (a tie verdict disagrees). For each covariate — response length, the position
of the better output, the candidate's model family (self-preference), any record field — the
items are put in bins: **quantile bins** for a numeric covariate (``bins`` groups of about equal
size; tied values stay in one bin, so there may be fewer), **levels** for a categorical one (and
for a numeric one with at most ``bins`` distinct values). Each bin's disagreement rate has its own
interval (Wilson, or Clopper-Pearson). Items with a missing covariate value are counted and left
out of that covariate.

The test of dependence is the test of independence of the 2 × k table (disagree / agree × bin):

- k = 2: **Fisher's exact test** (two-sided; Fisher 1935, R ``fisher.test``);
- k > 2 and every expected count ≥ 5 (Cochran 1954): **Pearson's chi-square** test, k - 1 degrees
  of freedom (R ``chisq.test(correct = FALSE)``);
- k > 2 with a small expected count: a **Monte Carlo permutation test** of the chi-square statistic
  (the disagreements permuted over the items, margins fixed — the disagreements per bin are then
  multivariate hypergeometric and are drawn as such; p = (1 + #{X²* ≥ X²}) / (B + 1), valid at any
  B; Hope 1968), seeded and recorded.

A table without a disagreement, or without an agreement, has nothing to explain: the covariate is
``insufficient_evidence`` (no p-value), as is one with fewer than two non-empty bins. The p-values
of the covariates tested are adjusted with **Holm**'s step-down method (Holm 1979), which controls
the family-wise error rate across covariates; a covariate is flagged when its adjusted p ≤ α.

References
----------
Cochran, W. G. (1954). Some methods for strengthening the common χ² tests. Biometrics 10(4), 417-451.
Fisher, R. A. (1935). The logic of inductive inference. JRSS 98(1), 39-82.
Holm, S. (1979). A simple sequentially rejective multiple test procedure. Scand. J. Statist. 6(2), 65-70.
Hope, A. C. A. (1968). A simplified Monte Carlo significance test procedure. JRSS B 30(3), 582-598.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject
from gatestats.judges._stats import Proportion, _json_fields, fisher_exact_2x2, proportion
from gatestats.judges._types import ProportionMethod
from gatestats.judges.inputs import COVARIATE_PREFIX, JudgmentSet
from gatestats.paired.multiplicity import adjust_pvalues
from gatestats.vocabulary import FrameLike, Status, check_alpha, check_confidence_level

stats = lazy_module("scipy.stats")

__all__ = ["CovariateBias", "CovariateBin", "CovariateTest", "judge_bias_by_covariate"]

_MIN_EXPECTED = 5.0


@dataclass(frozen=True, slots=True, kw_only=True)
class CovariateBin:
    """One bin of a covariate: its label, items, disagreements and the disagreement rate."""

    label: str
    n: int
    n_disagree: int
    disagreement_rate: Proportion

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        return _json_fields(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class CovariateTest:
    """The disagreement of one covariate's bins and the test of dependence.

    ``test`` is ``fisher-exact`` (``statistic``: the sample odds ratio, ``None`` when infinite),
    ``chi-square`` or ``permutation-chi-square`` (``statistic``: Pearson's X²; ``None`` when
    ``status`` is ``insufficient_evidence``, with the ``reason``); ``adjusted_pvalue`` is Holm's
    across the covariates tested; ``flagged`` says the adjusted p-value is at most α.
    """

    covariate: str
    kind: str
    n_items: int
    n_missing: int
    bins: tuple[CovariateBin, ...]
    test: str | None
    statistic: float | None
    pvalue: float | None
    adjusted_pvalue: float | None
    flagged: bool | None
    status: Status
    reason: str | None

    def to_dict(self) -> JSONObject:
        """JSON-ready dict, the bins as a list."""
        out = _json_fields(self, exclude=("bins",))
        out["bins"] = [b.to_dict() for b in self.bins]
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class CovariateBias:
    """Judge bias by covariate: one :class:`CovariateTest` per covariate, Holm across them."""

    n_items: int
    n_unparseable: int
    alpha: float
    correction: str
    seed: int
    n_permutations: int
    covariates: tuple[CovariateTest, ...]

    @property
    def any_flagged(self) -> bool:
        """Whether some covariate's Holm-adjusted p-value is at most α."""
        return any(c.flagged for c in self.covariates)

    def to_dict(self) -> JSONObject:
        """JSON-ready dict, the covariates as a list."""
        out = _json_fields(self, exclude=("covariates",))
        out["covariates"] = [c.to_dict() for c in self.covariates]
        return out


def judge_bias_by_covariate(
    judgments: FrameLike | JudgmentSet,
    covariates: Sequence[str],
    *,
    bins: int = 4,
    alpha: float = 0.05,
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
    seed: int = 20240607,
    n_permutations: int = 1999,
) -> CovariateBias:
    """Disagreement with people by covariate bin, one test of dependence per covariate, Holm across them.

    Parameters
    ----------
    judgments
        A :class:`~gatestats.judges.JudgmentSet` read with ``covariates=`` (its covariate columns
        are named ``covariate:<field>``), or a frame with ``label``, ``verdict`` (null =
        unparseable) and the covariate columns named as given.
    covariates
        The covariate names (distinct, at least one).
    bins
        Quantile bins of a numeric covariate (≥ 2).
    alpha
        Family-wise level of the Holm-adjusted tests.
    method, confidence_level
        Interval of each bin's disagreement rate.
    seed, n_permutations
        The Monte Carlo permutation test's generator seed and resamples (recorded).

    Returns
    -------
    CovariateBias
        The covariates in the order given.

    Raises
    ------
    ValueError
        No covariate, a repeated or missing one, fewer than 2 bins, a bad level or count.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"label": ["A"] * 8, "verdict": ["A"] * 4 + ["B"] * 4,
    ...                       "length": [1, 2, 3, 4, 5, 6, 7, 8]})
    >>> r = judge_bias_by_covariate(frame, ["length"], bins=2)
    >>> c = r.covariates[0]
    >>> [b.n_disagree for b in c.bins], c.test, round(c.pvalue, 4)
    ([0, 4], 'fisher-exact', 0.0286)
    """
    _check(covariates, bins, alpha, confidence_level, n_permutations)
    frame, columns = _frame(judgments, covariates)
    parsed = frame.filter(pl.col("verdict").is_not_null())
    disagree = (parsed["verdict"] != parsed["label"]).to_numpy().astype(np.int64)
    rate = _RateOptions(method=method, confidence_level=confidence_level)
    tests = [
        _covariate(name, parsed[column], disagree, bins=bins, rate=rate, seed=seed + i, n_permutations=n_permutations)
        for i, (name, column) in enumerate(zip(covariates, columns, strict=True))
    ]
    return CovariateBias(
        n_items=frame.height,
        n_unparseable=frame.height - parsed.height,
        alpha=alpha,
        correction="holm",
        seed=seed,
        n_permutations=n_permutations,
        covariates=_holm(tests, alpha),
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class _RateOptions:
    method: ProportionMethod
    confidence_level: float


def _check(covariates: Sequence[str], bins: int, alpha: float, confidence_level: float, n_permutations: int) -> None:
    """Raise ``ValueError`` on unusable arguments."""
    check_alpha(alpha)
    check_confidence_level(confidence_level)
    if not covariates or len(set(covariates)) != len(covariates):
        msg = f"covariates: give at least one, each once (got {list(covariates)!r})"
        raise ValueError(msg)
    if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
        msg = f"bins must be an integer >= 2 (got {bins!r})"
        raise ValueError(msg)
    if isinstance(n_permutations, bool) or not isinstance(n_permutations, int) or n_permutations < 99:
        msg = f"n_permutations must be an integer >= 99 (got {n_permutations!r})"
        raise ValueError(msg)


def _frame(judgments: FrameLike | JudgmentSet, covariates: Sequence[str]) -> tuple[pl.DataFrame, list[str]]:
    """The frame (label, verdict, covariates) collected, and each covariate's column name in it."""
    if isinstance(judgments, JudgmentSet):
        frame: FrameLike = judgments.frame
        columns = [COVARIATE_PREFIX + c for c in covariates]
    else:
        frame, columns = judgments, list(covariates)
    if not isinstance(frame, pl.DataFrame | pl.LazyFrame):
        msg = f"judgments must be a polars DataFrame, LazyFrame or a JudgmentSet (got {type(frame).__name__})"
        raise TypeError(msg)
    schema = frame.lazy().collect_schema()
    missing = [c for c in ("label", "verdict", *columns) if c not in schema]
    if missing:
        msg = f"judgments: missing column(s) {missing} (got columns {list(schema)})"
        raise ValueError(msg)
    return frame.lazy().select("label", "verdict", *columns).collect(), columns


def _binned(values: pl.Series, bins: int) -> tuple[npt.NDArray[np.int64], list[str], str]:
    """Each item's bin (-1 when the value is missing), the bin labels, and ``numeric`` or ``categorical``.

    A covariate is numeric when every present value's text, stripped, parses as a finite float. Counted without
    a polars query per Series operation (≈ 10 a covariate before; issue 28, item 3, session 45): the present
    and parsed values by their null counts, finiteness on the numbers as numpy reads them (a null is NaN there,
    so all parsed numbers are finite exactly when the finite count is the parsed count), and then the present
    values are the non-NaN numbers.
    """
    text = values.cast(pl.String)
    # a number's text has no blanks to strip (polars writes digits, sign, point, exponent): no query for it
    number = (text if values.dtype.is_numeric() else text.str.strip_chars()).cast(pl.Float64, strict=False)
    n_present, n_number = len(text) - text.null_count(), len(number) - number.null_count()
    x = number.to_numpy()
    numeric = n_present > 0 and n_number == n_present and int(np.isfinite(x).sum()) == n_number
    if numeric and number.n_unique() - (n_number < len(number)) > bins:
        return _quantile_bins(x, ~np.isnan(x), bins)
    keys = number if numeric else text
    items = keys.to_list()
    # text: equal strings are equal in Python and in polars, so the set has polars' distinct values (no query)
    levels = sorted(keys.drop_nulls().unique().to_list() if numeric else {v for v in items if v is not None})
    index = {level: i for i, level in enumerate(levels)}
    codes = np.array([-1 if v is None else index[v] for v in items], dtype=np.int64)
    return codes, [_g(v) if numeric else str(v) for v in levels], "numeric" if numeric else "categorical"


def _quantile_bins(
    x: npt.NDArray[np.float64], present: npt.NDArray[np.bool_], bins: int
) -> tuple[npt.NDArray[np.int64], list[str], str]:
    """A numeric covariate's bins: at most ``bins`` intervals between the present values' quantiles."""
    edges = np.unique(np.quantile(x[present], np.linspace(0, 1, bins + 1)))
    codes = np.where(present, np.searchsorted(edges[1:-1], np.nan_to_num(x), side="right"), -1)
    labels = [
        f"[{_g(edges[i])}, {_g(edges[i + 1])}{']' if i == len(edges) - 2 else ')'}" for i in range(len(edges) - 1)
    ]
    return codes.astype(np.int64), labels, "numeric"


def _g(value: float) -> str:
    return f"{value:g}"


def _covariate(
    name: str,
    values: pl.Series,
    disagree: npt.NDArray[np.int64],
    *,
    bins: int,
    rate: _RateOptions,
    seed: int,
    n_permutations: int,
) -> CovariateTest:
    """One covariate's bins and its (unadjusted) test of dependence."""
    codes, labels, kind = _binned(values, bins)
    kept = codes >= 0
    n_bin = np.bincount(codes[kept], minlength=len(labels))
    d_bin = np.bincount(codes[kept], weights=disagree[kept], minlength=len(labels)).astype(np.int64)
    rows = tuple(
        CovariateBin(
            label=label,
            n=int(n),
            n_disagree=int(d),
            disagreement_rate=proportion(
                int(d),
                int(n),
                method=rate.method,
                confidence_level=rate.confidence_level,
                undefined_reason=f"no item in bin {label!r}",
            ),
        )
        for label, n, d in zip(labels, n_bin, d_bin, strict=True)
    )
    reason = _untestable(n_bin, d_bin)
    test, statistic, pvalue = (None, None, None) if reason else _test(codes[kept], disagree[kept], seed, n_permutations)
    return CovariateTest(
        covariate=name,
        kind=kind,
        n_items=int(kept.sum()),
        n_missing=int((~kept).sum()),
        bins=rows,
        test=test,
        statistic=statistic,
        pvalue=pvalue,
        adjusted_pvalue=None,
        flagged=None,
        status="insufficient_evidence" if reason else "ok",
        reason=reason,
    )


def _untestable(n_bin: npt.NDArray[np.int64], d_bin: npt.NDArray[np.int64]) -> str | None:
    """Why the covariate cannot be tested, or ``None``."""
    if int((n_bin > 0).sum()) < 2:
        return "fewer than two non-empty bins: nothing to compare"
    n, d = int(n_bin.sum()), int(d_bin.sum())
    if d == 0:
        return f"the judge agrees with people on all {n} items: no disagreement to explain"
    if d == n:
        return f"the judge disagrees with people on all {n} items: no agreement to compare"
    return None


def _test(
    codes: npt.NDArray[np.int64], disagree: npt.NDArray[np.int64], seed: int, n_permutations: int
) -> tuple[str, float | None, float]:
    """The test of independence of disagreement and bin: its name, statistic and two-sided p-value.

    The statistic is the sample odds ratio for Fisher's test (``None`` when a cell is 0: infinite or
    undefined), Pearson's X² otherwise.
    """
    used = np.unique(codes)
    codes = np.searchsorted(used, codes)
    n_bin = np.bincount(codes)
    d_bin = np.bincount(codes, weights=disagree).astype(np.int64)
    if len(used) == 2:
        (d0, d1), (n0, n1) = d_bin.tolist(), n_bin.tolist()
        odds, p = fisher_exact_2x2(d0, n0 - d0, d1, n1 - d1)
        return "fisher-exact", float(odds) if math.isfinite(odds) else None, float(min(1.0, p))
    observed = _chi_square(d_bin[None, :].astype(np.float64), n_bin, int(disagree.sum()))[0]
    p_all = d_bin.sum() / n_bin.sum()
    expected = np.concatenate([n_bin * p_all, n_bin * (1 - p_all)])
    if expected.min() >= _MIN_EXPECTED:
        return "chi-square", float(observed), float(stats.chi2.sf(observed, len(used) - 1))
    # Permuting the disagreements over the items with the margins fixed puts a multivariate
    # hypergeometric count of them in each bin: drawn directly (memory k per resample, not n).
    rng = np.random.default_rng(seed)
    counts = rng.multivariate_hypergeometric(n_bin, int(disagree.sum()), size=n_permutations)
    resampled = _chi_square(counts.astype(np.float64), n_bin, int(disagree.sum()))
    exceed = int((resampled >= observed - 1e-9 * max(1.0, observed)).sum())
    return "permutation-chi-square", float(observed), (1 + exceed) / (n_permutations + 1)


def _chi_square(d: npt.NDArray[np.float64], n_bin: npt.NDArray[np.int64], total: int) -> npt.NDArray[np.float64]:
    """Pearson's X² of 2 x k tables with the bin sizes ``n_bin`` and ``total`` disagreements (rows of ``d``)."""
    p = total / n_bin.sum()
    expected = n_bin * p
    return np.asarray(((d - expected) ** 2 / (expected * (1 - p))).sum(axis=1), dtype=np.float64)


def _holm(tests: list[CovariateTest], alpha: float) -> tuple[CovariateTest, ...]:
    """The tests with Holm-adjusted p-values over those with a p-value, flagged at ``alpha``."""
    pvalues = {i: t.pvalue for i, t in enumerate(tests) if t.pvalue is not None}
    tested = list(pvalues)
    if not tested:
        return tuple(tests)
    adjusted = adjust_pvalues(list(pvalues.values()), method="holm")
    out = list(tests)
    for i, q in zip(tested, adjusted, strict=True):
        t = tests[i]
        out[i] = CovariateTest(
            **{f: getattr(t, f) for f in t.__dataclass_fields__ if f not in ("adjusted_pvalue", "flagged")},
            adjusted_pvalue=float(q),
            flagged=bool(q <= alpha) and not math.isnan(q),
        )
    return tuple(out)
