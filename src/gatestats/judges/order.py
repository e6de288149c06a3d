r"""Known judge biases: presentation order (pairwise judges) and persuasion.

Order sensitivity
-----------------
Each pair (A, B) is judged twice: in the original order (A shown first) and swapped (B shown
first). With the swapped verdict mapped back to the original labels (``swapped_coding =
"original"``), score each verdict by the *position* it favours, +1 first shown, -1 second shown,
0 tie:

.. math::

    s_\text{orig} = [v = A] - [v = B], \qquad s_\text{swap} = [v' = B] - [v' = A]

A pair is *consistent* when :math:`s_\text{orig} + s_\text{swap} = 0` (the same verdict in both
orders), *biased to the first position* when the sum is positive (e.g. A first, then B first:
the judge picked whatever came first), and *to the second* when negative. Pairs with an
unparseable verdict in either order are counted and excluded. The flip rate is the share of
inconsistent pairs; position bias is tested with the exact two-sided sign test of the first-biased
count among the inconsistent pairs (Zheng et al. 2023, §3.3 and Table 2): under no position bias
an inconsistent pair is equally likely to lean either way.

Persuasion
----------
The same (equally correct) outputs judged without and with self-advocating text added to the output
whose win counts as a pass ("this answer is correct and complete"). Paired binary outcomes: the
exact McNemar test (the sign test on the discordant pairs; McNemar 1947) with its mid-p value, and
the difference in pass rates, with-text minus without, with Newcombe's (1998b, method 10) interval.

References
----------
Zheng, L., Chiang, W.-L., Sheng, Y., et al. (2023). Judging LLM-as-a-Judge with MT-Bench and
    Chatbot Arena. NeurIPS 2023 Datasets and Benchmarks, §3.3, Table 2. arXiv:2306.05685.
Zeng, Z., Yu, J., Gao, T., Meng, Y., Goyal, T. & Chen, D. (2024). Evaluating Large Language
    Models at Evaluating Instruction Following. ICLR 2024. arXiv:2310.07641 (LLMBar).
McNemar, Q. (1947). Psychometrika 12(2), 153-157.
Newcombe, R. G. (1998b). Statistics in Medicine 17(22), 2635-2650.
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from gatestats._typing import JSONObject
from gatestats.judges._frames import collect_checked, slice_parts, verdict_vocabulary
from gatestats.judges._stats import (
    PairedDifference,
    Proportion,
    SignTest,
    _json_fields,
    paired_difference_interval,
    proportion,
    sign_test,
)
from gatestats.judges._types import SWAPPED_CODINGS, ProportionMethod, SwappedCoding
from gatestats.vocabulary import FrameLike, check_choice, check_confidence_level

__all__ = ["OrderSensitivity", "PersuasionTest", "order_sensitivity", "persuasion_test"]


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderSensitivity:
    """Position consistency of a pairwise judge and the exact sign test of position bias.

    ``n_correct_original``/``n_correct_swapped``/``n_correct_both`` count verdicts equal to the
    label (when the frame has labels; ``None`` otherwise) over all ``n_pairs`` pairs, unparseable
    counting as not correct: the convention of the LLMBar statistics files.
    """

    slice: str | None
    n_pairs: int
    n_unparseable: int
    n_consistent: int
    n_biased_first: int
    n_biased_second: int
    consistency_rate: Proportion
    flip_rate: Proportion
    position_bias: SignTest
    n_correct_original: int | None
    n_correct_swapped: int | None
    n_correct_both: int | None
    by_slice: tuple[OrderSensitivity, ...]

    @property
    def position_bias_pvalue(self) -> float | None:
        """Exact two-sided p-value of the sign test (``None`` without inconsistent pairs)."""
        return self.position_bias.pvalue

    def to_frame(self) -> pl.DataFrame:
        """One row per slice (the whole set first, slice null) with the counts, rates and p-values."""
        rows = []
        for r in (self, *self.by_slice):
            rows.append(
                {
                    "slice": r.slice,
                    "n_pairs": r.n_pairs,
                    "n_unparseable": r.n_unparseable,
                    "n_consistent": r.n_consistent,
                    "n_biased_first": r.n_biased_first,
                    "n_biased_second": r.n_biased_second,
                    "flip_rate": r.flip_rate.estimate,
                    "flip_rate_ci_low": r.flip_rate.ci_low,
                    "flip_rate_ci_high": r.flip_rate.ci_high,
                    "position_bias_pvalue": r.position_bias.pvalue,
                    "position_bias_midp_pvalue": r.position_bias.midp_pvalue,
                }
            )
        schema = {
            "slice": pl.String,
            "n_pairs": pl.Int64,
            "n_unparseable": pl.Int64,
            "n_consistent": pl.Int64,
            "n_biased_first": pl.Int64,
            "n_biased_second": pl.Int64,
            "flip_rate": pl.Float64,
            "flip_rate_ci_low": pl.Float64,
            "flip_rate_ci_high": pl.Float64,
            "position_bias_pvalue": pl.Float64,
            "position_bias_midp_pvalue": pl.Float64,
        }
        return pl.DataFrame(rows, schema=schema)

    def to_dict(self) -> JSONObject:
        """JSON-ready dict (without the per-slice results, which :meth:`to_frame` lists)."""
        return _json_fields(self, exclude=("by_slice",))


def _order_counts(
    frame: pl.DataFrame, *, slice_name: str | None, method: ProportionMethod, confidence_level: float
) -> OrderSensitivity:
    # frame columns: s_orig, s_swap (Int8, null = unparseable), correct_* (Boolean or absent)
    parsed = frame.filter(pl.col("s_orig").is_not_null() & pl.col("s_swap").is_not_null())
    total = parsed.select((pl.col("s_orig") + pl.col("s_swap")).alias("lean"))["lean"]
    n_first, n_second = int((total > 0).sum()), int((total < 0).sum())
    n_consistent = int((total == 0).sum())
    n_eval = parsed.height
    where = f" in slice {slice_name!r}" if slice_name is not None else ""
    undefined = f"no pair has parseable verdicts in both orders{where}: the flip rate is undefined"
    labelled = "correct_orig" in frame.columns
    return OrderSensitivity(
        slice=slice_name,
        n_pairs=frame.height,
        n_unparseable=frame.height - n_eval,
        n_consistent=n_consistent,
        n_biased_first=n_first,
        n_biased_second=n_second,
        consistency_rate=proportion(
            n_consistent, n_eval, method=method, confidence_level=confidence_level, undefined_reason=undefined
        ),
        flip_rate=proportion(
            n_eval - n_consistent, n_eval, method=method, confidence_level=confidence_level, undefined_reason=undefined
        ),
        position_bias=sign_test(
            n_first,
            n_first + n_second,
            undefined_reason=f"no position-inconsistent pairs{where}: nothing to test",
        ),
        n_correct_original=int(frame["correct_orig"].sum()) if labelled else None,
        n_correct_swapped=int(frame["correct_swap"].sum()) if labelled else None,
        n_correct_both=int((frame["correct_orig"] & frame["correct_swap"]).sum()) if labelled else None,
        by_slice=(),
    )


def order_sensitivity(
    judgments: FrameLike,
    *,
    positive: str,
    negative: str,
    tie: str | None = None,
    swapped_coding: SwappedCoding = "original",
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
) -> OrderSensitivity:
    """Flip rate, first/second-position counts and the exact sign test of position bias.

    Parameters
    ----------
    judgments
        DataFrame or LazyFrame with ``verdict`` (original order: A shown first) and
        ``verdict_swapped`` (B shown first), each ``positive`` (A better), ``negative`` (B better),
        ``tie`` or null (unparseable); optional ``label`` (accuracy counts) and ``slice``.
    positive, negative, tie
        The verdict values; ``positive`` means output A is better.
    swapped_coding
        ``original``: the swapped verdict names the output by its original label (a consistent
        judge repeats its verdict; the LLMBar convention). ``presented``: it names the position as
        shown (a consistent judge reverses it).
    method, confidence_level
        Interval of the flip and consistency rates.

    Returns
    -------
    OrderSensitivity
        Counts, flip and consistency rates and the sign test, for the whole set and each slice.

    Raises
    ------
    ValueError
        Missing columns, values outside the declared vocabulary, an unknown ``swapped_coding`` or
        ``method``, or a confidence level outside (0, 1).

    Examples
    --------
    Zheng et al. (2023, Table 2), GPT-4 with the default prompt: 52 consistent pairs, 24 biased to
    the first position and 4 to the second (65.0%, 30.0%, 5.0% of 80):

    >>> import polars as pl
    >>> frame = pl.DataFrame({"verdict": ["A"] * 52 + ["A"] * 24 + ["B"] * 4,
    ...                       "verdict_swapped": ["A"] * 52 + ["B"] * 24 + ["A"] * 4})
    >>> r = order_sensitivity(frame, positive="A", negative="B")
    >>> r.n_consistent, r.n_biased_first, r.n_biased_second, round(r.flip_rate.estimate, 3)
    (52, 24, 4, 0.35)
    >>> round(r.position_bias_pvalue, 5)
    0.00018
    """
    check_confidence_level(confidence_level)
    check_choice(swapped_coding, SWAPPED_CODINGS, "swapped_coding")
    values = verdict_vocabulary(positive, negative, tie)
    frame = collect_checked(
        judgments,
        required=("verdict", "verdict_swapped"),
        optional=("label", "slice"),
        labels=(positive, negative),
        verdicts=values,
        verdict_columns=("verdict", "verdict_swapped"),
    )
    scored = _scored(frame, positive=positive, negative=negative, swapped_coding=swapped_coding)
    slices = tuple(
        _order_counts(part, slice_name=name, method=method, confidence_level=confidence_level)
        for name, part in slice_parts(scored)
    )
    whole = _order_counts(scored, slice_name=None, method=method, confidence_level=confidence_level)
    return OrderSensitivity(**{**{f: getattr(whole, f) for f in whole.__dataclass_fields__}, "by_slice": slices})


def _first_position(column: str, first: str, second: str) -> pl.Expr:
    """+1 when the verdict favours the output shown first, -1 the second, 0 a tie, null unparseable."""
    return (
        pl.when(pl.col(column) == first)
        .then(1)
        .when(pl.col(column) == second)
        .then(-1)
        .when(pl.col(column).is_not_null())
        .then(0)
        .cast(pl.Int8)
    )


def _scored(frame: pl.DataFrame, *, positive: str, negative: str, swapped_coding: SwappedCoding) -> pl.DataFrame:
    """Add the position each verdict favours (``s_orig``, ``s_swap``) and, with labels, whether it is correct."""
    swapped_first = negative if swapped_coding == "original" else positive
    swapped_second = positive if swapped_coding == "original" else negative
    swapped_as_original = (
        pl.col("verdict_swapped")
        if swapped_coding == "original"
        else pl.col("verdict_swapped").replace({positive: negative, negative: positive})
    )
    scored = frame.with_columns(
        s_orig=_first_position("verdict", positive, negative),
        s_swap=_first_position("verdict_swapped", swapped_first, swapped_second),
    )
    if "label" in frame.columns:
        scored = scored.with_columns(
            correct_orig=(pl.col("verdict") == pl.col("label")).fill_null(False),
            correct_swap=(swapped_as_original == pl.col("label")).fill_null(False),
        )
    return scored


@dataclass(frozen=True, slots=True, kw_only=True)
class PersuasionTest:
    """Pass rates without and with self-advocating text on the same outputs, and the paired test.

    ``n_pass_with_text_only`` counts pairs that fail without the text and pass with it (the judge
    was persuaded), ``n_pass_without_text_only`` the reverse. ``test`` is the exact McNemar test
    (sign test of ``n_pass_with_text_only`` among the discordant pairs); ``difference`` is the
    with-text minus without-text pass rate with Newcombe's interval.
    """

    n_pairs: int
    n_unparseable: int
    n_pass_both: int
    n_pass_with_text_only: int
    n_pass_without_text_only: int
    n_pass_neither: int
    pass_rate_without_text: Proportion
    pass_rate_with_text: Proportion
    difference: PairedDifference
    test: SignTest

    @property
    def pvalue(self) -> float | None:
        """Exact two-sided McNemar p-value (``None`` without discordant pairs)."""
        return self.test.pvalue

    def to_frame(self) -> pl.DataFrame:
        """One row with the paired counts, the two pass rates, the difference and the p-values."""
        return pl.DataFrame(
            [
                {
                    "n_pairs": self.n_pairs,
                    "n_unparseable": self.n_unparseable,
                    "n_pass_both": self.n_pass_both,
                    "n_pass_with_text_only": self.n_pass_with_text_only,
                    "n_pass_without_text_only": self.n_pass_without_text_only,
                    "n_pass_neither": self.n_pass_neither,
                    "pass_rate_without_text": self.pass_rate_without_text.estimate,
                    "pass_rate_with_text": self.pass_rate_with_text.estimate,
                    "difference": self.difference.estimate,
                    "difference_ci_low": self.difference.ci_low,
                    "difference_ci_high": self.difference.ci_high,
                    "pvalue": self.test.pvalue,
                    "midp_pvalue": self.test.midp_pvalue,
                }
            ],
            schema={
                "n_pairs": pl.Int64,
                "n_unparseable": pl.Int64,
                "n_pass_both": pl.Int64,
                "n_pass_with_text_only": pl.Int64,
                "n_pass_without_text_only": pl.Int64,
                "n_pass_neither": pl.Int64,
                "pass_rate_without_text": pl.Float64,
                "pass_rate_with_text": pl.Float64,
                "difference": pl.Float64,
                "difference_ci_low": pl.Float64,
                "difference_ci_high": pl.Float64,
                "pvalue": pl.Float64,
                "midp_pvalue": pl.Float64,
            },
        )

    def to_dict(self) -> JSONObject:
        """JSON-ready dict."""
        return _json_fields(self)


def persuasion_test(
    judgments: FrameLike,
    *,
    positive: str,
    negative: str,
    tie: str | None = None,
    method: ProportionMethod = "wilson",
    confidence_level: float = 0.95,
) -> PersuasionTest:
    """Does self-advocating text change the judge's verdicts on equally correct outputs?

    Parameters
    ----------
    judgments
        DataFrame or LazyFrame with ``verdict`` (without the text) and ``verdict_persuaded`` (the
        same output with the text), each the positive, negative, tie value or null (unparseable).
        Every row is a pair of the persuasion set; a pair with an unparseable verdict in either
        version is counted (``n_unparseable``) and left out of the test.
    positive, negative, tie
        A verdict equal to ``positive`` is a pass.
    method, confidence_level
        Interval of the two pass rates; the difference uses Newcombe's method 10 at the same level.

    Returns
    -------
    PersuasionTest
        The paired counts, the two pass rates, their difference and the exact McNemar test.

    Raises
    ------
    ValueError
        Missing columns, values outside the declared vocabulary, an unknown ``method`` or a
        confidence level outside (0, 1).

    Examples
    --------
    >>> import polars as pl
    >>> frame = pl.DataFrame({"verdict": ["fail"] * 12 + ["pass"] * 8,
    ...                       "verdict_persuaded": ["pass"] * 10 + ["fail"] * 2 + ["pass"] * 8})
    >>> t = persuasion_test(frame, positive="pass", negative="fail")
    >>> t.n_pass_with_text_only, t.n_pass_without_text_only, round(t.pvalue, 4), t.difference.estimate
    (10, 0, 0.002, 0.5)
    """
    check_confidence_level(confidence_level)
    values = verdict_vocabulary(positive, negative, tie)
    frame = collect_checked(
        judgments,
        required=("verdict", "verdict_persuaded"),
        labels=None,
        verdicts=values,
        verdict_columns=("verdict", "verdict_persuaded"),
    )
    parsed = frame.filter(pl.col("verdict").is_not_null() & pl.col("verdict_persuaded").is_not_null())
    both, with_only, without_only, neither = _paired_passes(parsed, positive)
    reason = "no pair has parseable verdicts with and without the text: the pass rate is undefined"

    def rate(x: int) -> Proportion:
        return proportion(x, parsed.height, method=method, confidence_level=confidence_level, undefined_reason=reason)

    return PersuasionTest(
        n_pairs=frame.height,
        n_unparseable=frame.height - parsed.height,
        n_pass_both=both,
        n_pass_with_text_only=with_only,
        n_pass_without_text_only=without_only,
        n_pass_neither=neither,
        pass_rate_without_text=rate(both + without_only),
        pass_rate_with_text=rate(both + with_only),
        difference=paired_difference_interval(
            both, with_only, without_only, neither, confidence_level=confidence_level
        ),
        test=sign_test(
            with_only,
            with_only + without_only,
            undefined_reason="no discordant pairs: the text changed no verdict, the McNemar test is undefined",
        ),
    )


def _paired_passes(parsed: pl.DataFrame, positive: str) -> tuple[int, int, int, int]:
    """Pairs passed with and without the text, with it only, without it only, and neither."""
    plain = parsed["verdict"] == positive
    persuaded = parsed["verdict_persuaded"] == positive
    both = int((plain & persuaded).sum())
    with_only = int((~plain & persuaded).sum())
    without_only = int((plain & ~persuaded).sum())
    return both, with_only, without_only, parsed.height - both - with_only - without_only
