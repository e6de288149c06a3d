"""Fixtures of the judge-calibration tests: the bundled LLMBar extract and small frames."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from tests.conftest import DATA

LLMBAR = DATA / "llmbar_judge_swap"

#: The LLMBar mapping: item index, gold/human label, verdicts in both orders, judge and strategy.
LLMBAR_MAP = {
    "item": "item_idx",
    "label": "label",
    "verdict": "winner_original_order",
    "verdict_swapped": "winner_swapped_order",
    "judge": "evaluator",
    "rubric": "strategy",
}


def mt_bench_where(evaluator: str, strategy: str = "Vanilla_NoRules") -> dict[str, str]:
    """Filters selecting one LLMBar configuration on the MT-Bench subset."""
    return {"subset": "Processed/MT-Bench", "evaluator": evaluator, "strategy": strategy}


@pytest.fixture
def llmbar_judgments() -> Path:
    return LLMBAR / "judgments.csv"


@pytest.fixture
def llmbar_items() -> Path:
    return LLMBAR / "items.csv"


@pytest.fixture(params=["DataFrame", "LazyFrame"])
def frame_kind(request: pytest.FixtureRequest) -> str:
    """Run a test once with a DataFrame and once with a LazyFrame."""
    return str(request.param)


def as_kind(frame: pl.DataFrame, kind: str) -> pl.DataFrame | pl.LazyFrame:
    return frame.lazy() if kind == "LazyFrame" else frame
