r"""Multi-class agreement of a judge with a label: accuracy, per-class and macro precision / recall / F1.

For judges whose verdicts have more than two values (a pairwise judge's A / B / tie, a 1-5 rubric
score) the binary false-pass / false-fail rates stay the headline of a pass/fail decision; this
module describes the whole confusion matrix (rows: label, columns: verdict):

- **accuracy** :math:`\sum_c n_{cc} / n` over parseable verdicts, Wilson (or Clopper-Pearson) interval;
- per class :math:`c`: **precision** :math:`n_{cc}/n_{\cdot c}` (of the items the judge put in
  :math:`c`), **recall** :math:`n_{cc}/n_{c\cdot}` (of the items labelled :math:`c`), each a
  proportion with its own denominator and interval, and **F1**
  :math:`2 n_{cc} / (n_{c\cdot} + n_{\cdot c})`;
- **macro** precision, recall and F1: the unweighted means over the classes (as PandaLM and
  scikit-learn's ``average="macro"``, whose macro F1 is the mean of the per-class F1);
- Cohen's kappa (:func:`~gatestats.judges.cohens_kappa`) and, on an ordinal scale, weighted kappa
  with linear and quadratic weights (:func:`~gatestats.judges.weighted_kappa`).

F1 and the macro averages are not binomial proportions; their intervals are percentile intervals
of a bootstrap over items (items resampled with replacement, i.e. the confusion matrix drawn from
the multinomial with the observed cell proportions), seeded, with the seed recorded. A class that
no item is labelled with and that the judge never chooses has no precision, recall or F1: the
statistic is "insufficient evidence" (never 0, which scikit-learn reports with a warning), and so is
a macro average over it.

Unparseable verdicts (``None``) are counted per label class and left out of every statistic here.

References
----------
Cohen, J. (1960). A coefficient of agreement for nominal scales. Educational and Psychological
    Measurement 20(1), 37-46.
Efron, B. & Tibshirani, R. J. (1993). An Introduction to the Bootstrap. Chapman & Hall, ch. 13.
Sokolova, M. & Lapalme, G. (2009). A systematic analysis of performance measures for classification
    tasks. Information Processing & Management 45(4), 427-437.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TypedDict

import numpy as np
import numpy.typing as npt
import polars as pl

from gatestats._typing import JSONObject
from gatestats.judges._stats import Kappa, Proportion, _json_fields, _level_index, cohens_kappa, proportion
from gatestats.judges._types import ProportionMethod
from gatestats.judges.weighted_kappa import WeightedKappa, weighted_kappa
from gatestats.vocabulary import Status, check_confidence_level

__all__ = [
    "DEFAULT_SEED",
    "BootstrapEstimate",
    "ClassScores",
    "MulticlassAgreement",
    "bootstrap_estimate",
    "confusion_counts",
    "multiclass_agreement",
]

#: Default seed of the bootstrap intervals (recorded in every result).
DEFAULT_SEED = 20240607


@dataclass(frozen=True, slots=True, kw_only=True)
class BootstrapEstimate:
    """A statistic with a percentile bootstrap interval over items, or "insufficient evidence".

    ``n_resamples`` replicates were drawn with ``seed``; ``n_defined`` of them had the statistic
    defined (the interval is over those).
    """

    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    status: Status
    reason: str | None
    n: int
    confidence_level: float
    n_resamples: int
    n_defined: int
    seed: int
    method: str = "bootstrap-percentile"

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


class BootstrapDraw(TypedDict):
    """How bootstrap replicates were drawn and read: the interval's level and the seed (recorded)."""

    confidence_level: float
    seed: int


class _BootstrapBasis(TypedDict):
    """The fields of a bootstrap estimate besides its value: the items, the level, the replicates, the seed."""

    n: int
    confidence_level: float
    n_resamples: int
    n_defined: int
    seed: int


