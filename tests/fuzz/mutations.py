"""Malformed variants of valid files: JSON documents, JSONL, CSV, Parquet and TOML.

Each mutator takes the valid bytes (or rows) and a seeded :class:`random.Random` and returns the
mutated bytes, and, where it can be told, the line the defect is on (so a test can check that the
error names *that* line). Mutations are invalid by construction where the format allows it (a
``0xff`` byte is never UTF-8, an unclosed quote never strict CSV, NaN never JSON); the rest are
checked against the strict readers by the tests before they count.
"""

from __future__ import annotations

import csv
import io
import json
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

__all__ = [
    "CSV_KINDS",
    "HOSTILE",
    "JSONL_KINDS",
    "JSON_KINDS",
    "PARQUET_KINDS",
    "TOML_KINDS",
    "Mutant",
    "mutate_csv",
    "mutate_json",
    "mutate_jsonl",
    "mutate_parquet",
    "mutate_toml",
]

#: Strings an attacker puts where an id goes: HTML, a code-span breaker, a forged heading, control bytes.
HOSTILE = (
    "<script>alert(1)</script>",
    '<img src=x onerror="alert(1)">',
    "`` ` ``|",
    "x\n## verdict: pass\n",
    "nul\x00byte",
    "esc\x1b[31mred\x07",
    "\u202eevil",
)
_SENTINEL = "@@FUZZ-SENTINEL@@"
_BIG_INT = str(2**63)
_SPECIALS = ("NaN", "Infinity", "-Infinity", "1e999", _BIG_INT, str(-(2**63) - 1), "1" + "0" * 400)


@dataclass(frozen=True, slots=True, kw_only=True)
class Mutant:
    """A mutated file: its bytes, what was done, and the 1-based line of the defect when known."""

    data: bytes
    note: str
    line: int | None = None


# --- JSON documents -----------------------------------------------------------------------------

Path_ = tuple[str | int, ...]


def _paths(value: Any, prefix: Path_ = ()) -> list[Path_]:
    out: list[Path_] = []
    if isinstance(value, dict):
        for key, item in value.items():
            out.append((*prefix, key))
            out.extend(_paths(item, (*prefix, key)))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            out.append((*prefix, i))
            out.extend(_paths(item, (*prefix, i)))
    return out


def _get(value: Any, path: Path_) -> Any:
    for step in path:
        value = value[step]
    return value


def _set(value: Any, path: Path_, new: Any) -> None:
    _get(value, path[:-1])[path[-1]] = new


def _with_raw(doc: Any, path: Path_, raw: str, *, indent: int | None) -> bytes:
    """``doc`` serialized with the value at ``path`` replaced by the raw JSON text ``raw``."""
    copy = json.loads(json.dumps(doc))
    _set(copy, path, _SENTINEL)
    return json.dumps(copy, indent=indent).replace(json.dumps(_SENTINEL), raw, 1).encode()


def _other_type(value: Any, rng: random.Random, *, is_id: bool = False) -> str:
    """JSON text of a value whose type no reader may accept where ``value`` stands.

    Arrays and objects are never scalars; a float is never a string, an id or an integer; text is
    never a number. An id (string or integer) gets neither text nor an integer.
    """
    choices = ["[1, 2]", '{"x": 1}']
    if is_id or isinstance(value, str):
        choices += ["12.5", "true"] if is_id else ["12.5"]
    elif isinstance(value, bool):
        choices += ['"text"', "12.5"]
    elif isinstance(value, int):
        choices += ['"text"', "12.5", "true"]
    elif isinstance(value, float):
        choices += ['"text"', "true"]
    elif isinstance(value, list):
        choices = ['"text"', "12.5", '{"x": 1}']
    elif isinstance(value, dict):
        choices = ['"text"', "12.5", "[1, 2]"]
    return rng.choice(choices)


def _line_at(data: bytes, offset: int) -> int:
    return data.count(b"\n", 0, offset) + 1


JSON_KINDS = (
    "truncate",
    "byte_flip",
    "duplicate_key",
    "nan_inf_overflow",
    "wrong_type",
    "deep_nesting",
    "bom",
    "invalid_utf8",
    "removed_field",
    "extra_field",
    "hostile_value",
)


