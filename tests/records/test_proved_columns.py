"""The columns a proved block yields are the columns polars reads from the same lines (issue 28).

When every block of a runner file is proved, ``check_jsonl(keep=..., key=...)`` builds the kept
columns from the records the proof decoded, and the reader does not parse the file a second time.
These tests compare that frame with ``polars.read_ndjson`` of the same file (every value field, every
outcome, null and absent fields, integers in float columns, booleans, non-ASCII text), and the
streaming reader with the whole-frame reader.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatestats.records import lines, read_record_file
from gatestats.records.canonical_block import VALUE_FIELDS, proved_values, proves_block
from gatestats.records.contract import POLARS_SCHEMA, RECORD_KEY
from gatestats.records.lines import KEY_HASH, check_jsonl
from gatestats_runner.runsets import encode_record
from tests.conftest import make_record
from tests.hypothesis_counts import examples

_VALUES = tuple(name for name in POLARS_SCHEMA if name in VALUE_FIELDS)


@pytest.fixture(autouse=True)
def _small_blocks(prove_every_block: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "_BLOCK_BYTES", 2048)  # several blocks even in a small file


def _record(i: int, **overrides: Any) -> dict[str, Any]:
    record = make_record(
        record_id=f"r-{i}",
        trial=i,
        case_version=None if i % 3 else "sha256:" + f"{i:064x}",
        machine_seconds=float(i) / 4 if i % 2 else i,
        tokens_input=1200 + i,
        started_at="2026-12-01T10:00:00.000+00:00",
        graders=[{"name": "tests", "kind": "code", "verdict": "passed"}],
    )
    record.update(overrides)
    return record


def _records() -> list[dict[str, Any]]:
    return [
        _record(0),
        _record(1, outcome="failed", failed_check="t::x", exit_code=1, cost_usd=0.25),
        _record(2, outcome="resource_killed", bound="memory", accepted=False),
        _record(3, outcome="infra_error", split="test", layer="live", accepted=True, review_minutes=3),
        _record(4, cost_model_usd=0.0123, cost_tool_usd=0, cost_usd=None, cohort="é-ünïcode ☃"),
        _record(5, case_group="g-1", severity="high", unauthorized_actions=2, correction_round=1),
        *(_record(i, case_id=f"c-{i % 7}") for i in range(6, 60)),
    ]


def _write(tmp_path: Path, records: list[dict[str, Any]]) -> Path:
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join(encode_record(r) for r in records))
    return path


def test_the_kept_columns_are_what_polars_reads(tmp_path: Path) -> None:
    path = _write(tmp_path, _records())
    check = check_jsonl(path, keep=_VALUES, key=RECORD_KEY)
    assert check.frame is not None
    expected = pl.read_ndjson(path, schema=POLARS_SCHEMA).select(_VALUES)
    assert check.frame.drop(KEY_HASH).equals(expected)
    assert check.frame.drop(KEY_HASH).schema == expected.schema
    assert check.frame.get_column(KEY_HASH).n_unique() == expected.select(RECORD_KEY).n_unique() == 60


def test_no_frame_when_a_line_is_left_to_the_line_pass(tmp_path: Path) -> None:
    path = _write(tmp_path, _records())
    path.write_bytes(path.read_bytes() + b"\n")  # a blank line: the line pass reads it
    assert check_jsonl(path, keep=("system",), key=RECORD_KEY).frame is None
    assert check_jsonl(path).frame is None  # nothing asked for


def test_no_frame_for_a_field_the_proof_does_not_keep(tmp_path: Path) -> None:
    path = _write(tmp_path, _records())
    assert check_jsonl(path, keep=("graders",)).frame is None
    assert check_jsonl(path, keep=("checksum",)).frame is None
    proof = proves_block(encode_record(_record(0)))
    assert proof is not None
    with pytest.raises(ValueError, match="graders"):
        proved_values(proof, "graders")


@pytest.mark.parametrize("columns", [(), ("system", "case_id", "outcome", "trial"), _VALUES])
def test_the_streaming_reader_gives_what_the_whole_reader_gives(tmp_path: Path, columns: tuple[str, ...]) -> None:
    path = _write(tmp_path, _records())
    fast, info = read_record_file(path, columns=columns)
    whole, whole_info = read_record_file(path)
    assert fast.columns == list(columns)
    if columns:
        assert fast.equals(whole.select(columns))
    assert (info.digest, info.n_records, info.checksums) == (whole_info.digest, whole_info.n_records, "verified")


def test_a_repeated_key_is_named_as_before(tmp_path: Path) -> None:
    from gatestats.errors import RecordFileError

    records = _records()
    records.append({**records[10], "record_id": "again"})
    path = _write(tmp_path, records)
    with pytest.raises(RecordFileError) as fast:
        read_record_file(path, columns=("system",))
    with pytest.raises(RecordFileError) as whole:
        read_record_file(path)
    assert [str(p) for p in fast.value.problems] == [str(p) for p in whole.value.problems]
    assert f"{path}:61: field " in str(fast.value.problems[0])


_FLOATS = st.floats(min_value=0, max_value=1e15, allow_nan=False, allow_infinity=False) | st.integers(0, 2**40)


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    values=st.lists(
        st.tuples(_FLOATS, st.none() | st.booleans(), st.none() | st.text(min_size=1, max_size=8)),
        min_size=1,
        max_size=30,
    )
)
def test_random_values_read_alike(tmp_path: Path, values: list[tuple[float, bool | None, str | None]]) -> None:
    records = [
        _record(i, machine_seconds=seconds, accepted=accepted, cohort=cohort)
        for i, (seconds, accepted, cohort) in enumerate(values)
    ]
    path = _write(tmp_path, records)
    check = check_jsonl(path, keep=_VALUES)
    expected = pl.read_ndjson(path, schema=POLARS_SCHEMA).select(_VALUES)
    if check.frame is not None:  # else a block was left to the line pass (an escape, a tiny float)
        assert check.frame.equals(expected)


def test_a_key_repeated_with_its_case_version_absent_and_null_is_named(tmp_path: Path) -> None:
    """Absent and null are one value of a key (as polars reads them): the key hash treats them alike."""
    from gatestats.errors import RecordFileError
    from gatestats_runner.runsets import record_checksum

    records = _records()
    twin = {k: v for k, v in records[10].items() if k not in {"case_version", "record_id"}}
    twin["record_id"] = "twin"
    assert records[10]["case_version"] is None
    body = {k: v for k, v in twin.items() if k != "checksum"}
    line = json.dumps({**body, "checksum": record_checksum(body)}, sort_keys=True, separators=(",", ":"))
    path = _write(tmp_path, records)
    path.write_bytes(path.read_bytes() + line.encode() + b"\n")
    assert b'"case_version"' not in path.read_bytes().splitlines()[-1]
    assert check_jsonl(path, keep=(), key=RECORD_KEY).frame is not None  # every block proved
    with pytest.raises(RecordFileError) as fast:
        read_record_file(path, columns=())
    assert f"{path}:61: field " in str(fast.value.problems[0])
    assert "duplicate" in str(fast.value.problems[0])
