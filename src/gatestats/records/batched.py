"""The columnar read of a checked JSONL record file, in batches, each compacted as it is read.

The strict line pass (:func:`gatestats.records.lines.check_jsonl`) proves every line first; then
polars parses the lines. Parsed whole, a file costs every contract column for every record at
once: about 2.4 KiB a record for the runner's files, of which most is the ~30 columns a runner
leaves null and the few that hold one value on every record (a 16-byte view each, a record). At
10M records a side that was ~12 GiB before anything was kept.

:func:`read_checked_jsonl` parses the file in batches of whole lines (:data:`BATCH_BYTES`) and
keeps of each batch only what it holds: a column null on every record of the batch, or with one
value on every record, is kept as that value once; the other columns as parsed. The frame
returned is the frame ``polars.read_ndjson(path, schema=...)`` gives, column for column and value
for value (a column null or constant on the whole file is a polars scalar column: same schema,
values and order, materialised only where an operation needs it), so peak memory follows what is
kept, plus one batch. The bytes parsed are digested as they are read and must be those the line
pass checked (its digest), so a file changed between the check and the read is refused.
"""

from __future__ import annotations

import hashlib
import io
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import polars as pl

from gatestats.errors import RecordFileError

__all__ = ["BATCH_BYTES", "read_checked_jsonl"]

#: The bytes of whole lines parsed at a time (about 70k runner records: ~170 MiB of columns while parsed).
BATCH_BYTES = 32 << 20
#: Types whose one value on every record is kept once (exact equality; a float column is kept as read).
_CONSTANT_TYPES = (pl.String, pl.Int64, pl.Boolean)


def _batches(handle: BinaryIO, size: int, digest: Any) -> Iterator[bytes]:
    """Whole lines of ``handle``, about ``size`` bytes at a time (the last may lack its newline), digested."""
    while chunk := handle.read(size):
        if not chunk.endswith(b"\n"):
            chunk += handle.readline()  # to the end of the line (a line longer than a batch too)
        digest.update(chunk)
        yield chunk


@dataclass(frozen=True, slots=True, kw_only=True)
class _Kept:
    """One column of one batch: its values as parsed, or the one value every record of the batch has."""

    height: int
    series: pl.Series | None = None
    #: With ``series`` None: the batch's one value (``None``: null on every record).
    value: Any = None


def _compacted(frame: pl.DataFrame) -> dict[str, _Kept]:
    """Each column of a parsed batch, kept as one value when every record has the same (or null)."""
    height = frame.height
    constant = [c for c, dtype in frame.schema.items() if isinstance(dtype, _CONSTANT_TYPES)]
    stats = frame.select(
        *(pl.col(c).null_count().alias(f"n\x1f{c}") for c in frame.columns),
        *((pl.col(c) == pl.col(c).first()).all().alias(f"e\x1f{c}") for c in constant),
        *(pl.col(c).first().alias(f"v\x1f{c}") for c in constant),
    ).row(0, named=True)
    kept: dict[str, _Kept] = {}
    for name in frame.columns:
        nulls = stats[f"n\x1f{name}"]
        if nulls == height:
            kept[name] = _Kept(height=height)
        elif nulls == 0 and stats.get(f"e\x1f{name}") is True:
            kept[name] = _Kept(height=height, value=stats[f"v\x1f{name}"])
        else:
            kept[name] = _Kept(height=height, series=frame.get_column(name).rechunk())
    return kept


def _one_value(parts: Sequence[_Kept]) -> tuple[bool, Any]:
    """Whether every part holds one value, the same (or every one null), and that value."""
    if any(p.series is not None for p in parts):
        return False, None
    values = {(type(p.value), p.value) for p in parts}
    if len(values) != 1:
        return False, None
    return True, parts[0].value


def _one_float(column: pl.Series) -> bool:
    """Whether a float column holds one value on every record (no null; one value as ``n_unique`` counts).

    A batch keeps a float column as parsed: its equality is not the one ``n_unique`` counts (to which
    NaN is one value, and -0.0 and 0.0 are one value, the first record's kept), so a float column
    of one value is found here on the whole column, by the count the gate's second compaction
    (``gate.recordset``) used before this read made it needless. Two different ends
    (``min`` < ``max``) prove two values without the count's hash of every value.
    """
    if column.is_empty() or column.null_count():
        return False
    low, high = column.min(), column.max()
    if isinstance(low, float) and isinstance(high, float) and low < high:
        return False
    return column.n_unique() == 1


def _column(name: str, dtype: pl.DataType, parts: Sequence[_Kept]) -> pl.Series:
    """The parts of one column as one series (a part kept as one value repeated over its batch).

    A repeated value is built from a list, not with ``polars.repeat``, which flags its series
    sorted: a flag the whole read never sets, and which changes how polars groups and sums the
    column (the last bit of a float sum), so a verdict would not be byte-identical.
    """
    pieces = [p.series if p.series is not None else pl.Series(name, [p.value] * p.height, dtype=dtype) for p in parts]
    return pl.concat(pieces, rechunk=True) if len(pieces) > 1 else pieces[0]


