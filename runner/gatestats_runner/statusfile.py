"""The trial's status file: bubblewrap's ``--json-status-fd`` objects and the sandbox's start mark.

bubblewrap writes ``{"child-pid": N}`` once the sandbox is cloned and ``{"exit-code": N}`` once the
command has ended by itself; the sandbox writes ``{"gatestats-started": true}`` just before it
executes the command. The objects follow each other, separated by whitespace or nothing.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

__all__ = ["status_documents"]


def status_documents(path: Path) -> list[Any]:
    """The JSON values of the status file in order, up to the first that does not parse (a write in progress).

    Parameters
    ----------
    path
        The trial's status file.

    Returns
    -------
    list
        The decoded values; empty when the file cannot be read.
    """
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    decoder = json.JSONDecoder()
    documents: list[Any] = []
    pos = 0
    while pos < len(text):
        while pos < len(text) and text[pos].isspace():
            pos += 1
        if pos >= len(text):
            break
        try:
            doc, pos = decoder.raw_decode(text, pos)
        except json.JSONDecodeError:
            break
        documents.append(doc)
    return documents
