"""Reading other tools' log files: JSON as those tools write it, and zip archives with zstd members.

Other harnesses write JSON that the run-record contract's strict decoder refuses on purpose: Inspect
AI writes a bare ``NaN`` into ``reductions.json`` when a reducer has nothing to reduce, and its
sample transcripts nest deeper than the contract's 32 levels. These readers are strict where it
matters for an import (UTF-8, a duplicate key, truncation, a member that is not JSON, sizes) and
tolerant where the source tool is: ``NaN``/``Infinity`` are decoded, and each importer refuses a
non-finite number in a field it reads.

Inspect's ``.eval`` files are zip archives whose members are compressed with zstd (zip method 93),
which :mod:`zipfile` reads only from Python 3.14; such members are decompressed here with the
``zstandard`` package, and their CRC-32 is checked as :mod:`zipfile` would.
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
import zlib
from pathlib import Path
from typing import Any

from gatestats.errors import RecordFileError

__all__ = ["MAX_LOG_BYTES", "MAX_MEMBER_BYTES", "ZIP_ZSTD", "decode_tool_json", "open_zip", "read_member"]

#: The largest log file read.
MAX_LOG_BYTES = 1 << 31
#: The largest decompressed archive member read (a guard against a zip bomb).
MAX_MEMBER_BYTES = 1 << 28
#: The zip compression method number of zstd (APPNOTE 6.3.7, section 4.4.5).
ZIP_ZSTD = 93
_LOCAL_HEADER = struct.Struct("<4s22x2H")  # signature, ..., file name length, extra field length


class _DuplicateKeyError(ValueError):
    pass


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise _DuplicateKeyError(key)
        result[key] = value
    return result


def decode_tool_json(raw: bytes, *, source: str) -> Any:
    """Decode one JSON document as other tools write it: ``NaN`` allowed, a duplicate key refused.

    Parameters
    ----------
    raw
        The document's bytes.
    source
        How errors name the document (a file, or ``file[member]``).

    Returns
    -------
    Any
        The decoded value (``NaN``/``Infinity`` become floats; the caller checks the fields it reads).

    Raises
    ------
    RecordFileError
        Not UTF-8, not JSON (with its line), a duplicate key, or nested beyond Python's recursion limit.

    Examples
    --------
    >>> decode_tool_json(b'[{"value": NaN}]', source="reductions.json")
    [{'value': nan}]
    >>> decode_tool_json(b'{"a": 1,\\n "a": 2}', source="x.json")
    Traceback (most recent call last):
    ...
    gatestats.errors.RecordFileError: x.json: field 'a': duplicate key in a JSON object
    """
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise RecordFileError.single(source, "<line>", f"not valid UTF-8 at byte {exc.start}", line=line) from None
    try:
        return json.loads(text, object_pairs_hook=_no_duplicates)
    except _DuplicateKeyError as exc:
        raise RecordFileError.single(source, str(exc), "duplicate key in a JSON object") from None
    except json.JSONDecodeError as exc:
        msg = f"not valid JSON: {exc.msg} (column {exc.colno})"
        raise RecordFileError.single(source, "<line>", msg, line=exc.lineno) from None
    except RecursionError:
        raise RecordFileError.single(source, "<line>", "JSON nested too deeply to read") from None


def open_zip(data: bytes, *, file: Path, what: str) -> zipfile.ZipFile:
    """The zip archive in ``data`` (read from ``file``), or an error naming the file.

    Parameters
    ----------
    data
        The archive's bytes.
    file
        Its path, for messages.
    what
        What the archive should be (e.g. ``Inspect .eval log``).

    Returns
    -------
    zipfile.ZipFile
        The archive, open for reading.

    Raises
    ------
    RecordFileError
        Not a zip archive, or truncated (its central directory is missing or cut).
    """
    try:
        return zipfile.ZipFile(io.BytesIO(data))
    except (zipfile.BadZipFile, ValueError, EOFError) as exc:
        msg = f"not a readable {what} (a zip archive; truncated or damaged?): {exc}"
        raise RecordFileError.single(file, "<file>", msg) from None


def _raw_member(archive: zipfile.ZipFile, info: zipfile.ZipInfo, where: str) -> bytes:
    """The compressed bytes of ``info``, located through its local file header."""
    handle = archive.fp
    if handle is None:  # pragma: no cover - the archive is open
        msg = "the archive is closed"
        raise RecordFileError.single(where, "<member>", msg)
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) < _LOCAL_HEADER.size:
        raise RecordFileError.single(where, "<member>", "the member's local header is cut off (truncated archive)")
    signature, name_length, extra_length = _LOCAL_HEADER.unpack(header)
    if signature != b"PK\x03\x04":
        raise RecordFileError.single(
            where, "<member>", "no local file header where the directory says (damaged archive)"
        )
    handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    raw = handle.read(info.compress_size)
    if len(raw) < info.compress_size:
        msg = f"{len(raw)} of {info.compress_size} compressed bytes present (truncated archive)"
        raise RecordFileError.single(where, "<member>", msg)
    return bytes(raw)


def _zstd(raw: bytes, where: str, limit: int) -> bytes:
    try:
        import zstandard  # noqa: PLC0415 - optional until it is in the lock; only .eval members need it
    except ImportError:  # pragma: no cover - depends on the environment
        msg = "the member is zstd-compressed: install the 'zstandard' package to read it"
        raise RecordFileError.single(where, "<member>", msg) from None
    try:
        with zstandard.ZstdDecompressor().stream_reader(io.BytesIO(raw)) as reader:
            data = reader.read(limit + 1)
    except zstandard.ZstdError as exc:
        raise RecordFileError.single(where, "<member>", f"not valid zstd data: {exc}") from None
    return bytes(data)


def read_member(archive: zipfile.ZipFile, name: str, *, file: Path, limit: int = MAX_MEMBER_BYTES) -> bytes:
    """The decompressed bytes of member ``name`` (stored, deflate or zstd), CRC-checked.

    Parameters
    ----------
    archive
        The open archive.
    name
        The member's name.
    file
        The archive's path; errors name ``file[name]``.
    limit
        The most decompressed bytes accepted.

    Returns
    -------
    bytes
        The member's content.

    Raises
    ------
    RecordFileError
        An unknown compression method, truncated or damaged data, a CRC mismatch, or more than ``limit`` bytes.
    """
    where = f"{file}[{name}]"
    info = archive.getinfo(name)
    if info.file_size > limit:
        raise RecordFileError.single(where, "<member>", f"{info.file_size} bytes is larger than the limit of {limit}")
    if info.compress_type == ZIP_ZSTD:
        data = _zstd(_raw_member(archive, info, where), where, limit)
        if len(data) != info.file_size or zlib.crc32(data) != info.CRC:
            msg = "the decompressed member does not match its size and CRC-32 (damaged archive)"
            raise RecordFileError.single(where, "<member>", msg)
        return data
    if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
        msg = f"zip compression method {info.compress_type} is not supported (stored, deflate and zstd are)"
        raise RecordFileError.single(where, "<member>", msg)
    try:
        with archive.open(info) as member:
            return member.read(limit + 1)
    except (zipfile.BadZipFile, zlib.error, EOFError, ValueError) as exc:
        raise RecordFileError.single(where, "<member>", f"cannot read the member (damaged archive): {exc}") from None
