"""The table importer's list cells and trial labels: ``slices``, ``graders``, ``grader:NAME`` and ``trial_label``.

Each reader takes one cell as :func:`gatestats.tables.inputs.read_input_table` gives it (CSV: text;
JSONL: the JSON value; Parquet: the Python value) and returns ``(value, None)`` or ``(None, why)``;
the caller names the file, line and field. Formats (see ``docs/importers.md``):

- ``slices``: CSV text ``a;b`` (blanks around names ignored) or a JSON array of strings
  (``["a", "b"]``); JSONL and Parquet a list of strings. Empty cell or null: no slices.
- ``graders``: the contract's list of ``{name, kind, verdict, calibration_version}`` objects; CSV
  text holds it as a JSON array.
- ``grader:NAME`` / ``judge:NAME`` columns: one verdict per cell (``passed``/``failed``/
  ``unparseable`` and the outcome spellings ``1/0``, ``true/false``, ``pass/fail``); an empty cell
  or null: that grader did not grade the row.
- ``trial_label``: any label (``run-1``, ``seed-7``, ``7``); the labels of one case are numbered
  0, 1, ... in natural order (:func:`natural_key`).
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from gatestats.tables.inputs import describe
from gatestats.vocabulary import FAILED, GRADER_VERDICTS, PASSED, UNPARSEABLE
from gatestats_runner.contract import MAX_LINE_BYTES, decode_json

__all__ = [
    "GRADER_KINDS",
    "VERDICT_VALUES",
    "grader_list",
    "label_problem",
    "natural_key",
    "number_labels",
    "slice_list",
    "verdict",
]

#: Mapping prefix -> grader kind: ``grader:NAME=COLUMN`` is a code grader, ``judge:NAME=COLUMN`` a judge.
GRADER_KINDS: dict[str, str] = {"grader": "code", "judge": "judge"}
#: Accepted spellings of a grader's verdict (case-insensitive, surrounding blanks ignored).
VERDICT_VALUES: dict[str, str] = {
    "1": PASSED,
    "true": PASSED,
    "pass": PASSED,
    PASSED: PASSED,
    "0": FAILED,
    "false": FAILED,
    "fail": FAILED,
    FAILED: FAILED,
    UNPARSEABLE: UNPARSEABLE,
}
_VERDICT_EXPECTED = "one of passed/failed/unparseable, 1/0, true/false, pass/fail"
_GRADER_KEYS = ("name", "kind", "verdict", "calibration_version")
_VERDICTS = GRADER_VERDICTS
_DIGITS = re.compile(r"([0-9]+)")
#: What pandas, R and spreadsheets write for a missing value: refused as a label, never a slice called "nan".
_MISSING = frozenset({"nan", "none", "null", "<na>"})


def label_problem(text: str, what: str) -> str | None:
    """Why ``text`` cannot be a slice, grader name or trial label (None: it can).

    Parameters
    ----------
    text
        The label.
    what
        What it labels, for the message (``slice``, ``grader name``, ``trial label``).

    Returns
    -------
    str or None
        The reason, or None.

    Examples
    --------
    >>> label_problem("run-1", "trial label") is None, label_problem("a\\nb", "slice")
    (True, "a slice is one line of printable text (got 'a\\\\nb')")
    """
    if not text.strip():
        return f"a {what} is not blank (got {text!r})"
    if not text.isprintable():
        return f"a {what} is one line of printable text (got {_short(text)})"
    if len(text) > 200:
        return f"a {what} has at most 200 characters (got {len(text)})"
    if text.strip().lower() in _MISSING:
        return f"a {what} is not a missing value written as text (got {text!r}: leave the cell empty instead)"
    return None


def _short(text: str) -> str:
    shown = repr(text)
    return shown if len(shown) <= 80 else shown[:77] + "..."


def _json_text(cell: str, expected: str) -> tuple[Any, str | None]:
    value, bad = decode_json(cell.encode(), max_bytes=MAX_LINE_BYTES)
    if bad is not None:
        return None, f"expected {expected} (got {_short(cell)}: {bad.message})"
    return value, None


def _empty(cell: Any, *, text: bool) -> bool:
    """Whether a cell is null (CSV: the empty text)."""
    return cell is None or (text and cell == "")


def _names(items: Sequence[Any], what: str) -> tuple[list[str] | None, str | None]:
    """The items as distinct labels, or why not."""
    seen: set[str] = set()
    for index, item in enumerate(items):
        if not isinstance(item, str):
            return None, f"item {index}: expected a string (got {describe(item)})"
        if (bad := label_problem(item, what)) is not None:
            return None, f"item {index}: {bad}"
        if item != item.strip():
            return None, f"item {index}: a {what} has no surrounding blanks (got {item!r})"
        if item in seen:
            return None, f"{what} {item!r} is given twice"
        seen.add(item)
    return list(items), None


def slice_list(cell: Any, *, text: bool) -> tuple[list[str] | None, str | None]:
    """A ``slices`` cell as a list of distinct slice names (None: no slices), or why it is not one.

    Parameters
    ----------
    cell
        CSV text ``a;b`` or a JSON array of strings; in JSONL and Parquet a list of strings.
    text
        Whether the cell is CSV text rather than a JSON/Parquet value.

    Returns
    -------
    tuple
        ``(names, None)`` (names distinct, in the cell's order; None for an empty cell or null),
        or ``(None, why)``.

    Examples
    --------
    >>> slice_list(" security ; billing", text=True), slice_list('["a", "b"]', text=True)
    ((['security', 'billing'], None), (['a', 'b'], None))
    >>> slice_list("a;;b", text=True)[1]
    "item 1: a slice is not blank (got '')"
    """
    if _empty(cell, text=text):
        return None, None
    items: Any = cell
    if text and cell.lstrip().startswith("["):
        items, bad = _json_text(cell, "a JSON array of strings")
        if bad is not None:
            return None, bad
    elif text:
        items = [part.strip() for part in cell.split(";")]
    if not isinstance(items, list):
        return None, f"expected a list of strings (got {describe(items)})"
    return _names(items, "slice")


def verdict(cell: Any, *, text: bool) -> tuple[str | None, str | None]:
    """A ``grader:NAME`` cell as a contract verdict (None: not graded), or why it is not one.

    Parameters
    ----------
    cell
        A spelling of :data:`VERDICT_VALUES`, or in JSONL and Parquet also a boolean or 0/1.
    text
        Whether the cell is CSV text rather than a JSON/Parquet value.

    Returns
    -------
    tuple
        ``(verdict, None)`` (verdict None: empty or null, the grader did not grade the row), or
        ``(None, why)``.

    Examples
    --------
    >>> verdict("PASS", text=True), verdict(0, text=False), verdict("", text=True)
    (('passed', None), ('failed', None), (None, None))
    """
    if _empty(cell, text=text):
        return None, None
    if isinstance(cell, str):
        found = VERDICT_VALUES.get(cell.strip().lower())
        if found is not None:
            return found, None
    elif isinstance(cell, bool):
        return (PASSED if cell else FAILED), None
    elif isinstance(cell, int) and cell in (0, 1):
        return (PASSED if cell == 1 else FAILED), None
    got = _short(cell) if text else describe(cell)
    return None, f"expected {_VERDICT_EXPECTED} (got {got})"


def _grader_problem(name: str, present: Mapping[str, object]) -> str | None:
    """Why a grader object's kind, verdict or calibration version is wrong (None: they are right)."""
    kind, found, calibration = present.get("kind"), present.get("verdict"), present.get("calibration_version")
    checks = (
        (kind not in ("code", "judge"), f"kind: expected 'code' or 'judge' (got {describe(kind)})"),
        (found not in _VERDICTS, f"verdict: expected passed, failed or unparseable (got {describe(found)})"),
        (calibration is not None and kind != "judge", "calibration_version: only a judge has one"),
        (
            calibration is not None and (not isinstance(calibration, str) or not calibration),
            f"calibration_version: expected a string (got {describe(calibration)})",
        ),
    )
    return next((f"({name}): {message}" for failed, message in checks if failed), None)


def _grader(item: Any, index: int) -> tuple[dict[str, str | None] | None, str | None]:
    if not isinstance(item, dict):
        return None, f"item {index}: expected an object (got {describe(item)})"
    present = {key: value for key, value in item.items() if value is not None}
    if unknown := sorted(set(present) - set(_GRADER_KEYS)):
        return None, f"item {index}: unknown key {unknown[0]!r} (keys: {', '.join(_GRADER_KEYS)})"
    name = present.get("name")
    if not isinstance(name, str):
        return None, f"item {index}: name: expected a string (got {describe(name)})"
    bad = label_problem(name, "grader name") or _grader_problem(name, present)
    if bad is not None:
        return None, f"item {index}{'' if bad.startswith('(') else ': name:'} {bad}"
    return {key: present.get(key) for key in _GRADER_KEYS}, None


def grader_list(cell: Any, *, text: bool) -> tuple[list[dict[str, str | None]] | None, str | None]:
    """A ``graders`` cell as the contract's grader list (None: no graders), or why it is not one.

    Parameters
    ----------
    cell
        The cell: a list of ``{name, kind, verdict, calibration_version}`` objects (CSV: as a JSON array).
    text
        Whether the cell is CSV text.

    Returns
    -------
    tuple
        ``(graders, None)`` or ``(None, why)``; names are distinct.

    Examples
    --------
    >>> grader_list('[{"name": "exact", "kind": "code", "verdict": "passed"}]', text=True)[0]
    [{'name': 'exact', 'kind': 'code', 'verdict': 'passed', 'calibration_version': None}]
    """
    if _empty(cell, text=text):
        return None, None
    value = cell
    if text:
        value, bad = _json_text(cell, "a JSON array of grader objects")
        if bad is not None:
            return None, bad
    if not isinstance(value, list):
        return None, f"expected a list of grader objects (got {describe(value)})"
    graders: list[dict[str, str | None]] = []
    for index, item in enumerate(value):
        grader, bad = _grader(item, index)
        if grader is None:
            return None, bad
        if any(g["name"] == grader["name"] for g in graders):
            return None, f"grader {grader['name']!r} is given twice"
        graders.append(grader)
    return graders, None


def natural_key(label: str) -> tuple[tuple[int, int, str], ...]:
    """The order of trial labels: text compared case-insensitively, digit runs as numbers.

    Parameters
    ----------
    label
        A trial label.

    Returns
    -------
    tuple
        The sort key; two labels with the same key (``run-1``, ``Run-01``, `` run-1``) are ambiguous.

    Examples
    --------
    >>> sorted(["run-10", "run-2", "run-1"], key=natural_key)
    ['run-1', 'run-2', 'run-10']
    """
    parts = _DIGITS.split(label.strip().casefold())
    return tuple((0, int(part), "") if index % 2 else (1, 0, part) for index, part in enumerate(parts) if part)


def number_labels(labels: Iterable[str]) -> tuple[dict[str, int], tuple[str, str] | None]:
    """Number the distinct labels of one case 0, 1, ... in natural order, or name two that collide.

    Parameters
    ----------
    labels
        The case's trial labels (repeats allowed: attempts of one trial share its label).

    Returns
    -------
    tuple
        ``(label -> trial, None)``, or ``({}, (first, second))`` for two distinct labels with the
        same :func:`natural_key`.

    Examples
    --------
    >>> number_labels(["seed-7", "seed-13", "seed-7"])
    ({'seed-7': 0, 'seed-13': 1}, None)
    >>> number_labels(["run-1", "run-01"])
    ({}, ('run-01', 'run-1'))
    """
    ordered = sorted(set(labels), key=lambda label: (natural_key(label), label))
    for first, second in itertools.pairwise(ordered):
        if natural_key(first) == natural_key(second):
            return {}, (first, second)
    return {label: trial for trial, label in enumerate(ordered)}, None