def _joined(
    batches: Sequence[Mapping[str, _Kept]], schema: Mapping[str, pl.DataType], *, compact: bool
) -> pl.DataFrame:
    """The batches' columns as one frame of ``schema`` (``compact``: a column of one value held once).

    Parameters
    ----------
    batches
        Each batch's columns, as :func:`read_checked_jsonl` keeps them (every column of ``schema``).
    schema
        The frame's columns and types, in order.
    compact
        Hold a column null or of one value on every record as a polars scalar column.

    Returns
    -------
    polars.DataFrame
        The frame the batches make, in order.
    """
    height = sum(next(iter(b.values())).height for b in batches) if schema else 0
    series: list[pl.Series] = []
    scalars: list[pl.Expr] = []
    for name, dtype in schema.items():
        parts = [b[name] for b in batches]
        one, value = _one_value(parts)
        if one and compact:
            scalars.append(pl.lit(value, dtype=dtype).alias(name))
            continue
        column = _column(name, dtype, parts)
        if compact and dtype == pl.Float64 and _one_float(column):
            scalars.append(pl.lit(column.head(1).item(), dtype=dtype).alias(name))
        else:
            series.append(column)
    frame = pl.DataFrame(series) if series else pl.DataFrame([pl.repeat(None, height, dtype=pl.Null, eager=True)])
    return frame.with_columns(scalars).select(list(schema)) if scalars else frame


def _as_joined(frame: pl.DataFrame) -> pl.DataFrame:
    """One parsed batch as :func:`_joined` makes it, not compact: the same frame, without compacting it and back.

    The parser flags a column null on every record sorted; :func:`_column` builds such a column from a
    list, unflagged (a flag changes how polars groups and sums): it is built so here too.
    """
    height = frame.height
    nulls = frame.null_count().row(0)
    rebuilt = [
        pl.Series(name, [None] * height, dtype=dtype)
        for (name, dtype), count in zip(frame.schema.items(), nulls, strict=True)
        if count == height
    ]
    return (frame.with_columns(rebuilt) if rebuilt else frame).rechunk()


def read_checked_jsonl(
    path: str | os.PathLike[str],
    *,
    schema: Mapping[str, pl.DataType],
    columns: Sequence[str] | None,
    digest: str,
    compact: bool = False,
    batch_bytes: int | None = None,
) -> pl.DataFrame:
    """Parse a JSONL file the line pass checked, batch by batch, keeping ``columns`` compactly.

    Parameters
    ----------
    path
        The file (every line already checked by :func:`gatestats.records.lines.check_jsonl`).
    schema
        The contract's columns and types (the file is parsed with them; nothing is inferred).
    columns
        The columns kept, in ``schema`` order whatever the order given (``None``: every column).
    digest
        ``sha256:`` of the bytes the line pass checked: the bytes parsed must be those.
    compact
        Return a column null or of one value on every record as a polars scalar column (the same
        values, materialised only where an operation needs it; polars flags such a column sorted).
        A float column's one value is the one ``n_unique`` counts (so a column of NaN is one too).
        ``False``: every column materialised, as the whole read gives it. Either way a batch's
        column of one value is held once while the file is read.
    batch_bytes
        About how many bytes of whole lines are parsed at a time (``None``: :data:`BATCH_BYTES`).

    Returns
    -------
    polars.DataFrame
        One row per non-blank line, in file order: the frame ``polars.read_ndjson(path, schema=schema)``
        gives (restricted to ``columns``), one chunk a column.

    Raises
    ------
    RecordFileError
        The file changed since it was checked, or polars could not parse the checked lines.
    """
    file = Path(path)
    kept_schema = {n: t for n, t in schema.items() if columns is None or n in columns}
    hasher = hashlib.sha256()
    size = batch_bytes or BATCH_BYTES
    batches: list[dict[str, _Kept]] = []
    held: pl.DataFrame | None = None  # the one batch of a file read in one, not compact: the frame as parsed
    try:
        with file.open("rb") as handle:
            whole = not compact and bool(kept_schema) and os.fstat(handle.fileno()).st_size <= size
            for chunk in _batches(handle, size, hasher):
                if not chunk.strip():
                    continue  # blank lines only: no record (as the whole read skips them)
                # Parsed with the kept columns only: polars skips the other fields (the same values, half the time).
                frame = pl.read_ndjson(io.BytesIO(chunk), schema=dict(kept_schema or schema)).select(list(kept_schema))
                if whole and held is None and not batches:
                    held = frame  # nothing to compact or join (unless the file grew past one batch)
                    continue
                if held is not None:
                    batches.append(_compacted(held))
                    held = None
                batches.append(_compacted(frame))
                del frame
    except pl.exceptions.PolarsError as exc:  # pragma: no cover - the line pass accepts only what polars reads
        raise RecordFileError.single(file, "<file>", f"polars could not read the checked lines: {exc}") from None
    except OSError as exc:
        raise RecordFileError.single(file, "<file>", f"cannot read: {exc.strerror or exc}") from None
    if "sha256:" + hasher.hexdigest() != digest:
        raise RecordFileError.single(file, "<file>", "the file changed while it was being read; read it again")
    if held is not None:
        return _as_joined(held)
    if not batches:
        return pl.DataFrame(schema=kept_schema)
    return _joined(batches, kept_schema, compact=compact)
