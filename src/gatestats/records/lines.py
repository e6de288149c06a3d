"""The strict line pass over a JSONL record file: every line decoded, checked and its checksum verified.

Every reader of JSONL records goes through :func:`check_jsonl` before polars sees the file, so the
columnar reader only ever parses lines that are already known to be exactly what the contract says:
one JSON object per line, no duplicate key, no ``NaN``, no number that overflows, no unknown field,
every value of the right type at every depth (see :func:`gatestats_runner.contract.decode_line` and
:func:`~gatestats_runner.contract.validate_record`, the runner's own checker: one source of truth).

Checksums
---------
The runner writes a ``checksum`` on every line: ``sha256:`` of the canonical JSON of the record
without that field (:func:`gatestats_runner.runsets.record_checksum`). A line whose checksum does not
match its content was changed after it was written: that is an error, never a warning. A file is
either checksummed on every line or on none (a file of records from another tool); a file with
some lines checksummed and others not is an error too (stripping the checksum from an edited line
must not turn it into "unchecked evidence"). The pass also digests the file's bytes as it reads
them, so the digest a verdict binds is the digest of the bytes that were checked.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from array import array
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal

from gatestats.errors import MAX_PROBLEMS, ProblemList, RecordFileError, RecordProblem
from gatestats.records.canonical_block import (
    VALUE_FIELDS,
    BlockProof,
    _unset,
    proof_started,
    proved_values,
    proves_block,
    proves_spaced_block,
    spaced,
)
from gatestats_runner.contract import decode_line, load_schema, validate_record
from gatestats_runner.runsets import CHECKSUM_FIELD, record_checksum

if TYPE_CHECKING:
    import polars as pl

__all__ = ["KEY_HASH", "MAX_PROBLEMS", "PARALLEL_FROM_BYTES", "ChecksumStatus", "JsonlCheck", "check_jsonl"]

#: The column of :attr:`JsonlCheck.frame` holding an 8-byte hash of each record's key.
KEY_HASH = "__key_hash"


ChecksumStatus = Literal["verified", "none", "empty"]
#: The pass reads this many bytes at a time and proves or checks the whole lines among them. Half a
#: MiB: the proof's buffers (the block, its re-encodings, its records) stay in cache and glibc's
#: heap; at 1 MiB each block's buffers were fresh pages (a proof 7% slower a line; RESULTS, session 38).
_BLOCK_BYTES = 1 << 19
#: A file smaller than a block, of fewer lines than this, goes to the line pass: it costs less than
#: the proof's start (importing msgspec, ~30 ms; ~14 µs a line for the line pass), unless that start is paid already.
_PROVE_FROM_LINES = 1_000
#: A file from this size on (1 GiB, ~3.4M runner lines) is shared among processes when more than one
#: may run: below it their extra CPU time (their start, the blocks' transfer, the portable key hash:
#: +12-22% at 1M lines) takes the pass over the issue's CPU targets, which one process meets; above
#: it the fixed costs of the command are spread over more lines and the wait saved is tens of seconds
#: (measured: benchmarks/RESULTS.md, issue 28 item 1, sessions 37-39; docs/integrity.md).
PARALLEL_FROM_BYTES = 1 << 30
#: The kept columns of this many blocks (~30 MiB of lines) are made one series of one chunk at once
#: (:meth:`_Frames._collapse`): few polars calls a file (a text split costs ~0.4 ms), chunks aligned.
_BLOCKS_AT_ONCE = 64


@dataclass(frozen=True, slots=True, kw_only=True)
class JsonlCheck:
    """What the line pass found in a JSONL record file that has no defect.

    ``lines[i]`` is the 1-based line number of the i-th record (blank lines are skipped); it
    is a ``range`` when the file has no blank line, so it costs no memory per record.
    ``checksums`` is ``verified`` when every line carries a checksum that matches its content,
    ``none`` when no line carries one, ``empty`` when the file has no record.
    """

    path: str
    digest: str
    size: int
    n_records: int
    checksums: ChecksumStatus
    run_set_ids: frozenset[str]
    lines: Sequence[int]
    #: The columns ``keep`` (and :data:`KEY_HASH`) when every block was proved (see :func:`check_jsonl`).
    frame: pl.DataFrame | None = None


class _LineSample:
    """Line numbers counted, the first :data:`MAX_PROBLEMS` kept (a file's every line is never held)."""

    def __init__(self) -> None:
        self.count = 0
        self.first: list[int] = []

    def append(self, number: int) -> None:
        self.count += 1
        if len(self.first) < MAX_PROBLEMS:
            self.first.append(number)

    def merge(self, count: int, first: Sequence[int]) -> None:
        """Another sample's lines, all after these (its first :data:`MAX_PROBLEMS` and its count)."""
        self.first.extend(first[: MAX_PROBLEMS - len(self.first)])
        self.count += count


def _add(problems: ProblemList, file: Path, line: int, field: str, message: str) -> None:
    problems.add(RecordProblem(file=str(file), line=line, field=field, message=message))


def check_jsonl(
    path: str | os.PathLike[str],
    *,
    keep: Sequence[str] | None = None,
    key: Sequence[str] = (),
    workers: int | None = None,
) -> JsonlCheck:
    """Decode, contract-check and checksum-verify every line of a JSONL record file.

    The file is read in blocks of whole lines. A block of runner-written lines is proved to pass
    every check at once, in compiled code (:func:`gatestats.records.canonical_block.proves_block`);
    every other block is checked line by line. Either way every line is checked, and every problem
    is found and named by the line pass.

    Parameters
    ----------
    path
        The JSONL record file.
    keep
        Fields (of :data:`~gatestats.records.canonical_block.VALUE_FIELDS`) whose values to keep
        from the records the proof decoded: when every block of the file is proved,
        :attr:`JsonlCheck.frame` holds them, typed as the contract's columns, in line order,
        taken from the very bytes that were checked and digested (so the file need not be read
        again). ``None``: no frame.
    key
        Fields hashed, block by block, into the frame's :data:`KEY_HASH` column (one 8-byte
        hash a record, to prove that no key repeats without holding the keys).
    workers
        How many processes check the blocks of a file of at least
        :data:`PARALLEL_FROM_BYTES` (``None``: the CPUs this process may use that no other task
        takes now, at most :data:`~gatestats.records.parallel.MAX_WORKERS`, see
        :func:`~gatestats.records.parallel.default_workers`, and one process when ``key`` is
        hashed in Python, that is when not every key field is in ``keep``; 1: this process
        alone). The answer is the same whatever the number (:mod:`gatestats.records.parallel`).

    Returns
    -------
    JsonlCheck
        What the pass established: the digest, the line of each record, checksums, run set ids.

    Raises
    ------
    RecordFileError
        With every problem found (the first :data:`MAX_PROBLEMS` kept, ``total`` exact), each
        naming the file, the line and the field: a line that is not one strict JSON object, a
        field that breaks the contract, a checksum that does not match the line, a line without
        a checksum in a checksummed file, a torn last line (no newline: a writer crashed).
    """
    file = Path(path)
    scan = _Scan(file)
    if keep is not None and {*keep, *key} <= VALUE_FIELDS:
        scan.frames = _Frames(tuple(keep), tuple(key))
    try:
        handle = file.open("rb")
    except OSError as exc:
        raise RecordFileError.single(file, "<file>", f"cannot read: {exc.strerror or exc}") from None
    with handle:
        processes = _processes(handle, workers, python_key=scan.frames is not None and scan.frames.python_key)
        if processes > 1:
            from gatestats.records import parallel  # noqa: PLC0415 - only for a large file

            parallel.read_parallel(scan, handle, processes)
        else:
            scan.read(handle)
    return scan.result()


def _workers(workers: int | None) -> int:
    """The number of processes asked for, or the default (:func:`gatestats.records.parallel.default_workers`)."""
    if workers is None:
        from gatestats.records.parallel import default_workers  # noqa: PLC0415 - only for a large file

        return default_workers()
    return workers


def _processes(handle: BinaryIO, workers: int | None, *, python_key: bool = False) -> int:
    """How many processes check the file (1: this process alone), decided once.

    More than one only when the file is large enough to pay and more than one may run; the default
    reads the machine's running tasks once here, so the decision and the count cannot disagree.
    The default keeps to one process when the key is hashed in Python block by block
    (``python_key``, :attr:`_Frames.python_key`: ``validate``): a shared pass must then hash it
    portably, and measured at 10M lines such a pass cost +19-24% CPU time, over the issue's target,
    where a pass whose key polars hashes (``analyze``) or that hashes none (a run set) cost none
    (docs/integrity.md, "When workers are used"). An explicit ``workers`` is obeyed either way.
    """
    if workers is not None and workers < 1:
        msg = f"workers must be at least 1, got {workers}"
        raise ValueError(msg)
    if workers == 1 or os.fstat(handle.fileno()).st_size < PARALLEL_FROM_BYTES:
        return 1  # a small file imports nothing more and starts no process
    if workers is None and python_key:
        return 1
    return _workers(workers)


class _Scan:
    """The state of one line pass: the digest, the line count, the checksums seen, the problems."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.problems = ProblemList()
        self.digest = hashlib.sha256()
        self.size = 0
        self.blank: list[int] = []
        self.with_checksum = _LineSample()
        self.without_checksum = _LineSample()
        self.run_set_ids: set[str] = set()
        self.number = 0
        self.torn = False
        #: The kept columns of the blocks proved so far; None once a line is left to the line pass.
        self.frames: _Frames | None = None

    def read(self, handle: BinaryIO) -> None:
        """Every line of ``handle``, in blocks of whole lines (the last line may lack its newline)."""
        for block, torn in self.blocks(handle):
            if block:
                self.block(block, worth=self.worth(block))
            if torn is not None:
                self.line(torn)

    def blocks(self, handle: BinaryIO) -> Iterator[tuple[bytes, bytes | None]]:
        """Blocks of whole lines of ``handle``, digested and counted in :attr:`size` as they are read.

        Each is ``(whole lines, None)``; the last is ``(whole lines, the last line)`` when that
        line has no newline (the whole lines may then be empty).
        """
        while chunk := handle.read(_BLOCK_BYTES):
            if not chunk.endswith(b"\n"):
                chunk += handle.readline()  # up to the end of the line (a line longer than a block too)
            self.digest.update(chunk)
            self.size += len(chunk)
            if chunk.endswith(b"\n"):
                yield chunk, None
                continue
            end = chunk.rfind(b"\n") + 1  # the file's last line, without a newline
            yield chunk[:end], chunk[end:]

    def worth(self, block: bytes) -> bool:
        """Whether proving ``block`` (just read) costs less than the line pass.

        Not for a small file, unless the proof has started in this process already (:func:`proof_started`).
        """
        return self.size >= _BLOCK_BYTES or block.count(b"\n") >= _PROVE_FROM_LINES or proof_started()

    def block(self, block: bytes, *, worth: bool) -> None:
        """Whole lines: proved at once when ``worth`` it, else checked line by line.

        Proved: lines as the runner writes them (:func:`proves_block`), or as ``json.dumps(record,
        sort_keys=True)`` writes them without checksums (:func:`proves_spaced_block`).
        """
        proof = None
        if worth:
            proof = proves_spaced_block(block) if spaced(block) else proves_block(block)
        if proof is not None:
            if proof.checksummed:
                self.with_checksum.count += proof.n_lines
            else:  # the lines of a block without checksums, as the line pass would list them
                first = self.number + 1
                self.without_checksum.merge(proof.n_lines, range(first, first + min(proof.n_lines, MAX_PROBLEMS)))
            self.number += proof.n_lines
            self.run_set_ids |= proof.run_set_ids
            if self.frames is not None:
                self.frames.add(proof)
            return
        lines = block.split(b"\n")
        lines.pop()  # after the last newline
        for raw in lines:
            self.line(raw + b"\n")

    def line(self, raw: bytes) -> None:
        """One line, as read from the file (with its newline, unless it is the last and torn)."""
        self.number += 1
        self.frames = None  # a line the proof did not decode: its values are not at hand
        if not raw.endswith(b"\n"):
            self.torn = True
        body = raw.rstrip(b"\r\n")
        if not body.strip():
            self.blank.append(self.number)
            return
        if self.torn and decode_line(body)[0] is None:
            why = "torn last line: not complete JSON and no final newline (a crashed writer?)"
            _add(self.problems, self.file, self.number, "<line>", why)
            return
        _check_line(
            self.file, body, self.number, self.problems, self.with_checksum, self.without_checksum, self.run_set_ids
        )

    def result(self) -> JsonlCheck:
        """What the pass established; raises with every problem found."""
        problems, with_checksum, without_checksum = self.problems, self.with_checksum, self.without_checksum
        if with_checksum.count and without_checksum.count:
            for line in without_checksum.first:
                _add(
                    problems,
                    self.file,
                    line,
                    CHECKSUM_FIELD,
                    f"no checksum, but {with_checksum.count} other line(s) of this file have one: "
                    "a line of a checksummed file was replaced or its checksum removed",
                )
            problems.total += without_checksum.count - len(without_checksum.first)
        problems.raise_if_any()
        lines = _record_lines(self.number, self.blank)
        status: ChecksumStatus = "empty" if not lines else "verified" if with_checksum.count else "none"
        return JsonlCheck(
            path=str(self.file),
            digest="sha256:" + self.digest.hexdigest(),
            size=self.size,
            n_records=len(lines),
            checksums=status,
            run_set_ids=frozenset(self.run_set_ids),
            lines=lines,
            frame=None if self.frames is None or not lines else self.frames.frame(),
        )


class _Frames:
    """The kept columns of every proved block, and one hash of each record's key."""

    def __init__(self, keep: tuple[str, ...], key: tuple[str, ...], *, portable: bool = False) -> None:
        self.keep = keep
        self.key = key
        #: Whether key hashes must be alike in every process (a pass shared with workers: :func:`_key_hashes`).
        self.portable = portable
        #: Each column's values, :data:`_BLOCKS_AT_ONCE` blocks a series (:meth:`_collapse`).
        self.pieces: dict[str, list[pl.Series]] = {name: [] for name in keep}
        #: Each column's values of the blocks added since: a series, or (from a worker) a text of strings
        #: joined by newlines.
        self.pending: dict[str, list[pl.Series | str]] = {name: [] for name in keep}
        self.n_blocks = 0
        if key and not self.hashed_by_polars:
            self.pieces[KEY_HASH] = []
            self.pending[KEY_HASH] = []

    def values(self, proof: BlockProof) -> tuple[list[list[Any]], list[int] | None]:
        """The kept columns' values of a proved block, and its key hashes (``None``: none needed here).

        When every key field is kept, the key is hashed by polars once the frame is whole
        (:meth:`frame`: the hash the reader uses for a file it reads itself), not here. Otherwise
        the key hash is Python's hash of each record's key tuple (:func:`_key_hashes`). Either way
        equal keys hash alike, and a repeated hash sends the file to the reader that names
        duplicates exactly, so a collision costs time, never a wrong answer.
        (No polars here: a worker process of the line pass calls it.)
        """
        columns = [proved_values(proof, name) for name in self.keep]
        if not self.key or self.hashed_by_polars:
            return columns, None
        return columns, _key_hashes(proof.records, self.key, portable=self.portable)

    @property
    def python_key(self) -> bool:
        """Whether the key is hashed in Python, block by block (a key not every field of which is kept)."""
        return bool(self.key) and not self.hashed_by_polars

    @property
    def hashed_by_polars(self) -> bool:
        """Whether the key is hashed in the whole frame (every key field kept), not block by block."""
        return bool(self.key) and set(self.key) <= set(self.keep)

    def add(self, proof: BlockProof) -> None:
        """The block's columns (see :meth:`values`, :meth:`add_values`)."""
        self.add_values(*self.values(proof))

    def add_values(self, columns: Sequence[list[Any] | str], hashes: list[int] | None) -> None:
        """One block's kept columns, typed as the contract's (strictly: a value of another type raises).

        A column may come as one text, its string values joined by newlines (from a worker:
        :func:`gatestats.records.block_worker._joined`): such texts are kept as they are and split
        by polars once, in :meth:`frame` (a polars string operation a block cost ~0.4 ms).
        """
        import polars as pl  # noqa: PLC0415 - records/io.py has imported it already

        from gatestats.records.contract import POLARS_SCHEMA  # noqa: PLC0415 - only with a frame asked for

        for name, values in zip(self.keep, columns, strict=True):
            dtype = POLARS_SCHEMA[name]
            if isinstance(values, str) and dtype == pl.String:
                self.pending[name].append(values)
            elif isinstance(values, str):  # pragma: no cover - every kept string field is a polars String today
                self.pending[name].append(pl.Series(name, values.split("\n"), dtype, strict=True))
            else:
                self.pending[name].append(pl.Series(name, values, dtype, strict=True))
        if hashes is not None:
            self.pending[KEY_HASH].append(pl.Series(KEY_HASH, hashes, pl.Int64))
        self.n_blocks += 1
        if self.n_blocks % _BLOCKS_AT_ONCE == 0:
            self._collapse()

    def _collapse(self) -> None:
        """The blocks added since the last call, each column's as one series of one chunk (texts split at once).

        Every :data:`_BLOCKS_AT_ONCE` blocks and in :meth:`frame`: so every column of the frame has
        its chunks at the same rows (a frame whose columns are chunked differently is copied whole by
        polars' first query, which aligns them: 1.3 GiB at 10M lines), and the texts from workers are
        freed as the pass goes (their memory reused by the next), not all held and joined at the end.
        """
        import polars as pl  # noqa: PLC0415 - records/io.py has imported it already

        for name, pending in self.pending.items():
            if not pending:
                continue
            parts: list[pl.Series] = []
            texts: list[str] = []
            for piece in [*pending, None]:  # consecutive texts split at once
                if isinstance(piece, str):
                    texts.append(piece)
                    continue
                if texts:
                    parts.append(pl.Series(name, ["\n".join(texts)], pl.String).str.split("\n").explode())
                    texts = []
                if piece is not None:
                    parts.append(piece)
            pending.clear()
            self.pieces[name].append(pl.concat(parts, rechunk=True))

    def frame(self) -> pl.DataFrame:
        """Every block's columns, in line order."""
        import polars as pl  # noqa: PLC0415 - records/io.py has imported it already

        self._collapse()
        columns = [pl.concat(pieces, rechunk=False) for pieces in self.pieces.values()]
        frame = pl.DataFrame(columns)
        if self.hashed_by_polars:
            frame = frame.with_columns(pl.struct(self.key).hash(seed=0).alias(KEY_HASH))
        return frame


#: What a null or absent key field hashes as: a value no key field holds, hashed alike in every process
#: (Python 3.11 hashes ``None`` by its address, which differs between the processes of a pass).
_NULL_KEY = ()
_PROPERTIES = load_schema()["properties"]


def _types(spec: Any) -> list[str]:
    """The JSON types a field of the contract may hold (none for a field without a ``type``)."""
    kind = spec.get("type", [])
    return [kind] if isinstance(kind, str) else list(kind)


#: Key fields the contract requires and never allows null (the proof's decoder holds them to it).
_NEVER_NULL = frozenset(name for name in load_schema()["required"] if "null" not in _types(_PROPERTIES[name]))
#: Fields whose values are strings (when set): Python seeds their hash per process.
_STRINGS = frozenset(name for name, spec in _PROPERTIES.items() if "string" in _types(spec))


def _key_hashes(records: Sequence[Any], key: Sequence[str], *, portable: bool = False) -> list[int]:
    """A hash of each record's key tuple (null and absent key fields as :data:`_NULL_KEY`).

    One field at a time, in compiled loops: a field the contract requires non-null is taken as
    decoded; a field null or absent on every record of the block is the marker repeated.

    Python seeds the hash of a string per process. With ``portable`` (a pass whose blocks are
    proved in several processes, :mod:`gatestats.records.parallel`) each string of the key is
    hashed as two numbers of its UTF-8 bytes, its CRC-32 and its Adler-32 (:func:`_portable`),
    which every process computes alike; numbers and the marker hash alike everywhere. Either way
    equal keys hash alike; a collision sends the file to the reader that names duplicates exactly.
    """
    unset = _unset()
    columns: list[Iterable[Any]] = []
    for name in key:
        values = list(map(attrgetter(name), records))
        absent = 0
        if name not in _NEVER_NULL:
            absent = values.count(unset)
            if absent < len(values):
                absent += values.count(None)
        if portable and name in _STRINGS:
            columns.extend(_portable(values, absent=absent))
        elif absent == len(values):
            columns.append(repeat(_NULL_KEY))
        elif absent:
            columns.append([_NULL_KEY if v is None or v is unset else v for v in values])
        else:
            columns.append(values)
    if not any(isinstance(column, list) for column in columns):  # one key on every record (every field null)
        return [hash(tuple(next(iter(column)) for column in columns))] * len(records)
    return list(map(hash, zip(*columns, strict=False)))  # a repeated value is endless; the lists are alike


def _portable(values: list[Any], *, absent: int) -> list[Iterable[Any]]:
    """A key column of strings (``absent`` of them null or absent) as two columns hashed alike in every process.

    A string is its CRC-32 and its Adler-32 (of its UTF-8 bytes); a null or absent value is
    :data:`_NULL_KEY` twice. Every shape of block gives the same two numbers for the same value.
    """
    if absent == len(values):
        return [repeat(_NULL_KEY), repeat(_NULL_KEY)]
    if values.count(values[0]) == len(values):  # one string on every record of the block (a system)
        crc, adler = _portable_one(values[0])
        return [repeat(crc), repeat(adler)]
    if absent:
        pairs = [_portable_one(v) for v in values]
        return [[p[0] for p in pairs], [p[1] for p in pairs]]
    encoded = list(map(str.encode, values))
    return [list(map(zlib.crc32, encoded)), list(map(zlib.adler32, encoded))]


def _portable_one(value: Any) -> tuple[Any, Any]:
    """One key value as :func:`_portable` hashes it: a string's CRC-32 and Adler-32, else the marker twice."""
    if isinstance(value, str):
        encoded = value.encode()
        return zlib.crc32(encoded), zlib.adler32(encoded)
    return _NULL_KEY, _NULL_KEY


def _record_lines(n_lines: int, blank: list[int]) -> Sequence[int]:
    """The line of each record: every line but the blank ones (8 bytes a record only when some are blank)."""
    if not blank:
        return range(1, n_lines + 1)
    skipped = set(blank)
    return array("q", (n for n in range(1, n_lines + 1) if n not in skipped))


def _check_line(
    file: Path,
    body: bytes,
    number: int,
    problems: ProblemList,
    with_checksum: _LineSample,
    without_checksum: _LineSample,
    run_set_ids: set[str],
) -> None:
    record, bad = decode_line(body)
    if bad is not None or record is None:
        _add(problems, file, number, bad.field if bad else "<line>", bad.message if bad else "not a JSON object")
        return
    checksum = record.get(CHECKSUM_FIELD)
    violations = validate_record(record)
    for v in violations:
        _add(problems, file, number, v.field, v.message)
    if checksum is None:
        without_checksum.append(number)
    elif not violations or all(v.field != CHECKSUM_FIELD for v in violations):
        with_checksum.append(number)
        if checksum != record_checksum(record):
            _add(
                problems,
                file,
                number,
                CHECKSUM_FIELD,
                "checksum does not match the line: the record was changed after it was written",
            )
    run_set = record.get("run_set_id")
    if isinstance(run_set, str):
        run_set_ids.add(run_set)
