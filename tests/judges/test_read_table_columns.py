"""A judgments table's id columns of a CSV file are read column by column, with the frame and problems of before.

``judges.inputs._read_table`` called ``typed_cell`` on every cell (3,728 rows x 7 columns for the bundled LLMBar
file that ``calibrate`` reads: ~8 ms of its start, issue 28 item 2). A CSV cell read as an id is its text, empty
-> null, and never refused, so these columns are now read whole. :func:`_old_read_table` below is the function as
it was (kept word for word, the oracle); every test compares the two on the same file: the same frame (values,
dtypes, order of columns) or the same refusal (every problem, in order, and the count).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatestats.errors import RecordFileError
from gatestats.judges.inputs import _read_table, _text
from gatestats.tables.inputs import CellKind, ProblemList, read_input_table, typed_cell
from tests.hypothesis_counts import examples

ROOT = Path(__file__).resolve().parents[2]
LLMBAR = ROOT / "data" / "llmbar_judge_swap" / "judgments.csv"


def _old_read_table(path: Path, names: Mapping[str, str], score: str | None, free: Sequence[str] = ()) -> pl.DataFrame:
    """``_read_table`` before session 44 (the oracle)."""
    table = read_input_table(path, list(names))
    problems = ProblemList()
    data: dict[str, list[Any]] = {c: [] for c in table.columns}
    for index, row in enumerate(table.rows):
        for column in table.columns:
            kind: CellKind = "number" if column == score else "id"
            value, bad = typed_cell(row[column], kind, text=table.text)
            if bad is not None and column in free:
                number, bad = typed_cell(row[column], "number", text=table.text)
                value = None if number is None else repr(number)
            if bad is not None:
                problems.add(table.problem(index, names[column], f"column {column!r}: {bad}"))
            data[column].append(value)
    problems.raise_if_any()
    frame = pl.DataFrame(
        [pl.Series(c, v, dtype=pl.Float64 if c == score else pl.String, strict=True) for c, v in data.items()]
    )
    return frame.with_columns(_text(c, frame.schema[c]).alias(c) for c in frame.columns if c != score).with_row_index(
        "__row"
    )


def _outcome(read: Any, path: Path, names: Mapping[str, str], score: str | None, free: Sequence[str]) -> Any:
    try:
        frame = read(path, names, score, free)
    except RecordFileError as exc:
        return ("refused", [(p.file, p.line, p.row, p.field, p.message) for p in exc.problems], exc.total)
    return ("read", frame.schema, frame.to_dicts())


def _same(path: Path, names: Mapping[str, str], score: str | None = None, free: Sequence[str] = ()) -> Any:
    new, old = _outcome(_read_table, path, names, score, free), _outcome(_old_read_table, path, names, score, free)
    assert new == old
    return new


def test_the_bundled_llmbar_file_as_calibrate_reads_it() -> None:
    names = {
        c: c
        for c in (
            "item_idx",
            "label",
            "winner_original_order",
            "winner_swapped_order",
            "evaluator",
            "strategy",
            "subset",
        )
    }
    kind, schema, rows = _same(LLMBAR, names)
    assert kind == "read"
    assert len(rows) == 3728
    assert set(schema.values()) == {pl.String, pl.UInt32}
    _same(LLMBAR, names, score="label")  # a column of 1s and 2s read as the score
    _same(LLMBAR, names, score="subset")  # ... and one of texts, refused on every row
    _same(LLMBAR, names, free=("label", "evaluator"))


#: Cells that matter: empty, blanks, numbers in many spellings, what is not a finite number, quotes, commas.
_CELL = st.sampled_from(
    ["", " ", "a", " a ", "1", "01", "-2", "1.5", "1e3", "1e999", "nan", "inf", "-0", "0x1", "é", "x,y", '"q"', "\t"]
)


def _csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    text = io.StringIO()
    writer = csv.writer(text, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    path.write_text(text.getvalue(), encoding="utf-8")
    return path


@settings(max_examples=examples(150), suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(st.lists(_CELL, min_size=4, max_size=4), min_size=1, max_size=12),
    st.sampled_from([None, "c0", "c2"]),
    st.sampled_from([(), ("c1",), ("c1", "c3")]),
)
def test_random_csv_tables_give_the_old_frame_or_refusal(
    tmp_path: Path, rows: list[list[str]], score: str | None, free: tuple[str, ...]
) -> None:
    path = _csv(tmp_path / "t.csv", ["c0", "c1", "c2", "c3"], rows)
    _same(path, {"c0": "item", "c1": "label", "c2": "verdict", "c3": "judge"}, score, free)
    _same(path, {"c3": "item", "c0": "verdict"}, score if score != "c2" else None, ())  # fewer, reordered


@pytest.mark.parametrize("suffix", [".jsonl", ".parquet"])
def test_json_and_parquet_tables_are_read_as_before(tmp_path: Path, suffix: str) -> None:
    rows = [
        {"c0": "a", "c1": 1, "c2": 1.5, "c3": None},
        {"c0": "b", "c1": 2, "c2": None, "c3": "x"},
        {"c0": "", "c1": 3, "c2": 2.0, "c3": " y "},
    ]
    path = tmp_path / f"t{suffix}"
    if suffix == ".jsonl":
        path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    else:
        pl.DataFrame(rows).write_parquet(path)
    names = {"c0": "item", "c1": "label", "c2": "score", "c3": "judge"}
    assert _same(path, names, "c2", ("c3",))[0] == "read"
    assert _same(path, names, "c0")[0] == "refused"
