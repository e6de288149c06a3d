"""The batched, compacted columnar read gives the frame the whole read gave (issue 28, item 5).

:func:`gatestats.records.batched.read_checked_jsonl` parses a checked JSONL file in batches of whole
lines and keeps a column null (or of one value) on every record of a batch as that value once.
These tests compare it with ``polars.read_ndjson`` of the whole file, column for column, at batch
sizes from one line to the whole file (columns null, constant or set in some batches only, blank
lines, a last line without newline), and read run sets in small batches: every problem (an edited
line, a torn last line, a resealed edit, a record of another case version, evidence outside the
run set) is still named with its line when it sits in a later batch, and the gate's verdict on
records read in batches (a batch boundary inside a retried trial) is the verdict on records read
whole.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.gate import evaluate_gate, load_policy, load_record_set, recordset
from gatestats.gate.verdict import verdict_file_bytes
from gatestats.records import batched, read_run_set
from gatestats.records.batched import read_checked_jsonl
from gatestats.records.contract import POLARS_SCHEMA
from gatestats.records.runset import RUN_SET_COLUMNS
from gatestats_runner.runsets import encode_record
from tests.conftest import make_record
from tests.gate.factory import policy_text, rewrite_records, write_run_set


def _records() -> list[dict[str, Any]]:
    """Records whose columns are null in some stretches, constant in others, and varied in others."""
    out = []
    for i in range(40):
        record = make_record(record_id=f"r-{i}", case_id=f"c-{i // 4}", trial=i % 4, machine_seconds=1.5)
        if 10 <= i < 20:
            record.update(cost_usd=0.25 * i, model_id="m-1", outcome="failed", failed_check="t::x")
        if i >= 30:
            record.update(slices=["billing", "é"], system_digest=f"sd-{i % 2}", accepted=i % 2 == 0)
        if i == 35:
            record.update(graders=[{"name": "tests", "kind": "code", "verdict": "passed"}], case_version="v2")
        out.append(record)
    return out


def _write(path: Path, records: list[dict[str, Any]], *, blank: bool = False, last_newline: bool = True) -> str:
    lines = [encode_record(r) for r in records]
    if blank:
        lines.insert(7, b"\n")
        lines.insert(21, b"   \n")
    data = b"".join(lines)
    path.write_bytes(data if last_newline else data.rstrip(b"\n"))
    return "sha256:" + hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("batch_bytes", [1, 150, 700, 2_000, 1 << 30])
@pytest.mark.parametrize(("blank", "last_newline"), [(False, True), (True, True), (False, False)])
def test_every_column_is_what_the_whole_read_gives(
    tmp_path: Path, batch_bytes: int, blank: bool, last_newline: bool
) -> None:
    path = tmp_path / "r.jsonl"
    digest = _write(path, _records(), blank=blank, last_newline=last_newline)
    whole = pl.read_ndjson(path, schema=POLARS_SCHEMA)
    read = read_checked_jsonl(path, schema=POLARS_SCHEMA, columns=None, digest=digest, batch_bytes=batch_bytes)
    assert read.schema == whole.schema
    assert read.equals(whole)
    for name in POLARS_SCHEMA:  # column by column, nulls where nulls were
        assert read.get_column(name).to_list() == whole.get_column(name).to_list(), name
    assert set(read.n_chunks("all")) == {1}


@pytest.mark.parametrize("columns", [("case_id", "trial", "cost_usd"), ("schema_version",), ("slices", "graders")])
def test_the_columns_kept_are_in_contract_order(tmp_path: Path, columns: tuple[str, ...]) -> None:
    path = tmp_path / "r.jsonl"
    digest = _write(path, _records())
    whole = pl.read_ndjson(path, schema=POLARS_SCHEMA)
    read = read_checked_jsonl(path, schema=POLARS_SCHEMA, columns=columns, digest=digest, batch_bytes=300)
    assert read.equals(whole.select([c for c in POLARS_SCHEMA if c in columns]))
    assert read.height == whole.height


def test_bytes_other_than_those_checked_are_refused(tmp_path: Path) -> None:
    path = tmp_path / "r.jsonl"
    _write(path, _records())
    with pytest.raises(RecordFileError, match="changed while it was being read"):
        read_checked_jsonl(path, schema=POLARS_SCHEMA, columns=None, digest="sha256:" + "0" * 64, batch_bytes=500)


@pytest.fixture
def small_batches(monkeypatch: pytest.MonkeyPatch) -> None:
    """About three records a batch: every run set below is read in many batches."""
    monkeypatch.setattr(batched, "BATCH_BYTES", 1200)


def _run_set(tmp_path: Path, n_cases: int = 30) -> Path:
    outcomes = {f"case-{i:03d}": ["passed", "failed", "passed"] for i in range(n_cases)}
    return write_run_set(tmp_path / "rs", system="candidate", outcomes=outcomes, retries={("case-004", 1): 2})


def _lines(root: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (root / "records.jsonl").read_text(encoding="utf-8").splitlines()]


@pytest.mark.usefixtures("small_batches")
def test_a_run_set_read_in_batches_is_the_run_set_read_whole(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _run_set(tmp_path)
    small, info = read_run_set(root)
    kept, _ = read_run_set(root, columns=("case_id", "outcome"))
    monkeypatch.setattr(batched, "BATCH_BYTES", 1 << 30)
    whole, _ = read_run_set(root)
    assert small.equals(whole)
    assert small.schema == whole.schema
    assert kept.equals(whole.select("case_id", "outcome"))
    assert info.n_records == whole.height == 30 * 3 + 2


@pytest.mark.usefixtures("small_batches")
def test_an_edited_line_in_a_later_batch_is_named_with_its_line(tmp_path: Path) -> None:
    root = _run_set(tmp_path)
    path = root / "records.jsonl"
    lines = path.read_bytes().splitlines(keepends=True)
    assert b'"outcome":"passed"' in lines[59]
    lines[59] = lines[59].replace(b'"outcome":"passed"', b'"outcome":"failed"')
    path.write_bytes(b"".join(lines))
    with pytest.raises(RecordFileError) as caught:
        read_run_set(root)
    assert [(p.line, p.field) for p in caught.value.problems][:1] == [(60, "checksum")]


@pytest.mark.usefixtures("small_batches")
def test_a_torn_last_line_is_named(tmp_path: Path) -> None:
    root = _run_set(tmp_path)
    path = root / "records.jsonl"
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])
    with pytest.raises(RecordFileError) as caught:
        read_run_set(root)
    assert any(p.line == 92 and "torn" in p.message for p in caught.value.problems)


@pytest.mark.usefixtures("small_batches")
def test_a_resealed_edit_is_refused_by_the_seal(tmp_path: Path) -> None:
    root = _run_set(tmp_path)
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    rows = _lines(root)
    rows[70]["outcome"] = "passed" if rows[70]["outcome"] == "failed" else "failed"
    rows[70].pop("checksum")
    rewrite_records(root, rows)  # checksums recomputed and resealed...
    resealed = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    resealed["records_seal"] = manifest["records_seal"]  # ...but the manifest keeps the seal of the run
    (root / "manifest.json").write_text(json.dumps(resealed), encoding="utf-8")
    with pytest.raises(RecordFileError) as caught:
        read_run_set(root)
    assert [p.field for p in caught.value.problems] == ["records_seal"]


@pytest.mark.usefixtures("small_batches")
@pytest.mark.parametrize(
    ("edit", "field"),
    [
        ({"case_version": "v-other"}, "case_version"),
        ({"stdout_path": "../../etc/passwd", "stdout_digest": "sha256:" + "0" * 64}, "stdout_path"),
    ],
)
def test_a_record_of_a_later_batch_that_is_not_the_run_sets_is_named_with_its_line(
    tmp_path: Path, edit: dict[str, Any], field: str
) -> None:
    root = _run_set(tmp_path)
    rows = _lines(root)
    for row in rows:
        row.pop("checksum")
    rows[80].update(edit)
    rewrite_records(root, rows)
    with pytest.raises(RecordFileError) as caught:
        read_run_set(root)
    assert [(p.line, p.field) for p in caught.value.problems] == [(81, field)]


def test_the_run_set_checks_read_columns_the_reader_keeps() -> None:
    assert set(RUN_SET_COLUMNS) <= set(POLARS_SCHEMA)


def test_the_verdict_on_records_read_in_batches_is_the_verdict_on_records_read_whole(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rules = """rules = [
    { name = "floor", metric = "pass_rate", threshold = 0.5 },
    { name = "not worse", metric = "pass_rate", test = "paired", margin = 0.05 },
]"""
    (tmp_path / "policy.toml").write_text(policy_text(k=3, min_cases=10, min_trials=3, extra=rules), encoding="utf-8")
    policy = load_policy(tmp_path / "policy.toml")
    rng = np.random.default_rng(2836)
    sides = {}
    for system, p in (("baseline", 0.6), ("candidate", 0.7)):
        outcomes = {f"case-{i:03d}": ["passed" if u < p else "failed" for u in rng.random(3)] for i in range(40)}
        retries = {(f"case-{i:03d}", i % 3): 1 + i % 2 for i in range(0, 40, 3)}  # retried trials across batches
        sides[system] = write_run_set(
            tmp_path / system,
            system=system,
            outcomes=outcomes,
            policy=policy if system == "candidate" else None,
            retries=retries,
        )
    verdicts = []
    for size in (700, 1900, 1 << 30):  # boundaries inside retried trials; one batch
        monkeypatch.setattr(batched, "BATCH_BYTES", size)
        base, cand = load_record_set(sides["baseline"]), load_record_set(sides["candidate"])
        verdicts.append(verdict_file_bytes(evaluate_gate(policy, base, cand, now="2026-12-04T00:00:00Z").to_dict()))
    assert verdicts[0] == verdicts[1] == verdicts[2]


def test_no_column_is_flagged_sorted_where_the_whole_read_is_not(tmp_path: Path) -> None:
    # case_version one value in every batch, a different one from batch to batch, in ascending order:
    # built with polars.repeat its pieces (and their concatenation) would be flagged sorted
    records = [make_record(record_id=f"r-{i}", case_id=f"c-{i}", case_version=f"v{i // 3}") for i in range(12)]
    path = tmp_path / "r.jsonl"
    digest = _write(path, records)
    whole = pl.read_ndjson(path, schema=POLARS_SCHEMA)
    one_line = len(encode_record(records[0]))
    read = read_checked_jsonl(path, schema=POLARS_SCHEMA, columns=None, digest=digest, batch_bytes=3 * one_line - 5)
    assert read.equals(whole)
    for name in ("case_version", "case_id", "trial"):
        assert read.get_column(name).flags == whole.get_column(name).flags, name


def _signature(frame: pl.DataFrame) -> list[tuple[str, object, object, int]]:
    """Each column's name, type, sorted flags and chunks: what decides how polars groups and sums it."""
    return [(c, s.dtype, s.flags, s.n_chunks()) for c, s in ((c, frame.get_column(c)) for c in frame.columns)]


