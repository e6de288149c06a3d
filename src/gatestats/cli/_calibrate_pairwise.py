"""Terminal tables of ``calibrate`` for pairwise judges: win / tie / loss, both orders, flips by slice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gatestats.io.text import visible

if TYPE_CHECKING:
    from gatestats.judges import JudgeCalibration, Proportion
    from gatestats.judges.pairwise import OrderAgreement, PairwiseAgreement

__all__ = ["pairwise_row_names", "rate_cells", "render_pairwise", "term"]

#: The order of a pairwise judge's verdicts, as the tables name it.
_ORDER_NAMES = {"original": "original (A first)", "swapped": "swapped (B first)"}
_CONVENTIONS = {
    "parseable-only": "both orders parseable",
    "both-unparseable-agree": "both unparseable = agree, LLMBar",
}


def term(text: object) -> str:
    """Data for the terminal: invisible characters escaped, Rich markup escaped.

    Parameters
    ----------
    text
        A name or value read from the data.

    Returns
    -------
    str
        The text to print.
    """
    return escape(visible(text))


def pvalue_cell(value: float | None) -> str:
    """A p-value as printed: 4 decimals, scientific below 0.001, a dash when there is none.

    Parameters
    ----------
    value
        The p-value.

    Returns
    -------
    str
        The cell.
    """
    return "—" if value is None else (f"{value:.2e}" if value < 1e-3 else f"{value:.4f}")


def rate_cells(value: Proportion | Mapping[str, Any] | None) -> tuple[str, str]:
    """A rate's cell and count: a :class:`Proportion`, or one as its ``to_dict``.

    Parameters
    ----------
    value
        The rate (``None``: not measured).

    Returns
    -------
    tuple of str
        ``estimate [low, high]`` (or why there is none) and ``numerator/n``.
    """
    if value is None:
        return "not measured", "—"
    if not isinstance(value, Mapping):
        value = value.to_dict()
    counts = f"{value['numerator']}/{value['n']}"
    if value["status"] != "ok":
        return "insufficient evidence", counts
    return f"{value['estimate']:.3f} [{value['ci_low']:.3f}, {value['ci_high']:.3f}]", counts


def pairwise_row_names(calibration: JudgeCalibration) -> tuple[str, str, str]:
    """The false-pass, false-fail and accuracy rows of a pairwise judge in pairwise words.

    The positive value means "A is better"; the rate's gate name stays at the end (a policy's
    ``max_false_pass_rate`` limits it).

    Parameters
    ----------
    calibration
        A pairwise judge's calibration.

    Returns
    -------
    tuple of str
        The false-pass, false-fail and accuracy row names.
    """
    a, b = term(repr(calibration.positive)), term(repr(calibration.negative))
    tie = "" if calibration.tie is None else f" or a tie {term(repr(calibration.tie))}"
    return (
        f"picked the worse output {a} (people preferred {b}): false-pass rate",
        f"picked the worse output {b}{tie} (people preferred {a}): false-fail rate",
        "agreed with people (parseable verdicts)",
    )


def render_pairwise(pairwise: PairwiseAgreement, calibration: JudgeCalibration, console: Console) -> None:
    """Print win / tie / loss per order, the two-order statistics, and order statistics by slice.

    Parameters
    ----------
    pairwise
        The pairwise agreement of the calibration set.
    calibration
        The calibration (its per-slice order statistics, the confidence level).
    console
        Where to print.
    """
    level = f"{calibration.confidence_level:.0%}"
    orders = [o for o in (pairwise.original, pairwise.swapped) if o is not None]
    console.print(_order_table(orders, level))
    if pairwise.swapped is not None:
        console.print(_both_orders_table(pairwise, level))
    if pairwise.by_slice:
        console.print(_slice_table(pairwise.by_slice, calibration.details.get("order_by_slice") or [], level))


def _order_table(orders: Sequence[OrderAgreement], level: str) -> Table:
    title = "pairwise: the judge against people in each order (picked worse: the worse output; a tie is not correct)"
    table = Table(title=title, title_justify="left")
    for name in ("order", "agreed with people", "picked worse", "tie", "unparseable"):
        table.add_column(name, justify="left" if name == "order" else "right", no_wrap=True)
    table.add_column(f"accuracy [{level} CI]", justify="right", no_wrap=True)
    table.add_column("count", justify="right")
    for o in orders:
        cell, count = rate_cells(o.accuracy)
        table.add_row(
            _ORDER_NAMES[o.order], str(o.n_agreed), str(o.n_worse), str(o.n_tie), str(o.n_unparseable), cell, count
        )
    return table


def _both_orders_table(pairwise: PairwiseAgreement, level: str) -> Table:
    table = Table(title="pairwise: both orders", title_justify="left")
    table.add_column("statistic")
    table.add_column(f"estimate [{level} CI]", justify="right", no_wrap=True)
    table.add_column("count", justify="right")
    assert pairwise.swapped is not None
    correct = pairwise.original.n_agreed + pairwise.swapped.n_agreed
    average = pairwise.two_order_accuracy
    table.add_row(
        "two-order average accuracy",
        "insufficient evidence" if average is None else f"{average:.3f}",
        f"{correct}/{2 * pairwise.n_pairs}",
    )
    table.add_row("correct in both orders", *rate_cells(pairwise.both_correct))
    table.add_row(
        f"positional agreement ({_CONVENTIONS[pairwise.convention]})", *rate_cells(pairwise.positional_agreement)
    )
    table.add_row(
        "unparseable in both orders / in one order",
        "",
        f"{pairwise.n_both_unparseable} / {pairwise.n_one_unparseable}",
    )
    return table


def _slice_table(slices: Sequence[PairwiseAgreement], order: Sequence[Mapping[str, Any]], level: str) -> Table:
    """Per slice: correct in each order, flips with the flip rate, position bias, positional agreement."""
    table = Table(title="pairwise by slice (correct: agreed with people, original / swapped order)")
    table.title_justify = "left"
    table.add_column("slice", min_width=8)
    names = ["pairs", "correct", "flips", f"flip rate [{level} CI]", "1st / 2nd", "sign p", "agreement"]
    for name in names:
        table.add_column(name, justify="right", no_wrap=True)
    by_name = {o["slice"]: o for o in order}
    for s in slices:
        o = by_name.get(s.slice)
        flip, flips = rate_cells(None if o is None else o["flip_rate"])
        p = None if o is None else o["position_bias"]["pvalue"]
        swapped = "" if s.swapped is None else f" / {rate_cells(s.swapped.accuracy)[1]}"
        table.add_row(
            term(s.slice) if s.slice else "(empty)",
            str(s.n_pairs),
            rate_cells(s.original.accuracy)[1] + swapped,
            flips,
            flip,
            "—" if o is None else f"{o['n_biased_first']} / {o['n_biased_second']}",
            pvalue_cell(p),
            rate_cells(s.positional_agreement)[1],
        )
    return table
