"""The rollout's decisions on disk: ``WATCH/decisions/NNNN.json``, written once per reading, read back checked.

Each file is the canonical JSON of a :class:`~gatestats.rollout.decision.WatchDecision` with its
``digest`` (``sha256:`` of the canonical JSON of every other field), written whole under the log's
lock with a number one above the highest there: two readings at once get two files, never one
overwritten. :func:`read_decision` refuses a file whose digest does not match (an edited decision)
and a format it does not know.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from gatestats.io.digest import canonical_json, digest_json
from gatestats.io.files import write_once
from gatestats.io.jsonfile import read_json_file
from gatestats.rollout.decision import DECISION_FORMAT, WatchDecision
from gatestats.rollout.log import WatchError, watch_lock

__all__ = ["MAX_DECISION_BYTES", "decision_files", "read_decision", "write_decision"]

#: The largest decision file read (a thinned path of 400 points per trigger keeps them small).
MAX_DECISION_BYTES = 64 * 1024 * 1024


def write_decision(watch_dir: str | os.PathLike[str], decision: WatchDecision) -> Path:
    """Write one reading as ``WATCH/decisions/NNNN.json`` (never replacing a file).

    Parameters
    ----------
    watch_dir
        The observation log.
    decision
        The reading (:func:`gatestats.rollout.watch.watch`).

    Returns
    -------
    Path
        The file written; its number is one above the highest under the lock (``decision.number``
        when no other reading was written meanwhile).
    """
    root = Path(watch_dir)
    with watch_lock(root):
        folder = root / "decisions"
        folder.mkdir(exist_ok=True)
        taken = [int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit()]
        number = max(taken, default=0) + 1
        body = decision.to_dict()
        body["number"] = number
        body["digest"] = digest_json(body)
        target = folder / f"{number:04d}.json"
        write_once(target, canonical_json(body).encode("utf-8") + b"\n")
    return target


def decision_files(watch_dir: str | os.PathLike[str]) -> list[Path]:
    """The decision files of a log, in reading order (empty when it was never read).

    Parameters
    ----------
    watch_dir
        The observation log.

    Returns
    -------
    list of Path
        ``WATCH/decisions/NNNN.json``, lowest number first.
    """
    folder = Path(watch_dir) / "decisions"
    if not folder.is_dir():
        return []
    return sorted((p for p in folder.glob("*.json") if p.stem.isdigit()), key=lambda p: int(p.stem))


def read_decision(path: str | os.PathLike[str]) -> Mapping[str, Any]:
    """Read a decision file back: strict JSON, its format and its digest checked.

    Parameters
    ----------
    path
        ``WATCH/decisions/NNNN.json``.

    Returns
    -------
    Mapping
        The decision document (``gatestats-watch-decision/1``).

    Raises
    ------
    WatchError
        Not a decision file, or its digest does not match its content (the file was edited).
    """
    body = read_json_file(path, limit=MAX_DECISION_BYTES, what="watch decision (written by `gatestats watch status`)")
    if not isinstance(body, dict) or body.get("format") != DECISION_FORMAT:
        found = body.get("format") if isinstance(body, dict) else None
        msg = f"{path}: not a {DECISION_FORMAT} document (format {json.dumps(found)})"
        raise WatchError(msg)
    stored = body.get("digest")
    rest = {k: v for k, v in body.items() if k != "digest"}
    if stored != digest_json(rest):
        expected = digest_json(rest)
        msg = f"{path}: field 'digest': {stored!r} does not match the content ({expected}): the file was edited"
        raise WatchError(msg)
    return body
