"""The oracle of the block-proof tests: a JSONL file read with the block proofs, and by the line pass alone.

Shared by tests/records/test_canonical_block.py and test_spaced_block.py. "The line pass alone" turns off
*every* block proof (:func:`~gatestats.records.canonical_block.proves_block` and
:func:`~gatestats.records.canonical_block.proves_spaced_block`): with only one off, a block the other proves
would be read by a proof on both sides, and the comparison would prove nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from gatestats.errors import RecordFileError
from gatestats.records import lines
from gatestats.records.lines import check_jsonl

#: Every block proof the reader tries before its line pass (attributes of :mod:`gatestats.records.lines`).
PROOFS = ("proves_block", "proves_spaced_block")


def outcome(path: Path) -> tuple[Any, ...]:
    """What :func:`check_jsonl` says of ``path``: refused with its problems, or accepted with what it read."""
    try:
        check = check_jsonl(path)
    except RecordFileError as exc:
        return ("refused", exc.total, tuple(str(p) for p in exc.problems))
    return ("accepted", check.n_records, check.checksums, check.digest, tuple(check.lines), check.run_set_ids)


def with_and_without_proofs(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """The reader with the block proofs, and the line pass alone (every proof off, every line decoded in Python)."""
    fast = outcome(path)
    with monkeypatch.context() as patch:
        for name in PROOFS:
            patch.setattr(lines, name, lambda block: None)
        slow = outcome(path)
    return fast, slow


def write_file(tmp_path: Path, data: bytes, name: str = "r.jsonl") -> Path:
    """``data`` written to ``tmp_path / name``."""
    path = tmp_path / name
    path.write_bytes(data)
    return path
