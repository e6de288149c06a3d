"""The doors beside the gate: run sets the runner wrote, read by every other command, and the
correction loop's journal.

- ``stored-records`` / ``stored-manifest``: a run set made by ``gatestats run`` (one failed
  record with its evidence), read by ``promote RUN_SET --record``, ``drift`` (the stored side),
  ``cases verify-graders``, ``cases check`` and ``run --baseline-sample --against``;
- ``rerun-records`` / ``rerun-manifest``: its baseline re-run, read by ``drift`` (the re-run side);
- ``correction-journal``: ``journal.jsonl`` of a finished ``gatestats correct``, read by
  ``recovery`` and ``correct --resume``; a mutated line carries a checksum that matches it (an
  attacker can compute one), so what is tested is the journal's own checks, not only its checksum;
- ``correction-round-records``: a round's run set inside that output, read by the same two.

Each mutant is placed in a copy of its directory; no command may change a byte of it (promote
writes no proposed case, ``run`` no re-run, ``correct --resume`` neither appends to nor rewrites
the journal).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from gatestats_runner.digests import canonical_json, digest_json
from tests.fuzz import corpus as base
from tests.fuzz.mutations import JSON_KINDS, JSONL_KINDS, Mutant, mutate_json, mutate_jsonl
from tests.fuzz.targets import (
    TARGETS,
    Command,
    Target,
    present_paths,
    run_set_manifest,
    run_set_records,
    run_set_valid,
    tree_copy,
)

__all__ = ["ALL_TARGETS", "DOOR_TARGETS", "failed_record_id"]


def failed_record_id(records: bytes) -> str:
    """The id of the failed record of a run set's ``records.jsonl`` (the one a person promotes)."""
    for line in records.splitlines():
        record = json.loads(line)
        if record["outcome"] == "failed":
            return str(record["record_id"])
    msg = "the fuzz corpus's run set has no failed record"
    raise RuntimeError(msg)


# --- commands --------------------------------------------------------------------------------------


