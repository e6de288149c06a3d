"""The reader's own bookkeeping: a run set's manifest parsed once per read; row counts that must agree."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.records import io, load_record_files, read_record_file, read_run_set, scan_records
from gatestats.records.lines import JsonlCheck, check_jsonl
from tests.gate.factory import write_run_set


@pytest.fixture
def run_set(tmp_path: Path) -> Path:
    return write_run_set(tmp_path / "run", system="s", outcomes={"a": ["passed", "failed"], "b": ["passed"]})


@pytest.mark.parametrize(
    "read",
    [
        read_run_set,
        lambda root: load_record_files([root]),
        lambda root: read_record_file(root / "records.jsonl"),
        lambda root: read_record_file(root / "records.jsonl", columns=("outcome",)),
        lambda root: scan_records(root / "records.jsonl").collect(),
    ],
    ids=["read_run_set", "load_record_files", "read_record_file", "read_record_file columns", "scan_records"],
)
def test_the_manifest_is_parsed_once_per_read(
    run_set: Path, monkeypatch: pytest.MonkeyPatch, read: Callable[[Path], Any]
) -> None:
    calls: list[Path] = []
    real = io.read_run_set_manifest

    def counted(path: Path) -> dict[str, Any]:
        calls.append(path)
        return real(path)

    monkeypatch.setattr(io, "read_run_set_manifest", counted)
    read(run_set)
    assert calls == [run_set / "manifest.json"]


def _miscounting(monkeypatch: pytest.MonkeyPatch, extra: int) -> None:
    def check(path: Path, **options: Any) -> JsonlCheck:
        found = check_jsonl(path, **options)
        return dataclasses.replace(found, n_records=found.n_records + extra)

    monkeypatch.setattr(io, "check_jsonl", check)


@pytest.mark.parametrize("extra", [1, -1])
@pytest.mark.parametrize("columns", [None, ("outcome",)], ids=["whole", "streaming"])
@pytest.mark.parametrize("proved", [False, True], ids=["line pass", "proved"])
def test_a_columnar_read_that_disagrees_with_the_line_pass_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, extra: int, columns: tuple[str, ...] | None, proved: bool
) -> None:
    from gatestats.records import lines
    from gatestats_runner.runsets import encode_record
    from tests.conftest import make_record

    path = tmp_path / "r.jsonl"
    if proved:  # runner lines, every block proved: the kept columns come from the proof, not polars
        monkeypatch.setattr(lines, "_PROVE_FROM_LINES", 0)
        path.write_bytes(b"".join(encode_record(make_record(trial=t)) for t in range(3)))
    else:
        pl.DataFrame([make_record(trial=t) for t in range(3)]).write_ndjson(path)
    assert read_record_file(path, columns=columns)[0].height == 3
    _miscounting(monkeypatch, extra)
    with pytest.raises(RecordFileError) as caught:
        read_record_file(path, columns=columns)
    assert str(caught.value) == (
        f"{path}: field '<file>': the columnar read gave 3 records where the check counted {3 + extra}; "
        "nothing was read"
    )


@pytest.mark.parametrize(
    ("edit", "field", "why"),
    [
        (lambda m: m.pop("run_set_id"), "run_set_id", "required"),
        (lambda m: m.update(run_set_id=""), "run_set_id", "required"),
        (lambda m: m.update(policy_registered_at="2026-11-01\x00T00:00:00Z"), "policy_registered_at", "RFC 3339"),
        (lambda m: m.update(imported_at="2024-02-30T00:00:00Z"), "imported_at", "RFC 3339"),
    ],
    ids=["no run_set_id", "empty run_set_id", "control character in a time", "no such day"],
)
def test_a_manifest_without_its_id_or_with_a_broken_time_is_refused_naming_the_field(
    run_set: Path, edit: Callable[[dict[str, Any]], Any], field: str, why: str
) -> None:
    import json

    manifest = json.loads((run_set / "manifest.json").read_text())
    edit(manifest)
    (run_set / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RecordFileError, match=rf"manifest\.json.*field '{field}'.*{why}"):
        read_run_set(run_set)
