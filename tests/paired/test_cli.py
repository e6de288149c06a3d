"""``gatestats compare`` and ``gatestats plan`` end to end (registered on a tiny Typer app here;
the lead registers them in ``gatestats.cli``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gatestats.cli.compare import compare_command
from gatestats.cli.plan import plan_command
from tests.paired.conftest import table_records, trial_records

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("compare")(compare_command)
app.command("plan")(plan_command)
runner = CliRunner()


def _plain(text: str) -> str:
    """Usage errors come in a rich box that wraps lines: drop the box and join the words."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def _write(frame: Any, path: Path) -> Path:
    """Minimal contract-v1 JSONL records (optional fields left out when null)."""
    lines = []
    for i, row in enumerate(frame.iter_rows(named=True)):
        record = {"schema_version": 1, "record_id": f"r-{i}", "run_set_id": "set-1"}
        record.update({key: value for key, value in row.items() if value is not None})
        lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def bentur(tmp_path: Path) -> Path:
    return _write(table_records(1, 1, 7, 12), tmp_path / "bentur.jsonl")


@pytest.fixture
def three(tmp_path: Path) -> Path:
    import numpy as np

    rng = np.random.default_rng(2)
    ease = rng.random(60)
    outcomes = {
        s: [[int(rng.random() < min(1, e + d)) for _ in range(3)] for e in ease]
        for s, d in (("A", 0), ("B", 0.05), ("C", 0.3))
    }
    return _write(trial_records(outcomes), tmp_path / "three.jsonl")


def test_compare_json_has_documented_fields(bentur: Path) -> None:
    result = _invoke("compare", bentur, "--baseline", "base", "--candidate", "cand", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert (payload["n_pairs"], payload["b"], payload["c"]) == (21, 1, 7)
    assert (round(payload["pvalue_exact"], 3), round(payload["pvalue_midp"], 3)) == (0.070, 0.039)
    assert (round(payload["diff_ci_low"], 4), round(payload["diff_ci_high"], 4)) == (0.0260, 0.5172)
    assert payload["flips"] == {"pass_to_fail": ["case-1"], "fail_to_pass": [f"case-{i}" for i in range(2, 9)]}
    assert payload["records"] == [str(bentur)]


def test_compare_tables_show_flips_and_tests(bentur: Path) -> None:
    result = _invoke("compare", bentur, "--baseline", "base", "--candidate", "cand", "--margin", "0.3")
    assert result.exit_code == 0, result.stderr
    for text in (
        "cand (candidate) vs base (baseline): 21 paired cases",
        "exact 0.0703, mid-p 0.0391",
        "flips pass → fail: case-1",
        "[0.0260, 0.5172] (95%, tango)",
        "non-inferior",
    ):
        assert text in result.stdout


def test_compare_all_pairs_and_vs_baseline_json(three: Path) -> None:
    result = _invoke("compare", three, "--all-pairs", "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert [(x["baseline"], x["candidate"]) for x in payload] == [("A", "B"), ("A", "C"), ("B", "C")]
    assert all(x["correction"] == "holm" and x["pvalue_adjusted"] >= x["pvalue"] for x in payload)
    versus = _invoke("compare", three, "--vs-baseline", "C", "--correction", "bh", "--json")
    assert [(x["baseline"], x["candidate"], x["correction"]) for x in json.loads(versus.stdout)] == [
        ("C", "A", "bh"),
        ("C", "B", "bh"),
    ]
    table = _invoke("compare", three, "--all-pairs")
    assert "3 paired comparisons (all pairs), holm" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ("--baseline", "base", "--candidate", "nope"),
            "error: candidate: no records for system 'nope' (got systems 'base', 'cand')",
        ),
        (("--baseline", "ghost", "--candidate", "cand"), "error: baseline: no records for system 'ghost'"),
    ],
)
def test_compare_unknown_system_exits_1_naming_it(bentur: Path, args: tuple[str, ...], message: str) -> None:
    result = _invoke("compare", bentur, *args)
    assert result.exit_code == 1
    assert message in result.stderr
    assert result.stdout == ""


def test_compare_mismatched_versions_exit_1(tmp_path: Path) -> None:
    import polars as pl

    frame = trial_records({"A": [[1], [0]], "B": [[1], [1]]}).with_columns(
        case_version=pl.when(pl.col("system") == "A").then(pl.lit("v1")).otherwise(pl.lit("v2"))
    )
    path = _write(frame, tmp_path / "versions.jsonl")
    result = _invoke("compare", path, "--baseline", "A", "--candidate", "B")
    assert result.exit_code == 1
    assert "error: 2 case id(s) were run at different versions by baseline 'A' and candidate 'B'" in result.stderr
    assert "--shared-versions-only" in result.stderr
    restricted = _invoke("compare", path, "--baseline", "A", "--candidate", "B", "--shared-versions-only", "--json")
    assert restricted.exit_code == 1  # after excluding both versions nothing is shared
    assert "share no case" in restricted.stderr


