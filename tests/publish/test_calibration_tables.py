"""``JudgeCalibration.table()`` and ``gatestats calibrate --format`` on the bundled LLMBar data."""

from __future__ import annotations

import io
import json
import re
from typing import Any

import polars as pl
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.judges import JudgeCalibration
from gatestats.publish import render
from tests.judges.conftest import LLMBAR

runner = CliRunner()
ARGS = [
    str(LLMBAR / "judgments.csv"),
    *("--where", "subset=Processed/MT-Bench", "--where", "evaluator=GPT-4", "--where", "strategy=Vanilla_NoRules"),
    "--map",
    "item=item_idx,label=label,verdict=winner_original_order,verdict_swapped=winner_swapped_order,judge=evaluator,"
    "rubric=strategy",
    *("--positive", "1", "--kind", "pairwise"),
]


def _invoke(*args: str) -> Any:
    return runner.invoke(app, ["calibrate", *ARGS, *args], catch_exceptions=False)


def test_markdown_reproduces_the_published_counts() -> None:
    # Zeng et al. (2024), LLMBar: GPT-4 on MT-Bench, 159/200 correct in the original order.
    result = _invoke("--format", "markdown")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "**judge GPT-4, rubric Vanilla\\_NoRules: 200 items**"
    assert lines[2] == "| statistic | estimate \\[95% CI\\] | count |"
    assert "| accuracy (parseable verdicts) | 0.795 \\[0.734, 0.845\\] | 159/200 |" in lines
    assert any(line.startswith("| order-flip rate (both orders parseable) |") for line in lines)


def test_csv_latex_html_and_the_refusals() -> None:
    csv = pl.read_csv(io.StringIO(_invoke("--format", "csv").stdout))
    assert csv["statistic"].to_list() == ["false_pass_rate", "false_fail_rate", "kappa", "flip_rate"]
    assert csv["numerator"].to_list()[:2] == [21, 20]
    assert "P(judge passes \\textbar{} label fails)" in _invoke("--format", "latex").stdout
    html = _invoke("--format", "html").stdout
    assert "159/200" in html
    assert html.startswith('<div id="gatestats-')
    both = _invoke("--json", "--format", "csv")
    assert both.exit_code == 2
    multi = runner.invoke(app, ["calibrate", *ARGS[:-4], "--positive", "1", "--classes", "1,2", "--format", "latex"])
    assert multi.exit_code == 2
    assert "multi-class calibration prints as terminal or json only" in " ".join(
        re.sub("[│╭╮╰╯─]", " ", multi.stderr).split()
    )


def test_the_api_table_and_summary() -> None:
    calibration = JudgeCalibration.from_dict(json.loads(_invoke("--json").stdout))
    assert "159/200" in calibration.summary()
    assert "false_pass_rate" in render(calibration.table(), "csv")
    assert "159/200" in calibration._repr_html_()
