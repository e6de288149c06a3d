"""``gatestats calibrate`` end to end, through a test-only Typer app (the lead registers the command)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gatestats.cli.calibrate import calibrate_command
from gatestats.judges import load_calibration

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("calibrate")(calibrate_command)


@app.command("version")
def _version() -> None:  # a second command keeps "calibrate" a subcommand, as in the real app
    """Unused."""


runner = CliRunner()
MT_BENCH_GPT4 = [
    "--where", "subset=Processed/MT-Bench", "--where", "evaluator=GPT-4", "--where", "strategy=Vanilla_NoRules",
    "--map", "item=item_idx,label=label,verdict=winner_original_order,verdict_swapped=winner_swapped_order,"
    "judge=evaluator,rubric=strategy",
    "--positive", "1", "--kind", "pairwise",
]  # fmt: skip


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, ["calibrate", *(str(a) for a in args)], catch_exceptions=False)


def test_json_reproduces_llmbar_mt_bench_gpt4(llmbar_judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "calibration.json"
    result = _invoke(llmbar_judgments, *MT_BENCH_GPT4, "--json", "-o", out)
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    for key in ("false_pass_rate", "false_fail_rate"):
        assert set(payload[key]) >= {"estimate", "ci_low", "ci_high", "n"}
    assert (payload["false_pass_rate"]["numerator"], payload["false_pass_rate"]["n"]) == (21, 99)
    assert (payload["false_fail_rate"]["numerator"], payload["false_fail_rate"]["n"]) == (20, 101)
    assert payload["flip_rate"]["numerator"] == 26
    assert payload["flip_rate"]["n"] == 200
    assert payload["position_bias_pvalue"] == pytest.approx(0.5572, abs=5e-5)
    assert payload["n_unparseable"] == 0
    assert payload["kappa"]["status"] == "ok"
    order = payload["details"]["order"]
    # The authors' figures: 159/200 correct in the original order, 165/200 swapped, agreement 174/200.
    assert (order["n_correct_original"], order["n_correct_swapped"], order["n_consistent"]) == (159, 165, 174)
    assert payload["judge_model"] == "GPT-4"
    assert payload["rubric_version"] == "Vanilla_NoRules"
    assert load_calibration(out).version == payload["version"]
    assert f"wrote calibration {payload['version']} to {out}" in result.stderr


def test_table_output(llmbar_judgments: Path) -> None:
    result = _invoke(llmbar_judgments, *MT_BENCH_GPT4)
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    (fp,) = [line for line in lines if "false-pass rate" in line]
    assert "0.212 [0.143, 0.303]" in fp
    assert "21/99" in fp
    (flip,) = [line for line in lines if "order-flip rate" in line]
    assert "26/200" in flip
    (bias,) = [line for line in lines if "position bias" in line]
    assert "0.5572" in bias
    assert "15 / 11" in bias
    assert any(line.strip().startswith("version judge-cal-") for line in lines)


def test_rubric_file_digest_and_labels_file(llmbar_judgments: Path, llmbar_items: Path, tmp_path: Path) -> None:
    rubric = tmp_path / "rubric.txt"
    rubric.write_text("Which output follows the instruction better?\n")
    result = _invoke(
        llmbar_judgments, "--labels", llmbar_items, "--where", "evaluator=GPT-4", "--where", "strategy=Vanilla_NoRules",
        "--map", "item=subset+item_idx,label=label,verdict=winner_original_order,slice=subset",
        "--positive", "1", "--kind", "pairwise", "--judge-model", "gpt-4-0613", "--rubric", rubric, "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert payload["rubric_digest"] == "sha256:" + hashlib.sha256(rubric.read_bytes()).hexdigest()
    assert payload["judge_model"] == "gpt-4-0613"
    assert [s["slice"] for s in payload["details"]["errors_by_slice"]] == [
        "Processed/FairEval",
        "Processed/LLMEval^2",
        "Processed/MT-Bench",
    ]
    assert payload["n_unparseable"] == 6


def test_bad_verdict_exits_1_and_writes_nothing(tmp_path: Path) -> None:
    table = tmp_path / "j.csv"
    table.write_text("id,human,judge\na,pass,pass\nb,fail,perhaps\n")
    out = tmp_path / "cal.json"
    result = _invoke(table, "--map", "item=id,label=human,verdict=judge", "--positive", "pass", "-o", out)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr == (
        f"error: {table}:3: field 'verdict': column 'judge': expected 'pass' or 'fail', or empty for an "
        "unparseable verdict (got 'perhaps')\n"
    )
    assert not out.exists()
    assert list(tmp_path.iterdir()) == [table]


def test_labels_that_do_not_join_exit_1_with_the_count(tmp_path: Path) -> None:
    table = tmp_path / "j.csv"
    table.write_text("id,judge\na,pass\nb,fail\nz,pass\n")
    labels = tmp_path / "l.csv"
    labels.write_text("id,human\na,pass\nb,fail\n")
    result = _invoke(table, "--labels", labels, "--map", "item=id,label=human,verdict=judge", "--positive", "pass")
    assert result.exit_code == 1
    assert result.stderr.splitlines()[0] == (
        f"error: {table}: field 'item': 1 of 3 judged item(s) have no label in {labels} (and 0 labelled item(s) "
        "there have no verdict row); every judged item needs a label"
    )


def test_no_fails_in_the_labelled_set_is_insufficient_evidence(tmp_path: Path) -> None:
    table = tmp_path / "j.csv"
    table.write_text("id,human,judge\na,pass,pass\nb,pass,fail\nc,pass,pass\n")
    result = _invoke(
        table, "--map", "item=id,label=human,verdict=judge", "--positive", "pass", "--negative", "fail", "--json"
    )
    assert result.exit_code == 0
    payload = json.loads(result.stdout)
    assert payload["false_pass_rate"] == {
        "estimate": None, "ci_low": None, "ci_high": None, "n": 0, "numerator": 0,
        "status": "insufficient_evidence",
        "reason": "no item labelled 'fail' has a parseable verdict (0 unparseable): the false-pass rate is undefined",
        "method": "wilson", "confidence_level": 0.95,
    }  # fmt: skip
    table_out = _invoke(table, "--map", "item=id,label=human,verdict=judge", "--positive", "pass", "--negative", "fail")
    assert "insufficient evidence: no item labelled 'fail'" in table_out.stdout


def test_existing_calibration_file_is_never_overwritten(llmbar_judgments: Path, tmp_path: Path) -> None:
    out = tmp_path / "cal.json"
    out.write_text("{}")
    result = _invoke(llmbar_judgments, *MT_BENCH_GPT4, "-o", out)
    assert result.exit_code == 1
    assert result.stderr == (
        f"error: {out}: calibration file already exists (calibrations are immutable; choose a new name)\n"
    )
    assert out.read_text() == "{}"


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--map", "item=id,label=human", "--positive", "pass"], "verdict=COLUMN required"),
        (
            ["--map", "item=id,label=human,verdict=judge", "--positive", "pass", "--kind", "triple"],
            "must be one of pointwise, pairwise (got 'triple')",
        ),
        (
            ["--map", "item=id,label=human,verdict=judge", "--positive", "pass", "--tie", "tie"],
            "a tie value needs --kind pairwise",
        ),
        (
            ["--map", "item=id,label=human,verdict=judge", "--positive", "pass", "--where", "oops"],
            "expected COLUMN=VALUE",
        ),
        (["--map", "item=id,label=human,verdict=judge"], "Missing option '--positive'"),
        (
            ["--map", "item=id,label=human,verdict=judge", "--positive", "p", "--interval", "wald"],
            "must be one of wilson, clopper-pearson",
        ),
        (
            ["--map", "item=id,label=human,verdict=judge", "--positive", "p", "--swapped-coding", "sideways"],
            "must be one of original, presented",
        ),
        (
            ["--map", "item=id,label=human,verdict=judge", "--positive", "p", "--confidence-level", "1.5"],
            "must lie strictly between 0 and 1",
        ),
    ],
)
def test_usage_errors_exit_2(tmp_path: Path, args: list[str], fragment: str) -> None:
    table = tmp_path / "j.csv"
    table.write_text("id,human,judge\na,pass,pass\n")
    result = _invoke(table, *args)
    assert result.exit_code == 2
    assert fragment in " ".join(result.stderr.split())
