"""Display names for systems and other ids: ``--label OLD=NEW`` (repeatable) and ``--labels FILE``.

A labels file is a CSV with the header ``name,label`` or a TOML file with a ``[labels]`` table
(``"long-system-id" = "Short"``). Labels change what every table format *shows*; the numeric frame
and the JSON keep the ids (a CSV export adds a label column beside each id column).

Refused, each with the file (or ``--label``), the line and the field: a line that is not
``name,label`` / ``OLD=NEW``, an empty name or label, a label with a control or invisible character
(it would be shown escaped, which is no label), the same name given twice with different labels,
two names given the same label (two rows that read the same are no table), and, once the result is
known, a name that is none of its ids (:meth:`Labels.check_known`: a typo would silently not apply).
"""

from __future__ import annotations

import csv
import io
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType

from gatestats.errors import RecordFileError, RecordProblem
from gatestats.io.jsonfile import read_regular_file
from gatestats.io.text import LABEL_LIMIT, visible

__all__ = ["LABELS_FILE_LIMIT", "Labels", "LabelsError", "label_option"]

#: Largest labels file read (bytes): a labels file is a few lines, not a data set.
LABELS_FILE_LIMIT = 1_000_000
_OPTION = "--label"


class LabelsError(RecordFileError):
    """A label or labels file is refused (file or ``--label``, line and field named)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    name: str
    label: str
    origin: str  # the file, or --label
    line: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Labels:
    """Display names: ``labels(name)`` is the label of ``name``, or ``name`` itself without one.

    Attributes
    ----------
    names
        ``{id: label}`` (read-only).
    """

    names: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    _entries: tuple[_Entry, ...] = field(default=(), repr=False, compare=False)

    def __call__(self, name: str) -> str:
        """The label of ``name`` (``name`` itself when it has none)."""
        return self.names.get(name, name)

    def __bool__(self) -> bool:
        return bool(self.names)

    @classmethod
    def from_options(cls, pairs: Sequence[str] = (), file: str | Path | None = None) -> Labels:
        """Labels from a labels file and ``--label OLD=NEW`` values (an option overrides the file's line).

        Parameters
        ----------
        pairs
            The ``--label`` values, each ``OLD=NEW``.
        file
            A labels file (CSV ``name,label`` or TOML ``[labels]``; by its suffix, ``.toml`` or else CSV).

        Returns
        -------
        Labels
            The labels.

        Raises
        ------
        LabelsError
            A refused line (see the module docstring), named by file, line and field.
        """
        entries = [] if file is None else _read_file(Path(file))
        overridden = {e.name for e in (_option_entry(text, i) for i, text in enumerate(pairs, 1))}
        entries = [e for e in entries if e.name not in overridden]
        entries += [_option_entry(text, i) for i, text in enumerate(pairs, 1)]
        return cls._checked(entries)

    @classmethod
    def _checked(cls, entries: list[_Entry]) -> Labels:
        names: dict[str, _Entry] = {}
        targets: dict[str, _Entry] = {}
        for entry in entries:
            first = names.get(entry.name)
            if first is not None and first.label != entry.label:
                said = f"{first.origin}:{first.line} says {first.label!r}"
                _refuse(entry, "name", f"{entry.name!r} labelled twice ({said})")
            other = targets.get(entry.label)
            if other is not None and other.name != entry.name:
                why = f"label {entry.label!r} given to {other.name!r} too ({other.origin}:{other.line})"
                _refuse(entry, "label", why + ": two rows would read the same")
            names[entry.name], targets[entry.label] = entry, entry
        return cls(names=MappingProxyType({n: e.label for n, e in names.items()}), _entries=tuple(names.values()))

    def check_known(self, known: Iterable[str]) -> None:
        """Refuse a labelled name that is none of ``known`` (a typo would silently not apply).

        Parameters
        ----------
        known
            The ids the result shows (its systems, slices ...).

        Raises
        ------
        LabelsError
            A name not among ``known`` (its file or ``--label``, line and the ids there are).
        """
        ids = set(known)
        for entry in self._entries:
            if entry.name not in ids:
                shown = ", ".join("'" + visible(x, limit=60) + "'" for x in sorted(ids)[:10])
                more = f" and {len(ids) - 10} more" if len(ids) > 10 else ""
                _refuse(entry, "name", f"{entry.name!r} is none of the ids shown here ({shown}{more})")


def label_option(text: str) -> tuple[str, str]:
    """Split one ``--label OLD=NEW`` value (the last ``=`` need not be the only one: ``a=b=c`` labels ``a``).

    Parameters
    ----------
    text
        The option's value.

    Returns
    -------
    tuple of str
        ``(OLD, NEW)``.

    Raises
    ------
    LabelsError
        No ``=``, or an empty or invisible-character side.
    """
    entry = _option_entry(text, 1)
    return entry.name, entry.label


def _refuse(entry: _Entry, field_name: str, message: str) -> None:
    raise LabelsError([RecordProblem(file=entry.origin, field=field_name, message=message, line=entry.line)])


def _checked_text(value: str, *, origin: str, line: int | None, field_name: str) -> str:
    """``value`` stripped; refused when empty, too long, or holding a control or invisible character."""
    text = value.strip()
    where = {"file": origin, "field": field_name, "line": line}
    if not text:
        raise LabelsError([RecordProblem(message="empty: a label needs a name and a label", **where)])  # type: ignore[arg-type]
    if any(unicodedata.category(ch) in ("Cc", "Cf", "Cs", "Co", "Zl", "Zp") for ch in text):
        msg = f"control or invisible character in '{visible(text)}': a label is shown as it is"
        raise LabelsError([RecordProblem(message=msg, **where)])  # type: ignore[arg-type]
    if field_name == "label" and len(text) > LABEL_LIMIT:
        msg = f"longer than {LABEL_LIMIT} characters ({len(text)}): a label is a short name"
        raise LabelsError([RecordProblem(message=msg, **where)])  # type: ignore[arg-type]
    return text


def _entry(name: str, label: str, *, origin: str, line: int | None) -> _Entry:
    return _Entry(
        name=_checked_text(name, origin=origin, line=line, field_name="name"),
        label=_checked_text(label, origin=origin, line=line, field_name="label"),
        origin=origin,
        line=line,
    )


def _option_entry(text: str, index: int) -> _Entry:
    name, sep, label = text.partition("=")
    if not sep:
        problem = RecordProblem(
            file=_OPTION, field="<value>", message=f"expected OLD=NEW (got '{visible(text)}')", line=index
        )
        raise LabelsError([problem])
    return _entry(name, label, origin=_OPTION, line=index)


def _read_file(path: Path) -> list[_Entry]:
    try:
        data = read_regular_file(path, limit=LABELS_FILE_LIMIT, what="labels")
    except RecordFileError as exc:
        raise LabelsError(exc.problems) from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise LabelsError([RecordProblem(file=str(path), field="<file>", message=f"not UTF-8: {exc}")]) from None
    if path.suffix.lower() == ".toml":
        return _toml_entries(path, text)
    return _csv_entries(path, text)


def _csv_entries(path: Path, text: str) -> list[_Entry]:
    origin = str(path)
    reader = csv.reader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    entries: list[_Entry] = []
    header_seen = False
    try:
        for row in reader:
            line = reader.line_num
            if not row or all(not cell.strip() for cell in row):
                continue
            if not header_seen:
                if [cell.strip() for cell in row] != ["name", "label"]:
                    msg = f"the header must be name,label (got '{visible(','.join(row))}')"
                    raise LabelsError([RecordProblem(file=origin, field="<header>", message=msg, line=line)])
                header_seen = True
                continue
            if len(row) != 2:
                msg = f"expected 2 fields name,label (got {len(row)})"
                raise LabelsError([RecordProblem(file=origin, field="<line>", message=msg, line=line)])
            entries.append(_entry(row[0], row[1], origin=origin, line=line))
    except csv.Error as exc:
        problem = RecordProblem(file=origin, field="<line>", message=str(exc), line=reader.line_num)
        raise LabelsError([problem]) from None
    if not header_seen:
        raise LabelsError([RecordProblem(file=origin, field="<file>", message="empty: no name,label header")])
    return _no_duplicate_names(entries)


def _toml_entries(path: Path, text: str) -> list[_Entry]:
    import tomllib  # noqa: PLC0415 - a labels TOML file is rare; tomllib is ~13 ms of every command's start-up

    origin = str(path)
    try:
        document = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LabelsError([RecordProblem(file=origin, field="<file>", message=f"not TOML: {exc}")]) from None
    extra = sorted(set(document) - {"labels"})
    table = document.get("labels")
    if extra or not isinstance(table, dict):
        msg = 'expected one [labels] table of name = "label" lines' + (f" (unknown keys {extra})" if extra else "")
        raise LabelsError([RecordProblem(file=origin, field="<file>", message=msg)])
    entries = []
    for name, label in table.items():
        line = _toml_line(text, name)
        if not isinstance(label, str):
            msg = f"a label is a string (got {type(label).__name__})"
            raise LabelsError([RecordProblem(file=origin, field=f"labels.{visible(name)}", message=msg, line=line)])
        entries.append(_entry(name, label, origin=origin, line=line))
    return entries


def _toml_line(text: str, name: str) -> int | None:
    """The 1-based line of key ``name`` in a ``[labels]`` table (bare or quoted), None when not found."""
    for number, raw in enumerate(text.splitlines(), 1):
        key = raw.split("=", 1)[0].strip()
        if key in (name, f'"{name}"', f"'{name}'"):
            return number
    return None


def _no_duplicate_names(entries: list[_Entry]) -> list[_Entry]:
    """A CSV that names one id twice is refused, even with the same label (a file is edited by hand)."""
    seen: dict[str, _Entry] = {}
    for entry in entries:
        if entry.name in seen:
            first = seen[entry.name]
            _refuse(entry, "name", f"{entry.name!r} given twice (first at line {first.line})")
        seen[entry.name] = entry
    return entries
