"""Moving a case between splits: a new case version, the approval kept, the twin rule enforced."""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import Any

from gatestats._typing import JSONObject
from gatestats.errors import RecordFileError
from gatestats.golden.neardup import Twin
from gatestats.golden.proposal import GOLDEN_FILE, GoldenSetError, check_label, check_name, check_text
from gatestats.golden.store import (
    CaseState,
    _live_dirs,
    _locked,
    _log,
    _retire_dir,
    _twin_conflict,
    case_file_bytes,
    case_states,
    twins_of,
)
from gatestats.io.jsonfile import parse_json_document
from gatestats.vocabulary import SPLITS
from gatestats_runner.cases import Case, write_case
from gatestats_runner.digests import tree_digest
from gatestats_runner.fsops import rename_once

__all__ = ["reclassify"]


def _live_twins(root: Path, case_id: str, states: Mapping[str, CaseState]) -> list[Twin]:
    """The case's twins that are not retired (similarity 1: the link, not a measurement)."""
    return [
        Twin(case_id=t, split=states[t].split, status=states[t].status, jaccard=1.0, minhash_estimate=1.0)
        for t in sorted(twins_of(root, case_id))
        if t in states and states[t].status != "retired"
    ]


def _case_json(files: dict[str, bytes], name: str) -> Any:
    """The case file ``name`` decoded by the strict JSON door (depth and number limits)."""
    try:
        return parse_json_document(files[name], source=name)
    except RecordFileError as exc:
        raise GoldenSetError(str(exc)) from None


def _with_split(files: dict[str, bytes], split: str) -> dict[str, bytes]:
    """The case's files with ``split`` in ``golden.json`` and in the runner's labels (where it knows it)."""
    case_json = _case_json(files, "case.json")
    case_json["labels"]["split"] = split if split in {"development", "holdout"} else None
    golden = _case_json(files, GOLDEN_FILE)
    golden["split"] = split
    files["case.json"] = (json.dumps(case_json, indent=2, sort_keys=True) + "\n").encode()
    files[GOLDEN_FILE] = (json.dumps(golden, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode()
    return files


def _replace_case(root: Path, case_dir: Path, files: Mapping[str, bytes]) -> tuple[Case, str]:
    """Write ``files`` as the new version of ``case_dir``, the old one retired; return it and the old digest."""
    staging = root / f".reclassify-{case_dir.name}"
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir()
    try:
        case = write_case(staging / case_dir.name, files)
        old = tree_digest(case_dir)
        _retire_dir(root, case_dir, old)
        rename_once(staging / case_dir.name, case_dir)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return case, old


def reclassify(
    root: str | Path,
    case_id: str,
    *,
    split: str,
    reason: str,
    by: str,
    override_twin: str | None = None,
    now: datetime | None = None,
) -> JSONObject:
    """Move a case to another split (a new case version; an approval carries over: the graders are unchanged).

    Parameters
    ----------
    root, case_id
        The golden set (as in :func:`~gatestats.golden.events`), and a live case: proposed or approved.
    split
        The new split (one of :data:`~gatestats.vocabulary.SPLITS`).
    reason, by
        Why, and who moves it.
    override_twin
        The reason to put it in a near-duplicate's split (without it, that is refused).
    now
        The time recorded (default: now, UTC).

    Returns
    -------
    dict
        The ``reclassified`` event logged (old and new split, old and new case version).

    Raises
    ------
    GoldenSetError
        A bad split, name or reason; the case is not live or already in ``split``; a twin already
        in ``split`` without ``override_twin``.
    """
    root = Path(root)
    by, reason = check_name(by, where="--by"), check_text(reason, where="--reason")
    check_label(split, SPLITS, where="--split")
    with _locked(root):
        states = case_states(root)
        state = states.get(case_id)
        live = _live_dirs(root)
        if state is None or state.status == "retired" or case_id not in live or state.split == split:
            msg = f"{root}: case {case_id!r} cannot be reclassified to {split!r} (not live, or already there)"
            raise GoldenSetError(msg)
        _twin_conflict(root, case_id, split, _live_twins(root, case_id, states), override_twin)
        case_dir, _ = live[case_id]
        case, old = _replace_case(root, case_dir, _with_split(case_file_bytes(case_dir), split))
        event: JSONObject = {
            "event": "reclassified",
            "case_id": case_id,
            "from": state.split,
            "to": split,
            "case_version": case.version,
            "previous_version": old,
            "override_twin": override_twin,
            "reason": reason,
        }
        return _log(root, event, by=by, at=now)