@pytest.mark.parametrize("batch_bytes", [900, 1 << 30])
@pytest.mark.parametrize(
    "costs",
    [
        lambda i: {"cost_usd": None, "cost_model_usd": 0.25, "cost_tool_usd": 0.01 * (i % 5)},  # one value; varied
        lambda i: {"cost_usd": -0.0 if i % 2 else 0.0},  # two signs of zero: one value as n_unique counts them
        lambda i: {"cost_usd": 0.5 if i < 30 else None},  # one value, partly null
        lambda i: {"cost_usd": 1e-300 * (i == 7)},  # one record apart
    ],
)
def test_the_gate_compacts_a_run_set_once_as_it_did_twice(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, batch_bytes: int, costs: Any
) -> None:
    """``load_record_set`` of a run set is the reader's compaction alone: the frame the second pass gave.

    The gate compacted the read records again (``recordset._compact``: a column of one value, floats
    included, held once); the reader now holds a float column of one value once too. Same values,
    same flags (a sorted flag changes the last bit of a grouped float sum), same float sums.
    """
    monkeypatch.setattr(batched, "BATCH_BYTES", batch_bytes)
    root = write_run_set(tmp_path / "rs", system="candidate", outcomes={f"c-{i}": ["passed"] * 4 for i in range(12)})
    records = _lines(root)
    for i, record in enumerate(records):
        record.pop("checksum", None)
        record.update(machine_seconds=1.5, **costs(i))
    rewrite_records(root, records)
    once = load_record_set(root).records
    twice = recordset._compact(once.clone())
    assert once.equals(twice)
    assert _signature(once) == _signature(twice)
    assert once.estimated_size() == twice.estimated_size()  # nothing left for a second pass to hold once
    floats = [c for c, t in once.schema.items() if t == pl.Float64]
    sums = [f.group_by("case_id").agg(pl.col(floats).sum()).sort("case_id") for f in (once, twice)]
    for name in floats:
        assert sums[0].get_column(name).to_numpy().tobytes() == sums[1].get_column(name).to_numpy().tobytes()


