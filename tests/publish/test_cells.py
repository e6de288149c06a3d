"""Cell texts: estimate with interval in one cell, counts beside rates, p-values never 0.0000, marks."""

from __future__ import annotations

import math

import pytest

from gatestats.publish.cells import (
    MISSING,
    count_cell,
    estimate_cell,
    mark,
    number_cell,
    pvalue_cell,
    rate_cell,
    significance_legend,
)


@pytest.mark.parametrize(
    ("value", "digits", "text"),
    [
        (0.0187, 4, "0.0187"),
        (0.0248, 4, "0.0248"),
        (0.0, 4, "< 0.0001"),
        (1e-300, 4, "< 0.0001"),
        (0.000049999, 4, "< 0.0001"),
        (0.0001, 4, "0.0001"),
        (0.00049, 3, "< 0.001"),
        (1.0, 4, "1.0000"),
        (None, 4, MISSING),
        (math.nan, 4, MISSING),
    ],
)
def test_pvalues_are_never_shown_as_zero(value: float | None, digits: int, text: str) -> None:
    assert pvalue_cell(value, digits) == text
    assert "0.0000" not in pvalue_cell(value, digits)


def test_estimates_counts_and_marks() -> None:
    assert estimate_cell(0.512, 0.468, 0.556) == "0.512 [0.468, 0.556]"
    assert estimate_cell(0.2857, 0.026, 0.5172, signed=True) == "+0.286 [0.026, 0.517]"
    assert estimate_cell(-0.0001, -0.2, 0.1, signed=True) == "0.000 [-0.200, 0.100]"
    assert estimate_cell(0.5, None, None) == "0.500"
    assert estimate_cell(None, 0.1, 0.2) == MISSING
    assert number_cell(math.inf, signed=True) == "+inf"
    assert (count_cell(256, 500), rate_cell(256, 500), rate_cell(0, 0), count_cell(None, 3)) == (
        "256/500",
        "0.512 (256/500)",
        f"{MISSING} (0/0)",
        MISSING,
    )
    assert [mark(p, 0.05) for p in (0.049, 0.05, 0.0501, None)] == ["*", "*", "", ""]
    assert significance_legend(0.05, pvalue="p adjusted (holm, mid-p)") == "* : p adjusted (holm, mid-p) <= 0.05"
