"""The correction journal read by ``gatestats recovery`` and ``correct --resume``: every complete line checked.

Found by the fuzz suite (docs/fuzz.md, target ``correction-journal``): a line edited with its
checksum recomputed (``digest_json`` is public, so anyone can) was trusted whatever it held. A
removed ``event`` or ``candidate_digest`` was a ``KeyError`` traceback, ``"spend": "x"`` an
``AttributeError``, ``"round": [1]`` a ``TypeError``, ``"event": {"x": 1}`` "unhashable type";
``"round": "x"`` an error naming no file; ``"verdict": 5``, ``"case_id": 5``, a wrong ``format``
or a removed ``round`` were summarised with exit 0; a damaged last line that ends with its newline
was skipped as if torn (a changed summary, exit 0); and ``run_set`` was not checked (a resumed
loop runs an unfinished round in ``OUT / run_set``: ``/etc`` or ``../..`` would be outside ``OUT``). Now each is refused with the file, the line and
the field, and ``--resume`` neither appends to nor rewrites the journal.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats_runner.digests import canonical_json, digest_json
from tests.fuzz.corpus import CORRECT_ARGS, Corpus

JOURNAL = "journal.jsonl"


@pytest.fixture(scope="module")
def finished(fuzz_corpus: Corpus) -> Path:
    """A finished correction loop over the bundled example (no sandbox): the session's, made with
    ``CORRECT_ARGS`` (tests/fuzz/corpus.py); each test edits a copy."""
    return fuzz_corpus.correction


def _events(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / JOURNAL).read_text(encoding="utf-8").splitlines()]


def _rewrite(out: Path, number: int, change: dict[str, Any], *, remove: str | None = None) -> None:
    """Change line ``number`` (1-based) and give it the checksum that matches it, as an attacker can."""
    events = _events(out)
    event = {k: v for k, v in events[number - 1].items() if k != "checksum"}
    event.update(change)
    if remove is not None:
        del event[remove]
    events[number - 1] = {**event, "checksum": digest_json(event)}
    (out / JOURNAL).write_text("".join(canonical_json(e) + "\n" for e in events), encoding="utf-8")


def _line_of(out: Path, event: str, case_id: str | None = None, round_: int = 0) -> int:
    for number, e in enumerate(_events(out), start=1):
        if e["event"] == event and (case_id is None or e.get("case_id") == case_id) and e.get("round", 0) == round_:
            return number
    raise AssertionError(f"no {event} line")


def _cli(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, list(args))
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    assert "Traceback" not in result.output
    return result.exit_code, result.stderr


EDITS: dict[str, tuple[str, int, dict[str, Any], str | None, str]] = {
    # name: (event, round, change, removed field, field named)
    "event removed": ("round_started", 0, {}, "event", "event"),
    "event an object": ("round_finished", 0, {"event": {"x": 1}}, None, "event"),
    "candidate digest removed": ("round_started", 0, {}, "candidate_digest", "candidate_digest"),
    "spend text": ("round_finished", 0, {"spend": "x"}, None, "spend"),
    "spend usd text": ("round_finished", 0, {"spend": {"usd": "x", "seconds": 1.0}}, None, "spend"),
    "round a list": ("round_finished", 0, {"round": [1]}, None, "round"),
    "round text": ("round_started", 0, {"round": "x"}, None, "round"),
    "round removed": ("round_finished", 0, {}, "round", "round"),
    "round finished before it started": ("round_finished", 0, {"round": 1}, None, "round"),
    "verdict a number": ("round_finished", 0, {"verdict": 5}, None, "verdict"),
    "unknown verdict": ("round_finished", 0, {"verdict": "pass"}, None, "verdict"),
    "case id a number": ("round_started", 0, {"case_id": 5}, None, "case_id"),
    "hostile case id": ("round_started", 0, {"case_id": "x\n## verdict: pass"}, None, "case_id"),
    "wrong format": ("start", 0, {"format": "zzz"}, None, "format"),
    "trials text in start": ("start", 0, {"trials": "3"}, None, "trials"),
    "run set absolute": ("round_started", 0, {"run_set": "/etc"}, None, "run_set"),
    "run set climbs out": ("round_started", 0, {"run_set": "../../outside"}, None, "run_set"),
    "unknown stop reason": ("stopped", 1, {"reason": "fine"}, None, "reason"),
}


@pytest.mark.parametrize("name", list(EDITS))
def test_an_edited_line_with_a_matching_checksum_is_refused_by_recovery_and_resume(
    finished: Path, tmp_path: Path, name: str
) -> None:
    out = tmp_path / "out"
    shutil.copytree(finished, out, symlinks=True)
    event, round_, change, remove, field = EDITS[name]
    number = _line_of(out, event, None if event == "start" else "median", round_)
    _rewrite(out, number, change, remove=remove)
    journal = (out / JOURNAL).read_bytes()
    for args in (("recovery", str(out)), (*CORRECT_ARGS, "--out", str(out), "--resume")):
        code, err = _cli(*args)
        assert code == 1, err
        assert f"{out / JOURNAL}:{number}: field '{field}'" in err
        assert (out / JOURNAL).read_bytes() == journal  # neither appended to nor rewritten
    assert not Path("/etc/median").exists()


def test_a_damaged_last_line_with_its_newline_is_not_taken_for_a_torn_one(finished: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(finished, out, symlinks=True)
    data = (out / JOURNAL).read_bytes()
    last = data[:-1].rfind(b"\n") + 1
    (out / JOURNAL).write_bytes(data[:last] + data[last:].replace(b"passed", b"failed", 1))
    lines = data.count(b"\n")
    code, err = _cli("recovery", str(out))
    assert code == 1
    assert f"{out / JOURNAL}:{lines}: field 'checksum'" in err


def test_a_torn_last_line_is_still_read_past_and_set_aside(finished: Path, tmp_path: Path) -> None:
    out = tmp_path / "out"
    shutil.copytree(finished, out, symlinks=True)
    whole = (out / JOURNAL).read_bytes()
    with (out / JOURNAL).open("ab") as handle:
        handle.write(b'{"event":"stop')  # a kill in the middle of a write: no newline
    assert _cli("recovery", str(out))[0] == 0
    assert _cli(*CORRECT_ARGS, "--out", str(out), "--resume")[0] == 0
    assert (out / JOURNAL).read_bytes() == whole
    assert (out / f"{JOURNAL}.torn-1").read_bytes() == b'{"event":"stop'
