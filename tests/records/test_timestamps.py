"""Timestamps are checked on the calendar in every format, exactly as the JSONL line pass checks them.

Before issue 24, Parquet (both the whole-frame and the streaming path) and frames given to
``validate_records`` matched the RFC 3339 pattern only: ``2024-02-30T00:00:00Z`` was refused in
JSONL and accepted in Parquet.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.records import POLARS_SCHEMA, read_record_file, validate_records
from gatestats.records.contract import NESTED_FIELDS, rfc3339_timestamp
from gatestats_runner.contract import _is_datetime
from tests.conftest import make_record

REFUSED = [
    "2024-02-30T00:00:00Z",  # February has no 30th
    "2023-02-29T00:00:00Z",  # 2023 is not a leap year
    "1900-02-29T00:00:00+01:00",  # a century year that is not divisible by 400
    "2024-04-31T12:00:00Z",
    "0000-01-01T00:00:00Z",  # year 0 is not in datetime's range
    "2024-13-01T00:00:00Z",
    "2024-01-01T24:00:00Z",
    "2024-01-01T00:00:00",  # no offset
]
ACCEPTED = ["2024-02-29T00:00:00Z", "2000-02-29T00:00:00-05:30", "2024-06-30T23:59:60Z", "0001-01-01t00:00:00.5z"]


def _write(directory: Path, kind: str, stamp: str) -> Path:
    record = make_record(started_at=stamp)
    path = directory / f"r.{kind}"
    if kind == "jsonl":
        path.write_text(json.dumps(record) + "\n", encoding="utf-8")
        return path
    frame = pl.DataFrame([record], schema=POLARS_SCHEMA)
    if kind == "parquet":
        frame.write_parquet(path)
    else:
        frame.select(c for c in frame.columns if c not in NESTED_FIELDS and record.get(c) is not None).write_csv(path)
    return path


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "csv"])
@pytest.mark.parametrize("columns", [None, ("outcome",)], ids=["whole", "streaming"])
@pytest.mark.parametrize("stamp", REFUSED)
def test_an_impossible_timestamp_is_refused_in_every_format(
    tmp_path: Path, kind: str, columns: object, stamp: str
) -> None:
    path = _write(tmp_path, kind, stamp)
    with pytest.raises(RecordFileError, match="field 'started_at': expected an RFC 3339 timestamp with offset"):
        read_record_file(path, columns=columns)  # type: ignore[arg-type]


@pytest.mark.parametrize("kind", ["jsonl", "parquet", "csv"])
@pytest.mark.parametrize("stamp", ACCEPTED)
def test_real_timestamps_are_accepted_in_every_format(tmp_path: Path, kind: str, stamp: str) -> None:
    frame, _ = read_record_file(_write(tmp_path, kind, stamp))
    assert frame["started_at"].to_list() == [stamp]


def test_a_frame_with_an_impossible_timestamp_is_refused() -> None:
    frame = pl.DataFrame([make_record(ended_at="2024-02-30T00:00:00Z")], schema=POLARS_SCHEMA)
    with pytest.raises(RecordFileError, match="field 'ended_at': expected an RFC 3339 timestamp with offset"):
        validate_records(frame)


def test_the_expression_agrees_with_the_line_pass_on_random_stamps() -> None:
    """2000 stamps near the calendar's edges (seed 24): the polars rule and ``datetime.fromisoformat`` agree."""
    rng = random.Random(24)
    stamps = [
        f"{rng.choice([0, 1, 1900, 2000, 2023, 2024, 9999]):04d}-{rng.randint(0, 13):02d}-{rng.randint(0, 32):02d}"
        f"{rng.choice('Tt')}{rng.randint(0, 24):02d}:{rng.randint(0, 60):02d}:{rng.randint(0, 61):02d}"
        f"{rng.choice(['', '.5', '.123456789'])}{rng.choice(['Z', 'z', '+00:00', '-23:59', '+24:00', ''])}"
        for _ in range(2000)
    ]
    got = pl.DataFrame({"t": stamps}).select(rfc3339_timestamp(pl.col("t")))["t"].to_list()
    assert got == [_is_datetime(s) for s in stamps]
    assert 100 < sum(got) < 1900  # both answers are well represented