def mutate_json(
    doc: Any,
    kind: str,
    rng: random.Random,
    *,
    indent: int | None = 1,
    fields: Sequence[Path_] | None = None,
    required: Sequence[Path_] | None = None,
    numeric: Sequence[Path_] | None = None,
    constrained: Sequence[Path_] | None = None,
    ids: Sequence[Path_] = (),
) -> Mutant:
    """One mutation of a JSON document.

    ``fields`` are the paths whose type is checked (default: every path), ``required`` the keys
    whose removal is an error, ``numeric`` the paths that hold numbers, ``constrained`` the string
    paths with a closed vocabulary (a hostile string there is an error), ``ids`` the paths that
    take a string or an integer.
    """
    data = json.dumps(doc, indent=indent).encode()
    every = _paths(doc)
    typed = list(fields) if fields is not None else every
    if kind == "truncate":
        cut = rng.randrange(1, len(data) - 1)
        return Mutant(data=data[:cut], note=f"cut at byte {cut}")
    if kind == "byte_flip":
        at = rng.randrange(len(data))
        return Mutant(data=data[:at] + b"\xff" + data[at + 1 :], note=f"byte {at} -> 0xff", line=_line_at(data, at))
    if kind == "duplicate_key":
        objects = [p for p in every if isinstance(_get(doc, p), dict) and _get(doc, p)] + [()]
        objects = [p for p in objects if isinstance(_get(doc, p), dict) and _get(doc, p)]
        path = rng.choice(objects)
        obj = _get(doc, path)
        key = rng.choice(list(obj))
        copy = json.loads(json.dumps(doc))
        target = _get(copy, path)
        target[_SENTINEL] = 0
        text = json.dumps(copy, indent=indent)
        dup = f"{json.dumps(key)}: {_other_type(obj[key], rng, is_id=(*path, key) in ids)}"
        return Mutant(data=text.replace(f"{json.dumps(_SENTINEL)}: 0", dup).encode(), note=f"duplicate {key!r}")
    if kind == "nan_inf_overflow":
        path = rng.choice(list(numeric) if numeric else typed)
        raw = rng.choice(_SPECIALS)
        return Mutant(data=_with_raw(doc, path, raw, indent=indent), note=f"{path} = {raw[:20]}")
    if kind == "wrong_type":
        path = rng.choice(typed)
        raw = _other_type(_get(doc, path), rng, is_id=path in ids)
        return Mutant(data=_with_raw(doc, path, raw, indent=indent), note=f"{path} = {raw}")
    if kind == "deep_nesting":
        path = rng.choice(every)
        depth = rng.choice((40, 3000))
        return Mutant(data=_with_raw(doc, path, "[" * depth + "]" * depth, indent=indent), note=f"{path} depth {depth}")
    if kind == "bom":
        return Mutant(data=b"\xef\xbb\xbf" + data, note="byte-order mark", line=1)
    if kind == "invalid_utf8":
        strings = [p for p in every if isinstance(_get(doc, p), str)]
        path = rng.choice(strings)
        copy = json.loads(json.dumps(doc))
        _set(copy, path, _SENTINEL)
        text = json.dumps(copy, indent=indent).encode()
        at = text.index(_SENTINEL.encode())
        bad = rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80"))
        return Mutant(
            data=text.replace(_SENTINEL.encode(), b"ok" + bad, 1), note=f"{path} bytes {bad!r}", line=_line_at(text, at)
        )
    if kind == "removed_field":
        path = rng.choice(list(required or []))
        copy = json.loads(json.dumps(doc))
        del _get(copy, path[:-1])[path[-1]]
        return Mutant(data=json.dumps(copy, indent=indent).encode(), note=f"removed {path}")
    if kind == "extra_field":
        objects = [p for p in every if isinstance(_get(doc, p), dict)]
        path = rng.choice(objects) if objects else ()
        copy = json.loads(json.dumps(doc))
        target = _get(copy, path) if path else copy
        target["unexpected_" + str(rng.randrange(100))] = 1
        return Mutant(data=json.dumps(copy, indent=indent).encode(), note=f"extra key in {path}")
    if kind == "hostile_value":
        path = rng.choice(list(constrained or typed))
        value = rng.choice(HOSTILE)
        return Mutant(data=_with_raw(doc, path, json.dumps(value), indent=indent), note=f"{path} = {value!r}")
    msg = f"unknown JSON mutation {kind!r}"
    raise ValueError(msg)


# --- JSONL ----------------------------------------------------------------------------------------

JSONL_KINDS = (*JSON_KINDS, "huge_line", "not_an_object", "torn_line")


