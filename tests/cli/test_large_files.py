"""``analyze``, ``validate`` and ``cost`` keep only the columns they read, and still name every defect.

Issue 17: the command line read every contract column of every record (54 columns, most of them
absent and stored as nulls), so a user of the CLI got none of ``load_records(columns=...)``'s
memory savings. These tests spy on what the commands ask the reader for and on the frame the
statistics receive, and check that a defect deep in a larger file is still named with its file,
line (or Parquet row) and field, exactly as the whole-frame reader names it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

import gatestats.estimators
import gatestats.records
from gatestats.cli import app
from gatestats.cli.analyze import analysis_columns
from gatestats.cli.cost import cost_columns
from gatestats.cost import RECORD_COLUMNS as COST_COLUMNS
from gatestats.errors import RecordFileError
from gatestats.estimators import ANALYSIS_COLUMNS, analyze
from gatestats.records import load_records
from gatestats.records.contract import POLARS_SCHEMA
from tests.conftest import make_record

runner = CliRunner()

#: Enough records that the file is read in several chunks and batches (4 trials of 3,000 cases).
N_CASES = 3_000


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


def _rows(n_cases: int = N_CASES) -> Iterator[dict[str, Any]]:
    for i in range(n_cases * 4):
        case, trial = divmod(i, 4)
        yield make_record(
            record_id=f"r-{i}",
            system="base" if case % 2 else "cand",
            case_id=f"case-{case}",
            trial=trial,
            outcome="passed" if (case * 7 + trial) % 5 else "failed",
            model_id=f"model-{case % 3}",
            machine_seconds=float(i % 11),
            cost_usd=0.01 * (i % 7),
        )


def _write_jsonl(path: Path, rows: Iterator[dict[str, Any]], tail: str = "") -> Path:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
        handle.write(tail)
    return path


@pytest.fixture(scope="module")
def big_jsonl(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return _write_jsonl(tmp_path_factory.mktemp("large") / "records.jsonl", _rows())


@pytest.fixture(scope="module")
def big_parquet(big_jsonl: Path) -> Path:
    path = big_jsonl.with_suffix(".parquet")
    load_records(big_jsonl).write_parquet(path)
    return path


@pytest.fixture
def spy(monkeypatch: pytest.MonkeyPatch) -> dict[str, list[Any]]:
    """Record the ``columns`` the commands pass to the reader, and the columns the statistics receive."""
    seen: dict[str, list[Any]] = {"load_records": [], "load_record_files": [], "analyze": []}
    real_load, real_files = gatestats.records.load_records, gatestats.records.load_record_files

    def load(*args: Any, **kwargs: Any) -> pl.DataFrame:
        seen["load_records"].append(kwargs.get("columns"))
        return real_load(*args, **kwargs)

    def files(*args: Any, **kwargs: Any) -> Any:
        seen["load_record_files"].append(kwargs.get("columns"))
        return real_files(*args, **kwargs)

    def spied_analyze(records: pl.DataFrame, **kwargs: Any) -> Any:
        seen["analyze"].append(tuple(records.columns))
        return analyze(records, **kwargs)

    monkeypatch.setattr(gatestats.records, "load_records", load)
    monkeypatch.setattr(gatestats.records, "load_record_files", files)
    monkeypatch.setattr(gatestats.estimators, "analyze", spied_analyze)
    return seen


def _error_lines(exc: RecordFileError) -> str:
    """What ``gatestats`` prints for ``exc`` (see ``gatestats.cli._common.fail``)."""
    return "".join(f"error: {line}\n" for line in str(exc).splitlines())


def _full_frame_error(path: Path) -> RecordFileError:
    """The error of the whole-frame reader (every column kept), the reference for every message."""
    with pytest.raises(RecordFileError) as caught:
        load_records(path)
    return caught.value


@pytest.mark.parametrize("fixture", ["big_jsonl", "big_parquet"])
def test_analyze_keeps_only_the_analysis_columns_with_the_same_result(
    fixture: str, request: pytest.FixtureRequest, spy: dict[str, list[Any]]
) -> None:
    path: Path = request.getfixturevalue(fixture)
    result = _invoke("analyze", path, "--k", "1,2,4", "--json")
    assert result.exit_code == 0, result.stderr
    assert spy["load_record_files"] == [ANALYSIS_COLUMNS]
    assert spy["analyze"] == [ANALYSIS_COLUMNS]  # 7 of the contract's 54 columns reach the statistics
    reference = analyze(load_records(path), ks=[1, 2, 4]).to_dict()
    assert json.loads(result.stdout) == json.loads(json.dumps({**reference, "records": [str(path)]}))


def test_analyze_by_another_column_keeps_that_column_too(big_parquet: Path, spy: dict[str, list[Any]]) -> None:
    result = _invoke("analyze", big_parquet, "--by", "model_id", "--json")
    assert result.exit_code == 0, result.stderr
    assert spy["analyze"] == [(*ANALYSIS_COLUMNS, "model_id")]
    systems = [s["system"] for s in json.loads(result.stdout)["systems"]]
    assert systems == ["model-0", "model-1", "model-2"]
    assert analysis_columns("case_id") == ANALYSIS_COLUMNS


def test_analyze_by_an_unknown_column_names_every_column_as_before(big_parquet: Path) -> None:
    result = _invoke("analyze", big_parquet, "--by", "model")
    assert result.exit_code == 1
    assert result.stderr == f"error: by: no column 'model' in the records (got {list(POLARS_SCHEMA)})\n"


@pytest.mark.parametrize("command", ["analyze", "validate", "cost"])
def test_torn_last_line_of_a_large_file_is_named(command: str, big_jsonl: Path, tmp_path: Path) -> None:
    torn = '{"schema_version": 1, "record_id": "r-torn", "sys'
    path = tmp_path / "records.jsonl"  # the large file's lines (written once per module), then the torn one
    path.write_bytes(big_jsonl.read_bytes() + torn.encode())
    last = N_CASES * 4 + 1
    result = _invoke(command, path)
    assert result.exit_code == 1
    expected = f"{path}:{last}: field '<line>': torn last line: not complete JSON and no final newline"
    assert expected in result.stderr
    assert result.stderr == _error_lines(_full_frame_error(path))


BAD_ROW = 9_876


@pytest.fixture(scope="module")
def bad_parquet(big_jsonl: Path) -> bytes:
    """The large file as Parquet with ``trial`` -3 in row :data:`BAD_ROW` (built once per module; each test
    writes its own copy)."""
    frame = load_records(big_jsonl).with_columns(
        pl.when(pl.int_range(pl.len()) == BAD_ROW).then(pl.lit(-3)).otherwise(pl.col("trial")).alias("trial")
    )
    path = big_jsonl.with_name("bad.parquet")
    frame.write_parquet(path)
    return path.read_bytes()


@pytest.mark.parametrize("command", ["analyze", "validate", "cost"])
def test_a_bad_value_deep_in_a_large_parquet_file_is_named_by_row(
    command: str, bad_parquet: bytes, tmp_path: Path
) -> None:
    bad_row = BAD_ROW
    path = tmp_path / "records.parquet"
    path.write_bytes(bad_parquet)
    result = _invoke(command, path)
    assert result.exit_code == 1
    assert f"row {bad_row}" in result.stderr
    assert "'trial'" in result.stderr
    assert result.stderr == _error_lines(_full_frame_error(path))


def test_validate_keeps_no_column_and_counts_every_record(
    big_jsonl: Path, big_parquet: Path, spy: dict[str, list[Any]]
) -> None:
    result = _invoke("validate", big_jsonl, big_parquet.with_name("other.parquet"))
    assert result.exit_code == 1  # no such file: named as before
    assert "other.parquet" in result.stderr
    result = _invoke("validate", big_parquet)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == f"ok: {N_CASES * 4} records in 1 file(s) satisfy the run-record contract v1\n"
    assert spy["load_record_files"][-1] == ()
    assert spy["load_records"] == []


def test_validate_finds_a_key_repeated_across_files(big_parquet: Path, tmp_path: Path) -> None:
    # Two records of the large file again, in a second file (found only from the key columns).
    again = [row for i, row in enumerate(_rows()) if i in {5, 11_001}]
    second = _write_jsonl(
        tmp_path / "again.jsonl", iter([{**row, "record_id": f"x-{row['record_id']}"} for row in again])
    )
    result = _invoke("validate", big_parquet, second)
    assert result.exit_code == 1
    assert f"{second}:2: field 'system,case_id,case_version,trial,attempt': duplicate record" in result.stderr
    with pytest.raises(RecordFileError) as caught:
        load_records([big_parquet, second])
    assert result.stderr == _error_lines(caught.value)


def test_cost_keeps_only_the_columns_it_reads(big_jsonl: Path, spy: dict[str, list[Any]]) -> None:
    result = _invoke("cost", big_jsonl, "--by", "system,slice", "--n-resamples", "200", "--json")
    assert result.exit_code == 0, result.stderr
    assert spy["load_record_files"] == [(*COST_COLUMNS, "slices")]
    assert cost_columns(["team"]) is None  # an unknown column: every column, the message as before


def test_cost_on_kept_columns_equals_cost_on_every_column(big_jsonl: Path) -> None:
    result = _invoke("cost", big_jsonl, "--n-resamples", "200", "--json")
    assert result.exit_code == 0, result.stderr
    from gatestats.cost import cost_per_accepted

    reference = cost_per_accepted(load_records(big_jsonl), n_resamples=200).to_dict()
    assert json.loads(result.stdout) == json.loads(json.dumps({**reference, "records": [str(big_jsonl)]}))
