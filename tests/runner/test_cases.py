"""The runner's public case API: ``write_case`` writes a case whole, checked by the runner's reader, or nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatestats_runner.cases import CaseError, load_case, write_case

CASE_JSON = {"format": "gatestats-case/1", "contract": {"command": ["python3", "/verifier/v.py"]}}


def _files(**overrides: bytes) -> dict[str, bytes]:
    return {
        "case.json": json.dumps(CASE_JSON).encode(),
        "request.md": b"fix it",
        "snapshot/a.txt": b"a",
        "verifier/v.py": b"print(1)",
        **overrides,
    }


def test_write_case_writes_a_case_the_runner_loads(tmp_path: Path) -> None:
    case = write_case(tmp_path / "c1", _files(), executable={"verifier/v.py"})
    assert case == load_case(tmp_path / "c1")
    assert (case.case_id, case.request) == ("c1", "fix it")
    assert (tmp_path / "c1" / "verifier" / "v.py").stat().st_mode & 0o777 == 0o755
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c1"]  # no staging directory left


def test_write_case_never_replaces_a_case(tmp_path: Path) -> None:
    write_case(tmp_path / "c1", _files())
    with pytest.raises(FileExistsError, match=r"c1: already exists \(a case directory is never replaced\)"):
        write_case(tmp_path / "c1", _files(**{"request.md": b"other"}))
    assert (tmp_path / "c1" / "request.md").read_bytes() == b"fix it"


def test_a_malformed_case_writes_nothing(tmp_path: Path) -> None:
    bad = json.dumps({**CASE_JSON, "labels": {"split": "train"}}).encode()
    with pytest.raises(
        CaseError, match=r"field 'labels.split': must be 'development', 'validation', 'test', 'holdout' or null"
    ):
        write_case(tmp_path / "c1", _files(**{"case.json": bad}))
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("name", ["../escape.txt", "/etc/x", "a/../../b", "a\\b"])
def test_a_file_name_that_leaves_the_case_is_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(CaseError, match=r"is not a relative path inside the case"):
        write_case(tmp_path / "c1", _files(**{name: b"x"}))
    assert list(tmp_path.iterdir()) == []
