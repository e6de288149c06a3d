r"""The two error rates of a judge against human labels, never averaged into one accuracy.

A judge *passes* an item when its verdict is the positive value; any other parseable verdict
(the negative value, or a tie for a pairwise judge) is a *fail*. With the human label as truth:

.. math::

    \mathrm{FPR} = P(\text{judge passes} \mid \text{label fails}) = \frac{FP}{FP + TN}, \qquad
    \mathrm{FFR} = P(\text{judge fails} \mid \text{label passes}) = \frac{FN}{TP + FN},

each with its own denominator and interval. Sensitivity is :math:`1 - \mathrm{FFR}`, specificity
:math:`1 - \mathrm{FPR}`. Unparseable verdicts are counted per label and left out of both
denominators (and of kappa); their rate is reported with its own interval. A rate whose
denominator is 0 (e.g. a labelled set without fails) is ``insufficient_evidence``, never 0.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from gatestats._typing import JSONObject
from gatestats.judges._frames import collect_checked, slice_parts, verdict_vocabulary
from gatestats.judges._stats import Kappa, Proportion, cohens_kappa, proportion
from gatestats.judges._types import PROPORTION_METHODS, ProportionMethod
from gatestats.vocabulary import FrameLike, check_choice, check_confidence_level

__all__ = ["RATE_COLUMNS", "JudgeErrorRates", "judge_error_rates"]

#: Columns of :meth:`JudgeErrorRates.to_frame`.
RATE_COLUMNS: tuple[str, ...] = (
    "slice",
    "statistic",
    "estimate",
    "ci_low",
    "ci_high",
    "numerator",
    "n",
    "status",
    "reason",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeErrorRates:
    """False-pass and false-fail rates, confusion counts, accuracy, unparseable rate and kappa.

    ``confusion`` holds ``(label, verdict, count)`` for every label (positive, negative) and every
    verdict (positive, negative, tie when declared, ``None`` = unparseable), zeros included.
    ``by_slice`` repeats the breakdown for each slice (sorted), when the frame has a ``slice``
    column; ``slice`` names the slice of a per-slice result (``None`` for the whole set).
    """

    slice: str | None
    positive: str
    negative: str
    tie: str | None
    n_items: int
    n_label_positive: int
    n_label_negative: int
    n_unparseable: int
    n_unparseable_label_positive: int
    n_unparseable_label_negative: int
    n_ties: int
    false_pass_rate: Proportion
    false_fail_rate: Proportion
    accuracy: Proportion
    unparseable_rate: Proportion
    kappa: Kappa
    confusion: tuple[tuple[str, str | None, int], ...]
    by_slice: tuple[JudgeErrorRates, ...]
    method: ProportionMethod
    confidence_level: float

    def confusion_matrix(self) -> pl.DataFrame:
        """Counts: one row per label, one column per verdict (``unparseable`` last)."""
        verdicts = [v for v in (self.positive, self.negative, self.tie) if v is not None]
        rows = []
        for label in (self.positive, self.negative):
            counts = dict.fromkeys([*verdicts, None], 0)
            for lab, verdict, count in self.confusion:
                if lab == label:
                    counts[verdict] = count
            rows.append({"label": label, **{f"verdict={v}": counts[v] for v in verdicts}, "unparseable": counts[None]})
        return pl.DataFrame(
            rows, schema_overrides={f"verdict={v}": pl.Int64 for v in verdicts} | {"unparseable": pl.Int64}
        )

    def to_frame(self) -> pl.DataFrame:
        """One row per (slice, statistic); columns :data:`RATE_COLUMNS`; the whole set has slice null."""
        rows: list[dict[str, object]] = []
        for result in (self, *self.by_slice):
            for name in ("false_pass_rate", "false_fail_rate", "accuracy", "unparseable_rate"):
                p: Proportion = getattr(result, name)
                rows.append(
                    {
                        "slice": result.slice,
                        "statistic": name,
                        "estimate": p.estimate,
                        "ci_low": p.ci_low,
                        "ci_high": p.ci_high,
                        "numerator": p.numerator,
                        "n": p.n,
                        "status": p.status,
                        "reason": p.reason,
                    }
                )
            k = result.kappa
            rows.append(
                {
                    "slice": result.slice,
                    "statistic": "kappa",
                    "estimate": k.estimate,
                    "ci_low": k.ci_low,
                    "ci_high": k.ci_high,
                    "numerator": None,
                    "n": k.n,
                    "status": k.status,
                    "reason": k.reason,
                }
            )
        schema = {
            "slice": pl.String,
            "statistic": pl.String,
            "estimate": pl.Float64,
            "ci_low": pl.Float64,
            "ci_high": pl.Float64,
            "numerator": pl.Int64,
            "n": pl.Int64,
            "status": pl.String,
            "reason": pl.String,
        }
        return pl.DataFrame(rows, schema=schema)

    def to_dict(self) -> JSONObject:
        """JSON-ready dict (the confusion matrix as ``{label: {verdict: count}}``)."""
        confusion: dict[str, dict[str, int]] = {}
        for label, verdict, count in self.confusion:
            confusion.setdefault(label, {})["unparseable" if verdict is None else verdict] = count
        return {
            "slice": self.slice,
            "n_items": self.n_items,
            "n_label_positive": self.n_label_positive,
            "n_label_negative": self.n_label_negative,
            "n_unparseable": self.n_unparseable,
            "n_unparseable_label_positive": self.n_unparseable_label_positive,
            "n_unparseable_label_negative": self.n_unparseable_label_negative,
            "n_ties": self.n_ties,
            "false_pass_rate": self.false_pass_rate.to_dict(),
            "false_fail_rate": self.false_fail_rate.to_dict(),
            "accuracy": self.accuracy.to_dict(),
            "unparseable_rate": self.unparseable_rate.to_dict(),
            "kappa": self.kappa.to_dict(),
            "confusion": confusion,
        }


def _rates(
    counts: dict[tuple[str, str | None], int],
    *,
    slice_name: str | None,
    positive: str,
    negative: str,
    tie: str | None,
    method: ProportionMethod,
    confidence_level: float,
    by_slice: tuple[JudgeErrorRates, ...] = (),
) -> JudgeErrorRates:
    verdicts: list[str | None] = [positive, negative, *([tie] if tie is not None else []), None]
    cell = {(lab, v): counts.get((lab, v), 0) for lab in (positive, negative) for v in verdicts}
    tp, fp = cell[(positive, positive)], cell[(negative, positive)]
    n_pos_parsed = sum(cell[(positive, v)] for v in verdicts if v is not None)
    n_neg_parsed = sum(cell[(negative, v)] for v in verdicts if v is not None)
    u_pos, u_neg = cell[(positive, None)], cell[(negative, None)]
    n_items = n_pos_parsed + n_neg_parsed + u_pos + u_neg
    where = f" in slice {slice_name!r}" if slice_name is not None else ""

    def rate(x: int, n: int, reason: str) -> Proportion:
        return proportion(x, n, method=method, confidence_level=confidence_level, undefined_reason=reason)

    false_pass = rate(
        fp,
        n_neg_parsed,
        f"no item labelled {negative!r} has a parseable verdict{where} ({u_neg} unparseable): "
        "the false-pass rate is undefined",
    )
    false_fail = rate(
        n_pos_parsed - tp,
        n_pos_parsed,
        f"no item labelled {positive!r} has a parseable verdict{where} ({u_pos} unparseable): "
        "the false-fail rate is undefined",
    )
    correct = tp + cell[(negative, negative)]
    accuracy = rate(correct, n_pos_parsed + n_neg_parsed, f"no parseable verdict{where}: accuracy is undefined")
    unparseable = rate(u_pos + u_neg, n_items, f"no items{where}: the unparseable rate is undefined")
    # Kappa on the binary pass/fail reading of the verdicts (rows: label, columns: judge).
    kappa = cohens_kappa(
        [[tp, n_pos_parsed - tp], [fp, n_neg_parsed - fp]],
        confidence_level=confidence_level,
    )
    return JudgeErrorRates(
        slice=slice_name,
        positive=positive,
        negative=negative,
        tie=tie,
        n_items=n_items,
        n_label_positive=n_pos_parsed + u_pos,
        n_label_negative=n_neg_parsed + u_neg,
        n_unparseable=u_pos + u_neg,
        n_unparseable_label_positive=u_pos,
        n_unparseable_label_negative=u_neg,
        n_ties=0 if tie is None else cell[(positive, tie)] + cell[(negative, tie)],
        false_pass_rate=false_pass,
        false_fail_rate=false_fail,
        accuracy=accuracy,
        unparseable_rate=unparseable,
        kappa=kappa,
        confusion=tuple((lab, v, cell[(lab, v)]) for lab in (positive, negative) for v in verdicts),
        by_slice=by_slice,
        method=method,
        confidence_level=confidence_level,
    )


def judge_error_rates(
    judgments: FrameLike,
    *,
    positive: str,
    negative: str,
    tie: str | None = None,
    verdict: str = "verdict",
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
) -> JudgeErrorRates:
    """False-pass and false-fail rates of a judge, each with its own n and interval, by slice too.

    Parameters
    ----------
    judgments
        DataFrame or LazyFrame with ``label`` (the positive or negative value, no null) and the
        verdict column (positive, negative, tie, or null for an unparseable verdict); an optional
        ``slice`` column adds the per-slice breakdown. :func:`~gatestats.judges.read_judgments`
        produces such a frame from files.
    positive, negative, tie
        The values; a verdict equal to ``positive`` is a pass, ``negative`` or ``tie`` a fail.
    verdict
        Which verdict column to evaluate (e.g. ``verdict_swapped`` for the swapped order).
    method
        ``wilson`` (default) or ``clopper-pearson`` for every proportion.
    confidence_level
        In (0, 1).

    Returns
    -------
    JudgeErrorRates

    Raises
    ------
    ValueError
        Missing columns, or values outside the declared vocabulary (the message names the rows).

    References
    ----------
    Cohen, J. (1960); Fleiss, Cohen & Everitt (1969), see :func:`~gatestats.judges.cohens_kappa`.
    Wilson (1927); Clopper & Pearson (1934), see :func:`~gatestats.judges.proportion`.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"label": ["pass"] * 5 + ["fail"] * 5,
    ...                       "verdict": ["pass"] * 5 + ["pass", "pass", "fail", "fail", None]})
    >>> r = judge_error_rates(frame.lazy(), positive="pass", negative="fail")
    >>> r.false_pass_rate.numerator, r.false_pass_rate.n, r.false_fail_rate.estimate, r.n_unparseable
    (2, 4, 0.0, 1)
    """
    check_confidence_level(confidence_level)
    check_choice(method, PROPORTION_METHODS, "method")
    values = verdict_vocabulary(positive, negative, tie)
    frame = collect_checked(
        judgments,
        required=("label", verdict),
        optional=("slice",),
        labels=(positive, negative),
        verdicts=values,
        verdict_columns=(verdict,),
    ).rename({verdict: "__verdict"})
    keys = ["slice", "label", "__verdict"] if "slice" in frame.columns else ["label", "__verdict"]
    grouped = frame.group_by(keys).len()

    def rates(part: pl.DataFrame, name: str | None, by_slice: tuple[JudgeErrorRates, ...] = ()) -> JudgeErrorRates:
        return _rates(
            _count_map(part),
            slice_name=name,
            positive=positive,
            negative=negative,
            tie=tie,
            method=method,
            confidence_level=confidence_level,
            by_slice=by_slice,
        )

    slices = tuple(rates(part, name) for name, part in slice_parts(grouped))
    return rates(grouped.group_by("label", "__verdict").agg(pl.col("len").sum()), None, slices)


def _count_map(frame: pl.DataFrame) -> dict[tuple[str, str | None], int]:
    return {(row["label"], row["__verdict"]): int(row["len"]) for row in frame.iter_rows(named=True)}
