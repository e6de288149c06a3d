"""The production-observation fields of contract v1 (issue 25): optional, nullable, typed, and invisible when null."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest

from gatestats.records import POLARS_SCHEMA, read_run_set, scan_records, write_imported_run_set
from gatestats_runner import contract
from gatestats_runner.runsets import encode_record, record_checksum
from tests.conftest import make_record

GOOD: dict[str, Any] = {
    "stage": "pilot",
    "cohort": "internal",
    "accepted": True,
    "review_minutes": 4.5,
    "unauthorized_actions": 0,
}


def test_the_observation_fields_are_in_the_contract_with_their_types() -> None:
    assert contract.OBSERVATION_FIELDS == ("stage", "cohort", "accepted", "review_minutes", "unauthorized_actions")
    assert contract.STAGES == ("shadow", "pilot", "production")
    assert set(contract.OBSERVATION_FIELDS) <= set(contract.FIELDS)
    assert not set(contract.OBSERVATION_FIELDS) & set(contract.REQUIRED_FIELDS)
    assert POLARS_SCHEMA["stage"] == pl.String()
    assert POLARS_SCHEMA["cohort"] == pl.String()
    assert POLARS_SCHEMA["accepted"] == pl.Boolean()
    assert POLARS_SCHEMA["review_minutes"] == pl.Float64()
    assert POLARS_SCHEMA["unauthorized_actions"] == pl.Int64()


def test_a_record_with_every_observation_field_is_valid_and_jsonschema_agrees() -> None:
    record = make_record(**GOOD)
    assert contract.validate_record(record) == []
    validator = jsonschema.Draft202012Validator(contract.load_schema())
    assert validator.is_valid(record)
    assert contract.validate_record(make_record(**dict.fromkeys(GOOD))) == []


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("stage", "canary", "must be one of 'shadow', 'pilot', 'production' (got 'canary')"),
        ("stage", "Pilot", "must be one of 'shadow', 'pilot', 'production' (got 'Pilot')"),
        ("cohort", "", "must not be empty (got '')"),
        ("cohort", 3, "expected string or null (got int 3)"),
        ("accepted", "yes", "expected boolean or null (got str 'yes')"),
        ("accepted", 1, "expected boolean or null (got int 1)"),
        ("review_minutes", -0.5, "must be >= 0 (got -0.5)"),
        ("review_minutes", float("nan"), "expected a finite number (got nan)"),
        ("review_minutes", float("inf"), "expected a finite number (got inf)"),
        ("review_minutes", True, "expected number or null (got bool True)"),
        ("unauthorized_actions", -1, "must be >= 0 (got -1)"),
        ("unauthorized_actions", 1.0, "expected integer or null (got float 1.0)"),
        ("unauthorized_actions", 2**63, "integer out of the 64-bit range (got 19 digits)"),
        ("unauthorized_actions", False, "expected integer or null (got bool False)"),
    ],
)
def test_a_bad_observation_value_is_named(field: str, value: object, message: str) -> None:
    got = [str(v) for v in contract.validate_record(make_record(**{field: value}))]
    assert got == [f"field '{field}': {message}"]


def test_a_null_observation_field_is_left_out_of_the_line_so_old_checksums_hold() -> None:
    plain = make_record()
    with_nulls = make_record(**dict.fromkeys(contract.OBSERVATION_FIELDS), layer=None)
    old_line = encode_record(plain)
    assert encode_record(with_nulls) == encode_record({**plain, "layer": None})
    assert json.loads(old_line)["checksum"] == record_checksum(plain)
    # a set observation field is written and covered by the checksum
    line = json.loads(encode_record(make_record(**GOOD)))
    assert {k: line[k] for k in GOOD} == GOOD
    assert line["checksum"] == record_checksum({k: v for k, v in line.items() if k != "checksum"})
    assert line["checksum"] != json.loads(encode_record(make_record(**{**GOOD, "cohort": "beta"})))["checksum"]


def test_records_from_a_frame_keep_their_bytes_when_the_fields_are_null(tmp_path: Path) -> None:
    frame = pl.DataFrame([make_record(record_id=f"r-{i}", trial=i) for i in range(3)]).lazy()
    full = pl.DataFrame(
        {name: frame.collect().get_column(name) if name in frame.collect_schema() else None for name in POLARS_SCHEMA}
    )
    run_set = write_imported_run_set(
        full.select(pl.col(n).cast(t) for n, t in POLARS_SCHEMA.items()), tmp_path / "rs", policy=None, source="x"
    )
    text = (run_set / "records.jsonl").read_text(encoding="utf-8")
    assert not any(f'"{name}"' in text for name in contract.OBSERVATION_FIELDS)
    data, _ = read_run_set(run_set)
    assert data.get_column("stage").null_count() == 3


def test_observation_columns_are_read_typed_from_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = tmp_path / "obs.jsonl"
    jsonl.write_text(json.dumps(make_record(**GOOD)) + "\n", encoding="utf-8")
    row = scan_records(jsonl).collect().row(0, named=True)
    assert {k: row[k] for k in GOOD} == GOOD
    csv = tmp_path / "obs.csv"
    csv.write_text(
        "schema_version,record_id,run_set_id,system,case_id,trial,attempt,outcome,stage,cohort,accepted,"
        "review_minutes,unauthorized_actions\n1,r-0,set-1,baseline,case-1,0,0,passed,pilot,internal,true,4.5,0\n",
        encoding="utf-8",
    )
    row = scan_records(csv).collect().row(0, named=True)
    assert {k: row[k] for k in GOOD} == GOOD
