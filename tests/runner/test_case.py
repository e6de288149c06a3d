"""Cases: the format, content-digest versions, and errors that name the file and field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gatestats_runner.case import CaseError, load_case, load_case_set
from tests.conftest import DATA
from tests.runner.conftest import write_case

GOLDEN = DATA / "golden_example"


def test_the_bundled_golden_example_loads() -> None:
    case_set = load_case_set(GOLDEN / "cases")
    assert [c.case_id for c in case_set.cases] == ["csv-empty-fields", "package-build", "slugify"]
    csv = case_set.get("csv-empty-fields")
    assert csv.contract.command == ("python3", "/verifier/verify.py")
    assert csv.contract.artifacts[0].check == "junit"
    assert csv.contract.limits.memory_mb == 256
    assert csv.tools == ("read_file", "edit_file", "run_tests")
    assert csv.turn_limit == 20
    assert (csv.slices, csv.severity, csv.split, csv.case_group) == (("parsing",), "high", "development", "csvrow")
    assert csv.problems == ()
    assert csv.request is not None
    assert csv.request.startswith("`csvrow.parse_row")


@pytest.mark.parametrize("part", ["request.md", "snapshot/README", "verifier/run.py", "case.json"])
def test_changing_any_part_makes_a_new_version(tmp_path: Path, part: str) -> None:
    case_dir = write_case(tmp_path, "c1")
    before = load_case(case_dir).version
    path = case_dir / part
    if part == "case.json":
        body = json.loads(path.read_text())
        body["turn_limit"] = 5
        path.write_text(json.dumps(body))
    else:
        path.write_text(path.read_text() + "x")
    assert load_case(case_dir).version != before


def test_version_ignores_timestamps(tmp_path: Path) -> None:
    a = write_case(tmp_path / "a", "c1")
    b = write_case(tmp_path / "b", "c1")
    assert load_case(a).version == load_case(b).version


def test_case_set_version_changes_with_a_case(tmp_path: Path) -> None:
    write_case(tmp_path, "c1")
    write_case(tmp_path, "c2")
    before = load_case_set(tmp_path).version
    (tmp_path / "c2" / "request.md").write_text("changed")
    assert load_case_set(tmp_path).version != before


def test_missing_snapshot_and_verifier_are_problems_not_errors(tmp_path: Path) -> None:
    case_dir = write_case(tmp_path, "c1")
    (case_dir / "snapshot" / "README").unlink()
    (case_dir / "snapshot").rmdir()
    (case_dir / "verifier" / "run.py").unlink()
    case = load_case(case_dir)
    assert case.problems == (
        f"snapshot missing: {case_dir / 'snapshot'} is not a directory",
        f"verifier absent: {case_dir / 'verifier'} is not a non-empty directory",
    )


@pytest.mark.parametrize(
    ("patch", "message"),
    [
        ({"format": "v0"}, "field 'format': must be 'gatestats-case/1' (got 'v0')"),
        ({"id": "other"}, "field 'id': must equal the directory name"),
        ({"colour": 1}, "field 'colour': unknown field"),
        ({"turn_limit": 0}, "field 'turn_limit': expected a positive integer or null (got 0)"),
        ({"snapshot": "../outside"}, "field 'snapshot': expected a relative path inside the workspace without '..'"),
        ({"contract": {"command": "make test"}}, "field 'contract.command': expected a list of arguments"),
        (
            {"contract": {"command": ["./run_tests.sh"]}},
            "field 'contract.command': the program must be a name on the sandbox PATH or an absolute path",
        ),
        (
            {"contract": {"command": ["true"], "limits": {"cpu_s": -1}}},
            "field 'contract.limits.cpu_s': expected a number > 0 (got -1)",
        ),
        (
            {"contract": {"command": ["true"], "limits": {"gpu": 1}}},
            "field 'contract.limits.gpu': unknown field",
        ),
        (
            {"contract": {"command": ["true"], "network": "allowed"}},
            "field 'contract.network': only 'denied' is supported",
        ),
        (
            {"contract": {"command": ["true"], "artifacts": [{"path": "/etc/passwd"}]}},
            "field 'contract.artifacts[0].path': expected a relative path inside the workspace",
        ),
        (
            {"contract": {"command": ["true"], "artifacts": [{"path": "a.tar", "check": "tar"}]}},
            "field 'contract.artifacts[0].members': a tar check needs the list of required members",
        ),
        (
            {"contract": {"command": ["true"], "expected_exit": 256}},
            "field 'contract.expected_exit': expected an integer exit status 0..255 (got 256)",
        ),
    ],
)
def test_malformed_case_json_names_file_and_field(tmp_path: Path, patch: dict[str, object], message: str) -> None:
    case_dir = write_case(tmp_path, "c1")
    body = json.loads((case_dir / "case.json").read_text())
    body.update(patch)
    (case_dir / "case.json").write_text(json.dumps(body))
    with pytest.raises(CaseError) as info:
        load_case(case_dir)
    assert str(info.value).startswith(f"{case_dir / 'case.json'}: ")
    assert message in str(info.value)


def test_case_set_errors(tmp_path: Path) -> None:
    with pytest.raises(CaseError, match="cases directory does not exist"):
        load_case_set(tmp_path / "nope")
    with pytest.raises(CaseError, match=r"no case found \(expected subdirectories with case.json\)"):
        load_case_set(tmp_path)
    write_case(tmp_path, "c1")
    (tmp_path / "notes").mkdir()
    with pytest.raises(CaseError, match=r"directories without case\.json: notes"):
        load_case_set(tmp_path)
