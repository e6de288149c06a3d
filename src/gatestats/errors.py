"""Exceptions of gatestats. Each subclasses a built-in and says what was expected and what was got.

Also the one lookup by key that results share (``result.group(...)``, ``result.system(...)``,
``result.effect(...)``): :func:`find_by_key`, whose ``KeyError`` lists the keys there are.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import TypeVar

__all__ = [
    "MAX_PROBLEMS",
    "GatestatsError",
    "InsufficientEvidenceError",
    "ProblemList",
    "RecordFileError",
    "RecordProblem",
    "at_lines",
    "find_by_key",
]

T = TypeVar("T")

_MAX_SHOWN = 20


class GatestatsError(Exception):
    """Base class of every error gatestats raises on purpose."""


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordProblem:
    """One defect in a record file: where it is (file, line or row, field) and what is wrong.

    ``line`` is the 1-based line of a text file (JSONL, CSV, JSON); ``row`` the 0-based row of a
    columnar file (Parquet) where lines do not exist.
    """

    file: str
    field: str
    message: str
    line: int | None = None
    row: int | None = None
    #: For duplicates: where the first occurrence is (same file unless the message says otherwise).
    first_line: int | None = None
    first_row: int | None = None

    def __str__(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
        elif self.row is not None:
            where += f" row {self.row}"
        text = f"{where}: field '{self.field}': {self.message}"
        if self.first_line is not None:
            text += f" (first at line {self.first_line})"
        elif self.first_row is not None:
            text += f" (first at row {self.first_row})"
        return text


class RecordFileError(GatestatsError, ValueError):
    """A record (or import) file breaks the contract; nothing was computed from it."""

    def __init__(self, problems: list[RecordProblem] | tuple[RecordProblem, ...], *, total: int | None = None) -> None:
        if not problems:
            msg = "RecordFileError needs at least one problem"
            raise ValueError(msg)
        self.problems: tuple[RecordProblem, ...] = tuple(problems)
        #: How many problems were found (``problems`` may keep only the first of them).
        self.total: int = max(total or 0, len(self.problems))
        shown = [str(p) for p in self.problems[:_MAX_SHOWN]]
        more = self.total - len(shown)
        if more > 0:
            shown.append(f"... and {more} more problem(s)")
        super().__init__("\n".join(shown))

    @classmethod
    def single(
        cls,
        file: str | os.PathLike[str],
        field: str,
        message: str,
        *,
        line: int | None = None,
        row: int | None = None,
    ) -> RecordFileError:
        """Build the error for one problem.

        Parameters
        ----------
        file
            The file.
        field
            The field, or ``<file>``/``<line>`` for the whole file or line.
        message
            What is wrong.
        line, row
            Where in the file (a text file's 1-based line, a columnar file's 0-based row), when known.

        Returns
        -------
        RecordFileError
            The error, for the caller to raise.
        """
        return cls([RecordProblem(file=str(file), field=field, message=message, line=line, row=row)])


class InsufficientEvidenceError(GatestatsError, ValueError):
    """The data cannot support the requested statistic; the message says why."""


def at_lines(problems: Iterable[RecordProblem], lines: Sequence[int] | None) -> list[RecordProblem]:
    """Name row ``i`` of a frame by its line ``lines[i]`` in the source file (``None``: keep rows).

    Readers that keep the line each row came from (JSONL, CSV) use this to turn the rows a check
    reports into the lines a person finds in an editor.

    Parameters
    ----------
    problems
        Problems that may name a frame ``row`` or ``first_row``.
    lines
        The source file's line of each frame row; None keeps the rows.

    Returns
    -------
    list of RecordProblem
        The problems, naming lines instead of rows.
    """
    if lines is None:
        return list(problems)
    return [
        RecordProblem(
            file=p.file,
            field=p.field,
            message=p.message,
            line=p.line if p.row is None else lines[p.row],
            first_line=p.first_line if p.first_row is None else lines[p.first_row],
        )
        for p in problems
    ]


#: How many problems an error keeps to show (the count of all of them stays exact).
MAX_PROBLEMS = 50


class ProblemList:
    """Collects problems: keeps the first :data:`MAX_PROBLEMS`, counts them all."""

    def __init__(self) -> None:
        self.kept: list[RecordProblem] = []
        self.total = 0

    def add(self, problem: RecordProblem) -> None:
        """Count ``problem``; keep it when fewer than :data:`MAX_PROBLEMS` are kept.

        Parameters
        ----------
        problem
            The problem.
        """
        self.total += 1
        if len(self.kept) < MAX_PROBLEMS:
            self.kept.append(problem)

    def extend(self, problems: Sequence[RecordProblem], *, total: int | None = None) -> None:
        """Add ``problems`` (``total``: how many they stand for, when only some were kept).

        Parameters
        ----------
        problems
            The problems kept by another collector.
        total
            How many problems they stand for (None: as many as given).
        """
        for problem in problems:
            self.add(problem)
        self.total += max(0, (total or 0) - len(problems))

    def __bool__(self) -> bool:
        return self.total > 0

    def raise_if_any(self) -> None:
        """Raise every problem collected as one :class:`RecordFileError` (exact count)."""
        if self.total:
            raise RecordFileError(self.kept, total=self.total)


def find_by_key(items: Sequence[T], key: Callable[[T], object], wanted: object, label: str) -> T:
    """The first of ``items`` whose ``key`` equals ``wanted``.

    Parameters
    ----------
    items
        The results to search.
    key
        What identifies a result (its term, system or group values).
    wanted
        The key asked for.
    label
        What was asked for in the message, e.g. ``system 'a'``.

    Returns
    -------
    T
        The first match.

    Raises
    ------
    KeyError
        No item matches; the message lists the keys there are.
    """
    for item in items:
        if key(item) == wanted:
            return item
    msg = f"no {label} (got {[key(item) for item in items]})"
    raise KeyError(msg)
