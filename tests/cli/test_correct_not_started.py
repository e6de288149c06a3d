"""``gatestats correct`` killed before its first durable step leaves a folder that is reused, never a dead end.

Before issue 24 a loop killed just after ``--out`` appeared (``.lock`` and an empty ``journal.jsonl``)
was refused both ways: ``--resume`` said "not the start of a … journal" and a fresh run said "exists
and is not empty (use --resume …)". Now such a folder counts as not started: a fresh run reuses it
and ``--resume`` starts the loop in it. Runs without the sandbox (``--isolation none``) on one case.
"""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "correction"


def _one_case(tmp_path: Path) -> tuple[Path, Path]:
    cases, candidate = tmp_path / "cases", tmp_path / "candidate"
    shutil.copytree(EXAMPLE / "cases" / "initials", cases / "initials")
    shutil.copytree(EXAMPLE / "candidate" / "initials", candidate / "initials")
    return cases, candidate


def _correct(tmp_path: Path, out: Path, *extra: str) -> tuple[int, str]:
    if (tmp_path / "cases").exists():
        cases, candidate = tmp_path / "cases", tmp_path / "candidate"
    else:
        cases, candidate = _one_case(tmp_path)
    reviser = f"{sys.executable} {EXAMPLE / 'reviser.py'}"
    args = ["correct", str(cases), "--candidate", str(candidate), "--reviser", reviser]
    result = CliRunner().invoke(app, [*args, "--out", str(out), "--isolation", "none", *extra])
    return result.exit_code, result.output


def _left_before_start(out: Path, *, journal: bytes | None) -> None:
    out.mkdir()
    (out / ".lock").write_bytes(b"")
    if journal is not None:
        (out / "journal.jsonl").write_bytes(journal)


def _started(out: Path) -> None:
    lines = (out / "journal.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    assert (first["event"], first["format"]) == ("start", "gatestats-correction-journal/1")
    assert json.loads(lines[-1])["event"] == "stopped"


@pytest.mark.parametrize("journal", [b"", None], ids=["empty-journal", "lock-only"])
@pytest.mark.parametrize("resume", [False, True], ids=["fresh", "resume"])
def test_a_folder_left_before_the_first_durable_step_is_reused(
    tmp_path: Path, journal: bytes | None, resume: bool
) -> None:
    out = tmp_path / "out"
    _left_before_start(out, journal=journal)
    code, output = _correct(tmp_path, out, *(["--resume"] if resume else []))
    assert code == 0, output
    _started(out)


def test_a_torn_start_line_is_set_aside_and_resume_starts(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _left_before_start(out, journal=b'{"event": "start", "form')
    code, output = _correct(tmp_path, out, "--resume")
    assert code == 0, output
    _started(out)
    assert (out / "journal.jsonl.torn-1").read_bytes() == b'{"event": "start", "form'


def test_a_folder_with_anything_else_is_refused_fresh_and_resumed_from_its_journal(tmp_path: Path) -> None:
    out = tmp_path / "out"
    _left_before_start(out, journal=b"")
    (out / "notes.txt").write_text("mine")
    code, output = _correct(tmp_path, out)
    assert code == 1
    assert "exists and is not empty (use --resume to continue a correction loop)" in output
    code, output = _correct(tmp_path, out, "--resume")  # the message's advice works: the empty journal starts
    assert code == 0, output
    _started(out)
    assert (out / "notes.txt").read_text() == "mine"
    code, output = _correct(tmp_path, tmp_path / "missing", "--resume")  # nothing to resume: said so
    assert code == 1
    assert "no correction journal" in output
    empty = tmp_path / "empty"
    empty.mkdir()  # killed between creating --out and its lock: both ways start the loop
    assert _correct(tmp_path, empty, "--resume")[0] == 0
    _started(empty)
