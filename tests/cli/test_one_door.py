"""One door: every command that reads a run set refuses what the gate refuses, and writes nothing.

The leak this closes (issue 24): ``gatestats promote RUN_SET --record ID`` read ``records.jsonl``
without its checksums or seal and followed the record's ``stdout_path`` anywhere, copying the
file into ``SET/proposed/ID/provenance/trace.json``. Each attack below is tried on a copy of a
real run set (the golden worked example run by the real runner), against promote, drift,
``cases verify-graders``, recovery, ``correct --resume`` and report.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats_runner.digests import digest_file
from gatestats_runner.store import CHECKSUM_FIELD, record_checksum, seal_records
from tests.conftest import DATA, ROOT
from tests.fuzz.corpus import Corpus

EXAMPLE = DATA / "golden_refund"
SECRET = "TOP-SECRET-outside-the-run-set"


def _cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    return result.exit_code, result.stdout, result.stderr


def _ok(*args: str) -> str:
    code, out, err = _cli(*args)
    assert code == 0, out + err
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A golden set with two approved cases and a run set of them (one record failed)."""
    root = tmp_path_factory.mktemp("door")
    golden = root / "golden"
    expect = str(EXAMPLE / "refund-expect.json")
    for trace, case_id, split in [
        ("refund-41-days.json", "refund-41", "development"),
        ("refund-35-days.json", "refund-35", "holdout"),
    ]:
        _ok("promote", str(EXAMPLE / trace), "--set", str(golden), "--case-id", case_id, "--failure-class",
            "policy_misread", "--severity", "high", "--split", split, "--expect", expect, "--by", "Dana")  # fmt: skip
        _ok("cases", "approve", case_id, "--set", str(golden), "--by", "Dana")
    candidate = root / "candidate"
    for case_id, transcript in [("refund-41", "bad.json"), ("refund-35", "good.json")]:
        (candidate / case_id).mkdir(parents=True)
        shutil.copy(EXAMPLE / "transcripts" / transcript, candidate / case_id / "transcript.json")
    run = root / "run"
    _ok("run", str(golden / "cases"), "--candidate", str(candidate), "--trials", "1", "--workers", "1",
        "--out", str(run))  # fmt: skip
    return golden, run


@pytest.fixture
def world(built: tuple[Path, Path], tmp_path: Path) -> tuple[Path, Path, Path]:
    """A fresh copy of the golden set and the run set, and a secret file outside both."""
    golden, run = built
    shutil.copytree(golden, tmp_path / "golden", symlinks=True)
    shutil.copytree(run, tmp_path / "run", symlinks=True)
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    return tmp_path / "golden", tmp_path / "run", secret


def _lines(run: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines()]


def _failed_id(run: Path) -> tuple[int, str]:
    """The line (1-based) and id of the failed record (the one promoted)."""
    for number, record in enumerate(_lines(run), start=1):
        if record["outcome"] == "failed":
            return number, str(record["record_id"])
    raise AssertionError("no failed record")


