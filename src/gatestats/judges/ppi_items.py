"""Prediction-powered pass rates and paired differences of judged items, beside the other estimates.

The item-level door to :mod:`gatestats.judges.ppi`: a frame of judged items (every item's
verdict) and a frame of human labels for some of them, joined by ``item``. The result puts five
estimates side by side, each with its interval and n: the human labels alone, the judge alone
(biased by its errors), Rogan-Gladen's correction (pass rates, random design only), classical PPI
and PPI++.

- An unparseable verdict (null) is read as *not passing*: PPI stays unbiased whatever the
  prediction is, and the count is reported (``n_unparseable``). The judge-only and Rogan-Gladen
  estimates leave unparseable verdicts out, as :mod:`gatestats.judges.correction` does.
- ``design="random"``: the labelled items are a simple random sample of the judged items; the
  others are PPI's unlabelled set. ``design="weighted"``: the judged frame has an ``inclusion``
  column, each item's known probability of being labelled (e.g. by stratum of the judge's verdict);
  the estimate is inverse-probability weighted over all judged items
  (:func:`~gatestats.judges.ppi.ppi_mean_weighted`). Rogan-Gladen needs the random design (error
  rates measured on a sample drawn by verdict are biased) and says so.
- The CLT intervals use sample variances with divisor n - 1 and Student's t quantile with n - 1
  degrees of freedom (``small_sample=True`` of :mod:`gatestats.judges.ppi`): at n = 30 they are 6%
  wider than ppi-python's, which under-covered in the LLMBar simulation (``docs/judges.md``).
- PPI++ needs at least :data:`~gatestats.judges.ppi.MIN_LABELS_TUNED` (100) labels, classical PPI
  ``min_labels`` (30): tuning lambda on the same few labels made the interval under-cover.
- Intervals are clipped to the parameter's range ([0, 1] for a pass rate, [-1, 1] for a
  difference), the estimate too; the ``note`` says when.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import partial
from typing import Final, Literal, TypeAlias, get_args

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats._typing import JSONObject
from gatestats.judges._stats import Proportion, proportion
from gatestats.judges.correction import JudgeUnusableError, corrected_pass_rate
from gatestats.judges.ppi import (
    MIN_LABELS,
    MIN_LABELS_TUNED,
    Floats,
    MeanEstimate,
    human_mean,
    insufficient_estimate,
    ppi_mean,
    ppi_mean_weighted,
)
from gatestats.vocabulary import FrameLike, check_choice, check_confidence_level

__all__ = [
    "LABEL_DESIGNS",
    "PPI_TARGETS",
    "LabelDesign",
    "PPIComparison",
    "PPITarget",
    "ppi_paired_difference",
    "ppi_pass_rate",
]

#: How the labelled subset was drawn: at random, or with known per-item inclusion probabilities.
LabelDesign: TypeAlias = Literal["random", "weighted"]
LABEL_DESIGNS: Final[tuple[LabelDesign, ...]] = get_args(LabelDesign)

#: What is estimated: one system's pass rate, or the paired difference of two systems (A - B).
PPITarget: TypeAlias = Literal["pass_rate", "paired_difference"]
PPI_TARGETS: Final[tuple[PPITarget, ...]] = get_args(PPITarget)

#: Columns of :meth:`PPIComparison.to_frame`.
COMPARISON_COLUMNS: Final[tuple[str, ...]] = (
    "method",
    "estimate",
    "ci_low",
    "ci_high",
    "n_labelled",
    "n_unlabelled",
    "lam",
    "status",
    "reason",
    "note",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class PPIComparison:
    """Human-only, judge-only, Rogan-Gladen, PPI and PPI++ estimates of one target, side by side.

    ``n_judged`` items have a verdict (``n_unparseable`` of them an unparseable one, read as not
    passing by PPI); ``n_labelled`` of them a human label.
    """

    target: PPITarget
    design: LabelDesign
    n_judged: int
    n_labelled: int
    n_unparseable: int
    human_only: MeanEstimate
    judge_only: MeanEstimate
    rogan_gladen: MeanEstimate
    ppi: MeanEstimate
    ppi_plus_plus: MeanEstimate
    confidence_level: float

    def estimates(self) -> tuple[MeanEstimate, ...]:
        """The five estimates in display order."""
        return (self.human_only, self.judge_only, self.rogan_gladen, self.ppi, self.ppi_plus_plus)

    def to_dict(self) -> JSONObject:
        """JSON-ready dict (each estimate under its method's key)."""
        head: JSONObject = {
            "target": self.target,
            "design": self.design,
            "n_judged": self.n_judged,
            "n_labelled": self.n_labelled,
            "n_unparseable": self.n_unparseable,
            "confidence_level": self.confidence_level,
        }
        return head | {"estimates": [e.to_dict() for e in self.estimates()]}

    def to_frame(self) -> pl.DataFrame:
        """One row per estimate; columns :data:`COMPARISON_COLUMNS`."""
        rows = [{c: getattr(e, c) for c in COMPARISON_COLUMNS} for e in self.estimates()]
        types: dict[str, type[pl.DataType]] = dict.fromkeys(("estimate", "ci_low", "ci_high", "lam"), pl.Float64)
        types |= {"n_labelled": pl.Int64, "n_unlabelled": pl.Int64}
        return pl.DataFrame(rows, schema={c: types.get(c, pl.String) for c in COMPARISON_COLUMNS})


@dataclass(frozen=True, slots=True, kw_only=True)
class _Items:
    """The joined inputs: verdicts of all judged items (null: unparseable), labelled positions, labels."""

    verdicts: tuple[Floats, ...]
    parseable: tuple[npt.NDArray[np.bool_], ...]
    labelled: npt.NDArray[np.intp]
    labels: tuple[Floats, ...]
    inclusion: Floats | None


def _frame(value: FrameLike, name: str) -> pl.DataFrame:
    frame = value.collect() if isinstance(value, pl.LazyFrame) else value
    if not isinstance(frame, pl.DataFrame):
        msg = f"{name}: expected a polars DataFrame or LazyFrame (got {type(value).__name__})"
        raise TypeError(msg)
    return frame


def _ids(frame: pl.DataFrame, name: str) -> list[str]:
    """The ``item`` column as strings: present, no null, no duplicate (the error names the item)."""
    if "item" not in frame.columns:
        msg = f"{name}: no 'item' column (columns: {frame.columns})"
        raise ValueError(msg)
    ids = frame["item"].cast(pl.String, strict=False).to_list()
    seen: set[str] = set()
    for row, item in enumerate(ids):
        if item is None:
            msg = f"{name}: row {row}: item is null"
            raise ValueError(msg)
        if item in seen:
            msg = f"{name}: row {row}: item {item!r} appears twice"
            raise ValueError(msg)
        seen.add(item)
    return ids


def _binary(frame: pl.DataFrame, column: str, name: str, ids: list[str], *, nullable: bool) -> list[float | None]:
    """A 0/1 column (booleans or the integers 0 and 1; null only when ``nullable``), item by item."""
    if column not in frame.columns:
        msg = f"{name}: no {column!r} column (columns: {frame.columns})"
        raise ValueError(msg)
    series = frame[column]
    if not (series.dtype == pl.Boolean or series.dtype.is_integer() or series.dtype == pl.Null):
        msg = f"{name}: column {column!r} must be boolean or 0/1 integers (got {series.dtype})"
        raise ValueError(msg)
    out: list[float | None] = []
    for item, value in zip(ids, series.to_list(), strict=True):
        if value is None and nullable:
            out.append(None)
        elif value is None or value not in (0, 1):  # True == 1, False == 0
            what = "null" if value is None else repr(value)
            allowed = "true/false or null" if nullable else "true/false"
            msg = f"{name}: item {item!r}: {column} is {what} (expected {allowed})"
            raise ValueError(msg)
        else:
            out.append(float(value))
    return out


def _inclusion(frame: pl.DataFrame, ids: list[str]) -> Floats:
    if "inclusion" not in frame.columns or not frame["inclusion"].dtype.is_numeric():
        msg = "judged: design 'weighted' needs a numeric 'inclusion' column (each item's probability of a label)"
        raise ValueError(msg)
    values = frame["inclusion"].cast(pl.Float64).to_list()
    for item, p in zip(ids, values, strict=True):
        if p is None or not 0.0 < p <= 1.0:
            msg = f"judged: item {item!r}: inclusion probability {p!r} is not in (0, 1]"
            raise ValueError(msg)
    return np.asarray(values, dtype=np.float64)


def _read(
    judged: FrameLike, labels: FrameLike, *, verdicts: tuple[str, ...], label_columns: tuple[str, ...], weighted: bool
) -> _Items:
    """Join the labels to the judged items by ``item`` (every labelled item must have been judged)."""
    jf, lf = _frame(judged, "judged"), _frame(labels, "labels")
    jids, lids = _ids(jf, "judged"), _ids(lf, "labels")
    position = {item: i for i, item in enumerate(jids)}
    missing = [item for item in lids if item not in position]
    if missing:
        msg = (
            f"labels: {len(missing)} labelled item(s) have no verdict in the judged set "
            f"(first: {missing[0]!r}); the labelled subset must be drawn from the judged items"
        )
        raise ValueError(msg)
    raw = [_binary(jf, c, "judged", jids, nullable=True) for c in verdicts]
    got = [_binary(lf, c, "labels", lids, nullable=False) for c in label_columns]
    return _Items(
        verdicts=tuple(np.asarray([0.0 if v is None else v for v in col], dtype=np.float64) for col in raw),
        parseable=tuple(np.asarray([v is not None for v in col], dtype=bool) for col in raw),
        labelled=np.asarray([position[item] for item in lids], dtype=np.intp),
        labels=tuple(np.asarray(col, dtype=np.float64) for col in got),
        inclusion=_inclusion(jf, jids) if weighted else None,
    )


def _clip(result: MeanEstimate, low: float, high: float) -> MeanEstimate:
    """The estimate and interval clipped to the parameter's range (insufficient if nothing is left)."""
    if result.status != "ok" or result.estimate is None or result.ci_low is None or result.ci_high is None:
        return result
    if low <= result.ci_low and result.ci_high <= high:
        return result
    lo, hi = max(low, result.ci_low), min(high, result.ci_high)
    if not hi - lo > 1e-12:
        reason = f"the interval [{result.ci_low:.4g}, {result.ci_high:.4g}] lies outside [{low:g}, {high:g}]"
        return replace(
            result, estimate=None, ci_low=None, ci_high=None, se=None, status="insufficient_evidence", reason=reason
        )
    note = f"clipped to [{low:g}, {high:g}]" + ("" if result.note is None else f"; {result.note}")
    return replace(result, estimate=min(high, max(low, result.estimate)), ci_low=lo, ci_high=hi, note=note)


def _from_proportion(
    p: Proportion, *, method: Literal["human-only", "judge-only"], sizes: tuple[int, int]
) -> MeanEstimate:
    return MeanEstimate(
        method=method,
        estimate=p.estimate,
        ci_low=p.ci_low,
        ci_high=p.ci_high,
        se=None,
        n_labelled=sizes[0],
        n_unlabelled=sizes[1],
        lam=None,
        status=p.status,
        reason=p.reason,
        note=f"{p.method} interval",
        confidence_level=p.confidence_level,
    )


def _unknown(
    method: Literal["rogan-gladen", "ppi", "ppi++"], reason: str, sizes: tuple[int, int], level: float
) -> MeanEstimate:
    return insufficient_estimate(method, reason, sizes=sizes, confidence_level=level)


@dataclass(frozen=True, slots=True, kw_only=True)
class _ErrorRates:
    """The two error rates measured on the labelled subset (what :func:`corrected_pass_rate` reads)."""

    false_pass_rate: Proportion
    false_fail_rate: Proportion


def _rogan_gladen(items: _Items, level: float, design: LabelDesign) -> MeanEstimate:
    """Rogan-Gladen on the unlabelled items' parseable verdicts, with the labelled subset's error rates."""
    n_lab = int(items.labelled.size)
    verdict, ok = items.verdicts[0], items.parseable[0]
    rest = np.ones(verdict.size, dtype=bool)
    rest[items.labelled] = False
    sizes = (n_lab, int((rest & ok).sum()))
    if design != "random":
        reason = "needs a labelled subset drawn at random: error rates measured on a sample drawn by design are biased"
        return _unknown("rogan-gladen", reason, sizes, level)
    y, f, fok = items.labels[0], verdict[items.labelled], ok[items.labelled]
    passes, fails = (y == 1) & fok, (y == 0) & fok
    rates = _ErrorRates(
        false_pass_rate=proportion(
            int((f[fails] == 1).sum()),
            int(fails.sum()),
            confidence_level=level,
            undefined_reason="no labelled fail with a parseable verdict",
        ),
        false_fail_rate=proportion(
            int((f[passes] == 0).sum()),
            int(passes.sum()),
            confidence_level=level,
            undefined_reason="no labelled pass with a parseable verdict",
        ),
    )
    try:
        r = corrected_pass_rate(
            int((verdict[rest & ok] == 1).sum()), sizes[1], calibration=rates, confidence_level=level
        )
    except JudgeUnusableError as exc:
        return _unknown("rogan-gladen", str(exc), sizes, level)
    if r.status != "ok":
        return _unknown("rogan-gladen", r.reason or "insufficient evidence", sizes, level)
    return MeanEstimate(
        method="rogan-gladen",
        estimate=r.estimate,
        ci_low=r.ci_low,
        ci_high=r.ci_high,
        se=None,
        n_labelled=n_lab,
        n_unlabelled=sizes[1],
        lam=None,
        status="ok",
        reason=None,
        note="Lang-Reiczigel interval; error rates from the labelled subset",
        confidence_level=level,
    )


def _ppi_pair(
    y: Floats, f: Floats, items: _Items, *, level: float, min_labels: int, bounds: tuple[float, float]
) -> tuple[MeanEstimate, MeanEstimate, MeanEstimate]:
    """Human-only (CLT or Horvitz-Thompson), PPI and PPI++ of labels ``y`` with predictions ``f`` (all items)."""
    options = {"confidence_level": level, "min_labels": min_labels, "bounds": bounds, "small_sample": True}
    tuned = options | {"min_labels": max(min_labels, MIN_LABELS_TUNED)}
    sizes = (int(items.labelled.size), int(f.size - items.labelled.size))
    if f.size == 0:
        none = insufficient_estimate("human-only", "no judged item", sizes=sizes, confidence_level=level)
        return none, _unknown("ppi", "no judged item", sizes, level), _unknown("ppi++", "no judged item", sizes, level)
    if items.inclusion is not None:
        weighted = partial(ppi_mean_weighted, f, items.inclusion, items.labelled, y, **options)  # type: ignore[arg-type]
        tuned_weighted = partial(ppi_mean_weighted, f, items.inclusion, items.labelled, y, **tuned)  # type: ignore[arg-type]
        return replace(weighted(lam=0.0), method="human-only", lam=None), weighted(lam=1.0), tuned_weighted(lam=None)
    human = human_mean(y, n_unlabelled=sizes[1], **options)  # type: ignore[arg-type]
    if sizes[1] == 0:
        reason = "every judged item is labelled: the judge adds nothing (see the human-only estimate)"
        return human, _unknown("ppi", reason, sizes, level), _unknown("ppi++", reason, sizes, level)
    rest = np.ones(f.size, dtype=bool)
    rest[items.labelled] = False
    plain = partial(ppi_mean, y, f[items.labelled], f[rest], **options)  # type: ignore[arg-type]
    plus = partial(ppi_mean, y, f[items.labelled], f[rest], **tuned)  # type: ignore[arg-type]
    return human, plain(lam=1.0), plus(lam=None)


def _checked(design: str, confidence_level: float, min_labels: int) -> LabelDesign:
    check_confidence_level(confidence_level)
    check_choice(design, LABEL_DESIGNS, "design")
    if isinstance(min_labels, bool) or not isinstance(min_labels, int) or min_labels < 2:
        msg = f"min_labels must be an integer >= 2 (got {min_labels!r})"
        raise ValueError(msg)
    return "random" if design == "random" else "weighted"


def ppi_pass_rate(
    judged: FrameLike,
    labels: FrameLike,
    *,
    design: LabelDesign = "random",
    confidence_level: float = 0.95,
    min_labels: int = MIN_LABELS,
) -> PPIComparison:
    """A pass rate from a judge-graded set and a human-labelled subset, by five estimators side by side.

    Parameters
    ----------
    judged
        One row per judged item: ``item`` (unique), ``verdict`` (true = the judge passed it, false,
        or null = unparseable); with ``design="weighted"`` also ``inclusion`` in (0, 1].
    labels
        One row per labelled item: ``item`` (unique, every one in ``judged``), ``label`` (true/false).
    design
        ``random`` (a simple random labelled subset) or ``weighted`` (known inclusion probabilities).
    confidence_level
        In (0, 1).
    min_labels
        Fewer labels make the CLT-based estimates "insufficient evidence".

    Returns
    -------
    PPIComparison

    Raises
    ------
    ValueError
        Missing columns; a null or duplicate item; a labelled item not judged; a label that is not
        true/false (or 0/1); a verdict that is not true/false/null; an inclusion probability outside (0, 1].
    """
    chosen = _checked(design, confidence_level, min_labels)
    items = _read(judged, labels, verdicts=("verdict",), label_columns=("label",), weighted=chosen == "weighted")
    f, ok = items.verdicts[0], items.parseable[0]
    y = items.labels[0]
    n_lab = int(items.labelled.size)
    if chosen == "random":
        human = _from_proportion(
            proportion(int(y.sum()), n_lab, confidence_level=confidence_level, undefined_reason="no human label"),
            method="human-only",
            sizes=(n_lab, 0),
        )
    judge = _from_proportion(
        proportion(
            int(f[ok].sum()), int(ok.sum()), confidence_level=confidence_level, undefined_reason="no parseable verdict"
        ),
        method="judge-only",
        sizes=(0, int(ok.sum())),
    )
    clt_human, ppi, ppi_pp = _ppi_pair(y, f, items, level=confidence_level, min_labels=min_labels, bounds=(0.0, 1.0))
    return PPIComparison(
        target="pass_rate",
        design=chosen,
        n_judged=int(f.size),
        n_labelled=n_lab,
        n_unparseable=int((~ok).sum()),
        human_only=human if chosen == "random" else _clip(clt_human, 0.0, 1.0),
        judge_only=judge,
        rogan_gladen=_rogan_gladen(items, confidence_level, chosen),
        ppi=_clip(ppi, 0.0, 1.0),
        ppi_plus_plus=_clip(ppi_pp, 0.0, 1.0),
        confidence_level=confidence_level,
    )


def ppi_paired_difference(
    judged: FrameLike,
    labels: FrameLike,
    *,
    design: LabelDesign = "random",
    confidence_level: float = 0.95,
    min_labels: int = MIN_LABELS,
) -> PPIComparison:
    """The paired difference of two systems' pass rates (A - B) on the same items, graded by one judge.

    Parameters
    ----------
    judged
        One row per item: ``item``, ``verdict_a`` and ``verdict_b`` (true/false/null), with
        ``design="weighted"`` also ``inclusion``.
    labels
        ``item``, ``label_a`` and ``label_b`` (true/false) for the labelled items.
    design, confidence_level, min_labels
        As in :func:`ppi_pass_rate`.

    Returns
    -------
    PPIComparison
        Its ``rogan_gladen`` is insufficient evidence (the correction is for one pass rate); the
        judge-only difference is over items with both verdicts parseable.

    Raises
    ------
    ValueError
        As :func:`ppi_pass_rate`.
    """
    chosen = _checked(design, confidence_level, min_labels)
    items = _read(
        judged,
        labels,
        verdicts=("verdict_a", "verdict_b"),
        label_columns=("label_a", "label_b"),
        weighted=chosen == "weighted",
    )
    f = items.verdicts[0] - items.verdicts[1]
    y = items.labels[0] - items.labels[1]
    both = items.parseable[0] & items.parseable[1]
    n_lab = int(items.labelled.size)
    human, ppi, ppi_pp = _ppi_pair(y, f, items, level=confidence_level, min_labels=min_labels, bounds=(-1.0, 1.0))
    judge = human_mean(
        f[both],
        method="judge-only",
        confidence_level=confidence_level,
        min_labels=min_labels,
        bounds=(-1.0, 1.0),
        small_sample=True,
    )
    reason = "Rogan-Gladen corrects one pass rate; a paired difference has no such correction here"
    return PPIComparison(
        target="paired_difference",
        design=chosen,
        n_judged=int(f.size),
        n_labelled=n_lab,
        n_unparseable=int((~both).sum()),
        human_only=_clip(human, -1.0, 1.0),
        judge_only=_clip(judge, -1.0, 1.0),
        rogan_gladen=_unknown("rogan-gladen", reason, (n_lab, int(f.size) - n_lab), confidence_level),
        ppi=_clip(ppi, -1.0, 1.0),
        ppi_plus_plus=_clip(ppi_pp, -1.0, 1.0),
        confidence_level=confidence_level,
    )
