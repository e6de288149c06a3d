"""The observation log WATCH/: registered once, batches written whole by the runner, read through the one door."""

from __future__ import annotations

import json
import multiprocessing
import re
from pathlib import Path

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.gate import VerdictFileError
from gatestats.rollout.log import (
    WATCH_MANIFEST,
    WatchError,
    add_batch,
    check_plan,
    init_log,
    read_log,
    read_watch_manifest,
)
from gatestats.rollout.plan import PlanError, load_plan
from tests.rollout.conftest import observations
from tests.rollout.writer import write_shadow_batch


@pytest.fixture
def watch(tmp_path: Path, plan_path: Path, verdict_path: Path) -> Path:
    init_log(tmp_path / "WATCH", plan_path=plan_path, verdict_path=verdict_path)
    return tmp_path / "WATCH"


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_init_registers_release_verdict_and_plan_once(tmp_path: Path, plan_path: Path, verdict_path: Path) -> None:
    manifest = init_log(tmp_path / "WATCH", plan_path=plan_path, verdict_path=verdict_path)
    assert manifest.release == "candidate"
    assert manifest.plan_digest == load_plan(plan_path).digest
    assert manifest.verdict_digest == json.loads(verdict_path.read_text())["digest"]
    assert read_watch_manifest(tmp_path / "WATCH") == manifest
    assert sorted(p.name for p in (tmp_path / "WATCH").iterdir()) == ["batches", "watch.json"]
    with pytest.raises(WatchError, match="exists; a watch is created once"):
        init_log(tmp_path / "WATCH", plan_path=plan_path, verdict_path=verdict_path)
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []  # no build left behind


