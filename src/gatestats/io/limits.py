"""The size, depth and name limits every input file is held to (one place per format; docs/integrity.md).

Each format is read through one door, and each door applies the limits below before the parser
sees the data:

- **JSON** (verdicts, manifests, calibrations, golden-set case files, importers' documents):
  :mod:`gatestats.io.jsonfile` — a size limit per kind of file, and the runner's strict decoder
  (:func:`gatestats_runner.contract.decode_json`), whose depth limit is checked by a counting scan
  before the recursive parser runs.
- **TOML** (policies): :func:`gatestats.gate.policy.load_policy` — :data:`POLICY_MAX_BYTES`, then
  :func:`gatestats.io.toml_lines.too_deep` (a counting scan, no recursion) with
  :data:`TOML_MAX_DEPTH`, before :mod:`tomllib` (which recurses once per level and raised
  ``RecursionError`` at ~500 levels).
- **CSV** (record, importer, judgment and label tables): :func:`gatestats.tables.csvfile.read_csv_strict`
  (:data:`CSV_MAX_BYTES`, regular files only, and a field limit of its own,
  :data:`gatestats.tables.csvfile.MAX_CSV_FIELD_BYTES`; CSV does not nest).
- **Names** (policy, rule and slice names, system labels, golden-set case ids): :func:`name_problem`
  refuses control characters (C0, DEL, C1) and names longer than :data:`NAME_MAX_CHARS`.
"""

from __future__ import annotations

import re

__all__ = [
    "CSV_MAX_BYTES",
    "JSON_DOCUMENT_MAX_BYTES",
    "NAME_MAX_CHARS",
    "POLICY_MAX_BYTES",
    "SMALL_JSON_MAX_BYTES",
    "TOML_MAX_DEPTH",
    "name_problem",
]

#: Largest policy file read (bytes): a policy with 1,000 rules is about 150 KB.
POLICY_MAX_BYTES = 1 << 20
#: Deepest nesting of TOML arrays, inline tables and dotted keys (a policy nests at most 4 levels).
TOML_MAX_DEPTH = 32
#: Largest small JSON document (a golden-set case file, a judge list, a calibration, a listing).
SMALL_JSON_MAX_BYTES = 16 << 20
#: Largest JSON document of any kind (a verdict of a 100,000-case gate is far below this).
JSON_DOCUMENT_MAX_BYTES = 256 << 20
#: Largest CSV file read (bytes): larger record sets belong in Parquet or JSONL, which stream.
CSV_MAX_BYTES = 512 << 20
#: Longest name (policy, rule, slice, system label, case id).
NAME_MAX_CHARS = 1024

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def name_problem(value: str) -> str | None:
    """Why ``value`` cannot be a name (control characters, too long), or ``None`` when it can.

    Parameters
    ----------
    value
        A name read from a file (policy name, rule name, slice, system label, case id).

    Returns
    -------
    str or None
        The reason, naming the first control character and its position; ``None`` for a good name.

    Examples
    --------
    >>> name_problem("release-1 ✓") is None
    True
    >>> name_problem("a\\x00b")
    'control character U+0000 at position 2 (names are one line of visible text)'
    """
    found = _CONTROL.search(value)
    if found is not None:
        return (
            f"control character U+{ord(found.group()):04X} at position {found.start() + 1} "
            "(names are one line of visible text)"
        )
    if len(value) > NAME_MAX_CHARS:
        return f"{len(value)} characters is longer than the limit of {NAME_MAX_CHARS}"
    return None
