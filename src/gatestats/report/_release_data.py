"""The data of a release report: the verdict checked, its records re-digested, ``data/`` written.

Everything here except :func:`write_data` and :func:`load_release_data` runs before anything is
written (:func:`read_verdict`, :func:`check_record_files`, :func:`load_sides`; the tables come from
:mod:`gatestats.report._release_tables`). :func:`write_data` writes ``data/`` with fixed settings:
Parquet (zstd level 3, statistics on, polars' own writer) for the tables, sorted keys and two-space
indentation for JSON. The same inputs and the same polars version give byte-identical files
(polars writes its version into the Parquet footer). :func:`load_release_data` reads ``data/``
back (every file checked against ``digests.json``) as a :class:`ReleaseData`, what the sections show.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal, TypedDict

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import GatestatsError, RecordFileError
from gatestats.gate import RecordSet, Verdict, VerdictFile, VerdictFileError, load_record_set
from gatestats.gate import read_verdict as read_gate_verdict
from gatestats.gate.bindings import SideBinding
from gatestats.gate.verdict import resolve_bound_path
from gatestats.io.digest import digest_bytes, digest_file
from gatestats.io.jsonfile import parse_json_document, read_json_file
from gatestats.io.limits import SMALL_JSON_MAX_BYTES

__all__ = [
    "DATA_FORMAT",
    "FLIPS_CSV",
    "JSON_FILES",
    "SIDES",
    "TABLES",
    "WATCH_FILE",
    "ReleaseData",
    "ReportInputError",
    "VerdictInput",
    "check_record_files",
    "flips_csv_bytes",
    "json_bytes",
    "load_release_data",
    "load_sides",
    "parquet_bytes",
    "read_verdict",
    "release_data",
    "write_data",
]

#: ``format`` of ``data/digests.json``.
DATA_FORMAT: Final = "gatestats-release-data/1"
SIDES: Final = ("baseline", "candidate")
#: The tables of ``data/`` (one Parquet file each, ``<name>.parquet``).
TABLES: Final = (
    "rules",
    "checks",
    "severe_slices",
    "severe_failures",
    "flips",
    "curves",
    "slices",
    "cost",
    "judges",
    "infra",
    "bounds",
)
#: The JSON files of ``data/`` besides ``digests.json``.
JSON_FILES: Final = ("verdict.json", "provenance.json")
#: The optional JSON file of ``data/``: the rollout's latest reading (``gatestats report --watch``).
WATCH_FILE: Final = "watch.json"
#: Every flipped case as CSV for a spreadsheet (:func:`flips_csv_bytes`; the page shows the first ones).
FLIPS_CSV: Final = "flips.csv"
#: What a spreadsheet may run as a formula at the start of a cell (OWASP, "CSV injection").
_FORMULA_START: Final = ("=", "+", "-", "@", "\t", "\r")


class _ParquetOptions(TypedDict):
    """How ``data/`` tables are written (fixed, so that their digests repeat)."""

    compression: Literal["zstd"]
    compression_level: int
    statistics: bool


_PARQUET: Final[_ParquetOptions] = {"compression": "zstd", "compression_level": 3, "statistics": True}


class ReportInputError(GatestatsError, ValueError):
    """The verdict or the records it names cannot make a report; nothing was written."""


#: A verdict file as read and checked (:func:`gatestats.gate.read_verdict`).
VerdictInput = VerdictFile


def json_bytes(value: Any) -> bytes:
    """Canonical JSON text of the data files (sorted keys, indent 2, UTF-8, final newline).

    Parameters
    ----------
    value
        A JSON value (no NaN).

    Returns
    -------
    bytes
        The file's bytes.
    """
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def flips_csv_bytes(flips: pl.DataFrame) -> bytes:
    """The flips table as CSV (RFC 4180) for a spreadsheet: every row, in the table's order.

    UTF-8, a header row, ``\\r\\n`` line ends; a field holding a comma, a quote or a line break is
    quoted (quotes doubled), so any case id is one cell. A text cell that starts with ``=``, ``+``,
    ``-``, ``@``, a tab or a carriage return gets a leading apostrophe, so that a spreadsheet shows it
    and does not run it as a formula; the exact ids are in ``flips.parquet`` and the verdict. A
    missing count is an empty cell.

    Parameters
    ----------
    flips
        The ``flips`` table (direction, case, each side's passed and valid trials).

    Returns
    -------
    bytes
        The file's bytes.

    Examples
    --------
    >>> table = pl.DataFrame({"direction": ["pass_to_fail"], "case": ['=cmd|"x",y'], "n": [None]})
    >>> for line in flips_csv_bytes(table).decode().splitlines():
    ...     print(line)
    direction,case,n
    pass_to_fail,"'=cmd|""x"",y",
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(flips.columns)
    text = [dtype == pl.String for dtype in flips.dtypes]
    for row in flips.iter_rows():
        writer.writerow(
            "" if v is None else f"'{v}" if s and str(v).startswith(_FORMULA_START) else v
            for v, s in zip(row, text, strict=True)
        )
    return out.getvalue().encode("utf-8")


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    """A table as Parquet with fixed settings (deterministic for one polars version).

    Parameters
    ----------
    frame
        The table.

    Returns
    -------
    bytes
        The Parquet file's bytes.
    """
    buffer = io.BytesIO()
    frame.write_parquet(buffer, **_PARQUET)
    return buffer.getvalue()


# --- reading and checking -----------------------------------------------------------------------


def read_verdict(path: str | os.PathLike[str]) -> VerdictFile:
    """Read a verdict file with the gate's one strict reader (:func:`gatestats.gate.read_verdict`).

    Parameters
    ----------
    path
        The verdict file (``gatestats gate -o``).

    Returns
    -------
    VerdictFile
        Its bytes and the typed verdict, digest checked.

    Raises
    ------
    ReportInputError
        The file is missing, not strict JSON, not a ``gatestats-verdict/1`` verdict (field named),
        or its content does not match its ``digest`` (it was edited after it was written).
    """
    try:
        return read_gate_verdict(path)
    except VerdictFileError as exc:
        raise ReportInputError(str(exc)) from None


def check_record_files(verdict: VerdictInput) -> dict[str, tuple[Path, ...]]:
    """Re-digest every record file the verdict names; every missing or changed file is an error.

    Relative paths are looked up in the working directory first, then beside the verdict file
    (the digest decides: a file found elsewhere must still have the bytes the verdict bound).

    Parameters
    ----------
    verdict
        The verdict file, read and checked.

    Returns
    -------
    dict
        ``side -> record file paths`` as found.

    Raises
    ------
    ReportInputError
        Names each file, the digest the verdict bound (expected) and the one found (actual).
    """
    problems: list[str] = []
    found: dict[str, tuple[Path, ...]] = {}
    for side in SIDES:
        paths = []
        for entry in _side(verdict, side).files:
            path = resolve_bound_path(entry.path, verdict.path.parent)
            expected = entry.digest
            try:
                actual = digest_file(path)
            except FileNotFoundError:
                problems.append(f"{side} record file {path}: missing (expected {expected}, got no file)")
                continue
            except OSError as exc:
                problems.append(f"{side} record file {path}: unreadable (expected {expected}; {exc.strerror or exc})")
                continue
            if actual != expected:
                problems.append(
                    f"{side} record file {path}: digest mismatch: expected {expected} (bound in the verdict), "
                    f"got {actual}; the records changed after the verdict was made"
                )
            paths.append(path)
        found[side] = tuple(paths)
    if problems:
        msg = f"{verdict.path}: the records no longer match the verdict:\n" + "\n".join(f"  {p}" for p in problems)
        raise ReportInputError(msg)
    return found


def _side(verdict: VerdictFile, side: str) -> SideBinding:
    binding: SideBinding = getattr(verdict.verdict, side)
    return binding


def load_sides(verdict: VerdictInput, files: Mapping[str, Sequence[Path]]) -> dict[str, RecordSet]:
    """Load both record sets (:func:`gatestats.gate.load_record_set`) and check they are the bound bytes.

    Parameters
    ----------
    verdict
        The verdict file, read and checked.
    files
        ``side -> record file paths`` (:func:`check_record_files`).

    Returns
    -------
    dict[str, RecordSet]
        ``side -> record set``.

    Raises
    ------
    ReportInputError
        A side's records cannot be loaded, or are not the bytes the verdict bound.
    """
    sides: dict[str, RecordSet] = {}
    for side in SIDES:
        paths = list(files[side])
        kind = _side(verdict, side).kind
        source: Path | list[Path] = paths[0].parent if kind == "run_set" and len(paths) == 1 else paths
        try:
            record_set = load_record_set(source)
        except (GatestatsError, ValueError, OSError) as exc:
            msg = f"{verdict.path}: cannot load the {side} records: {exc}"
            raise ReportInputError(msg) from None
        expected = sorted(f.digest for f in _side(verdict, side).files)
        actual = sorted(f.digest for f in record_set.files)
        if expected != actual:
            msg = (
                f"{verdict.path}: {side} records at {source}: expected the files {expected} bound in the verdict, "
                f"got {actual}"
            )
            raise ReportInputError(msg)
        sides[side] = record_set
    return sides


def write_data(
    directory: Path,
    verdict: VerdictInput,
    tables: Mapping[str, pl.DataFrame],
    provenance: Any,
    *,
    watch: bytes | None = None,
) -> dict[str, str]:
    """Write ``data/``: the verdict copy, the tables, ``flips.csv``, the provenance and ``digests.json``.

    Parameters
    ----------
    directory
        The ``data`` directory to create.
    verdict
        The verdict file (its bytes are copied as ``verdict.json``).
    tables
        The report's tables by name (:data:`TABLES`).
    provenance
        The provenance document (JSON value).
    watch
        The bytes of the rollout's latest decision file, copied as ``watch.json`` (none: no rollout).

    Returns
    -------
    dict
        File name → ``sha256:`` digest of every data file (``digests.json`` excluded).
    """
    directory.mkdir()
    contents: dict[str, bytes] = {"verdict.json": verdict.raw, "provenance.json": json_bytes(provenance)}
    for name in TABLES:
        contents[f"{name}.parquet"] = parquet_bytes(tables[name])
    contents[FLIPS_CSV] = flips_csv_bytes(tables["flips"])
    if watch is not None:
        contents[WATCH_FILE] = watch
    digests = {name: digest_bytes(data) for name, data in sorted(contents.items())}
    for name, data in contents.items():
        (directory / name).write_bytes(data)
    (directory / "digests.json").write_bytes(json_bytes({"format": DATA_FORMAT, "files": digests}))
    return digests


# --- reading a report's data/ (what the .qmd does) ------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class ReleaseData:
    """The data of a release report as the ``.qmd`` reads it (see :func:`load_release_data`)."""

    directory: Path
    verdict: Verdict
    verdict_digest: str
    provenance: Mapping[str, Any]
    digests: Mapping[str, str]
    rules: pl.DataFrame = field(repr=False)
    checks: pl.DataFrame = field(repr=False)
    severe_slices: pl.DataFrame = field(repr=False)
    severe_failures: pl.DataFrame = field(repr=False)
    flips: pl.DataFrame = field(repr=False)
    curves: pl.DataFrame = field(repr=False)
    slices: pl.DataFrame = field(repr=False)
    cost: pl.DataFrame = field(repr=False)
    judges: pl.DataFrame = field(repr=False)
    infra: pl.DataFrame = field(repr=False)
    bounds: pl.DataFrame = field(repr=False)
    #: The rollout's latest reading (``gatestats-watch-decision/1``), when the report was built with one.
    watch: Mapping[str, Any] | None = None

    def table(self, name: str) -> pl.DataFrame:
        """One of the tables by name (see ``TABLES`` in the module docstring).

        Parameters
        ----------
        name
            The table's name, one of :data:`TABLES` (e.g. ``"curves"``).

        Returns
        -------
        polars.DataFrame
            The table.

        Raises
        ------
        ValueError
            ``name`` is not a table of the report.
        """
        if name not in TABLES:
            msg = f"name must be one of {', '.join(TABLES)} (got {name!r})"
            raise ValueError(msg)
        frame: pl.DataFrame = getattr(self, name)
        return frame

    def to_dict(self) -> JSONObject:
        """Summary: the directory, the verdict and its digest, the data digests and each table's rows.

        Returns
        -------
        JSONObject
            The summary as JSON values.
        """
        return {
            "directory": str(self.directory),
            "verdict": self.verdict.verdict,
            "verdict_digest": self.verdict_digest,
            "digests": dict(self.digests),
            "rows": {name: self.table(name).height for name in TABLES},
        }


def load_release_data(
    data_dir: str | os.PathLike[str],
    *,
    verdict_path: str | os.PathLike[str] | None = None,
    verdict_digest: str | None = None,
) -> ReleaseData:
    """Read a report's ``data/`` after checking every file against ``digests.json``.

    Parameters
    ----------
    data_dir : str or PathLike
        The report's ``data`` directory.
    verdict_path : str or PathLike, optional
        The verdict to show (default ``data_dir/verdict.json``); its format and own digest are checked.
    verdict_digest : str, optional
        The digest the verdict must carry (the report's parameter).

    Returns
    -------
    ReleaseData
        The verdict and every table, checked.

    Raises
    ------
    ReportInputError
        A data file is missing or its digest differs from ``digests.json`` (file, expected and actual
        digest named), or the verdict is not the expected one.

    Examples
    --------
    >>> data = load_release_data("reports/bugfix-agent-release-candidate/1/data")  # doctest: +SKIP
    >>> data.curves.filter(pl.col("k") == 4).select("metric", "side", "estimate")  # doctest: +SKIP
    """
    directory = Path(data_dir)
    listing = directory / "digests.json"
    try:
        index = read_json_file(listing, limit=SMALL_JSON_MAX_BYTES, what="report data index")
    except RecordFileError as exc:
        msg = f"cannot read the report's data index: {exc}"
        raise ReportInputError(msg) from None
    if not isinstance(index, dict) or index.get("format") != DATA_FORMAT or not isinstance(index.get("files"), dict):
        msg = f"{listing}: field 'format': expected a {DATA_FORMAT!r} index with 'files' (got {index!r:.200})"
        raise ReportInputError(msg)
    digests: dict[str, str] = dict(index["files"])
    expected = {f"{n}.parquet" for n in TABLES} | set(JSON_FILES)
    if missing := sorted(expected - set(digests)):
        msg = f"{listing}: the index lacks the data file(s) {', '.join(missing)}"
        raise ReportInputError(msg)
    contents: dict[str, bytes] = {}
    for name, digest in sorted(digests.items()):
        path = directory / name
        try:
            contents[name] = path.read_bytes()
        except OSError:
            msg = f"{path}: data file missing (expected {digest}, got no file)"
            raise ReportInputError(msg) from None
        if (actual := digest_bytes(contents[name])) != digest:
            msg = f"{path}: data file changed: expected {digest} (data/digests.json), got {actual}"
            raise ReportInputError(msg)
    source = Path(verdict_path) if verdict_path is not None else directory / "verdict.json"
    verdict = read_verdict(source)
    if verdict_digest is not None and verdict.digest != verdict_digest:
        msg = f"{source}: field 'digest': expected {verdict_digest} (the report's parameter), got {verdict.digest}"
        raise ReportInputError(msg)
    if verdict.raw != contents["verdict.json"]:
        msg = f"{source}: not the verdict this report's data was made from ({directory / 'verdict.json'})"
        raise ReportInputError(msg)
    tables = {name: pl.read_parquet(contents[f"{name}.parquet"]) for name in TABLES}
    return ReleaseData(
        directory=directory,
        verdict=verdict.verdict,
        verdict_digest=verdict.digest,
        provenance=_json_data(contents["provenance.json"], directory / "provenance.json"),
        digests=digests,
        **tables,
        watch=_json_data(contents[WATCH_FILE], directory / WATCH_FILE) if WATCH_FILE in contents else None,
    )


def release_data(
    directory: Path,
    verdict: VerdictInput,
    tables: Mapping[str, pl.DataFrame],
    provenance: Any,
    digests: Mapping[str, str],
    *,
    watch: bytes | None = None,
) -> ReleaseData:
    """The data :func:`write_data` has just written, as :func:`load_release_data` would read them back.

    Nothing is read again: the verdict is the one already read and checked, the tables are the
    frames that were written, and the JSON files are decoded from the bytes written (by the same
    strict decoder :func:`load_release_data` uses), so that the sections show the same values.

    Parameters
    ----------
    directory
        The ``data`` directory.
    verdict
        The verdict file (read and checked).
    tables
        The tables by name (:data:`TABLES`).
    provenance
        The provenance document (as passed to :func:`write_data`).
    digests
        What :func:`write_data` returned.
    watch
        The rollout's latest decision file (its bytes), if any.

    Returns
    -------
    ReleaseData
    """
    return ReleaseData(
        directory=directory,
        verdict=verdict.verdict,
        verdict_digest=verdict.digest,
        provenance=_json_data(json_bytes(provenance), directory / "provenance.json"),
        digests=dict(digests),
        **{name: tables[name] for name in TABLES},
        watch=None if watch is None else _json_data(watch, directory / WATCH_FILE),
    )


def _json_data(data: bytes, source: Path) -> Any:
    """A JSON file of ``data/`` (``provenance.json``, ``watch.json``), decoded by the strict JSON door."""
    try:
        return parse_json_document(data, source=source)
    except RecordFileError as exc:
        raise ReportInputError(str(exc)) from None
