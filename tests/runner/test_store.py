"""records.jsonl: checksummed lines, torn last lines set aside (never parsed), damage is an error."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from gatestats_runner import contract
from gatestats_runner.store import (
    CHECKSUM_FIELD,
    RecordWriter,
    RunSetError,
    RunSetLock,
    TornLineWarning,
    encode_record,
    read_manifest,
    read_records,
    record_checksum,
    write_manifest,
)
from tests.conftest import make_record


def _record(trial: int, attempt: int = 0, **overrides: object) -> dict[str, object]:
    fields: dict[str, object] = {"record_id": f"set-1/case-1/{trial}/{attempt}", "trial": trial, "attempt": attempt}
    return make_record(**(fields | overrides))


def test_a_line_is_canonical_json_with_a_checksum_of_the_rest() -> None:
    line = encode_record(_record(0))
    assert line.endswith(b"\n")
    decoded = json.loads(line)
    assert decoded[CHECKSUM_FIELD] == record_checksum(decoded)
    assert line.decode().rstrip("\n") == json.dumps(decoded, sort_keys=True, separators=(",", ":"))


def test_a_record_that_breaks_the_contract_is_never_written() -> None:
    with pytest.raises(RunSetError, match=r"breaks the run-record contract: field 'outcome': must be one of"):
        encode_record(_record(0, outcome="crashed"))


def test_writer_appends_fsynced_lines_that_read_back(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    writer = RecordWriter(path)
    threads = [threading.Thread(target=writer.append, args=(_record(i),)) for i in range(50)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    writer.close()
    records = read_records(path).records
    assert sorted(r["trial"] for r in records) == list(range(50))


def test_a_torn_last_line_is_set_aside_with_a_warning_and_never_parsed(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    whole = encode_record(_record(0)) + encode_record(_record(1))
    torn = encode_record(_record(2))[:37]
    path.write_bytes(whole + torn)
    with pytest.warns(TornLineWarning, match=r"the last line \(37 bytes, no newline\) was torn by a crash"):
        result = read_records(path)
    assert [r["trial"] for r in result.records] == [0, 1]
    assert result.torn_path == tmp_path / "records.jsonl.torn-1"
    assert result.torn_path.read_bytes() == torn
    assert path.read_bytes() == whole


def test_a_checksum_mismatch_is_an_error_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    good = encode_record(_record(0))
    bad = json.loads(encode_record(_record(1)))
    bad["outcome"] = "failed"  # edited after the checksum was computed
    path.write_bytes(good + (json.dumps(bad) + "\n").encode())
    with pytest.raises(RunSetError, match=rf"{path}:2: checksum mismatch \(field 'checksum'\); the run set is damaged"):
        read_records(path)


def test_a_duplicate_trial_attempt_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(encode_record(_record(0)) + encode_record(_record(0, record_id="other")))
    with pytest.raises(RunSetError, match=r":2: duplicate of line 1 \(case_id, trial, attempt\)"):
        read_records(path)


def test_a_damaged_middle_line_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_bytes(encode_record(_record(0)) + b'{"torn\n' + encode_record(_record(1)))
    with pytest.raises(RunSetError, match=r":2: not a JSON record"):
        read_records(path)


def test_the_lock_is_exclusive(tmp_path: Path) -> None:
    lock = RunSetLock(tmp_path)
    with pytest.raises(RunSetError, match="another runner is using this run set"):
        RunSetLock(tmp_path)
    lock.release()
    RunSetLock(tmp_path).release()


def test_manifest_round_trip_and_errors(tmp_path: Path) -> None:
    with pytest.raises(RunSetError, match="no run-set manifest"):
        read_manifest(tmp_path)
    write_manifest(tmp_path, {"run_set_id": "x", "complete": False})
    assert read_manifest(tmp_path) == {"format": "gatestats-run-set/1", "run_set_id": "x", "complete": False}
    (tmp_path / "manifest.json").write_text('{"format": "other"}')
    with pytest.raises(RunSetError, match="field 'format'"):
        read_manifest(tmp_path)


def test_checksum_is_a_contract_field_or_the_only_extra_one() -> None:
    """The runner adds exactly one field to contract v1: the per-line checksum (see docs/runner.md)."""
    decoded = json.loads(encode_record(_record(0)))
    assert set(decoded) - set(contract.FIELDS) <= {CHECKSUM_FIELD}
