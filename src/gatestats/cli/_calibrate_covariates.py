"""Terminal table of ``calibrate --by-covariate``: disagreement with people by covariate bin, the tests."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Console
from rich.table import Table

from gatestats.cli._calibrate_pairwise import pvalue_cell, rate_cells, term

if TYPE_CHECKING:
    from gatestats.judges.covariates import CovariateBias, CovariateTest

__all__ = ["render_covariates"]

_TESTS = {
    "fisher-exact": "Fisher exact",
    "chi-square": "chi-square",
    "permutation-chi-square": "permutation chi-square",
}


def render_covariates(bias: CovariateBias, console: Console, *, confidence_level: float) -> None:
    """Print each covariate's bins (disagreement rate with its interval) and its test, Holm-adjusted.

    Parameters
    ----------
    bias
        The result of :func:`gatestats.judges.judge_bias_by_covariate`.
    console
        Where to print.
    confidence_level
        The level of the bins' intervals (for the header).
    """
    title = (
        f"judge bias by covariate: disagreement with people by bin ({bias.n_unparseable} unparseable left out; "
        f"Holm across covariates, alpha {bias.alpha:g})"
    )
    table = Table(title=title, title_justify="left")
    table.add_column("covariate / bin", min_width=12)
    table.add_column(f"disagreement [{confidence_level:.0%} CI]", justify="right", no_wrap=True)
    table.add_column("count", justify="right", no_wrap=True)
    table.add_column("test", no_wrap=True)
    table.add_column("p", justify="right", no_wrap=True)
    table.add_column("Holm p", justify="right", no_wrap=True)
    for c in bias.covariates:
        table.add_row(term(c.covariate), "", f"n={c.n_items}", *_test_cells(c))
        for b in c.bins:
            table.add_row(f"  {term(b.label)}", *rate_cells(b.disagreement_rate), "", "", "")
        if c.n_missing:
            table.add_row("  (missing, left out)", "", str(c.n_missing), "", "", "")
    console.print(table)
    for c in bias.covariates:
        if c.reason is not None:
            console.print(f"  {term(c.covariate)}: insufficient evidence: {term(c.reason)}", highlight=False)


def _test_cells(c: CovariateTest) -> tuple[str, str, str]:
    if c.test is None or c.pvalue is None or c.adjusted_pvalue is None:
        return "insufficient evidence", "—", "—"
    flag = " *" if c.flagged else ""
    return _TESTS[c.test], pvalue_cell(c.pvalue), pvalue_cell(c.adjusted_pvalue) + flag