def _edit(run: Path, line: int, *, checksum: bool, seal: bool, **changes: object) -> None:
    """Change fields of one record line; recompute its checksum and the manifest's seal when asked."""
    records = _lines(run)
    records[line - 1].update(changes)
    if checksum:
        body = {k: v for k, v in records[line - 1].items() if k != CHECKSUM_FIELD}
        records[line - 1][CHECKSUM_FIELD] = record_checksum(body)
    text = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records)
    (run / "records.jsonl").write_text(text, encoding="utf-8")
    if seal:
        manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
        manifest["records_seal"] = seal_records(run)
        (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def _stdout_dir(run: Path, line: int) -> Path:
    return run / Path(str(_lines(run)[line - 1]["stdout_path"])).parent


def _absolute_stale(run: Path, secret: Path, line: int) -> str:
    _edit(run, line, checksum=False, seal=False, stdout_path=str(secret))
    return "checksum"


def _absolute(run: Path, secret: Path, line: int) -> str:
    _edit(run, line, checksum=True, seal=True, stdout_path=str(secret))
    return "is absolute"


def _dotdot(run: Path, secret: Path, line: int) -> str:
    depth = len(_stdout_dir(run, line).relative_to(run).parts)
    rel = "/".join([".."] * (depth + 1)) + f"/outside/{secret.name}"
    _edit(
        run, line, checksum=True, seal=True, stdout_path=str(Path(*_stdout_dir(run, line).relative_to(run).parts, rel))
    )
    return "climbs out with '..'"


def _symlink_out(run: Path, secret: Path, line: int) -> str:
    """The record is untouched: its evidence directory becomes a symlink to a directory outside, same bytes."""
    evidence = _stdout_dir(run, line)
    outside = secret.parent / "evidence"
    shutil.copytree(evidence, outside)
    shutil.rmtree(evidence)
    evidence.symlink_to(outside, target_is_directory=True)
    return "points outside the run set"


def _stale_checksum(run: Path, secret: Path, line: int) -> str:
    _edit(run, line, checksum=False, seal=False, outcome="passed", failed_check=None)
    return "checksum"


def _broken_seal(run: Path, secret: Path, line: int) -> str:
    _edit(run, line, checksum=True, seal=False, outcome="passed", failed_check=None)
    return "records_seal"


Attack = Callable[[Path, Path, int], str]
ATTACKS: dict[str, Attack] = {
    "absolute path, stale checksum": _absolute_stale,
    "absolute path, checksum and seal recomputed": _absolute,
    "'..' path, checksum and seal recomputed": _dotdot,
    "symlink out": _symlink_out,
    "stale checksum": _stale_checksum,
    "broken seal": _broken_seal,
}


def _promote(golden: Path, run: Path, record: str) -> tuple[int, str, str]:
    return _cli(
        "promote", str(run), "--record", record, "--set", str(golden), "--case-id", "leak", "--failure-class",
        "policy_misread", "--severity", "high", "--split", "validation", "--expect",
        str(EXAMPLE / "refund-expect.json"), "--by", "Mallory",
    )  # fmt: skip


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_promote_of_an_untouched_run_set_still_works(world: tuple[Path, Path, Path]) -> None:
    golden, run, _ = world
    _, record = _failed_id(run)
    code, out, err = _promote(golden, run, record)
    assert code == 0, err
    assert out.startswith(f"proposed leak (validation) at {golden}/proposed/leak")
    trace = json.loads((golden / "proposed" / "leak" / "provenance" / "trace.json").read_text(encoding="utf-8"))
    assert "no_refund_call: FAIL" in trace["output"]


@pytest.mark.parametrize("name", list(ATTACKS))
def test_promote_refuses_each_attack_and_writes_nothing(world: tuple[Path, Path, Path], name: str) -> None:
    golden, run, secret = world
    line, record = _failed_id(run)
    expected = ATTACKS[name](run, secret, line)
    before = _tree(golden)
    code, out, err = _promote(golden, run, record)
    assert code != 0, out
    assert code == 1
    assert expected in err
    assert str(run / "records.jsonl") in err or str(run / "manifest.json") in err
    assert SECRET not in out + err
    assert _tree(golden) == before  # nothing written: no proposed/ folder, no event
    assert not (golden / "proposed" / "leak").exists()


@pytest.mark.parametrize("name", list(ATTACKS))
def test_verify_graders_refuses_each_attack(world: tuple[Path, Path, Path], name: str) -> None:
    golden, run, secret = world
    assert _cli("cases", "verify-graders", str(golden), str(run))[0] == 0
    line, _ = _failed_id(run)
    expected = ATTACKS[name](run, secret, line)
    code, out, err = _cli("cases", "verify-graders", str(golden), str(run))
    assert code == 1, out
    assert expected in err


@pytest.mark.parametrize("name", list(ATTACKS))
def test_cases_check_refuses_each_attack(world: tuple[Path, Path, Path], name: str) -> None:
    golden, run, secret = world
    assert _cli("cases", "check", str(golden), str(run))[0] == 0
    line, _ = _failed_id(run)
    expected = ATTACKS[name](run, secret, line)
    code, out, err = _cli("cases", "check", str(golden), str(run))
    assert code == 1, out
    assert expected in err


@pytest.mark.parametrize("name", list(ATTACKS))
def test_drift_refuses_each_attack_on_either_side(world: tuple[Path, Path, Path], name: str, tmp_path: Path) -> None:
    _, run, secret = world
    clean = tmp_path / "clean"
    shutil.copytree(run, clean, symlinks=True)
    line, _ = _failed_id(run)
    expected = ATTACKS[name](run, secret, line)
    for stored, rerun in ((run, clean), (clean, run)):
        code, out, err = _cli("drift", str(stored), str(rerun))
        assert code == 1, out
        assert expected in err


@pytest.mark.parametrize("name", list(ATTACKS))
def test_a_baseline_re_run_refuses_each_attack_on_the_stored_run_set(
    world: tuple[Path, Path, Path], name: str, tmp_path: Path
) -> None:
    golden, run, secret = world
    line, _ = _failed_id(run)
    expected = ATTACKS[name](run, secret, line)
    out = tmp_path / "rerun"
    code, stdout, err = _cli("run", str(golden / "cases"), "--baseline-sample", "1", "--against", str(run),
                             "--seed", "1", "--out", str(out))  # fmt: skip
    assert code == 1, stdout
    assert expected in err
    assert not out.exists()


@pytest.mark.parametrize("name", list(ATTACKS))
def test_report_refuses_each_attack(name: str, tmp_path: Path) -> None:
    from tests.report.scenarios import make_one_trial_verdict

    verdict = make_one_trial_verdict(tmp_path / "gate")
    run = tmp_path / "gate" / "cand"
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    evidence = run / "trials" / "e0"
    evidence.mkdir(parents=True)
    (evidence / "stdout").write_text("out", encoding="utf-8")
    # The scenario's records name no evidence: line 1 gets some, inside, before the gate decides.
    _edit(run, 1, checksum=True, seal=True, stdout_path="trials/e0/stdout",
          stdout_digest=digest_file(evidence / "stdout"))  # fmt: skip
    verdict = _regate(tmp_path / "gate")
    expected = ATTACKS[name](run, secret, 1)
    out_dir = tmp_path / "reports"
    code, out, err = _cli("report", str(verdict), "--out", str(out_dir), "--renderer", "jupyter")
    assert code == 1, out
    # The report checks the bound bytes first: an edited records.jsonl is refused by its digest; an
    # evidence directory moved out leaves the bytes alone and is refused by the gate's reader.
    assert (expected if name == "symlink out" else "the records changed after the verdict was made") in err
    assert not out_dir.exists() or not any(p.name.startswith("release") for p in out_dir.iterdir())


def _regate(root: Path) -> Path:
    """The scenario's verdict again, on its run sets as they are now."""
    from gatestats.gate import evaluate_gate, load_policy, load_record_set, write_verdict
    from tests.report.scenarios import NOW

    (root / "verdict.json").unlink()
    policy = load_policy(root / "policy.toml")
    verdict = evaluate_gate(policy, load_record_set(root / "base"), load_record_set(root / "cand"), now=NOW)
    return write_verdict(verdict, root / "verdict.json")


CORRECTION = ROOT / "examples" / "correction"


def _correct(out: Path, *extra: str) -> tuple[str, ...]:
    return (
        "correct", str(CORRECTION / "cases"), "--candidate", str(CORRECTION / "candidate"),
        "--reviser", f"{sys.executable} {CORRECTION / 'reviser.py'}", "--out", str(out), "--isolation", "none", *extra,
    )  # fmt: skip


@pytest.fixture(scope="module")
def correction(fuzz_corpus: Corpus) -> Path:
    """A finished correction loop over the bundled example (its rounds are run sets): the session's, made with
    :func:`_correct`'s arguments (tests/fuzz/corpus.py, ``CORRECT_ARGS``); each test edits a copy."""
    return fuzz_corpus.correction


def _round_run_set(out: Path) -> tuple[Path, int]:
    """A round's run set with a failed record, and that record's line."""
    for manifest in sorted(out.glob("rounds/*/r*/manifest.json")):
        for number, record in enumerate(_lines(manifest.parent), start=1):
            if record["outcome"] == "failed" and record.get("stdout_path"):
                return manifest.parent, number
    raise AssertionError("no failed round record")


@pytest.mark.parametrize("name", list(ATTACKS))
def test_recovery_and_correct_resume_refuse_each_attack(correction: Path, tmp_path: Path, name: str) -> None:
    out = tmp_path / "out"
    shutil.copytree(correction, out, symlinks=True)
    assert _cli("recovery", str(out))[0] == 0
    assert _cli(*_correct(out, "--resume"))[0] == 0  # an untouched output resumes (nothing left to run)
    run, line = _round_run_set(out)
    secret = tmp_path / "outside" / "secret.txt"
    secret.parent.mkdir()
    secret.write_text(SECRET, encoding="utf-8")
    expected = ATTACKS[name](run, secret, line)
    code, stdout, err = _cli("recovery", str(out))
    assert code == 1, stdout
    assert expected in err
    journal = (out / "journal.jsonl").read_bytes()
    code, stdout, err = _cli(*_correct(out, "--resume"))
    assert code == 1, stdout
    assert expected in err
    assert (out / "journal.jsonl").read_bytes() == journal  # refused before the loop wrote a line
    assert SECRET not in stdout + err


def test_a_round_killed_mid_line_is_left_to_the_runner_and_a_complete_one_is_not(
    correction: Path, tmp_path: Path
) -> None:
    from gatestats.errors import RecordFileError
    from gatestats.estimators.recovery import check_round_run_sets

    out = tmp_path / "out"
    shutil.copytree(correction, out, symlinks=True)
    rounds = check_round_run_sets(out)
    assert rounds == len(list(out.glob("rounds/*/*/manifest.json"))) > 1
    run, _ = _round_run_set(out)
    with (run / "records.jsonl").open("ab") as handle:
        handle.write(b'{"record_id": "torn')  # a kill in the middle of a line
    with pytest.raises(RecordFileError, match="torn last line"):
        check_round_run_sets(out)  # a complete round has nothing left to write: a torn tail is damage
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["complete"] = False
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    assert check_round_run_sets(out) == rounds - 1  # interrupted mid-line: the runner's resume sets it aside


@pytest.mark.parametrize(
    ("record", "message"),
    [
        ("no-such-record", "field 'record_id': no record 'no-such-record'"),
        ("\x1b[2J<script>", "field 'record_id': no record"),
    ],
)
def test_promote_of_an_unknown_record_writes_nothing(world: tuple[Path, Path, Path], record: str, message: str) -> None:
    golden, run, _ = world
    before = _tree(golden)
    code, _, err = _promote(golden, run, record)
    assert code == 1
    assert message in err
    assert "\x1b" not in err  # a hostile id is shown escaped
    assert _tree(golden) == before


def test_promote_refuses_a_record_whose_stdout_is_gone(world: tuple[Path, Path, Path]) -> None:
    """Before issue 24 a missing stdout became an empty reply; now the run set is refused (its evidence digest)."""
    golden, run, _ = world
    line, record = _failed_id(run)
    (run / str(_lines(run)[line - 1]["stdout_path"])).unlink()
    code, _, err = _promote(golden, run, record)
    assert code == 1
    assert f"{run / 'records.jsonl'}:{line}: field 'stdout_digest': evidence file" in err
    assert "is missing" in err
    assert not (golden / "proposed" / "leak").exists()
