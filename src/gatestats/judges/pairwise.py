r"""A pairwise judge reported as pairwise: agreement with people in each order, both orders, position.

A pairwise judge sees two outputs, A (shown first in the original order) and B, and says which is
better, or a tie. People said which is better. For each presentation order the judge's verdict
either **agreed with people**, **picked the worse output**, called a **tie**, or was
**unparseable** (win / tie / loss against the human label). The **accuracy** of an order is
agreed / all pairs: a tie or an unparseable verdict counts as not correct, the denominator of
LLMBar's statistics files (Zeng et al. 2024, ``correct_False`` and ``correct_True``). With both
orders: the **two-order average** accuracy (LLMBar's ``correct_average``: correct verdicts over the
2n judgments), **correct in both orders** (``correct_both``) and **positional agreement** (both
orders give the same verdict) under one of two conventions:

``parseable-only``
    pairs with an unparseable verdict in either order are left out:
    agreement = consistent / pairs parseable in both orders = 1 - flip rate (the flip rate of
    :func:`~gatestats.judges.order_sensitivity`).
``both-unparseable-agree``
    a pair unparseable in both orders counts as agreeing, over all pairs (LLMBar's ``equal``:
    its code compares the two parsed verdicts, and two failed parses compare equal). A pair
    unparseable in one order only disagrees.

The two differ only when some pair is unparseable in both orders: LLMBar's PaLM2 on MT-Bench has 7
(``equal`` 147/200 = 140 consistent + 7; parseable-only 140/192).

References
----------
Zeng, Z., Yu, J., Gao, T., Meng, Y., Goyal, T. & Chen, D. (2024). Evaluating Large Language
    Models at Evaluating Instruction Following. ICLR 2024. arXiv:2310.07641 (LLMBar).
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from gatestats._typing import JSONObject
from gatestats.judges._frames import collect_checked, slice_parts, verdict_vocabulary
from gatestats.judges._stats import Proportion, _json_fields, proportion
from gatestats.judges._types import (
    AGREEMENT_CONVENTIONS,
    SWAPPED_CODINGS,
    AgreementConvention,
    ProportionMethod,
    SwappedCoding,
)
from gatestats.judges.order import OrderSensitivity, order_sensitivity
from gatestats.vocabulary import FrameLike, check_choice, check_confidence_level

__all__ = ["OrderAgreement", "PairwiseAgreement", "pairwise_agreement"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderAgreement:
    """Win / tie / loss of a pairwise judge against people in one presentation order.

    ``n_agreed + n_worse + n_tie + n_unparseable == n_pairs``; ``accuracy`` is ``n_agreed / n_pairs``
    (a tie or an unparseable verdict is not correct).
    """

    order: str
    n_pairs: int
    n_agreed: int
    n_worse: int
    n_tie: int
    n_unparseable: int
    accuracy: Proportion

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        return _json_fields(self)


@dataclass(frozen=True, slots=True, kw_only=True)
class PairwiseAgreement:
    """Agreement of a pairwise judge with people, per order and across the two orders, by slice.

    Without a swapped order, ``swapped`` and every two-order field are ``None``.
    ``two_order_accuracy`` is correct verdicts over the 2n judgments (no interval: the two verdicts
    on a pair are not independent); ``None`` without pairs.
    ``positional_agreement`` follows ``convention`` (see the module docstring);
    ``n_flips`` counts pairs parseable in both orders whose verdicts differ.
    """

    slice: str | None
    n_pairs: int
    original: OrderAgreement
    swapped: OrderAgreement | None
    two_order_accuracy: float | None
    both_correct: Proportion | None
    convention: AgreementConvention
    n_consistent: int | None
    n_flips: int | None
    n_both_unparseable: int | None
    n_one_unparseable: int | None
    positional_agreement: Proportion | None
    by_slice: tuple[PairwiseAgreement, ...]

    def to_dict(self) -> JSONObject:
        """JSON-ready dict, the slices as a list of the same dicts."""
        out = _json_fields(self, exclude=("by_slice",))
        out["by_slice"] = [s.to_dict() for s in self.by_slice]
        return out


def pairwise_agreement(
    judgments: FrameLike,
    *,
    positive: str,
    negative: str,
    tie: str | None = None,
    swapped_coding: SwappedCoding = "original",
    convention: AgreementConvention = "parseable-only",
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
) -> PairwiseAgreement:
    """Win / tie / loss in each order, the two-order average, both correct, positional agreement.

    Parameters
    ----------
    judgments
        DataFrame or LazyFrame with ``label`` (``positive``: people preferred A, ``negative``: B),
        ``verdict`` (original order) and optionally ``verdict_swapped`` and ``slice``; a verdict is
        ``positive``, ``negative``, ``tie`` or null (unparseable).
    positive, negative, tie
        The values: ``positive`` means output A (shown first in the original order) is better.
    swapped_coding
        How ``verdict_swapped`` is coded (see :func:`~gatestats.judges.order_sensitivity`).
    convention
        ``parseable-only`` or ``both-unparseable-agree`` (LLMBar's): see the module docstring.
    method, confidence_level
        Interval of every proportion.

    Returns
    -------
    PairwiseAgreement
        The whole set and each slice (sorted; a null slice is named ``""``).

    Raises
    ------
    ValueError
        Missing columns, values outside the vocabulary, an unknown option.

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"label": ["A", "A", "B", "B"], "verdict": ["A", "B", None, "B"],
    ...                       "verdict_swapped": ["A", "A", None, "tie"]})
    >>> r = pairwise_agreement(frame, positive="A", negative="B", tie="tie", convention="both-unparseable-agree")
    >>> r.original.n_agreed, r.original.n_worse, r.swapped.n_tie, r.both_correct.numerator
    (2, 1, 1, 1)
    >>> r.positional_agreement.numerator, r.positional_agreement.n
    (2, 4)
    """
    check_confidence_level(confidence_level)
    check_choice(swapped_coding, SWAPPED_CODINGS, "swapped_coding")
    check_choice(convention, AGREEMENT_CONVENTIONS, "convention")
    values = verdict_vocabulary(positive, negative, tie)
    frame = collect_checked(
        judgments,
        required=("label", "verdict"),
        optional=("verdict_swapped", "slice"),
        labels=(positive, negative),
        verdicts=values,
        verdict_columns=("verdict", "verdict_swapped"),
    )
    if "verdict_swapped" in frame.columns and swapped_coding == "presented":
        frame = frame.with_columns(pl.col("verdict_swapped").replace({positive: negative, negative: positive}))
    order = (
        order_sensitivity(
            frame, positive=positive, negative=negative, tie=tie, method=method, confidence_level=confidence_level
        )
        if "verdict_swapped" in frame.columns
        else None
    )
    options = _Options(tie=tie, convention=convention, method=method, confidence_level=confidence_level)
    slices = tuple(
        _agreement(part, name, None if order is None else order.by_slice[i], options)
        for i, (name, part) in enumerate(slice_parts(frame))
    )
    whole = _agreement(frame, None, order, options)
    return PairwiseAgreement(**{**{f: getattr(whole, f) for f in whole.__dataclass_fields__}, "by_slice": slices})


_TWO_ORDER_FIELDS = (
    "swapped",
    "two_order_accuracy",
    "both_correct",
    "n_consistent",
    "n_flips",
    "n_both_unparseable",
    "n_one_unparseable",
    "positional_agreement",
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Options:
    tie: str | None
    convention: AgreementConvention
    method: ProportionMethod
    confidence_level: float


def _order_agreement(frame: pl.DataFrame, column: str, name: str, options: _Options) -> OrderAgreement:
    """Win / tie / loss of one verdict column (coded as the original labels) against ``label``."""
    verdict = frame[column]
    n = frame.height
    unparseable = int(verdict.null_count())
    agreed = int((verdict == frame["label"]).fill_null(False).sum())
    ties = int((verdict == options.tie).fill_null(False).sum()) if options.tie is not None else 0
    return OrderAgreement(
        order=name,
        n_pairs=n,
        n_agreed=agreed,
        n_worse=n - agreed - ties - unparseable,
        n_tie=ties,
        n_unparseable=unparseable,
        accuracy=_rate(agreed, n, options, "no pairs"),
    )


def _rate(x: int, n: int, options: _Options, why: str) -> Proportion:
    return proportion(
        x, n, method=options.method, confidence_level=options.confidence_level, undefined_reason=f"{why}: undefined"
    )


def _agreement(
    frame: pl.DataFrame, name: str | None, order: OrderSensitivity | None, options: _Options
) -> PairwiseAgreement:
    """The agreement of one part of the set (the whole, or a slice) with its order statistics."""
    original = _order_agreement(frame, "verdict", "original", options)
    if order is None:
        unmeasured = dict.fromkeys(_TWO_ORDER_FIELDS)
        return PairwiseAgreement(
            slice=name,
            n_pairs=frame.height,
            original=original,
            convention=options.convention,
            by_slice=(),
            **unmeasured,
        )
    swapped = _order_agreement(frame, "verdict_swapped", "swapped", options)
    both_null = int((frame["verdict"].is_null() & frame["verdict_swapped"].is_null()).sum())
    n_parsed = frame.height - order.n_unparseable
    if options.convention == "both-unparseable-agree":
        positional = _rate(order.n_consistent + both_null, frame.height, options, "no pairs")
    else:
        positional = _rate(order.n_consistent, n_parsed, options, "no pair parseable in both orders")
    both = int(
        ((frame["verdict"] == frame["label"]) & (frame["verdict_swapped"] == frame["label"])).fill_null(False).sum()
    )
    return PairwiseAgreement(
        slice=name,
        n_pairs=frame.height,
        original=original,
        swapped=swapped,
        two_order_accuracy=(original.n_agreed + swapped.n_agreed) / (2 * frame.height) if frame.height else None,
        both_correct=_rate(both, frame.height, options, "no pairs"),
        convention=options.convention,
        n_consistent=order.n_consistent,
        n_flips=n_parsed - order.n_consistent,
        n_both_unparseable=both_null,
        n_one_unparseable=order.n_unparseable - both_null,
        positional_agreement=positional,
        by_slice=(),
    )