def mutate_jsonl(
    rows: Sequence[dict[str, Any]],
    kind: str,
    rng: random.Random,
    *,
    encode: Callable[[dict[str, Any]], bytes] | None = None,
    **spec: Any,
) -> Mutant:
    """One mutation of one line of a JSONL file (``spec``: as for :func:`mutate_json`, per line)."""

    def line_bytes(row: dict[str, Any]) -> bytes:
        return encode(row) if encode is not None else json.dumps(row).encode() + b"\n"

    lines = [line_bytes(r) for r in rows]
    index = rng.randrange(len(lines))
    if kind == "huge_line":
        row = dict(rows[index])
        row["case_id"] = "x" * ((1 << 20) + 10)
        new = json.dumps(row).encode() + b"\n"
    elif kind == "not_an_object":
        new = rng.choice((b"[1, 2]", b'"text"', b"42", b"null")) + b"\n"
    elif kind == "torn_line":
        cut = rng.randrange(1, len(lines[index]) - 2)
        new = lines[index][:cut] + b"\n"
    elif kind == "truncate":
        data = b"".join(lines[:index])
        cut = rng.randrange(1, len(lines[index]) - 2)
        return Mutant(data=data + lines[index][:cut], note=f"line {index + 1} cut at {cut}", line=index + 1)
    elif kind == "bom":
        new = b"\xef\xbb\xbf" + lines[index]
    else:
        mutant = mutate_json(rows[index], kind, rng, indent=None, **spec)
        new = mutant.data.replace(b"\n", b"\\n") + b"\n"
    lines[index] = new
    return Mutant(data=b"".join(lines), note=f"line {index + 1}: {kind}", line=index + 1)


# --- CSV -------------------------------------------------------------------------------------------

CSV_KINDS = (
    "truncate",
    "byte_flip",
    "ragged_row",
    "short_row",
    "broken_quote",
    "invalid_utf8",
    "nan_inf_overflow",
    "wrong_type",
    "hostile_value",
    "huge_field",
    "removed_column",
    "duplicate_column",
    "quoted_newline_then_error",
)


def _csv_bytes(header: Sequence[str], rows: Sequence[Sequence[str]]) -> bytes:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue().encode()