def bootstrap_estimate(
    observed: float,
    replicates: npt.NDArray[np.float64],
    *,
    n: int,
    confidence_level: float,
    seed: int,
    undefined_reason: str,
) -> BootstrapEstimate:
    """A statistic and the percentile interval of its replicates (NaN replicates left out).

    Parameters
    ----------
    observed
        The statistic on the data (NaN when undefined).
    replicates
        Its bootstrap replicates (NaN where undefined).
    n
        The number of items.
    confidence_level
        Of the percentile interval, in (0, 1).
    seed
        The seed the replicates were drawn with (recorded).
    undefined_reason
        Reported when the statistic is undefined on the data.

    Returns
    -------
    BootstrapEstimate
        ``insufficient_evidence`` when ``observed`` is NaN.
    """
    defined = replicates[np.isfinite(replicates)]
    common = _BootstrapBasis(
        n=n, confidence_level=confidence_level, n_resamples=int(replicates.size), n_defined=int(defined.size), seed=seed
    )
    if not np.isfinite(observed) or defined.size == 0:
        return BootstrapEstimate(
            estimate=None, ci_low=None, ci_high=None, status="insufficient_evidence", reason=undefined_reason, **common
        )
    alpha = 1 - confidence_level
    low, high = np.quantile(defined, [alpha / 2, 1 - alpha / 2])
    return BootstrapEstimate(
        estimate=float(observed),
        ci_low=float(min(low, observed)),
        ci_high=float(max(high, observed)),
        status="ok",
        reason=None,
        **common,
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class ClassScores:
    """Precision, recall and F1 of one class (``n_label``: items labelled it; ``n_verdict``: judged it)."""

    label: str
    n_label: int
    n_verdict: int
    precision: Proportion
    recall: Proportion
    f1: BootstrapEstimate

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict."""
        return _json_fields(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class MulticlassAgreement:
    """A judge's multi-class agreement with the labels (module docstring).

    ``confusion[i][j]``: items labelled ``classes[i]`` judged ``classes[j]``; the extra last column
    counts unparseable verdicts. Weighted kappas are ``None`` unless the scale is ordinal.
    """

    classes: tuple[str, ...]
    ordinal: bool
    n_items: int
    n_unparseable: int
    confusion: tuple[tuple[int, ...], ...]
    accuracy: Proportion
    per_class: tuple[ClassScores, ...]
    macro_precision: BootstrapEstimate
    macro_recall: BootstrapEstimate
    macro_f1: BootstrapEstimate
    kappa: Kappa
    weighted_kappa_linear: WeightedKappa | None
    weighted_kappa_quadratic: WeightedKappa | None

    def to_dict(self) -> JSONObject:
        """Plain JSON-ready dict (the confusion matrix keyed by label, then verdict)."""
        columns = [*self.classes, "unparseable"]
        return {
            "classes": list(self.classes),
            "ordinal": self.ordinal,
            "n_items": self.n_items,
            "n_unparseable": self.n_unparseable,
            "confusion": {
                c: dict(zip(columns, row, strict=True)) for c, row in zip(self.classes, self.confusion, strict=True)
            },
            "accuracy": self.accuracy.to_dict(),
            "per_class": [c.to_dict() for c in self.per_class],
            "macro_precision": self.macro_precision.to_dict(),
            "macro_recall": self.macro_recall.to_dict(),
            "macro_f1": self.macro_f1.to_dict(),
            "kappa": self.kappa.to_dict(),
            "weighted_kappa_linear": None
            if self.weighted_kappa_linear is None
            else self.weighted_kappa_linear.to_dict(),
            "weighted_kappa_quadratic": (
                None if self.weighted_kappa_quadratic is None else self.weighted_kappa_quadratic.to_dict()
            ),
        }

    def to_frame(self) -> pl.DataFrame:
        """One row per class: ``label, n_label, n_verdict, precision, recall, f1`` (estimates)."""
        return pl.DataFrame(
            {
                "label": [c.label for c in self.per_class],
                "n_label": [c.n_label for c in self.per_class],
                "n_verdict": [c.n_verdict for c in self.per_class],
                "precision": [c.precision.estimate for c in self.per_class],
                "recall": [c.recall.estimate for c in self.per_class],
                "f1": [c.f1.estimate for c in self.per_class],
            },
            schema={
                "label": pl.String,
                "n_label": pl.Int64,
                "n_verdict": pl.Int64,
                "precision": pl.Float64,
                "recall": pl.Float64,
                "f1": pl.Float64,
            },
        )


def confusion_counts(
    labels: Sequence[str], verdicts: Sequence[str | None], *, classes: Sequence[str]
) -> npt.NDArray[np.int64]:
    """Cross-tabulate labels (rows) and verdicts (columns); the last column counts ``None`` verdicts.

    Parameters
    ----------
    labels, verdicts
        Per item, in the same order; a verdict ``None`` is unparseable.
    classes
        Every class, in order (scale order for an ordinal scale).

    Returns
    -------
    numpy.ndarray
        :math:`k \\times (k + 1)` counts.

    Raises
    ------
    ValueError
        Fewer than 2 distinct classes, sequences of different lengths, or a value that is not a
        class (the message names the item).

    Examples
    --------
    >>> confusion_counts(["a", "b", "b"], ["a", None, "a"], classes=["a", "b"]).tolist()
    [[1, 0, 0], [1, 0, 1]]
    """
    levels, index = _level_index(classes, "classes")
    if len(labels) != len(verdicts):
        msg = f"labels and verdicts must describe the same items (got {len(labels)} and {len(verdicts)})"
        raise ValueError(msg)
    counts = np.zeros((len(levels), len(levels) + 1), dtype=np.int64)
    for item, (label, verdict) in enumerate(zip(labels, verdicts, strict=True)):
        if label not in index:
            msg = f"label of item {item} is not a class {levels!r} (got {label!r})"
            raise ValueError(msg)
        if verdict is not None and verdict not in index:
            msg = f"verdict of item {item} is not a class {levels!r} (got {verdict!r})"
            raise ValueError(msg)
        counts[index[label], len(levels) if verdict is None else index[verdict]] += 1
    return counts


def _scores(tables: npt.NDArray[np.float64]) -> tuple[npt.NDArray[np.float64], ...]:
    """Per-class precision, recall and F1 of (a stack of) k x k tables; NaN where undefined."""
    tp = np.diagonal(tables, axis1=-2, axis2=-1)
    rows, cols = tables.sum(axis=-1), tables.sum(axis=-2)
    with np.errstate(divide="ignore", invalid="ignore"):
        precision = np.where(cols > 0, tp / cols, np.nan)
        recall = np.where(rows > 0, tp / rows, np.nan)
        f1 = np.where(rows + cols > 0, 2 * tp / (rows + cols), np.nan)
    return precision, recall, f1


def _observed_and_replicates(
    table: npt.NDArray[np.float64], *, n_resamples: int, seed: int
) -> tuple[tuple[npt.NDArray[np.float64], ...], tuple[npt.NDArray[np.float64], ...]]:
    """The per-class scores of ``table`` and of its multinomial bootstrap replicates (none when empty)."""
    k = table.shape[0]
    n = int(table.sum())
    rng = np.random.default_rng(seed)
    draws = rng.multinomial(n, table.ravel() / n, size=n_resamples).reshape(n_resamples, k, k) if n else None
    replicas = (
        _scores(draws.astype(np.float64)) if draws is not None else tuple(np.full((0, k), np.nan) for _ in range(3))
    )
    return _scores(table), replicas


def _class_scores(
    table: npt.NDArray[np.float64],
    i: int,
    name: str,
    *,
    f1: tuple[float, npt.NDArray[np.float64]],
    method: ProportionMethod,
    boot: BootstrapDraw,
    n: int,
) -> ClassScores:
    """Precision, recall and F1 of class ``i`` (``f1``: observed value and replicates)."""
    tp, n_label, n_verdict = int(table[i, i]), int(table[i].sum()), int(table[:, i].sum())
    confidence_level = boot["confidence_level"]
    return ClassScores(
        label=name,
        n_label=n_label,
        n_verdict=n_verdict,
        precision=proportion(
            tp,
            n_verdict,
            method=method,
            confidence_level=confidence_level,
            undefined_reason=f"the judge never chose {name!r}",
        ),
        recall=proportion(
            tp,
            n_label,
            method=method,
            confidence_level=confidence_level,
            undefined_reason=f"no item is labelled {name!r}",
        ),
        f1=bootstrap_estimate(
            f1[0], f1[1], n=n, undefined_reason=f"no item is labelled {name!r} and the judge never chose it", **boot
        ),
    )


def _class_and_macro_scores(
    table: npt.NDArray[np.float64],
    classes: Sequence[str],
    *,
    method: ProportionMethod,
    confidence_level: float,
    n_resamples: int,
    seed: int,
) -> tuple[list[ClassScores], list[BootstrapEstimate]]:
    """Per-class scores and the macro precision, recall and F1 (bootstrap over items)."""
    n = int(table.sum())
    observed, replicas = _observed_and_replicates(table, n_resamples=n_resamples, seed=seed)
    boot = BootstrapDraw(confidence_level=confidence_level, seed=seed)
    per_class = [
        _class_scores(table, i, name, f1=(observed[2][i], replicas[2][:, i]), method=method, boot=boot, n=n)
        for i, name in enumerate(classes)
    ]
    macro = [
        bootstrap_estimate(
            float(np.mean(observed[which])),
            np.mean(replicas[which], axis=1),
            n=n,
            undefined_reason=f"macro {word} is undefined: the {word} of a class is undefined",
            **boot,
        )
        for which, word in enumerate(("precision", "recall", "F1"))
    ]
    return per_class, macro


def multiclass_agreement(
    labels: Sequence[str],
    verdicts: Sequence[str | None],
    *,
    classes: Sequence[str],
    ordinal: bool = False,
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
    n_resamples: int = 2000,
    seed: int = DEFAULT_SEED,
) -> MulticlassAgreement:
    """Accuracy, per-class and macro precision / recall / F1, confusion matrix and kappa(s).

    Parameters
    ----------
    labels, verdicts
        Per item, in the same order: the label (e.g. the human majority) and the judge's verdict
        (``None``: unparseable, counted and left out).
    classes
        Every class in order (scale order when ``ordinal``).
    ordinal
        The classes are an ordered scale: also weighted kappa (linear and quadratic weights).
    method
        Interval of the proportions: ``wilson`` or ``clopper-pearson``.
    confidence_level
        In (0, 1).
    n_resamples, seed
        The bootstrap of F1 and the macro averages (at least 100 resamples).

    Returns
    -------
    MulticlassAgreement
        Undefined statistics are ``insufficient_evidence`` with the reason.

    Raises
    ------
    ValueError
        See :func:`confusion_counts`; fewer than 100 resamples; a confidence level outside (0, 1).

    Examples
    --------
    >>> r = multiclass_agreement(["1", "1", "2", "0"], ["1", "2", "2", "0"], classes=["1", "2", "0"])
    >>> r.accuracy.numerator, r.accuracy.n, [c.recall.estimate for c in r.per_class]
    (3, 4, [0.5, 1.0, 1.0])
    """
    check_confidence_level(confidence_level)
    if isinstance(n_resamples, bool) or int(n_resamples) != n_resamples or n_resamples < 100:
        msg = f"n_resamples must be an integer >= 100 (got {n_resamples!r})"
        raise ValueError(msg)
    counts = confusion_counts(labels, verdicts, classes=classes)
    table = counts[:, :-1].astype(np.float64)  # the last column counts unparseable verdicts
    per_class, macro = _class_and_macro_scores(
        table, classes, method=method, confidence_level=confidence_level, n_resamples=n_resamples, seed=seed
    )
    weighted: list[WeightedKappa | None] = [None, None]
    if ordinal:
        weighted = [
            weighted_kappa(table, weights=w, confidence_level=confidence_level) for w in ("linear", "quadratic")
        ]
    return MulticlassAgreement(
        classes=tuple(classes),
        ordinal=ordinal,
        n_items=int(counts.sum()),
        n_unparseable=int(counts[:, -1].sum()),
        confusion=tuple(tuple(int(v) for v in row) for row in counts),
        accuracy=proportion(
            int(np.trace(table)),
            int(table.sum()),
            method=method,
            confidence_level=confidence_level,
            undefined_reason="no parseable verdict",
        ),
        per_class=tuple(per_class),
        macro_precision=macro[0],
        macro_recall=macro[1],
        macro_f1=macro[2],
        kappa=cohens_kappa(table, confidence_level=confidence_level),
        weighted_kappa_linear=weighted[0],
        weighted_kappa_quadratic=weighted[1],
    )