def test_compare_one_side_with_no_case_exits_1(tmp_path: Path) -> None:
    import polars as pl

    frame = pl.concat([trial_records({"A": [[1]]}), trial_records({"B": [[1]]}).with_columns(case_id=pl.lit("x"))])
    path = _write(frame, tmp_path / "disjoint.jsonl")
    result = _invoke("compare", path, "--baseline", "A", "--candidate", "B")
    assert result.exit_code == 1
    assert "error: baseline 'A' (1 cases) and candidate 'B' (1 cases) share no case" in result.stderr


@pytest.mark.parametrize("margin", ["0", "1", "-0.2", "1.5"])
def test_compare_margin_outside_unit_interval_is_a_usage_error(bentur: Path, margin: str) -> None:
    result = _invoke("compare", bentur, "--baseline", "base", "--candidate", "cand", "--margin", margin)
    assert result.exit_code == 2
    assert "--margin" in result.stderr
    assert f"must lie strictly between 0 and 1 (got {float(margin)})" in _plain(result.stderr)


@pytest.mark.parametrize(
    ("args", "hint", "message"),
    [
        (("--baseline", "base"), "--candidate", "--baseline and --candidate go together (got no --candidate)"),
        (("--all-pairs", "--vs-baseline", "base"), "--baseline/--all-pairs/--vs-baseline", "choose exactly one of"),
        ((), "--baseline/--all-pairs/--vs-baseline", "(got 0 of them)"),
        (
            ("--all-pairs", "--correction", "fdr"),
            "--correction",
            "must be one of holm, bonferroni, hochberg, bh, none (got 'fdr')",
        ),
        (("--all-pairs", "--alternative", "worse"), "--alternative", "(got 'worse')"),
        (
            ("--all-pairs", "--confidence-level", "1.5"),
            "--confidence-level",
            "must lie strictly between 0 and 1 (got 1.5)",
        ),
        (("--all-pairs", "--n-resamples", "50"), "--n-resamples", "must be an integer >= 100 (got 50)"),
        (("--all-pairs", "--n-permutations", "98"), "--n-permutations", "must be an integer >= 99 (got 98)"),
        (("--all-pairs", "--seed", "-1"), "--seed", "must be an integer >= 0 (got -1)"),
        (
            ("--all-pairs", "--metric", "pass_k"),
            "--metric",
            "must be one of pass_at_k, pass_hat_k (got 'pass_k')",
        ),
    ],
)
def test_compare_usage_errors_exit_2(bentur: Path, args: tuple[str, ...], hint: str, message: str) -> None:
    result = _invoke("compare", bentur, *args)
    assert result.exit_code == 2
    assert hint in result.stderr
    assert message in _plain(result.stderr)


def test_compare_without_correction_reports_raw_pvalues_and_help_lists_every_correction(three: Path) -> None:
    payload = json.loads(_invoke("compare", three, "--all-pairs", "--correction", "none", "--json").stdout)
    assert [x["correction"] for x in payload] == ["none"] * 3
    assert [x["pvalue_adjusted"] for x in payload] == [x["pvalue"] for x in payload]
    assert "holm, bonferroni, hochberg, bh, none" in _plain(_invoke("compare", "--help").stdout)


def test_plan_cases_mde_and_false_block_json() -> None:
    cases = json.loads(
        _invoke("plan", "cases", "--delta", "0.4", "--discordance", "0.5", "--test", "exact", "--json").stdout
    )
    assert (cases["plan"], cases["n_connor"]) == ("cases", 23)
    mde = json.loads(_invoke("plan", "mde", "--cases", "500", "--discordance", "0.2", "--json").stdout)
    assert mde["status"] == "ok"
    assert 0.05 < mde["mde_exact"] < 0.06
    block = json.loads(
        _invoke("plan", "false-block", "--cases", "200", "--k", "4", "--error-rate", "0.001", "--json").stdout
    )
    assert round(block["false_block_all_k"], 4) == 0.5509
    assert block["tolerated_failures"] == 2
    table = _invoke("plan", "cases", "--delta", "-0.05", "--discordance", "0.2")
    assert table.exit_code == 0
    assert "n connor" in table.stdout


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("cases", "--discordance", "0.2"), "--delta"),
        (("mde", "--discordance", "0.2"), "--cases"),
        (("false-block", "--cases", "10", "--k", "2"), "--error-rate"),
        (("sizes",), "must be one of cases, mde, false-block, cases-trials (got 'sizes')"),
        (("cases", "--delta", "0.3", "--discordance", "0.2"), "must satisfy 0 < |delta| <= discordance"),
        (("mde", "--cases", "10", "--discordance", "1.5"), "must lie in (0, 1] (got 1.5)"),
    ],
)
def test_plan_usage_errors_exit_2(args: tuple[str, ...], message: str) -> None:
    result = _invoke("plan", *args)
    assert result.exit_code == 2
    assert message in _plain(result.stderr)