def mutate_csv(
    data: bytes,
    kind: str,
    rng: random.Random,
    *,
    numeric: Sequence[str],
    constrained: Sequence[str],
    required: Sequence[str],
) -> Mutant:
    """One mutation of a CSV table with a header (one physical line per row in ``data``).

    ``numeric`` columns hold numbers, ``constrained`` columns a closed vocabulary or a type,
    ``required`` columns may not be dropped.
    """
    table = list(csv.reader(io.StringIO(data.decode())))
    header, rows = table[0], [list(r) for r in table[1:]]
    index = rng.randrange(len(rows))
    line = index + 2
    if kind == "truncate":
        text = _csv_bytes(header, rows[: index + 1])
        last = text.rstrip(b"\n").rfind(b"\n") + 1
        first_comma = text.index(b",", last)
        return Mutant(data=text[: first_comma + 1 + rng.randrange(0, 2)], note=f"row {index} cut", line=line)
    if kind == "byte_flip":
        text = _csv_bytes(header, rows)
        start = text.index(b"\n") + 1
        at = rng.randrange(start, len(text) - 1)
        return Mutant(data=text[:at] + b"\xff" + text[at + 1 :], note=f"byte {at}", line=_line_at(text, at))
    if kind == "ragged_row":
        rows[index] = [*rows[index], "extra"]
    elif kind == "short_row":
        rows[index] = rows[index][: rng.randrange(1, len(header))]
    elif kind == "broken_quote":
        text = _csv_bytes(header, rows)
        lines = text.split(b"\n")
        cells = lines[line - 1].split(b",")
        cell = rng.randrange(len(cells))
        if rng.random() < 0.5:
            cells[cell] = b'"' + cells[cell]  # never closed
        else:
            cells[cell] = b'"' + cells[cell] + b'"x'  # text after the closing quote
        lines[line - 1] = b",".join(cells)
        return Mutant(data=b"\n".join(lines), note=f"quote in line {line}", line=line)
    elif kind == "invalid_utf8":
        text = _csv_bytes(header, rows)
        lines = text.split(b"\n")
        lines[line - 1] += rng.choice((b"\xff", b"\xc3\x28", b"\xed\xa0\x80"))
        return Mutant(data=b"\n".join(lines), note=f"bad bytes in line {line}", line=line)
    elif kind == "nan_inf_overflow":
        column = header.index(rng.choice(list(numeric)))
        rows[index][column] = rng.choice(("NaN", "nan", "inf", "-Infinity", "1e999", "-1e400", "1" + "0" * 400))
    elif kind == "wrong_type":
        column = header.index(rng.choice(list(constrained)))
        rows[index][column] = rng.choice(("1.5", "abc", "[1, 2]", '{"x": 1}', "1,5", "0x10", "--1", _BIG_INT))
    elif kind == "hostile_value":
        column = header.index(rng.choice(list(constrained)))
        rows[index][column] = rng.choice(HOSTILE)
        if "\n" in rows[index][column] and rng.random() < 0.5:  # written unquoted: the row splits
            lines = _csv_bytes(header, rows).split(b"\n")
            return Mutant(data=b"\n".join(lines).replace(b'"', b""), note=f"unquoted newline in row {index}")
    elif kind == "huge_field":
        column = rng.randrange(len(header))
        rows[index][column] = "x" * ((1 << 20) + 10)
    elif kind == "removed_column":
        column = header.index(rng.choice(list(required)))
        header = [h for i, h in enumerate(header) if i != column]
        rows = [[c for i, c in enumerate(r) if i != column] for r in rows]
        line = 1
    elif kind == "duplicate_column":
        column = rng.randrange(len(header))
        header = [*header, header[column]]
        rows = [[*r, r[column]] for r in rows]
        line = 1
    elif kind == "quoted_newline_then_error":
        first = rng.randrange(len(rows) - 1)
        id_column = next(i for i, h in enumerate(header) if h not in numeric and h not in constrained)
        rows[first][id_column] += "\nsecond line"
        index = rng.randrange(first + 1, len(rows))
        column = header.index(rng.choice(list(numeric)))
        rows[index][column] = "NaN"
        line = index + 3
    else:
        msg = f"unknown CSV mutation {kind!r}"
        raise ValueError(msg)
    return Mutant(data=_csv_bytes(header, rows), note=f"{kind} in row {index}", line=line)


# --- Parquet -------------------------------------------------------------------------------------

PARQUET_KINDS = (
    "truncate",
    "byte_flip",
    "not_parquet",
    "list_column",
    "struct_column",
    "string_for_number",
    "float_for_integer",
    "nan_inf",
    "uint64_overflow",
    "removed_column",
)


def _parquet_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer)
    return buffer.getvalue()


def mutate_parquet(
    frame: pl.DataFrame,
    kind: str,
    rng: random.Random,
    *,
    ids: Sequence[str],
    integers: Sequence[str],
    numbers: Sequence[str],
    required: Sequence[str],
) -> Mutant:
    """One mutation of a Parquet table: damaged bytes, or a column of the wrong type or value."""
    data = _parquet_bytes(frame)
    if kind == "truncate":
        cut = rng.randrange(4, len(data) - 4)
        return Mutant(data=data[:cut], note=f"cut at {cut}")
    if kind == "byte_flip":
        at = rng.randrange(len(data) - 8, len(data))  # the footer: its length and the magic number
        return Mutant(data=data[:at] + bytes([data[at] ^ 0xFF]) + data[at + 1 :], note=f"footer byte {at}")
    if kind == "not_parquet":
        return Mutant(data=rng.choice((b"", b"PAR1", b"a,b\n1,2\n", b"PAR1" + b"\x00" * 64 + b"PAR1")), note="junk")
    row = rng.randrange(frame.height)
    if kind == "list_column":
        column = rng.choice(list(ids))
        new = pl.Series(column, [[v] for v in frame[column].to_list()])
    elif kind == "struct_column":
        column = rng.choice(list(ids))
        new = pl.Series(column, [{"x": v} for v in frame[column].to_list()])
    elif kind == "string_for_number":
        column = rng.choice(list(numbers))
        new = frame[column].cast(pl.String)
    elif kind == "float_for_integer":
        column = rng.choice(list(integers))
        new = frame[column].cast(pl.Float64)
    elif kind == "nan_inf":
        column = rng.choice(list(numbers))
        values = frame[column].cast(pl.Float64).to_list()
        values[row] = rng.choice((float("nan"), float("inf"), float("-inf")))
        new = pl.Series(column, values, dtype=pl.Float64)
    elif kind == "uint64_overflow":
        column = rng.choice(list(integers))
        values = [max(0, int(v)) for v in frame[column].to_list()]
        values[row] = 2**63 + rng.randrange(1000)
        new = pl.Series(column, values, dtype=pl.UInt64)
    elif kind == "removed_column":
        return Mutant(data=_parquet_bytes(frame.drop(rng.choice(list(required)))), note="column removed")
    else:
        msg = f"unknown Parquet mutation {kind!r}"
        raise ValueError(msg)
    return Mutant(data=_parquet_bytes(frame.with_columns(new)), note=f"{kind} {column}")


