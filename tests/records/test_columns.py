"""``load_records(columns=...)``: every column is still checked; only the named ones are returned."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.estimators import ANALYSIS_COLUMNS, analyze
from gatestats.records import POLARS_SCHEMA, load_record_files, load_records, read_record_file, scan_records
from tests.conftest import make_record

Writer = Callable[..., Path]


def _rows(n: int = 4) -> list[dict[str, Any]]:
    return [
        make_record(record_id=f"r{i}", case_id=f"c{i // 2}", trial=i % 2, outcome="passed" if i % 2 else "failed")
        for i in range(n)
    ]


def _write(rows: list[dict[str, Any]], path: Path) -> Path:
    frame = pl.DataFrame([{name: row.get(name) for name in POLARS_SCHEMA} for row in rows], schema=POLARS_SCHEMA)
    if path.suffix == ".parquet":
        frame.write_parquet(path)
    elif path.suffix == ".csv":
        frame.select(n for n, t in POLARS_SCHEMA.items() if not isinstance(t, pl.List | pl.Struct)).write_csv(path)
    else:
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _messages(exc: pytest.ExceptionInfo[RecordFileError]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def _same_errors_narrow_and_whole(path: Path) -> list[str]:
    """The messages of reading ``path`` for one column, asserted equal to those of reading every column."""
    with pytest.raises(RecordFileError) as narrow:
        load_records(path, columns=["outcome"])
    with pytest.raises(RecordFileError) as whole:
        load_records(path)
    assert _messages(narrow) == _messages(whole)
    return _messages(narrow)


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
def test_columns_returns_the_named_columns_of_the_same_records(tmp_path: Path, suffix: str) -> None:
    path = _write(_rows(), tmp_path / f"records{suffix}")
    narrow = load_records(path, columns=ANALYSIS_COLUMNS)
    assert narrow.columns == list(ANALYSIS_COLUMNS)
    assert narrow.equals(load_records(path).select(ANALYSIS_COLUMNS))


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_columns_keeps_the_order_given_and_the_file_info(tmp_path: Path, suffix: str) -> None:
    path = _write(_rows(), tmp_path / f"records{suffix}")
    frame, info = read_record_file(path, columns=["outcome", "record_id"])
    _, whole = read_record_file(path)
    assert frame.columns == ["outcome", "record_id"]
    assert frame["record_id"].to_list() == ["r0", "r1", "r2", "r3"]
    assert info == whole


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
def test_a_broken_rule_in_a_column_not_asked_for_is_still_reported(tmp_path: Path, suffix: str) -> None:
    rows = _rows()
    rows[2]["bound"] = "memory"  # bound set on a trial that was not resource_killed
    path = _write(rows, tmp_path / f"records{suffix}")
    messages = _same_errors_narrow_and_whole(path)
    where = f"{path}:3" if suffix == ".jsonl" else f"{path}:4" if suffix == ".csv" else f"{path} row 2"
    assert messages[0].startswith(f"{where}: field 'bound': ")


def test_a_negative_number_in_a_parquet_column_not_asked_for_is_named_with_its_row(tmp_path: Path) -> None:
    rows = _rows()
    rows[1]["machine_seconds"] = -1.5
    path = _write(rows, tmp_path / "records.parquet")
    with pytest.raises(RecordFileError) as exc:
        load_records(path, columns=ANALYSIS_COLUMNS)
    assert _messages(exc) == [f"{path} row 1: field 'machine_seconds': must be >= 0 (got -1.5)"]


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_duplicate_key_is_named_with_both_places_when_columns_are_named(tmp_path: Path, suffix: str) -> None:
    rows = [*_rows(), make_record(record_id="again", case_id="c1", trial=1)]
    path = _write(rows, tmp_path / f"records{suffix}")
    messages = _same_errors_narrow_and_whole(path)
    assert "duplicate record (system='baseline', case_id='c1', case_version=None, trial=1, attempt=0)" in messages[0]


def test_a_torn_last_line_is_named_when_columns_are_named(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text(json.dumps(make_record()) + "\n" + '{"schema_version": 1, "rec', encoding="utf-8")
    with pytest.raises(RecordFileError) as exc:
        load_records(path, columns=ANALYSIS_COLUMNS)
    assert _messages(exc) == [
        f"{path}:2: field '<line>': torn last line: not complete JSON and no final newline (a crashed writer?)"
    ]


def test_blank_lines_keep_line_numbers_right_on_the_streaming_path(tmp_path: Path) -> None:
    rows = _rows(3)
    path = tmp_path / "records.jsonl"
    lines = [json.dumps(rows[0]), "", json.dumps(rows[1]), "  ", json.dumps(rows[2]), json.dumps(rows[2])]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(RecordFileError) as exc:
        load_records(path, columns=["outcome"])
    assert _messages(exc) == [
        f"{path}:6: field 'system,case_id,case_version,trial,attempt': duplicate record (system='baseline', "
        "case_id='c1', case_version=None, trial=0, attempt=0) (first at line 5)"
    ]


def test_several_files_with_columns_still_refuse_a_record_in_two_files(tmp_path: Path) -> None:
    first = _write(_rows(), tmp_path / "a.parquet")
    second = _write([make_record(record_id="x", case_id="c0", trial=1)], tmp_path / "b.jsonl")
    with pytest.raises(RecordFileError) as exc:
        load_record_files([first, second], columns=["outcome"])
    assert _messages(exc) == [
        f"{second}:1: field 'system,case_id,case_version,trial,attempt': duplicate record (system='baseline', "
        f"case_id='c0', case_version=None, trial=1, attempt=0) already in {first} at row 1"
    ]


def test_several_files_with_columns_return_the_named_columns_only(tmp_path: Path) -> None:
    first = _write(_rows(), tmp_path / "a.parquet")
    second = _write([make_record(record_id="x", case_id="c9")], tmp_path / "b.jsonl")
    frame, infos = load_record_files([first, second], columns=["case_id", "outcome"])
    assert frame.columns == ["case_id", "outcome"]
    assert frame["case_id"].to_list() == ["c0", "c0", "c1", "c1", "c9"]
    assert [i.n_records for i in infos] == [4, 1]


def test_columns_that_are_not_contract_fields_are_refused(tmp_path: Path) -> None:
    path = _write(_rows(), tmp_path / "records.jsonl")
    with pytest.raises(ValueError, match=r"^columns: \['sucess'\] are not fields of the run-record contract v1 "):
        load_records(path, columns=["outcome", "sucess"])
    with pytest.raises(ValueError, match=r"^columns: name each column once \(got \['outcome', 'outcome'\]\)$"):
        load_records(path, columns=["outcome", "outcome"])
    with pytest.raises(
        TypeError, match=r"^columns must be a sequence of column names, not one string \(got 'outcome'\)$"
    ):
        load_records(path, columns="outcome")


def test_an_empty_file_gives_an_empty_frame_of_the_named_columns(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text("", encoding="utf-8")
    frame = load_records(path, columns=ANALYSIS_COLUMNS)
    assert frame.height == 0
    assert frame.schema == pl.Schema({name: POLARS_SCHEMA[name] for name in ANALYSIS_COLUMNS})


def test_a_valid_file_is_read_and_a_broken_one_explained_without_importing_pandera(tmp_path: Path) -> None:
    path = _write(_rows(), tmp_path / "records.parquet")
    broken = _write(
        [*_rows(), make_record(record_id="bad", case_id="c9", cost_usd=float("nan"))], tmp_path / "b.parquet"
    )
    code = (
        "import sys; from gatestats.records import load_records; "
        f"load_records({str(path)!r}); load_records({str(path)!r}, columns=['outcome']); "
        "print('pandera' in sys.modules)\n"
        f"try: load_records({str(broken)!r})\n"
        "except ValueError as e: print(e)\n"
        "print('pandera' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.splitlines() == [
        "False",
        f"{broken} row 4: field 'cost_usd': expected a finite number (got 'NaN')",
        "False",
    ]


# ---- scan_records: checked in a streaming pass, then a scan of the file ---------------------------


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet", ".csv"])
def test_scan_records_gives_the_records_load_records_gives(tmp_path: Path, suffix: str) -> None:
    path = _write(_rows(), tmp_path / f"records{suffix}")
    lazy = scan_records(path)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == POLARS_SCHEMA
    assert lazy.collect().equals(load_records(path))


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_scan_records_refuses_a_duplicate_key_before_returning_a_scan(tmp_path: Path, suffix: str) -> None:
    rows = [*_rows(), make_record(record_id="again", case_id="c0", trial=0)]
    path = _write(rows, tmp_path / f"records{suffix}")
    with pytest.raises(RecordFileError) as scanned:
        scan_records(path)
    with pytest.raises(RecordFileError) as loaded:
        load_records(path)
    assert _messages(scanned) == _messages(loaded)
    assert len(_messages(scanned)) == 1


def test_analyze_of_a_scan_equals_analyze_of_the_loaded_records(tmp_path: Path) -> None:
    rows = [
        make_record(record_id=f"r{i}", case_id=f"c{i // 3}", trial=i % 3, outcome="passed" if i % 4 else "failed")
        for i in range(30)
    ]
    rows.append(make_record(record_id="retry", case_id="c0", trial=0, attempt=1, outcome="passed"))
    path = _write(rows, tmp_path / "records.parquet")
    scanned = analyze(scan_records(path), ks=[1, 2, 3])
    loaded = analyze(load_records(path), ks=[1, 2, 3])
    assert scanned.to_dict() == loaded.to_dict()
    assert scanned.system("baseline").n_trials == 30


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_a_file_edited_after_scan_records_checked_it_is_refused_not_analysed(tmp_path: Path, suffix: str) -> None:
    """The scan reads the file again when collected: an edit since the check once gave a clean pass^1 = 1."""
    rows = [make_record(record_id=f"r{i}", case_id=f"c{i}", outcome="failed") for i in range(30)]
    path = _write(rows, tmp_path / f"records{suffix}")
    lazy = scan_records(path)
    _write([{**row, "outcome": "passed"} for row in rows], path)  # every failure edited into a pass
    with pytest.raises(RecordFileError, match="the file changed after it was checked") as caught:
        analyze(lazy, ks=[1])
    assert str(path) in str(caught.value)


# One broken record per family of the contract's value rules, in a Parquet file (no line pass: the
# columnar rules of records/schema.py are the only gate, and pandera runs only when they fail). A
# rule missing from value_checks would let its record through; each case names the field it breaks.
BROKEN = {
    "not null": ({"system": None}, "system"),
    "enum": ({"outcome": "maybe"}, "outcome"),
    "const": ({"schema_version": 2}, "schema_version"),
    "finite": ({"cost_usd": float("nan")}, "cost_usd"),
    "infinite": ({"cost_usd": float("inf")}, "cost_usd"),
    "minimum": ({"machine_seconds": -1.0}, "machine_seconds"),
    "min length": ({"case_id": ""}, "case_id"),
    "RFC 3339": ({"started_at": "yesterday"}, "started_at"),
    "bound only when killed": ({"bound": "memory"}, "bound"),
    "a pass has no failed check": ({"failed_check": "tests"}, "failed_check"),
    "cost counted twice": ({"cost_usd": 1.0, "cost_model_usd": 0.5}, "cost_usd"),
}


@pytest.mark.parametrize("name", sorted(BROKEN))
def test_every_value_rule_family_refuses_its_record_in_a_parquet_file(tmp_path: Path, name: str) -> None:
    change, field = BROKEN[name]
    rows = [*_rows(), make_record(**{"record_id": "bad", "case_id": "c9", **change})]
    path = _write(rows, tmp_path / "records.parquet")
    for columns in (None, ("outcome",)):
        with pytest.raises(RecordFileError) as caught:
            load_records(path, columns=columns)
        messages = _messages(caught)
        assert any(m.startswith(f"{path} row 4: field '") and field in m.split(": ")[1] for m in messages), messages
    with pytest.raises(RecordFileError):
        scan_records(path)


def test_a_broken_value_rule_the_schema_cannot_name_still_refuses_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fail closed: value_checks and the pandera schema drifting apart must not let a file through."""
    from gatestats.records import schema

    real = schema.value_checks
    monkeypatch.setattr(schema, "value_checks", lambda: [*real(), pl.lit(value=False).alias("rule_drifted")])
    path = _write(_rows(), tmp_path / "records.parquet")
    with pytest.raises(RecordFileError, match=r"breaks the contract's value rule\(s\) rule_drifted"):
        load_records(path)