def test_init_refuses_a_plan_of_another_release_and_writes_nothing(
    tmp_path: Path, plan_path: Path, verdict_path: Path
) -> None:
    plan_path.write_text(plan_path.read_text().replace('release = "candidate"', 'release = "other"'))
    with pytest.raises(WatchError, match=r"key 'rollout\.release': the plan names release 'other'"):
        init_log(tmp_path / "WATCH", plan_path=plan_path, verdict_path=verdict_path)
    assert not (tmp_path / "WATCH").exists()
    with pytest.raises(VerdictFileError):
        init_log(tmp_path / "W2", plan_path=plan_path, verdict_path=tmp_path / "none.json")
    plan_path.write_text("[rollout]\n")
    with pytest.raises(PlanError):
        init_log(tmp_path / "W3", plan_path=plan_path, verdict_path=verdict_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["rollout.toml"]


def test_an_edited_manifest_is_refused(watch: Path) -> None:
    path = watch / WATCH_MANIFEST
    path.write_text(path.read_text().replace('"release":"candidate"', '"release":"other"'))
    with pytest.raises(WatchError, match="edited after `watch init`"):
        read_log(watch)


def test_batches_are_numbered_and_read_back_in_order(watch: Path, plan_path: Path) -> None:
    first = add_batch(watch, observations(5), stage="shadow", plan_path=plan_path)
    second = add_batch(watch, observations(3, start=5, cohort=None), stage="pilot", plan_path=plan_path)
    assert (first.number, second.number) == (1, 2)
    assert first.path == watch / "batches" / "0001"
    assert (first.stage, first.n_records) == ("shadow", 5)
    log = read_log(watch)
    assert [b.number for b in log.batches] == [1, 2]
    assert [b.stage for b in log.batches] == ["shadow", "pilot"]
    assert log.records.height == 8
    assert log.records.get_column("batch").to_list() == [1] * 5 + [2] * 3
    assert log.records.get_column("stage").to_list() == ["shadow"] * 5 + ["pilot"] * 3
    assert log.records.get_column("layer").to_list() == ["shadow"] * 5 + ["live"] * 3
    assert log.records.get_column("written_at").to_list()[0] == log.batches[0].written_at != ""
    assert log.records.schema["accepted"] == pl.Boolean()
    manifest = json.loads((first.path / "manifest.json").read_text())
    assert manifest["origin"] == "import"
    assert manifest["policy_digest"] == load_plan(plan_path).digest


def test_an_empty_log_reads_as_no_records(watch: Path) -> None:
    log = read_log(watch)
    assert log.batches == ()
    assert log.records.height == 0
    assert {"batch", "written_at", "stage"} <= set(log.records.columns)


def test_a_plan_edited_after_registration_is_refused_naming_both_digests(watch: Path, plan_path: Path) -> None:
    registered = load_plan(plan_path).digest
    plan_path.write_text(plan_path.read_text().replace("delta = 0.1", "delta = 0.2"))
    with pytest.raises(WatchError) as caught:
        add_batch(watch, observations(2), stage="shadow", plan_path=plan_path)
    assert registered in str(caught.value)
    assert load_plan(plan_path).digest in str(caught.value)
    assert "not edited after its registration" in str(caught.value)
    with pytest.raises(WatchError):
        check_plan(watch, plan_path)
    assert list((watch / "batches").iterdir()) == []


@pytest.mark.parametrize(
    ("stage", "fields", "message"),
    [
        ("production", {}, "--stage: 'production' is not a stage of the plan"),
        ("canary", {}, "--stage: 'canary' is not a stage of the plan"),
        ("shadow", {"system": "other-release"}, "field 'system': release 'other-release' is not the watched"),
        ("shadow", {"stage": "pilot"}, "field 'stage': 'pilot' in a batch of stage 'shadow'"),
        ("shadow", {"cohort": "everyone"}, "field 'cohort': 'everyone' is not a cohort of stage 'shadow'"),
        ("shadow", {"layer": "replay"}, "field 'layer': 'replay' is the golden suite's layer"),
        ("shadow", {"record_id": "a\nb"}, "field 'record_id': control character U+000A"),
        ("shadow", {"case_id": "x\x1b[31m"}, "field 'case_id': control character U+001B"),
        ("shadow", {"record_id": "same"}, "field 'record_id': 'same' is used twice in the batch"),
    ],
)
def test_bad_observations_are_refused_and_nothing_is_written(
    watch: Path, plan_path: Path, stage: str, fields: dict[str, object], message: str
) -> None:
    before = _tree(watch)
    with pytest.raises(WatchError, match=re.escape(message)):
        add_batch(
            watch, observations(2 if "same" in fields.values() else 1, **fields), stage=stage, plan_path=plan_path
        )
    assert _tree(watch) == before


def test_contract_breaks_name_row_and_field(watch: Path, plan_path: Path) -> None:
    with pytest.raises(RecordFileError, match="review_minutes"):
        add_batch(watch, observations(2, review_minutes=-1.0), stage="shadow", plan_path=plan_path)
    with pytest.raises(WatchError, match="no observations"):
        add_batch(watch, observations(0), stage="shadow", plan_path=plan_path)


def test_a_record_id_already_in_the_log_is_refused(watch: Path, plan_path: Path) -> None:
    add_batch(watch, observations(3), stage="shadow", plan_path=plan_path)
    before = _tree(watch)
    with pytest.raises(WatchError, match="field 'record_id': 'obs-2' is already in the log"):
        add_batch(watch, observations(3, start=2), stage="shadow", plan_path=plan_path)
    assert _tree(watch) == before


def test_an_edited_or_missing_batch_is_unreadable_evidence(watch: Path, plan_path: Path) -> None:
    add_batch(watch, observations(3), stage="shadow", plan_path=plan_path)
    add_batch(watch, observations(3, start=3), stage="shadow", plan_path=plan_path)
    records = watch / "batches" / "0002" / "records.jsonl"
    records.write_text(records.read_text().replace('"accepted":true', '"accepted":false', 1))
    with pytest.raises(RecordFileError, match="checksum"):
        read_log(watch)
    (watch / "batches" / "0002" / "records.jsonl").unlink()
    (watch / "batches" / "0002" / "manifest.json").unlink()
    (watch / "batches" / "0002").rmdir()
    (watch / "batches" / "0003").mkdir()
    with pytest.raises(RecordFileError, match="batch 0002 is missing"):
        read_log(watch)
    (watch / "batches" / "0003").rmdir()
    (watch / "batches" / "notes.txt").write_text("x")
    with pytest.raises(RecordFileError, match="not a batch"):
        read_log(watch)


def test_two_writers_at_once_get_different_batch_numbers(watch: Path, plan_path: Path) -> None:
    # the writers are spawned processes importing tests.rollout.writer (the log alone, not this module's conftest)
    jobs = [(str(watch), str(plan_path), observations(4, start=100 * i)) for i in range(4)]
    with multiprocessing.get_context("spawn").Pool(3) as pool:
        numbers = pool.map(write_shadow_batch, jobs)
    assert sorted(numbers) == [1, 2, 3, 4]
    log = read_log(watch)
    assert log.records.height == 16
    assert log.records.get_column("record_id").n_unique() == 16


def test_a_batch_of_another_log_is_not_read_as_this_ones(
    tmp_path: Path, watch: Path, plan_path: Path, verdict_path: Path
) -> None:
    other_plan = tmp_path / "other.toml"
    other_plan.write_text(plan_path.read_text().replace("min_observations = 20", "min_observations = 30"))
    other = tmp_path / "OTHER"
    init_log(other, plan_path=other_plan, verdict_path=verdict_path)
    add_batch(other, observations(2), stage="shadow", plan_path=other_plan)
    (other / "batches" / "0001").rename(watch / "batches" / "0001")
    with pytest.raises(RecordFileError, match="policy_digest': written under plan 'sha256:"):
        read_log(watch)
