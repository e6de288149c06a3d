"""A record's evidence read under the gate's containment rule (gatestats.records.read_record_evidence)."""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.records import POLARS_SCHEMA, evidence_file, read_record_evidence
from gatestats.records.runset import run_set_problems
from gatestats_runner.digests import digest_bytes


@pytest.fixture
def run_set(tmp_path: Path) -> Path:
    root = tmp_path / "run"
    (root / "trials" / "t0").mkdir(parents=True)
    (root / "trials" / "t0" / "stdout").write_bytes(b"hello\n")
    (root / "records.jsonl").write_text('\n{"record_id": "r"}\n', encoding="utf-8")  # the record is on line 2
    (tmp_path / "secret.txt").write_bytes(b"TOP-SECRET")
    return root


def _record(path: Any, digest: Any = None, **extra: Any) -> dict[str, Any]:
    return {"stdout_path": path, "stdout_digest": digest, "stderr_path": None, "stderr_digest": None, **extra}


def test_a_contained_file_with_its_digest_is_read(run_set: Path) -> None:
    record = _record("trials/t0/stdout", digest_bytes(b"hello\n"))
    assert read_record_evidence(run_set, record, "stdout_path") == b"hello\n"
    assert read_record_evidence(run_set, _record("trials/t0/stdout"), "stdout_path") == b"hello\n"  # no digest given


def test_a_field_the_record_leaves_null_is_none(run_set: Path) -> None:
    assert read_record_evidence(run_set, _record("trials/t0/stdout"), "stderr_path") is None
    assert read_record_evidence(run_set, _record(None), "artifacts[3].path") is None


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda root: str(root.parent / "secret.txt"), "is absolute: evidence must be inside the run set"),
        (lambda root: "trials/../../secret.txt", "climbs out with '..'"),
        (lambda root: "trials/t0/../stdout", "climbs out with '..'"),  # refused even when it would land inside
        (lambda root: "trials/t0/std\x00out", "holds a NUL byte"),
        (lambda root: "", "expected a non-empty path relative to the run set"),
        (lambda root: "trials/t0/nothing", "evidence file trials/t0/nothing is missing"),
    ],
)
def test_each_path_out_or_nowhere_is_refused_naming_file_line_and_field(run_set: Path, make: Any, message: str) -> None:
    with pytest.raises(RecordFileError) as caught:
        read_record_evidence(run_set, _record(make(run_set)), "stdout_path", row=0)
    assert str(caught.value).startswith(f"{run_set / 'records.jsonl'}:2: field 'stdout_path': evidence ")
    assert message in str(caught.value)
    assert "TOP-SECRET" not in str(caught.value)


def test_a_symlink_out_is_refused_and_one_inside_is_followed(run_set: Path) -> None:
    (run_set / "trials" / "out").symlink_to(run_set.parent / "secret.txt")
    with pytest.raises(RecordFileError, match="points outside the run set"):
        read_record_evidence(run_set, _record("trials/out"), "stdout_path")
    (run_set / "trials" / "dir").symlink_to(run_set.parent, target_is_directory=True)
    with pytest.raises(RecordFileError, match="points outside the run set"):
        read_record_evidence(run_set, _record("trials/dir/secret.txt"), "stdout_path")
    (run_set / "trials" / "in").symlink_to(run_set / "trials" / "t0" / "stdout")
    assert read_record_evidence(run_set, _record("trials/in"), "stdout_path") == b"hello\n"


def test_bytes_that_are_not_the_records_are_refused_on_the_digest_field(run_set: Path) -> None:
    record = _record("trials/t0/stdout", digest_bytes(b"other"))
    with pytest.raises(RecordFileError, match="field 'stdout_digest': evidence file trials/t0/stdout was changed"):
        read_record_evidence(run_set, record, "stdout_path")


def test_a_fifo_or_a_directory_is_not_read(run_set: Path) -> None:
    os.mkfifo(run_set / "trials" / "fifo")
    for rel in ("trials/fifo", "trials/t0"):
        with pytest.raises(RecordFileError, match=re.escape("is missing (or is not a regular file)")):
            read_record_evidence(run_set, _record(rel), "stdout_path")


def test_artifacts_are_read_by_index(run_set: Path) -> None:
    record = _record(None, artifacts=[{"path": "trials/t0/stdout", "digest": digest_bytes(b"hello\n")}])
    assert read_record_evidence(run_set, record, "artifacts[0].path") == b"hello\n"
    record = _record(None, artifacts=[{"path": "/etc/passwd", "digest": None}])
    with pytest.raises(
        RecordFileError, match=re.escape("field 'artifacts[0].path': evidence path '/etc/passwd' is absolute")
    ):
        read_record_evidence(run_set, record, "artifacts[0].path")


@pytest.mark.parametrize("field", ["stdout_digest", "outcome", "artifacts[-1].path", "artifacts[01].path"])
def test_a_field_that_is_not_an_evidence_path_is_a_programming_error(run_set: Path, field: str) -> None:
    with pytest.raises(ValueError, match="expected stdout_path, stderr_path or artifacts"):
        read_record_evidence(run_set, _record("trials/t0/stdout"), field)


def test_evidence_file_is_the_rule_alone(run_set: Path) -> None:
    assert evidence_file(run_set, "trials/t0/stdout") == (run_set / "trials" / "t0" / "stdout").resolve()
    with pytest.raises(ValueError, match="climbs out"):
        evidence_file(run_set, "../secret.txt")


@pytest.mark.parametrize("origin", ["runner", "import"])
def test_the_run_set_check_applies_containment_to_every_origin(run_set: Path, origin: str) -> None:
    from tests.conftest import make_record

    records = pl.DataFrame([make_record(stdout_path="/etc/passwd")], schema=POLARS_SCHEMA)
    manifest = {"format": "gatestats-run-set/1", "origin": origin}
    problems = run_set_problems(run_set, manifest, records, size=0, digest="", checksums="verified")
    assert [(p.row, p.field, p.message) for p in problems] == [
        (0, "stdout_path", "evidence path '/etc/passwd' is absolute: evidence must be inside the run set")
    ]