def _promote_record(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    golden = work / "golden"
    if not golden.exists():
        tree_copy(c.golden_run, golden)
    record = failed_record_id(c.files["stored/records.jsonl"])
    args = ["promote", str(file.parent), "--record", record, "--case-id", "leak", "--split", "validation"]
    args += ["--failure-class", "policy_misread", "--severity", "high", "--by", "Fuzz"]  # its twin is in development
    args += ["--expect", str(base.GOLDEN_EXAMPLE / "refund-expect.json"), "--set", str(golden)]
    return args, [golden / "proposed" / "leak"]


def _drift_stored(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["drift", str(file.parent), str(c.rerun), "--json"], []


def _drift_rerun(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["drift", str(c.stored), str(file.parent), "--json"], []


def _verify_graders(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["cases", "verify-graders", str(c.golden_run), str(file.parent)], []


def _cases_check(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["cases", "check", str(c.golden_run), str(file.parent)], []


def _baseline_sample(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    out = work / "rerun-out"
    args = ["run", str(c.golden_run / "cases"), "--baseline-sample", "1", "--against", str(file.parent)]
    return [*args, "--seed", "1", "--isolation", "none", "--out", str(out)], [out]


def _out_of(file: Path) -> Path:
    """The correction output directory holding ``file`` (the journal, or a round's run set file)."""
    return file.parent if file.name == "journal.jsonl" else file.parents[3]


def _recovery(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return ["recovery", str(_out_of(file)), "--json"], []


def _correct_resume(work: Path, file: Path, c: base.Corpus) -> tuple[list[str], list[Path]]:
    return [*base.CORRECT_ARGS, "--out", str(_out_of(file)), "--resume"], []


_STORED_COMMANDS: dict[str, Command] = {
    "promote --record": _promote_record,
    "drift (stored)": _drift_stored,
    "cases verify-graders": _verify_graders,
    "cases check": _cases_check,
    "run --baseline-sample --against": _baseline_sample,
}
_CORRECTION_COMMANDS: dict[str, Command] = {"recovery": _recovery, "correct --resume": _correct_resume}


# --- the journal ----------------------------------------------------------------------------------

_EVENT_FIELDS = (
    "event",
    "at",
    "case_id",
    "round",
    "verdict",
    "detail",
    "spend",
    "candidate_digest",
    "run_set",
    "reason",
)
_START_FIELDS = ("format", "reviser", "max_rounds", "trials", "case_set_version", "reviser_timeout", "infra_retries")
_MORE_FIELDS = ("parent_digest", "feedback_digest", "signature", "failing_record", "cases_dir")
#: The journal's fields by role (each mutation picks among those its line has).
_JOURNAL_SPEC: dict[str, list[tuple[str | int, ...]]] = {
    "fields": [(k,) for k in (*_EVENT_FIELDS, *_START_FIELDS, *_MORE_FIELDS)]
    + [("spend", "usd"), ("spend", "seconds")],
    "required": [(k,) for k in (*_EVENT_FIELDS, *_START_FIELDS, "parent_digest")],
    "numeric": [("round",), ("trials",), ("max_rounds",), ("infra_retries",), ("spend", "usd"), ("spend", "seconds")],
    "constrained": [(k,) for k in ("event", "case_id", "verdict", "reason", "format", "run_set", "candidate_digest")],
}
_LINE_KINDS = ("truncate", "bom", "huge_line", "not_an_object", "torn_line")
JOURNAL_KINDS = tuple(k for k in JSONL_KINDS if k != "extra_field")  # an unknown key is not refused (v1 may grow)


def _journal_line(event: dict[str, Any]) -> bytes:
    return (canonical_json({**event, "checksum": digest_json(event)}) + "\n").encode()


def _with_checksum(line: bytes) -> bytes:
    """``line`` with a checksum that matches it, when it is still an object an attacker can checksum."""
    try:
        value = json.loads(line)
        if not isinstance(value, dict) or not value or not line.startswith(b"{"):
            return line
        checksum = digest_json(value)
    except (ValueError, TypeError, RecursionError):
        return line  # not JSON, NaN, too deep: refused before its checksum is looked at
    return b'{"checksum": ' + json.dumps(checksum).encode() + b", " + line[1:]


def _journal(c: base.Corpus, kind: str, rng: random.Random) -> Mutant:
    rows = [json.loads(line) for line in c.files["correction/journal.jsonl"].splitlines()]
    for row in rows:
        row.pop("checksum", None)
    if kind in _LINE_KINDS:
        return mutate_jsonl(rows, kind, rng, encode=_journal_line)
    index = rng.randrange(len(rows))
    spec = {name: present_paths(rows[index], paths) for name, paths in _JOURNAL_SPEC.items()}
    if kind == "removed_field" and not spec["required"]:
        spec["required"] = [("event",)]
    mutant = mutate_json(rows[index], kind, rng, indent=None, **spec)  # type: ignore[arg-type]
    lines = [_journal_line(r) for r in rows]
    lines[index] = _with_checksum(mutant.data.replace(b"\n", b"\\n")) + b"\n"
    return Mutant(data=b"".join(lines), note=f"line {index + 1}: {mutant.note}", line=index + 1)


def _journal_valid(path: Path, c: base.Corpus) -> bool:
    """A journal whose complete lines begin the valid one is what a kill leaves (a torn tail is set aside)."""
    lines = path.read_bytes().split(b"\n")[:-1]
    return lines == c.files["correction/journal.jsonl"].split(b"\n")[: len(lines)]


ROUND = "rounds/median/r00"


def _run_set_target(name: str, folder: str, file: str, commands: dict[str, Command]) -> Target:
    """``file`` of the run set at ``folder/`` (a :class:`~tests.fuzz.corpus.Corpus` directory), refused by ``commands``."""
    records = file.endswith("records.jsonl")
    return Target(
        name=name,
        file=file,
        kinds=JSONL_KINDS if records else JSON_KINDS,
        mutate=(run_set_records if records else run_set_manifest)(f"{folder}/{file}"),
        commands=commands,
        oracle=run_set_valid,
        folder=folder,
    )


_RERUN_COMMANDS: dict[str, Command] = {"drift (re-run)": _drift_rerun}

DOOR_TARGETS: tuple[Target, ...] = (
    _run_set_target("stored-records", "stored", "records.jsonl", _STORED_COMMANDS),
    _run_set_target("stored-manifest", "stored", "manifest.json", _STORED_COMMANDS),
    _run_set_target("rerun-records", "rerun", "records.jsonl", _RERUN_COMMANDS),
    _run_set_target("rerun-manifest", "rerun", "manifest.json", _RERUN_COMMANDS),
    Target(
        name="correction-journal",
        file="journal.jsonl",
        kinds=JOURNAL_KINDS,
        mutate=_journal,
        commands=_CORRECTION_COMMANDS,
        oracle=_journal_valid,
        folder="correction",
    ),
    _run_set_target("correction-round-records", "correction", f"{ROUND}/records.jsonl", _CORRECTION_COMMANDS),
)

#: Every target of the fuzz suite.
ALL_TARGETS: tuple[Target, ...] = (*TARGETS, *DOOR_TARGETS)
