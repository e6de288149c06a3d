"""Small shared helpers: digests of files and trees, canonical JSON, timestamps, atomic writes."""

from __future__ import annotations

import hashlib
import json
import os
import stat
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

__all__ = [
    "EMPTY_TREE_DIGEST",
    "atomic_write_json",
    "canonical_json",
    "digest_bytes",
    "digest_file",
    "digest_json",
    "fsync_dir",
    "now_rfc3339",
    "short_id",
    "tree_digest",
    "write_all",
]

_CHUNK = 1 << 20


def digest_bytes(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``."""
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest_file(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file's bytes (read in 1 MiB chunks)."""
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no insignificant whitespace and non-ASCII kept (the checksum form)."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def digest_json(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value``."""
    return digest_bytes(canonical_json(value).encode("utf-8"))


def _tree_lines(root: Path) -> list[str]:
    lines: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root, followlinks=False):
        dirnames.sort()
        rel_dir = os.path.relpath(dirpath, root)
        for name in sorted(dirnames + filenames):
            path = os.path.join(dirpath, name)
            rel = name if rel_dir == "." else f"{rel_dir}/{name}"
            st = os.lstat(path)
            key = json.dumps(rel, ensure_ascii=False)
            if stat.S_ISLNK(st.st_mode):
                lines.append(f"l {key} {json.dumps(os.readlink(path), ensure_ascii=False)}")
            elif stat.S_ISDIR(st.st_mode):
                lines.append(f"d {key}")
            elif stat.S_ISREG(st.st_mode):
                executable = "x" if st.st_mode & 0o111 else "-"
                lines.append(f"f {key} {executable} {digest_file(path)}")
            else:
                lines.append(f"o {key} {stat.S_IFMT(st.st_mode):o}")
    return lines


def tree_digest(root: str | os.PathLike[str] | None) -> str:
    """Content digest of a directory tree: paths, file bytes, executable bits and symlink targets.

    Timestamps and ownership are left out, so a copy of the same bytes has the same digest and
    any changed byte, name, mode bit or link gives a new one. A missing tree has the digest of
    an empty one.
    """
    if root is None or not os.path.isdir(root):
        return EMPTY_TREE_DIGEST
    return digest_bytes("\n".join(_tree_lines(Path(root))).encode("utf-8"))


EMPTY_TREE_DIGEST = digest_bytes(b"")


def short_id(run_set_id: str) -> str:
    """12 hex characters naming a run set's cgroups and workspaces (unique per run set)."""
    return hashlib.sha256(run_set_id.encode("utf-8")).hexdigest()[:12]


def now_rfc3339() -> str:
    """The current time as RFC 3339 with an explicit UTC offset and milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def write_all(fd: int, data: bytes) -> None:
    """Write every byte of ``data`` to ``fd`` (``os.write`` may write less than asked)."""
    view = memoryview(data)
    while view:
        written = os.write(fd, view)
        view = view[written:]


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """fsync a directory so that a rename or a new entry in it survives a crash."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def atomic_write_json(path: Path, value: Any) -> None:
    """Write JSON to ``path`` through a temporary file, fsync and rename (never a torn file)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    data = (json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    try:
        write_all(fd, data)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    fsync_dir(path.parent)
