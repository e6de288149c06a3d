"""Line numbers for TOML keys, so a policy or plan error can name the line (``tomllib`` keeps none).

The locator reads the file line by line, tracks the current table header (``[a.b]`` and
``[[array]]`` with its index) and records the line of each ``key =`` assignment and of each header.
It covers the TOML a policy uses (tables, arrays of tables, dotted keys, inline values); a key it
cannot place (e.g. inside a multi-line inline table) falls back to its table's header line.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatestats.errors import GatestatsError
from gatestats.io.jsonfile import read_regular_file
from gatestats.io.limits import POLICY_MAX_BYTES, TOML_MAX_DEPTH
from gatestats.io.text import visible

__all__ = [
    "KeyPath",
    "TomlError",
    "TomlProblem",
    "key_text",
    "line_of",
    "locate",
    "parse_toml",
    "read_toml_file",
    "too_deep",
]

#: A key path: table names, array indices and the key, e.g. ``("rules", 2, "metric")``.
KeyPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class TomlProblem:
    """One thing wrong with a TOML file read by gatestats (a policy, a rollout plan): where and what.

    ``key`` is the key path as messages write it (``rules[2].metric``); ``line`` its 1-based line when known.
    """

    file: str
    key: str
    line: int | None
    message: str

    def __str__(self) -> str:
        where = f"{self.file}:{self.line}" if self.line is not None else self.file
        return f"{where}: key '{self.key}': {self.message}"


class TomlError(GatestatsError, ValueError):
    """A TOML file is not valid for what it is read as; ``problems`` lists every finding, one per line."""

    def __init__(self, problems: Sequence[TomlProblem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


# A header line: ``[name]`` or ``[[name]]``, a comment allowed after it. The name (group 2) keeps the spaces around it,
# which :func:`_split_key` ignores: a pattern that trimmed them (``\s*([^\]]+?)\s*``) backtracked in cubic time on a
# line of ``[`` and many spaces without a ``]`` (a 2,000-space line took 11 s).
_HEADER = re.compile(r"^\s*(\[\[?)([^\]]+)(\]\]?)\s*(#.*)?$")
_ASSIGN = re.compile(
    r"^\s*((?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*')(?:\s*\.\s*(?:[A-Za-z0-9_-]+|\"[^\"]*\"|'[^']*'))*)\s*="
)


def _split_key(text: str) -> list[str]:
    parts = re.findall(r"\"[^\"]*\"|'[^']*'|[A-Za-z0-9_-]+", text)
    return [p[1:-1] if p[:1] in "\"'" else p for p in parts]


def locate(text: str) -> dict[KeyPath, int]:
    """Map every key path (and table header path) in ``text`` to its 1-based line number.

    Parameters
    ----------
    text
        The TOML text of a policy file.

    Returns
    -------
    dict[KeyPath, int]
        Each key path (array-of-tables entries by index) with the line it is defined on.

    Examples
    --------
    >>> lines = locate('k = 4\\n[baseline]\\nsystem = "a"\\n[[rules]]\\nmetric = "x"\\n[[rules]]\\nmetric = "y"\\n')
    >>> lines[("k",)], lines[("baseline", "system")], lines[("rules", 1, "metric")], lines[("rules", 1)]
    (1, 3, 7, 6)
    """
    found: dict[KeyPath, int] = {}
    for path, number in _paths(text):
        found.setdefault(path, number)
    return found


def _paths(text: str) -> Iterator[tuple[KeyPath, int]]:
    """Every header's and assignment's key path with its line, in file order (:func:`locate`'s reading).

    Each path costs what its line holds plus the longest array-of-tables header seen so far, so a
    caller that stops at the first path deeper than a limit (:func:`too_deep`) reads a hostile file
    (one header of 100,000 dotted names) in time linear in its size.
    """
    table: list[str | int] = []
    arrays: dict[tuple[str | int, ...], int] = {}
    longest = 0  # the most names of an array-of-tables header seen
    in_multiline: str | None = None
    for number, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER.match(line)
        if header and not _ASSIGN.match(line):
            names: list[str | int] = list(_split_key(header.group(2)))
            if header.group(1) == "[[":
                key = tuple(names)
                arrays[key] = arrays.get(key, -1) + 1
                longest = max(longest, len(key))
                table = [*names, arrays[key]]
            else:
                table = _with_indices(names, arrays, longest)
            yield tuple(table), number
            continue
        assign = _ASSIGN.match(line)
        if assign:
            yield (*table, *_split_key(assign.group(1))), number
            rest = line[assign.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) == 1:
                    in_multiline = quote


def _with_indices(
    names: Sequence[str | int], arrays: dict[tuple[str | int, ...], int], longest: int
) -> list[str | int]:
    """``[rules.judge]`` inside the last ``[[rules]]`` means ``rules[i].judge``.

    A prefix is looked up only up to ``longest`` names (no array key is longer), so a header of n
    names costs O(n + longest²), not O(n²).
    """
    out: list[str | int] = []
    prefix: list[str | int] = []
    for name in names:
        out.append(name)
        prefix.append(name)
        if len(prefix) <= longest and (index := arrays.get(tuple(prefix))) is not None:
            out.append(index)
    return out


def line_of(lines: dict[KeyPath, int], path: KeyPath) -> int | None:
    """The line of ``path``, else of its nearest enclosing table that has one.

    Parameters
    ----------
    lines
        The map :func:`locate` returns.
    path
        A key path.

    Returns
    -------
    int or None
        Its line, else its nearest enclosing table's; ``None`` when none is known.
    """
    for end in range(len(path), 0, -1):
        if path[:end] in lines:
            return lines[path[:end]]
    return None


def too_deep(text: str, limit: int) -> tuple[int, KeyPath] | None:
    """Where ``text`` nests deeper than ``limit`` levels: ``(line, key path)``, or ``None``.

    A counting scan, without recursion: brackets and braces outside strings and comments, and the
    parts of dotted keys and table headers. :mod:`tomllib` recurses once per level of arrays and
    inline tables and raises ``RecursionError`` near 500 levels; this check runs first. The key
    named is the one whose value holds the deepest bracket (a string or comment the scan misreads
    can only end at its line's end, so the count is never lost for more than one line).

    Parameters
    ----------
    text
        The TOML text.
    limit
        The deepest nesting accepted.

    Returns
    -------
    tuple of (int, KeyPath) or None
        The 1-based line where nesting first exceeds ``limit`` and the key whose value it is in.

    Examples
    --------
    >>> too_deep('a = [[1]]\\nb = "[[[["\\n', 2) is None
    True
    >>> too_deep('k = 1\\n[t]\\ndeep = [[[1]]]\\n', 2)
    (3, ('t', 'deep'))
    >>> too_deep('a.b.c.d = 1\\n', 3)
    (1, ('a', 'b', 'c', 'd'))
    """
    lines: dict[KeyPath, int] = {}
    for path, line in _paths(text):  # stops at the first path too deep: linear in the text (see _paths)
        if len(path) > limit:
            return line, path
        lines.setdefault(path, line)
    index, start = _deepest_bracket(text, limit)
    if index is None:
        return None
    line, start_line = text.count("\n", 0, index) + 1, text.count("\n", 0, start) + 1
    on_line = [path for path, at in lines.items() if at == start_line]
    return line, max(on_line, key=len) if on_line else ("(syntax)",)


def _deepest_bracket(text: str, limit: int) -> tuple[int | None, int]:
    """The index where brackets first nest deeper than ``limit`` (or None), and where that value began."""
    depth = start = 0
    index, size = 0, len(text)
    while index < size:
        char = text[index]
        if char in "\"'":
            index = _string_end(text, index)
            continue
        if char == "#":
            end = text.find("\n", index)
            index = size if end < 0 else end
            continue
        if char in "[{":
            start = index if depth == 0 else start
            depth += 1
            if depth > limit:
                return index, start
        elif char in "]}":
            depth = max(depth - 1, 0)
        index += 1
    return None, start


def _string_end(text: str, index: int) -> int:
    """The index just past the TOML string starting at ``index`` (a one-line string ends at its line's end)."""
    quote = text[index]
    escapes = quote == '"'
    if text.startswith(quote * 3, index):
        end = index + 3
        while end < len(text):
            if escapes and text[end] == "\\":
                end += 2
            elif text.startswith(quote * 3, end):
                return end + 3
            else:
                end += 1
        return end
    end = index + 1
    while end < len(text) and text[end] != "\n":
        if escapes and text[end] == "\\":
            end += 2
        elif text[end] == quote:
            return end + 1
        else:
            end += 1
    return end


def key_text(path: KeyPath) -> str:
    """A key path as the messages write it: ``rules[2].metric`` (control characters made visible).

    Parameters
    ----------
    path
        A key path.

    Returns
    -------
    str
        Its text.

    Examples
    --------
    >>> key_text(("rules", 2, "metric"))
    'rules[2].metric'
    """
    return visible(".".join(f"[{p}]" if isinstance(p, int) else p for p in path).replace(".[", "["))


def parse_toml(
    data: bytes, *, file: str, what: str, problem: type[TomlProblem], error: type[TomlError]
) -> tuple[str, dict[str, Any]]:
    """The text of a TOML file and its parsed table, after the size and nesting limits.

    :data:`~gatestats.io.limits.POLICY_MAX_BYTES` and the nesting scan (:func:`too_deep`,
    :data:`~gatestats.io.limits.TOML_MAX_DEPTH`) are checked before :mod:`tomllib` runs; a nesting
    the scan did not see is still an error naming the file, never a traceback.

    Parameters
    ----------
    data
        The file's bytes.
    file
        Its name, for messages.
    what
        What it is read as (``a policy``), for the size message.
    problem, error
        The problem and error types to raise (``PolicyProblem``/``PolicyError``, ...).

    Returns
    -------
    tuple of (str, dict)
        The text (for :func:`locate`) and the parsed TOML.

    Raises
    ------
    TomlError
        ``error`` with one ``problem``: too large, not UTF-8, nested too deep, or not TOML (its line).
    """

    def fail(key: str, line: int | None, message: str) -> TomlError:
        return error([problem(file=file, key=key, line=line, message=message)])

    if len(data) > POLICY_MAX_BYTES:
        raise fail("(file)", None, f"{len(data)} bytes is larger than the limit of {POLICY_MAX_BYTES} bytes for {what}")
    try:
        text = data.decode("utf-8")
        deep = too_deep(text, TOML_MAX_DEPTH)
        if deep is not None:
            message = f"nested deeper than {TOML_MAX_DEPTH} levels (arrays, inline tables or dotted keys)"
            raise fail(key_text(deep[1]), deep[0], message)
        return text, tomllib.loads(text)
    except RecursionError:
        raise fail(
            "(syntax)", None, f"nested too deep for the TOML reader (the limit is {TOML_MAX_DEPTH} levels)"
        ) from None
    except UnicodeDecodeError as exc:
        raise fail("(file)", None, f"not UTF-8: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"at line (\d+)", str(exc))
        raise fail("(syntax)", int(found.group(1)) if found else None, f"not TOML: {exc}") from None


def read_toml_file(path: Path, *, what: str, problem: type[TomlProblem], error: type[TomlError]) -> bytes:
    """The bytes of a TOML file: a regular file (never a FIFO) of at most :data:`POLICY_MAX_BYTES`.

    Parameters
    ----------
    path
        The file.
    what
        What it is read as (``policy``, ``rollout plan``), for the messages.
    problem, error
        The problem and error types to raise.

    Returns
    -------
    bytes
        Its bytes.

    Raises
    ------
    TomlError
        ``error`` naming the file, key ``(file)``: missing, not a regular file, too large.
    """
    try:
        return read_regular_file(path, limit=POLICY_MAX_BYTES, what=what)
    except GatestatsError as exc:
        message = str(exc).removeprefix(f"{path}: field '<file>': ")
        raise error([problem(file=str(path), key="(file)", line=None, message=message)]) from None
