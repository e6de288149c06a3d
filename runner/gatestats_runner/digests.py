"""The project's digests, public: one implementation for the runner and for everyone who reads its files.

Every digest is ``sha256:<hex>``. Canonical JSON has sorted keys, compact separators (``,`` and
``:``), non-ASCII kept as UTF-8 and no NaN or infinity: it is the form that record checksums,
run-set, case and system digests are computed over, and the release controller (:mod:`gatestats`)
digests policies, verdicts, calibrations and report data the same way, through this module.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

__all__ = [
    "EMPTY_TREE_DIGEST",
    "canonical_json",
    "digest_bytes",
    "digest_file",
    "digest_json",
    "tree_digest",
]

_CHUNK = 1 << 20
#: The canonical encoder, built once: ``json.dumps`` with these options builds this encoder on every call.
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode


def digest_bytes(data: bytes) -> str:
    """``sha256:<hex>`` of ``data``.

    Parameters
    ----------
    data
        The bytes to digest.

    Returns
    -------
    str
        ``"sha256:"`` followed by 64 lower-case hex digits.

    Examples
    --------
    >>> digest_bytes(b"")
    'sha256:e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855'
    """
    return "sha256:" + hashlib.sha256(data).hexdigest()


def digest_file(path: str | os.PathLike[str]) -> str:
    """``sha256:<hex>`` of a file's bytes (read in 1 MiB chunks).

    Parameters
    ----------
    path
        The file to read.

    Returns
    -------
    str
        The digest of the file's bytes, as :func:`digest_bytes` gives it.

    Raises
    ------
    OSError
        The file cannot be read.
    """
    h = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(_CHUNK):
            h.update(chunk)
    return "sha256:" + h.hexdigest()


def canonical_json(value: Any) -> str:
    """JSON with sorted keys, no insignificant whitespace and non-ASCII kept (the checksum form).

    Parameters
    ----------
    value
        A JSON-ready value (dicts, lists, strings, numbers, booleans, None).

    Returns
    -------
    str
        The canonical text.

    Raises
    ------
    ValueError
        ``value`` holds NaN or an infinity (no JSON number can say it).
    TypeError
        ``value`` holds something JSON cannot represent.

    Examples
    --------
    >>> canonical_json({"b": 1, "a": [True, None, "é"]})
    '{"a":[true,null,"é"],"b":1}'
    """
    return _CANONICAL(value)


def digest_json(value: Any) -> str:
    """``sha256:<hex>`` of the canonical JSON of ``value`` (UTF-8).

    Parameters
    ----------
    value
        A JSON-ready value, as :func:`canonical_json` takes it.

    Returns
    -------
    str
        The digest; the same for any two values that are equal as JSON, whatever their key order.
    """
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

    Parameters
    ----------
    root
        The directory (None, or a path that is not a directory: the empty tree).

    Returns
    -------
    str
        ``sha256:<hex>`` of one line per entry, sorted by path.
    """
    if root is None or not os.path.isdir(root):
        return EMPTY_TREE_DIGEST
    return digest_bytes("\n".join(_tree_lines(Path(root))).encode("utf-8"))


#: The digest of an empty (or missing) tree.
EMPTY_TREE_DIGEST = digest_bytes(b"")
