"""A batch parsed with the kept columns' schema only is the batch parsed whole (issue 28, session 46).

:func:`gatestats.records.batched.read_checked_jsonl` parsed every batch with the whole contract's schema
and then kept the columns asked for; it now gives polars the kept columns' schema, so the other fields
are skipped (a 32 MiB batch of runner lines: 0.39 -> 0.17 s). The replaced read is kept below as the
oracle: on random record files (fields set, null, absent, nested, constant in stretches; blank lines, a
last line without its newline), random column sets and batch sizes, both give the same frame: the same
columns, types, values, sorted flags and chunks, compacted or not. A file of one batch read without
compaction is now the parsed frame itself (nothing compacted and joined back): the same comparison holds it.
"""

from __future__ import annotations

import hashlib
import io
import random
from pathlib import Path
from typing import Any

import polars as pl

from gatestats.records import batched
from gatestats.records.batched import read_checked_jsonl
from gatestats.records.contract import POLARS_SCHEMA, RECORD_KEY
from gatestats.records.runset import RUN_SET_COLUMNS
from gatestats_runner.runsets import encode_record
from tests.conftest import make_record


def old_read_checked_jsonl(
    path: Path, *, schema: dict[str, Any], columns: Any, digest: str, compact: bool, batch_bytes: int
) -> pl.DataFrame:
    """The read at 1646db0 (every batch parsed with the whole schema, then the kept columns selected)."""
    kept_schema = {n: t for n, t in schema.items() if columns is None or n in columns}
    hasher = hashlib.sha256()
    batches: list[dict[str, Any]] = []
    with path.open("rb") as handle:
        for chunk in batched._batches(handle, batch_bytes, hasher):
            if not chunk.strip():
                continue
            frame = pl.read_ndjson(io.BytesIO(chunk), schema=dict(schema))
            batches.append(batched._compacted(frame.select(list(kept_schema))))
            del frame
    assert "sha256:" + hasher.hexdigest() == digest
    if not batches:
        return pl.DataFrame(schema=kept_schema)
    return batched._joined(batches, kept_schema, compact=compact)


def _record(rng: random.Random, i: int) -> dict[str, Any]:
    stretch = i // rng.choice([3, 7, 50])  # values constant over stretches of records, then changing
    record = make_record(
        record_id=f"r-{i}",
        run_set_id=rng.choice(["set-1", "set-1", f"set-{stretch % 3}"]),
        system=rng.choice(["baseline", f"s-{stretch % 2}"]),
        case_id=f"c-{i // 4}",
        trial=i % 4,
        outcome=rng.choice(["passed", "failed"]),
    )
    optional: dict[str, Any] = {
        "machine_seconds": lambda: rng.choice([1.5, 0.0, -0.0, 1e-300, rng.random() * 100]),
        "cost_usd": lambda: rng.choice([0.25, 0.25 * stretch, None]),
        "case_version": lambda: rng.choice(["v1", f"v{stretch}", None]),
        "system_digest": lambda: f"sd-{stretch % 2}",
        "candidate_digest": lambda: rng.choice(["k1", None]),
        "model_id": lambda: "m-1",
        "failed_check": lambda: "t::x",
        "accepted": lambda: rng.choice([True, False, None]),
        "slices": lambda: rng.choice([["billing", "é"], [], None]),
        "stdout_path": lambda: f"ev/{i}/stdout",
        "stdout_digest": lambda: "sha256:" + "0" * 64,
        "graders": lambda: [{"name": "tests", "kind": "code", "verdict": rng.choice(["passed", "failed"])}],
        "artifacts": lambda: [{"path": f"ev/{i}/a.txt", "digest": "sha256:" + "1" * 64, "bytes": i}],
    }
    for name, value in optional.items():
        if rng.random() < (0.9 if stretch % 2 else 0.2) and (name != "failed_check" or record["outcome"] == "failed"):
            record[name] = value()
    return record


def _file(tmp_path: Path, rng: random.Random, index: int) -> tuple[Path, str, list[bytes]]:
    lines = [encode_record(_record(rng, i)) for i in range(rng.choice([1, 5, 30, 80]))]
    if rng.random() < 0.3:
        lines.insert(rng.randrange(len(lines) + 1), b"  \n")
    data = b"".join(lines)
    if rng.random() < 0.2:
        data = data.rstrip(b"\n")
    path = tmp_path / f"{index}.jsonl"
    path.write_bytes(data)
    return path, "sha256:" + hashlib.sha256(data).hexdigest(), lines


def _signature(frame: pl.DataFrame) -> list[tuple[str, object, object, int, list[Any]]]:
    return [
        (c, s.dtype, s.flags, s.n_chunks(), s.to_list()) for c, s in ((c, frame.get_column(c)) for c in frame.columns)
    ]


def test_a_batch_parsed_with_the_kept_columns_is_the_batch_parsed_whole(tmp_path: Path) -> None:
    rng = random.Random(20261206)
    names = list(POLARS_SCHEMA)
    column_sets: list[Any] = [None, tuple(dict.fromkeys((*RECORD_KEY, *RUN_SET_COLUMNS))), ("schema_version",)]
    compared = 0
    for index in range(40):
        path, digest, lines = _file(tmp_path, rng, index)
        line = max(len(x) for x in lines)
        sizes = [line * 3 - 5, line * 11, 1 << 30] + ([1] if len(lines) <= 6 else [])  # a batch a line: small files
        for n, columns in enumerate([*column_sets, tuple(rng.sample(names, rng.randint(1, 12)))]):
            compact = n > 0 and rng.random() < 0.5  # every file read whole in one batch, not compact, at least once
            batch_bytes = 1 << 30 if n == 0 else rng.choice(sizes)
            options = {"schema": POLARS_SCHEMA, "columns": columns, "digest": digest, "compact": compact}
            new = read_checked_jsonl(path, **options, batch_bytes=batch_bytes)
            old = old_read_checked_jsonl(path, **options, batch_bytes=batch_bytes)
            assert new.schema == old.schema
            assert new.equals(old)
            assert _signature(new) == _signature(old), (index, columns, compact, batch_bytes)
            compared += 1
    assert compared == 160
