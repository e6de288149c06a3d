"""The one door per format: size, depth and control-character limits outside the policy (issue 24).

Each test feeds a reader what crashed or blocked it before: JSON nested 3,000 deep (Python's json
recurses once per level: ``RecursionError``), a FIFO where a file was expected (a read that never
returns), a file over its size limit.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.errors import RecordFileError
from gatestats.golden.neardup import features
from gatestats.golden.proposal import GoldenSetError, read_set_json
from gatestats.io.limits import NAME_MAX_CHARS, name_problem
from gatestats.judges.calibration import load_calibration
from gatestats.tables import inputs
from gatestats.tables.csvfile import read_csv_strict
from gatestats_runner.runsets import RunSetError, read_manifest
from tests.deadline import passes_within
from tests.hypothesis_counts import examples

DEEP = b'{"a": ' + b"[" * 3000 + b"]" * 3000 + b"}\n"


def test_a_deep_calibration_file_is_an_error_naming_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "judge-cal.json"
    path.write_bytes(b"{\n" + DEEP[1:])
    with pytest.raises(RecordFileError, match=r"judge-cal\.json:2: field '<line>': nested deeper than 32 levels"):
        load_calibration(path)


def test_golden_set_files_go_through_the_json_door(tmp_path: Path) -> None:
    path = tmp_path / "case.json"
    path.write_bytes(DEEP)
    with pytest.raises(GoldenSetError, match=r"case\.json:1: field '<line>': nested deeper than 32 levels"):
        read_set_json(path, what="case")
    path.write_bytes(b'{"a": 1, "a": 2}')
    with pytest.raises(GoldenSetError, match="duplicate key 'a'"):
        read_set_json(path, what="case")
    path.write_bytes(b'{"a": 1}' + b" " * 100)
    with pytest.raises(GoldenSetError, match="larger than 50 bytes: not a case file"):
        read_set_json(path, what="case", limit=50)


def test_the_runners_manifest_reader_refuses_deep_json_with_its_line(tmp_path: Path) -> None:
    path = tmp_path / "manifest.json"
    path.write_bytes(b"{\n" + DEEP[1:])
    with pytest.raises(RunSetError, match=r"manifest\.json:2: not valid JSON \(nested deeper than 32 levels\)"):
        read_manifest(tmp_path)


def test_a_deep_json_snapshot_file_is_read_as_text_for_near_duplicates() -> None:
    deep = DEEP.decode()
    found = features(request="r", tool_calls=[], snapshot={"data.json": deep, "ok.json": '{"k": "v"}'})
    assert "s:ok.json:k=v" in found
    assert any(f.startswith("s:data.json:") for f in found)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_as_a_csv_file_is_refused_without_blocking(tmp_path: Path) -> None:
    fifo = tmp_path / "records.csv"
    os.mkfifo(fifo)
    with pytest.raises(
        RecordFileError, match=r"records\.csv: field '<file>': not a regular file \(expected a CSV file\)"
    ):
        read_csv_strict(fifo)


def test_a_csv_file_over_the_limit_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from gatestats.tables import csvfile as tabular

    monkeypatch.setattr(tabular, "CSV_MAX_BYTES", 64)
    path = tmp_path / "t.csv"
    path.write_text("a,b\n" + "1,2\n" * 40, encoding="utf-8")
    with pytest.raises(RecordFileError, match=r"t\.csv: field '<file>': larger than 64 bytes: not a CSV file"):
        read_csv_strict(path)


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("ok name — ünïcode", None),
        ("nul\x00", "control character U+0000 at position 4"),
        ("esc\x1b[31m", "control character U+001B at position 4"),
        ("del\x7f", "control character U+007F at position 4"),
        ("c1\x85", "control character U+0085 at position 3"),
        ("tab\there", "control character U+0009 at position 4"),
        ("x" * (NAME_MAX_CHARS + 1), f"{NAME_MAX_CHARS + 1} characters is longer than the limit of {NAME_MAX_CHARS}"),
    ],
)
def test_name_problem_names_the_first_control_character(name: str, problem: str | None) -> None:
    found = name_problem(name)
    assert (found is None) if problem is None else (found is not None and found.startswith(problem))


#: The CSV number pattern before session 43 (the oracle): ``[0-9]+\.?[0-9]*`` split a run of digits anywhere, and a
#: cell of n digits and a letter took O(n²) to refuse.
_OLD_NUMBER = re.compile(r"[-+]?([0-9]+\.?[0-9]*|\.[0-9]+)([eE][-+]?[0-9]+)?")


@given(st.text(alphabet="0123456789.eE+-x ", max_size=12))
@settings(max_examples=examples(2000))
def test_a_csv_number_cell_is_read_as_the_old_pattern_read_it(text: str) -> None:
    # _text_number reads only whether the cell matches: the same cells must match.
    assert (inputs._NUMBER.fullmatch(text) is None) == (_OLD_NUMBER.fullmatch(text) is None)


def test_a_csv_cell_of_a_million_digits_and_a_letter_is_refused_in_linear_time() -> None:
    # The old pattern took 30 s on 40,000 digits (quadratic); a CSV field may hold 1 MiB. Run in a child with a deadline
    # 100 times what it takes, so a pattern that backtracks again fails here.
    script = (
        "from gatestats.tables.inputs import typed_cell\n"
        "value, problem = typed_cell('1' * 1_000_000 + 'x', 'number', text=True)\n"
        "assert value is None and problem is not None, (value, problem)\n"
    )
    passes_within(script)
