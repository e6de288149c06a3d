"""``--where`` on ``import``, ``analyze``, ``compare`` and ``cost``: exit codes, messages, equal to pre-filtering."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner, Result

from gatestats.cli import app

ROOT = Path(__file__).resolve().parents[2]
RAW = ROOT / "data" / "tau_bench" / "raw" / "gpt-4o-airline.json"  # tau-bench gpt-4o airline: 50 tasks x 4 trials


def _run(args: list[str]) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """400 records: the tau-bench file imported as systems a and b, slices ['security'] on tasks 0-4."""
    root = tmp_path_factory.mktemp("where")
    lines: list[str] = []
    for system in ("a", "b"):
        out = root / f"{system}.jsonl"
        assert _run(["import", "tau-bench", RAW, "-o", out, "--system", system]).exit_code == 0
        for line in out.read_text().splitlines():
            record = json.loads(line)
            del record["checksum"]  # edited below: a file of records from another tool carries none
            record["slices"] = ["security"] if int(record["case_id"]) < 5 else []
            lines.append(json.dumps(record))
    path = root / "records.jsonl"
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize(
    ("where", "kept"),
    [
        (["system = 'a' AND trial < 3"], 150),
        (["case_id IN ('1', '2')"], 16),
        (["array_contains(slices, 'security')"], 40),
        (["array_contains(slices, 'security')", "system = 'b'"], 20),
    ],
)
def test_analyze_says_how_many_records_it_kept(records: Path, where: list[str], kept: int) -> None:
    args = ["analyze", records, "--json"] + [arg for text in where for arg in ("--where", text)]
    result = _run(args)
    assert result.exit_code == 0, result.output
    assert f"--where kept {kept} of 400 records" in result.stderr


def test_analyze_where_equals_analyze_on_a_file_filtered_with_polars(records: Path, tmp_path: Path) -> None:
    filtered = tmp_path / "a.jsonl"
    frame = pl.read_ndjson(records, infer_schema_length=None)
    filtered.write_text("".join(json.dumps(row) + "\n" for row in frame.filter(pl.col("system") == "a").to_dicts()))
    given = _run(["analyze", records, "--where", "system = 'a'", "--json", "--k", "1-4"])
    expected = _run(["analyze", filtered, "--json", "--k", "1-4"])
    assert given.exit_code == expected.exit_code == 0, given.output + expected.output
    drop = lambda out: {k: v for k, v in json.loads(out).items() if k != "records"}  # noqa: E731
    assert drop(given.stdout) == drop(expected.stdout)


def test_without_where_nothing_is_said(records: Path) -> None:
    result = _run(["analyze", records, "--json"])
    assert result.exit_code == 0
    assert "--where" not in result.stderr


def test_compare_and_cost_filter_before_any_statistic(records: Path) -> None:
    compared = _run(
        ["compare", records, "--baseline", "a", "--candidate", "b", "--where", "case_id IN ('1', '2')", "--json"]
    )
    assert compared.exit_code == 0, compared.output
    assert "--where kept 16 of 400 records" in compared.stderr
    assert json.loads(compared.stdout)["n_pairs"] == 2
    cost = _run(["cost", records, "--where", "trial < 3", "--json"])
    assert cost.exit_code == 0, cost.output
    assert "--where kept 300 of 400 records" in cost.stderr


def test_import_writes_only_the_kept_records(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    result = _run(
        ["import", "tau-bench", RAW, "-o", out, "--where", "trial < 2", "--where", "case_id IN ('0', '1', '2')"]
    )
    assert result.exit_code == 0, result.output
    assert "--where kept 6 of 200 records" in result.stderr
    assert len(out.read_text().splitlines()) == 6


COMMANDS = {
    "analyze": ["analyze", "{records}"],
    "compare": ["compare", "{records}", "--baseline", "a", "--candidate", "b"],
    "cost": ["cost", "{records}"],
    "import": ["import", "tau-bench", str(RAW), "-o", "{out}"],
}


@pytest.mark.parametrize("command", sorted(COMMANDS))
@pytest.mark.parametrize(
    ("where", "code", "message"),
    [
        ("model = 'x'", 2, "unknown record field(s) ['model']"),
        ("system = ", 2, "not a valid SQL expression"),
        ("count(*) > 0", 2, "function 'count' is not allowed"),
        ("trial", 2, "not a boolean predicate"),
        ("`trial` < 1", 2, "'`' is not allowed"),
        ("trial < 1\nOR trial > 1", 2, "control character"),
        ("trial < " + "9" * 10_000, 2, "longer than 4096 characters"),
        ("system = 'nobody'", 1, "kept no record of"),
        ("attempt = 0 AND case_id = 'nope'", 1, "kept no record of"),
    ],
)
def test_every_command_refuses_a_bad_where_with_its_exit_code(
    records: Path, tmp_path: Path, command: str, where: str, code: int, message: str
) -> None:
    out = tmp_path / "out.jsonl"
    args = [a.format(records=records, out=out) for a in COMMANDS[command]]
    result = _run([*args, "--where", where])
    assert result.exit_code == code, result.output
    assert result.stderr.startswith("error: --where "), result.stderr
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert not out.exists()  # nothing half-written


def test_a_where_splitting_a_retried_trial_is_refused(tmp_path: Path, records: Path) -> None:
    lines = records.read_text().splitlines()
    retry = json.loads(lines[0]) | {"attempt": 1, "record_id": "rec-retry-1", "outcome": "passed"}
    path = tmp_path / "retried.jsonl"
    path.write_text("\n".join([*lines, json.dumps(retry)]) + "\n")
    result = _run(["analyze", path, "--where", "attempt = 0"])
    assert result.exit_code == 1
    assert "some attempts of 1 trial(s) but not all" in result.stderr
    assert "every attempt of a trial or none" in result.stderr
    assert _run(["analyze", path, "--where", "system = 'a'"]).exit_code == 0


def test_a_bidi_override_is_shown_escaped_never_raw(records: Path) -> None:
    result = _run(["analyze", records, "--where", "system = 'a' \u202e"])
    assert result.exit_code == 2
    assert "\u202e" not in result.stderr
    assert "not a valid SQL expression" in result.stderr
