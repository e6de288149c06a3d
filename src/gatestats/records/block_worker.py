"""A worker process of the parallel line pass: it checks the blocks it is handed, one by one.

:mod:`gatestats.records.parallel` starts it as ``python -P -c "from gatestats.records.block_worker
import serve; serve()" KEEP`` and writes blocks of whole lines to its standard input; it answers each,
in order, on its standard output with what the block adds to the pass (:func:`answer`: the
sequential pass's own code run on the block alone). It imports the pass (:mod:`gatestats.records.lines`,
the block checker) and msgspec: not polars, not the parent's process machinery.
"""

from __future__ import annotations

import contextlib
import os
import struct
import sys
from pathlib import Path
from typing import Any

from gatestats.records import lines

__all__ = ["ANSWER", "BLOCK", "FAILED", "PART", "answer", "serve"]

#: A block's header: whether it is worth proving, its length.
BLOCK = struct.Struct("<Bq")
#: An answer's header: its kind (:data:`PART` or :data:`FAILED`), its length.
ANSWER = struct.Struct("<Bq")
#: An answer that is a block's part (msgpack of :func:`answer`).
PART = 0
#: An answer that says the worker failed (UTF-8 text).
FAILED = 1


def serve() -> None:
    """A worker's loop: read blocks from standard input, answer each on standard output, until its end.

    ``sys.argv[1]`` is ``KEEP``: JSON, ``null`` or the kept columns and the key fields.
    """
    import msgspec  # noqa: PLC0415 - the worker's one dependency

    keep = msgspec.json.decode(sys.argv[1])
    encode = msgspec.msgpack.Encoder().encode
    source, sink = sys.stdin.buffer, sys.stdout.buffer
    try:
        while header := source.read(BLOCK.size):
            worth, length = BLOCK.unpack(header)
            block = source.read(length)
            if len(block) != length:
                return  # the parent is gone
            try:
                body, kind = encode(answer(block, bool(worth), keep)), PART
            except Exception as exc:
                body, kind = f"failed: {type(exc).__name__}: {exc}".encode(), FAILED
            sink.write(ANSWER.pack(kind, len(body)) + body)
            sink.flush()
    except (KeyboardInterrupt, BrokenPipeError):  # Ctrl-C reaches the whole process group; the parent ends it
        with contextlib.suppress(OSError):
            os.close(1)  # no flush of a broken pipe at exit
        os._exit(1)


def answer(block: bytes, worth: bool, keep: list[list[str]] | None) -> list[Any]:
    """What one block adds to the pass: the sequential code run on it alone, its lines numbered from 1.

    A worker calls it on the blocks it is handed, and the parent of the pass on its own share
    (:func:`gatestats.records.parallel.read_parallel`): the key hashes are the portable ones
    (:func:`gatestats.records.lines._key_hashes`), alike in every process.

    Parameters
    ----------
    block
        Whole lines.
    worth
        Whether the block is worth proving (the parent decides, as the sequential pass does).
    keep
        The kept columns and the key fields (``None``: no columns).

    Returns
    -------
    list
        Its lines, whether it was proved, its problems (line, field, message; the first
        :data:`~gatestats.errors.MAX_PROBLEMS`) and their count, its blank lines, the count and first
        lines with and without a checksum, its run set ids, and for a proved block with ``keep`` the
        kept columns' values and the key hashes (:func:`gatestats.records.parallel._merge` adds them up).
    """
    scan = lines._Scan(Path())
    if keep is not None:
        scan.frames = _Collected(tuple(keep[0]), tuple(keep[1]), portable=True)
    scan.block(block, worth=worth)
    collected = scan.frames
    proved = isinstance(collected, _Collected)
    return [
        scan.number,
        proved,
        [(p.line, p.field, p.message) for p in scan.problems.kept],
        scan.problems.total,
        scan.blank,
        (scan.with_checksum.count, scan.with_checksum.first),
        (scan.without_checksum.count, scan.without_checksum.first),
        sorted(scan.run_set_ids),
        collected.columns if isinstance(collected, _Collected) else None,
        collected.hashes if isinstance(collected, _Collected) else None,
    ]


class _Collected(lines._Frames):
    """A proved block's kept values (lists, strings joined) and key hashes for the parent (no polars in a worker)."""

    columns: list[list[Any] | str] | None = None
    hashes: list[int] | None = None

    def add(self, proof: Any) -> None:
        columns, self.hashes = self.values(proof)
        self.columns = [_joined(values) for values in columns]


def _joined(values: list[Any]) -> list[Any] | str:
    """A column of strings as one text, a newline between values (cheaper to send and read); any other as it is.

    A proved value holds no newline (it would be escaped, and a block with an escape is not proved);
    the count of newlines is checked all the same, so the parent splits back exactly these values.
    """
    try:
        text = "\n".join(values)
    except TypeError:  # a value that is not a string (a number, null)
        return values
    return text if text.count("\n") == len(values) - 1 else values