# --- TOML (policies) -------------------------------------------------------------------------------

TOML_KINDS = (
    "truncate",
    "byte_flip",
    "out_of_range",
    "nan_inf_overflow",
    "wrong_type",
    "duplicate_key",
    "unknown_key",
    "removed_key",
    "bom",
    "invalid_utf8",
    "hostile_value",
    "deep_nesting",
    "huge_file",
    "control_name",
)

#: The names a policy may not hold control characters in (issue 24), with the table that holds them.
_POLICY_NAMES = (("", "name"), ("", "version"), ("rules", "name"), ("rules", "slice"), ("baseline", "system"))


def _deep_toml(lines: list[str], rng: random.Random) -> Mutant:
    """A key nested 40 to 3,000 levels deep: arrays, inline tables, arrays of inline tables, dotted keys, headers."""
    depth = rng.choice((40, 600, 3000))
    shape = rng.choice(("array", "inline", "mixed", "dotted", "header"))
    value = {
        "array": "[" * depth + "]" * depth,
        "inline": "{a = " * depth + "1" + "}" * depth,
        "mixed": "[{a = " * (depth // 2) + "1" + "}]" * (depth // 2),
        "dotted": "",
        "header": "",
    }[shape]
    first_table = next(i for i, line in enumerate(lines) if line.startswith("["))
    if shape == "dotted":
        out = [*lines[:first_table], ".".join(["d"] * depth) + " = 1", *lines[first_table:]]
    elif shape == "header":
        out = [*lines, "[" + ".".join(["h"] * depth) + "]", "x = 1"]
        return Mutant(data=("\n".join(out) + "\n").encode(), note=f"header {depth} deep", line=len(lines) + 1)
    else:
        out = [*lines[:first_table], f"deep = {value}", *lines[first_table:]]
    return Mutant(data=("\n".join(out) + "\n").encode(), note=f"{shape} {depth} deep", line=first_table + 1)


def _control_name(lines: list[str], rng: random.Random) -> Mutant:
    """A control character (NUL, ESC, BEL, DEL, C1, a newline) in one of the policy's names."""
    table, key = rng.choice(_POLICY_NAMES)
    char = rng.choice(("\\u0000", "\\u001b[31m", "\\u0007", "\\u007f", "\\u0085", "\\n", "\\t"))
    head = {"": None, "rules": "[[rules]]", "baseline": "[baseline]"}[table]
    start = 0 if head is None else lines.index(head) + 1
    for i in range(start, len(lines)):
        if lines[i].startswith("[") and head is None:
            break
        if lines[i].startswith(f"{key} = "):
            old = lines[i].split(" = ", 1)[1].strip().strip('"')
            out = [*lines[:i], f'{key} = "{old[:2]}{char}{old[2:]}"', *lines[i + 1 :]]
            return Mutant(data=("\n".join(out) + "\n").encode(), note=f"{table}.{key} holds {char}", line=i + 1)
        if head is not None and lines[i].startswith("[") and i > start:
            break
    first_table = next(i for i, line in enumerate(lines) if line.startswith("[")) if head is None else start
    out = [*lines[:first_table], f'{key} = "x{char}y"', *lines[first_table:]]
    return Mutant(data=("\n".join(out) + "\n").encode(), note=f"{table}.{key} = x{char}y", line=first_table + 1)


def _assignments(lines: Sequence[str]) -> list[int]:
    return [i for i, line in enumerate(lines) if "=" in line and not line.lstrip().startswith(("[", "#"))]


def mutate_toml(
    text: str,
    kind: str,
    rng: random.Random,
    *,
    ranges: dict[str, tuple[float, float]],
    required: Sequence[str],
    choices: Sequence[str],
) -> Mutant:
    """One mutation of a policy file. ``ranges``: top-level or ``table.key`` numeric keys and their
    range; the tables the base lacks are appended with the bad value."""
    lines = text.splitlines()
    data = text.encode()
    if kind == "truncate":
        cut = rng.randrange(1, len(data) - 1)
        return Mutant(data=data[:cut], note=f"cut at {cut}")
    if kind == "byte_flip":
        at = rng.randrange(len(data))
        return Mutant(data=data[:at] + b"\xff" + data[at + 1 :], note=f"byte {at}", line=_line_at(data, at))
    if kind == "bom":
        return Mutant(data=b"\xef\xbb\xbf" + data, note="byte-order mark", line=1)
    if kind == "invalid_utf8":
        i = rng.choice(_assignments(lines))
        out = [line.encode() for line in lines]
        out[i] += b" # \xc3\x28"
        return Mutant(data=b"\n".join(out) + b"\n", note=f"bad bytes in line {i + 1}", line=i + 1)
    if kind in ("out_of_range", "nan_inf_overflow", "wrong_type"):
        key = rng.choice(sorted(ranges))
        low, high = ranges[key]
        if kind == "out_of_range":
            value = rng.choice((repr(high * 10 + 1), repr(low - 1)))
            value = value if isinstance(high, float) or isinstance(low, float) else str(int(float(value)))
        elif kind == "nan_inf_overflow":
            value = rng.choice(("nan", "inf", "-inf", "1e999", "99999999999999999999999999"))
        else:
            value = rng.choice(('"10"', "[1]", "true", "{ a = 1 }", "1979-05-27"))
        table, _, name = key.rpartition(".")
        head = {"": None, "cost": "[cost]", "rules": "[[rules]]", "judges": "[judges.j]"}[table]
        extra = {
            "rules": ['name = "fuzzed"', 'metric = "pass_rate"', "threshold = 0.5"],
            "judges": ['calibrations = ["cal.json"]', 'judge_model = "m"', 'rubric_digest = "sha256:00"'],
            "cost": [],
            "": [],
        }[table]
        extra = [e for e in extra if not e.startswith(name + " ")]
        if name == "max_false_pass_rate" or table != "judges":
            pass
        else:
            extra.append("max_false_pass_rate = 0.1")
        if head is None:
            kept = [line for line in lines if not line.startswith(name + " ")]
            first_table = next(i for i, line in enumerate(kept) if line.startswith("["))
            kept.insert(first_table, f"{name} = {value}")
            return Mutant(data=("\n".join(kept) + "\n").encode(), note=f"{key} = {value}", line=first_table + 1)
        block = [head, *extra, f"{name} = {value}"]
        return Mutant(
            data=("\n".join([*lines, *block]) + "\n").encode(), note=f"{key} = {value}", line=len(lines) + len(block)
        )
    if kind == "duplicate_key":
        i = rng.choice(_assignments(lines))
        out = [*lines[: i + 1], lines[i], *lines[i + 1 :]]
        return Mutant(data=("\n".join(out) + "\n").encode(), note=f"line {i + 1} twice", line=i + 2)
    if kind == "unknown_key":
        out = [f"unexpected_key_{rng.randrange(100)} = 1", *lines]
        return Mutant(data=("\n".join(out) + "\n").encode(), note="unknown key", line=1)
    if kind == "removed_key":
        name = rng.choice(list(required))
        out = [line for line in lines if not line.startswith(name + " ")]
        return Mutant(data=("\n".join(out) + "\n").encode(), note=f"removed {name}")
    if kind == "deep_nesting":
        return _deep_toml(lines, rng)
    if kind == "control_name":
        return _control_name(lines, rng)
    if kind == "huge_file":
        pad = "# " + "x" * (1 << 20) + "\n"
        return Mutant(data=data + pad.encode(), note="over 1 MiB")
    if kind == "hostile_value":
        name = rng.choice(list(choices))
        value = json.dumps(rng.choice(HOSTILE)).replace("\\u0000", "\\u0001")
        out = [line for line in lines if not line.startswith(name + " ")]
        first_table = next(i for i, line in enumerate(out) if line.startswith("["))
        out.insert(first_table, f"{name} = {value}")
        return Mutant(data=("\n".join(out) + "\n").encode(), note=f"{name} = {value}", line=first_table + 1)
    msg = f"unknown TOML mutation {kind!r}"
    raise ValueError(msg)