def test_a_float_column_of_one_value_is_held_once(tmp_path: Path) -> None:
    records = [
        make_record(record_id=f"r-{i}", case_id=f"c-{i // 4}", trial=i % 4, machine_seconds=1.5) for i in range(400)
    ]
    path = tmp_path / "r.jsonl"
    digest = _write(path, records)
    kept = read_checked_jsonl(path, schema=POLARS_SCHEMA, columns=None, digest=digest, compact=True, batch_bytes=2_000)
    held = kept.estimated_size()  # before any read of the column (a read materialises it)
    spelled = kept.with_columns(pl.Series("machine_seconds", [1.5] * 400)).estimated_size()
    assert spelled - held >= 399 * 8  # the 400 floats are held as one
    full = read_checked_jsonl(path, schema=POLARS_SCHEMA, columns=None, digest=digest, batch_bytes=2_000)
    assert kept.equals(full)
    assert batched._one_float(pl.Series([0.0, -0.0]))  # one value as n_unique counts them (the second pass's rule)
    assert not batched._one_float(pl.Series([0.0, 1e-300]))
    assert batched._one_float(pl.Series([float("nan")] * 3))
    assert not batched._one_float(pl.Series([1.0, None]))
    assert not batched._one_float(pl.Series([], dtype=pl.Float64))
