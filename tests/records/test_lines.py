"""The JSONL line pass keeps no per-record state it does not need (a file larger than memory passes)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatestats.errors import MAX_PROBLEMS, RecordFileError
from gatestats.records.lines import check_jsonl
from tests.conftest import make_record


def test_lines_of_a_file_without_blank_lines_are_a_range(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    path.write_text("".join(json.dumps(make_record(record_id=f"r{i}", trial=i)) + "\n" for i in range(3)))
    check = check_jsonl(path)
    assert check.lines == range(1, 4)
    assert check.n_records == 3


def test_lines_skip_blank_lines(tmp_path: Path) -> None:
    rows = [json.dumps(make_record(record_id=f"r{i}", trial=i)) for i in range(3)]
    path = tmp_path / "r.jsonl"
    path.write_text(f"{rows[0]}\n\n{rows[1]}\n   \n{rows[2]}\n")
    check = check_jsonl(path)
    assert list(check.lines) == [1, 3, 5]
    assert check.n_records == 3


def test_lines_without_checksum_in_a_checksummed_file_are_counted_past_the_ones_named(tmp_path: Path) -> None:
    from gatestats_runner.runsets import encode_record

    signed = encode_record(make_record(record_id="signed", trial=999))
    unsigned = [json.dumps(make_record(record_id=f"u{i}", trial=i)).encode() + b"\n" for i in range(MAX_PROBLEMS + 5)]
    path = tmp_path / "r.jsonl"
    path.write_bytes(signed + b"".join(unsigned))
    with pytest.raises(RecordFileError) as exc:
        check_jsonl(path)
    assert exc.value.total == MAX_PROBLEMS + 5
    assert len(exc.value.problems) == MAX_PROBLEMS
    assert str(exc.value.problems[0]) == (
        f"{path}:2: field 'checksum': no checksum, but 1 other line(s) of this file have one: "
        "a line of a checksummed file was replaced or its checksum removed"
    )
