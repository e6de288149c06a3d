"""The runner's public run-set API: imported run sets with their seal, policy registration, whole or nothing."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import pytest

from gatestats_runner import runsets
from gatestats_runner.digests import digest_file
from tests.conftest import make_record


@dataclass(frozen=True)
class _Policy:
    digest: str
    name: str = "release"
    version: str = "3"


RECORDS = [
    make_record(record_id="r-0", case_id="b", case_version="v2", trial=0),
    make_record(record_id="r-1", case_id="a", case_version="v1", trial=2, outcome="failed"),
    make_record(record_id="r-2", case_id="a", case_version="v1", trial=1, system="other"),
]


def test_an_imported_run_set_has_its_records_seal_and_registration(tmp_path: Path) -> None:
    source = tmp_path / "results.json"
    source.write_text("{}")
    out = runsets.write_imported_run_set(
        tmp_path / "rs", RECORDS, source=str(source), policy=_Policy(digest="sha256:" + "a" * 64)
    )
    manifest = runsets.read_manifest(out)
    assert manifest["origin"] == "import"
    assert manifest["source_digest"] == digest_file(source)
    assert manifest["cases"] == [{"case_id": "a", "case_version": "v1"}, {"case_id": "b", "case_version": "v2"}]
    assert manifest["trials"] == 3
    assert manifest["system"] == "baseline,other"
    assert manifest["run_set_id"] == "set-1"
    assert manifest["policy_digest"] == "sha256:" + "a" * 64
    assert (manifest["policy_name"], manifest["policy_version"]) == ("release", "3")
    assert manifest["policy_registered_at"] == manifest["imported_at"]
    assert manifest["records_seal"] == runsets.seal_records(out)
    assert manifest["records_seal"]["lines"] == 3
    lines = [json.loads(line) for line in (out / runsets.RECORDS).read_text().splitlines()]
    assert [r["record_id"] for r in lines] == ["r-0", "r-1", "r-2"]
    assert all(r[runsets.CHECKSUM_FIELD] == runsets.record_checksum(r) for r in lines)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "rs"]


def test_a_record_that_breaks_the_contract_leaves_nothing_behind(tmp_path: Path) -> None:
    bad = [*RECORDS, make_record(record_id="r-3", outcome="maybe")]
    with pytest.raises(runsets.RunSetError, match="record 'r-3' breaks the run-record contract"):
        runsets.write_imported_run_set(tmp_path / "rs", bad, source="nowhere", policy=None)
    assert list(tmp_path.iterdir()) == []


def test_an_existing_directory_even_empty_is_never_replaced(tmp_path: Path) -> None:
    (tmp_path / "rs").mkdir()
    with pytest.raises(FileExistsError, match="exists; an imported run set is written once"):
        runsets.write_imported_run_set(tmp_path / "rs", RECORDS, source="nowhere", policy=None)
    assert [p.name for p in tmp_path.iterdir()] == ["rs"]
    assert list((tmp_path / "rs").iterdir()) == []


def test_registration_is_idempotent_for_the_same_policy_and_refused_for_another(tmp_path: Path) -> None:
    policy = _Policy(digest="sha256:" + "b" * 64)
    out = runsets.write_imported_run_set(tmp_path / "rs", RECORDS, source="nowhere", policy=policy)
    first = runsets.read_manifest(out)["policy_registered_at"]
    again = runsets.register_policy(out, policy)
    assert (again.policy_digest, again.registered_at, again.origin) == (policy.digest, first, "import")
    with pytest.raises(runsets.RunSetError, match=r"field 'policy_digest': another policy is registered"):
        runsets.register_policy(out, _Policy(digest="sha256:" + "c" * 64))


def test_a_policy_cannot_be_registered_once_records_exist(tmp_path: Path) -> None:
    out = runsets.write_imported_run_set(tmp_path / "rs", RECORDS, source="nowhere", policy=None)
    with pytest.raises(runsets.RunSetError, match="the run set already has records"):
        runsets.register_policy(out, _Policy(digest="sha256:" + "d" * 64))
    assert runsets.read_manifest(out)["policy_digest"] is None


def test_registering_in_a_directory_that_is_not_a_run_set_creates_no_lock_file(tmp_path: Path) -> None:
    with pytest.raises(runsets.RunSetError, match="no run-set manifest"):
        runsets.register_policy(tmp_path, _Policy(digest="sha256:" + "e" * 64))
    assert list(tmp_path.iterdir()) == []
