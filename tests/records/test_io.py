"""Reading and validating record files: every defect names file, line (or row) and field."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.records import (
    POLARS_SCHEMA,
    load_records,
    scan_records,
    validate_records,
    write_records_jsonl,
)
from tests.conftest import make_record

Writer = Callable[..., Path]


def _rows(n: int = 3) -> list[dict[str, Any]]:
    return [make_record(record_id=f"r{i}", case_id=f"c{i}", outcome="passed" if i % 2 else "failed") for i in range(n)]


def _messages(exc: pytest.ExceptionInfo[RecordFileError]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def test_jsonl_round_trip_keeps_every_value(write_jsonl: Writer, tmp_path: Path) -> None:
    rows = _rows()
    rows[0].update(
        slices=["refunds", "severe"],
        cost_model_usd=0.25,
        started_at="2026-01-01T00:00:00Z",
        graders=[{"name": "no_refund", "kind": "code", "verdict": "passed", "calibration_version": None}],
    )
    frame = load_records(write_jsonl(rows))
    assert frame.columns == list(POLARS_SCHEMA)
    assert frame.height == 3
    assert frame["slices"][0].to_list() == ["refunds", "severe"]
    out = write_records_jsonl(frame, tmp_path / "copy.jsonl")
    copy = load_records(out)
    assert copy.drop("checksum").equals(frame.drop("checksum"))
    assert copy["checksum"].str.starts_with("sha256:").all()  # the writer checksums every line


def test_scan_records_returns_lazyframe_with_contract_schema(write_jsonl: Writer) -> None:
    lazy = scan_records(write_jsonl(_rows()))
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect_schema() == POLARS_SCHEMA


@pytest.mark.parametrize("suffix", [".parquet", ".csv"])
def test_parquet_and_csv_read_the_same_records_as_jsonl(write_jsonl: Writer, tmp_path: Path, suffix: str) -> None:
    reference = load_records(write_jsonl(_rows()))
    path = tmp_path / f"records{suffix}"
    scalar = reference.select(
        name for name, dtype in POLARS_SCHEMA.items() if not isinstance(dtype, pl.List | pl.Struct)
    )
    if suffix == ".parquet":
        reference.select(
            "schema_version",
            "record_id",
            "run_set_id",
            "system",
            "case_id",
            "trial",
            "attempt",
            "outcome",
        ).write_parquet(path)
    else:
        scalar.write_csv(path)
    assert load_records(path).equals(reference)


def test_validate_accepts_dataframe_and_lazyframe_alike(write_jsonl: Writer) -> None:
    frame = load_records(write_jsonl(_rows()))
    assert validate_records(frame).equals(validate_records(frame.lazy()))


@pytest.mark.parametrize("lazy", [False, True])
def test_validate_checks_data_of_lazyframes_too(lazy: bool) -> None:
    # pandera skips data checks on LazyFrames by default; a gate must not.
    frame = load_records_frame([make_record(outcome="nonsense")])
    data = frame.lazy() if lazy else frame
    with pytest.raises(RecordFileError) as exc:
        validate_records(data, source="mem")
    assert _messages(exc) == [
        "mem row 0: field 'outcome': must be one of 'passed', 'failed', 'resource_killed', 'infra_error' (got 'nonsense')"
    ]


def load_records_frame(rows: list[dict[str, Any]]) -> pl.DataFrame:
    base = pl.DataFrame([{name: row.get(name) for name in POLARS_SCHEMA} for row in rows], schema=POLARS_SCHEMA)
    return base


# ---- bad input: the error names file, line and field --------------------------------------------


def test_jsonl_missing_field_names_line_and_field(write_jsonl: Writer) -> None:
    rows = _rows()
    del rows[1]["outcome"]
    path = write_jsonl(rows)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [f"{path}:2: field 'outcome': required field is missing"]


def test_jsonl_wrong_type_names_line_and_field(write_jsonl: Writer) -> None:
    rows = _rows()
    rows[2]["trial"] = "first"
    path = write_jsonl(rows)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [f"{path}:3: field 'trial': expected integer (got str 'first')"]


def test_jsonl_unknown_outcome_names_line(write_jsonl: Writer) -> None:
    rows = _rows()
    rows[0]["outcome"] = "PASS"
    path = write_jsonl(rows)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [
        f"{path}:1: field 'outcome': must be one of 'passed', 'failed', 'resource_killed', 'infra_error' (got 'PASS')"
    ]


def test_jsonl_duplicate_trial_names_both_lines(write_jsonl: Writer) -> None:
    rows = _rows()
    rows.append(make_record(record_id="again", case_id="c1"))
    path = write_jsonl(rows)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [
        f"{path}:4: field 'system,case_id,case_version,trial,attempt': duplicate record (system='baseline', "
        "case_id='c1', case_version=None, trial=0, attempt=0) (first at line 2)"
    ]


def test_blank_lines_do_not_shift_reported_line_numbers(write_jsonl: Writer) -> None:
    rows: list[dict[str, Any] | str] = [
        *_rows(2),
        "",
        make_record(record_id="x", case_id="c9", trial=-2),
    ]
    path = write_jsonl(rows)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [f"{path}:4: field 'trial': must be >= 0 (got -2)"]


def test_jsonl_torn_last_line_is_named(write_jsonl: Writer) -> None:
    rows: list[dict[str, Any] | str] = [*_rows(2), '{"schema_version": 1, "record_id": "r9", "sys']
    path = write_jsonl(rows, trailing_newline=False)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    (message,) = _messages(exc)
    assert message == (
        f"{path}:3: field '<line>': torn last line: not complete JSON and no final newline (a crashed writer?)"
    )


def test_jsonl_unknown_field_is_rejected(write_jsonl: Writer) -> None:
    rows = _rows()
    rows[1]["sucess"] = True
    path = write_jsonl(rows)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [f"{path}:2: field 'sucess': unknown field"]


def test_resource_killed_needs_its_bound(write_jsonl: Writer) -> None:
    path = write_jsonl([make_record(outcome="resource_killed")])
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [f"{path}:1: field 'bound': required when outcome is 'resource_killed' (got null)"]


def test_csv_missing_column_and_wrong_type(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text("schema_version,record_id,run_set_id,system,case_id,trial,attempt\n1,a,s,x,c,0,0\n")
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [f"{path}:1: field 'outcome': required column is missing"]
    path.write_text(
        "schema_version,record_id,run_set_id,system,case_id,trial,attempt,outcome\n1,a,s,x,c,0,0,passed\n1,b,s,x,c,one,0,passed\n"
    )
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [f"{path}:3: field 'trial': expected a 64-bit integer (got 'one')"]


def test_csv_cannot_hold_list_fields(tmp_path: Path) -> None:
    path = tmp_path / "r.csv"
    path.write_text(
        "schema_version,record_id,run_set_id,system,case_id,trial,attempt,outcome,slices\n1,a,s,x,c,0,0,passed,x\n"
    )
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [
        f"{path}:1: field 'slices': list/struct field cannot be stored in CSV (use JSONL or Parquet)"
    ]


def test_parquet_wrong_type_and_missing_column_named(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pl.DataFrame(
        {
            "schema_version": [1],
            "record_id": ["a"],
            "run_set_id": ["s"],
            "system": ["x"],
            "case_id": ["c"],
            "trial": ["0"],
            "attempt": [0],
        }
    ).write_parquet(path)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [
        f"{path}: field 'trial': wrong type: expected Int64 (got String)",
        f"{path}: field 'outcome': required column is missing",
    ]


def test_parquet_bad_value_names_row(tmp_path: Path) -> None:
    path = tmp_path / "r.parquet"
    pl.DataFrame(
        {
            "schema_version": [1, 1],
            "record_id": ["a", "b"],
            "run_set_id": ["s", "s"],
            "system": ["x", "x"],
            "case_id": ["c", "d"],
            "trial": [0, 0],
            "attempt": [0, 0],
            "outcome": ["passed", "maybe"],
        }
    ).write_parquet(path)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    assert _messages(exc) == [
        f"{path} row 1: field 'outcome': must be one of 'passed', 'failed', 'resource_killed', 'infra_error' (got 'maybe')"
    ]


def test_duplicates_across_files_name_both_files(write_jsonl: Writer) -> None:
    first = write_jsonl(_rows(2), "a.jsonl")
    second = write_jsonl([make_record(record_id="z", case_id="c1")], "b.jsonl")
    with pytest.raises(RecordFileError) as exc:
        load_records([first, second])
    assert _messages(exc) == [
        f"{second}:1: field 'system,case_id,case_version,trial,attempt': duplicate record (system='baseline', "
        f"case_id='c1', case_version=None, trial=0, attempt=0) already in {first} at line 2"
    ]


def test_many_duplicates_across_files_are_counted_and_the_first_50_named(write_jsonl: Writer) -> None:
    """3000 repeated keys: the first 50 named with both places, all 3000 counted (locating each took ~110 s for 12000)."""
    rows = [make_record(record_id=f"r{i}", case_id=f"c{i}") for i in range(3000)]
    first = write_jsonl(rows, "a.jsonl")
    second = write_jsonl([{**row, "record_id": f"z{i}"} for i, row in enumerate(rows)], "b.jsonl")
    with pytest.raises(RecordFileError) as exc:
        load_records([first, second])
    assert exc.value.total == 3000
    messages = _messages(exc)
    assert len(messages) == 50
    assert messages[0].startswith(f"{second}:1: field 'system,case_id,case_version,trial,attempt': duplicate record")
    assert messages[49].endswith(f"already in {first} at line 50")


def test_unknown_suffix_and_missing_file(tmp_path: Path) -> None:
    with pytest.raises(RecordFileError, match=r"records\.txt: field '<file>': unknown record file type '\.txt'"):
        load_records(tmp_path / "records.txt")
    with pytest.raises(RecordFileError, match=r"nope\.jsonl: field '<file>': no such record file"):
        load_records(tmp_path / "nope.jsonl")


def test_writer_never_overwrites_and_writes_nothing_invalid(write_jsonl: Writer, tmp_path: Path) -> None:
    frame = load_records(write_jsonl(_rows()))
    target = write_records_jsonl(frame, tmp_path / "out.jsonl")
    with pytest.raises(FileExistsError, match="record files are immutable"):
        write_records_jsonl(frame, target)
    bad = frame.with_columns(outcome=pl.lit("unknown"))
    with pytest.raises(RecordFileError):
        write_records_jsonl(bad, tmp_path / "bad.jsonl")
    assert not (tmp_path / "bad.jsonl").exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".tmp")] == []


@pytest.mark.parametrize("suffix", [".jsonl", ".csv", ".parquet"])
def test_a_passed_trial_with_a_failed_check_is_refused_in_every_format(tmp_path: Path, suffix: str) -> None:
    rows = [make_record(record_id="a", case_id="c0"), make_record(record_id="b", case_id="c1", failed_check="tests")]
    columns = ["schema_version", "record_id", "run_set_id", "system", "case_id", "trial", "attempt", "outcome"]
    frame = pl.DataFrame([{k: r.get(k) for k in [*columns, "failed_check"]} for r in rows])
    path = tmp_path / f"records{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    elif suffix == ".csv":
        frame.write_csv(path)
    else:
        frame.write_parquet(path)
    with pytest.raises(RecordFileError) as exc:
        load_records(path)
    (problem,) = exc.value.problems
    assert problem.field == "failed_check"
    assert (problem.line, problem.row) == {".jsonl": (2, None), ".csv": (3, None), ".parquet": (None, 1)}[suffix]
