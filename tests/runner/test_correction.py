"""The correction loop: stop conditions, classification, the hidden-check guard, lineage, bad revisers."""

from __future__ import annotations

import json
import os
import shutil
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from gatestats_runner.case import CaseError, load_case
from gatestats_runner.correction import CorrectionOptions, run_correction
from gatestats_runner.digests import digest_file, tree_digest
from gatestats_runner.journal import read_journal, read_rounds
from gatestats_runner.launch import OptionError, RunSetError
from gatestats_runner.store import read_records
from tests.runner.conftest import needs_sandbox, write_case

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "correction"
SENTINEL = b"HIDDEN-CHECK-OUTPUT"


def _journal(out: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]


def _reviser(tmp_path: Path, name: str, body: str) -> tuple[str, ...]:
    path = tmp_path / f"{name}.py"
    path.write_text("import json, os, shutil, sys, time\n" + textwrap.dedent(body))
    return (sys.executable, str(path))


def _correct(tmp_path: Path, cases: Path, candidate: Path, reviser: tuple[str, ...], **kw: Any) -> Any:
    options = CorrectionOptions(cases=cases, candidate=candidate, reviser=reviser, out=tmp_path / "out", **kw)
    return run_correction(options)


def _demo(tmp_path: Path, *case_ids: str) -> tuple[Path, Path]:
    cases, candidate = tmp_path / "cases", tmp_path / "candidate"
    for cid in case_ids:
        shutil.copytree(EXAMPLE / "cases" / cid, cases / cid)
        shutil.copytree(EXAMPLE / "candidate" / cid, candidate / cid)
    return cases, candidate


DEMO_REVISER = (sys.executable, str(EXAMPLE / "reviser.py"))

# A verifier that fails a test named after the number in the candidate's n.txt: every revision
# (which increments it) fails differently, so neither success nor a repeated failure stops the loop.
COUNTER_VERIFIER = """
import os
n = open('/workspace/n.txt').read().strip()
os.makedirs('/workspace/reports', exist_ok=True)
with open('/workspace/reports/public.xml', 'w') as f:
    f.write(f'<testsuite><testcase classname="t" name="test_{n}"><failure message="n={n}">n={n}</failure></testcase></testsuite>')
raise SystemExit(1)
"""
COUNTER_REVISER = """
out = os.environ['GATESTATS_OUTPUT']
n = int(open(os.path.join(os.environ['GATESTATS_CANDIDATE'], 'n.txt')).read())
open(os.path.join(out, 'n.txt'), 'w').write(str(n + 1))
json.dump({'usd': 0.002}, open(os.environ['GATESTATS_SPEND'], 'w'))
time.sleep(float(os.environ.get('REVISER_SLEEP', '0')))
"""


def _counter_case(tmp_path: Path, **kw: Any) -> tuple[Path, Path]:
    cases = tmp_path / "cases"
    write_case(
        cases,
        "counter",
        script=COUNTER_VERIFIER,
        artifacts=[{"path": "reports/public.xml", "check": "junit"}],
        extra=kw.pop("extra", None),
        **kw,
    )
    contract = json.loads((cases / "counter" / "case.json").read_text())
    contract["contract"]["feedback"] = {"deployable": ["reports/public.xml"]}
    (cases / "counter" / "case.json").write_text(json.dumps(contract))
    candidate = tmp_path / "candidate"
    (candidate / "counter").mkdir(parents=True)
    (candidate / "counter" / "n.txt").write_text("0")
    return cases, candidate


@needs_sandbox
def test_demo_recovers_one_case_and_stops_the_other_on_a_repeated_failure(tmp_path: Path) -> None:
    cases, candidate = _demo(tmp_path, "title-case", "median")
    summary = _correct(tmp_path, cases, candidate, DEMO_REVISER)
    stops = {c.case_id: (c.stop, c.rounds) for c in summary.cases}
    assert stops == {"title-case": ("passed", 2), "median": ("repeated_failure", 2)}
    assert [c.recovered for c in summary.cases] == [False, True]  # median, title-case (case order)


@needs_sandbox
def test_revised_candidate_has_its_own_identity_and_records(tmp_path: Path) -> None:
    cases, candidate = _demo(tmp_path, "title-case")
    _correct(tmp_path, cases, candidate, DEMO_REVISER)
    out = tmp_path / "out"
    r0 = read_records(out / "rounds/title-case/r00/records.jsonl").records
    r1 = read_records(out / "rounds/title-case/r01/records.jsonl").records
    d0 = tree_digest(candidate / "title-case")
    d1 = tree_digest(out / "lineage/title-case/r01/title-case")
    assert d0 != d1
    assert [(r["outcome"], r["candidate_digest"], r["correction_round"]) for r in r0] == [("failed", d0, 0)]
    assert r0[0]["parent_candidate_digest"] is None
    assert r0[0]["feedback_digest"] is None
    # The pass belongs to the revision alone: its own trial, its own digest, its parent and feedback named.
    assert [(r["outcome"], r["candidate_digest"], r["parent_candidate_digest"]) for r in r1] == [("passed", d1, d0)]
    assert r1[0]["feedback_digest"] == digest_file(out / "feedback/title-case/r00/feedback.json")
    assert r1[0]["run_set_id"] != r0[0]["run_set_id"]
    manifest = json.loads((out / "rounds/title-case/r01/manifest.json").read_text())
    assert manifest["lineage"]["correction_round"] == 1


@needs_sandbox
def test_no_byte_of_hidden_check_output_reaches_the_reviser(tmp_path: Path) -> None:
    cases, candidate = _demo(tmp_path, "title-case")
    dump = _reviser(
        tmp_path,
        "dump",
        """
        out = os.environ['GATESTATS_OUTPUT']
        shutil.rmtree(out)
        shutil.copytree(os.environ['GATESTATS_CANDIDATE'], out)
        with open(os.path.join(out, 'seen.json'), 'w') as f:
            json.dump({'env': dict(os.environ), 'argv': sys.argv, 'stdin': None}, f)
        """,
    )
    summary = _correct(tmp_path, cases, candidate, dump, max_rounds=1)
    assert summary.cases[0].stop == "repeated_failure"
    out = tmp_path / "out"
    # The hidden check failed and said so in its own channels (the test can fail) ...
    evidence = out / "rounds/title-case/r00/trials/title-case/t0000-a0"
    assert SENTINEL in (evidence / "artifacts/reports/hidden.xml").read_bytes()
    assert SENTINEL in (evidence / "stderr").read_bytes()
    # ... and not one byte of it is in anything the reviser was handed or could report back.
    seen = [p for p in (out / "revisions/title-case/r01").rglob("*") if p.is_file()]
    assert {p.name for p in seen} >= {"request.md", "feedback.json", "public.xml", "titles.py", "seen.json"}
    for path in seen:
        assert SENTINEL not in path.read_bytes(), path
    package = json.loads((out / "feedback/title-case/r00/feedback.json").read_text())
    assert package["deployable_channels"] == ["reports/public.xml"]
    assert package["exit_status"] is None  # exit_status is not deployable in this case
    assert package["failed_tests"][0]["name"] == "test_titles.PublicTitlecase.test_contraction_stays_one_word"
    assert "defect: apostrophe-split" in package["failed_tests"][0]["detail"]


@needs_sandbox
def test_round_limit_stops_after_max_rounds_revisions(tmp_path: Path) -> None:
    cases, candidate = _counter_case(tmp_path)
    summary = _correct(tmp_path, cases, candidate, _reviser(tmp_path, "count", COUNTER_REVISER), max_rounds=2)
    case = summary.cases[0]
    assert (case.stop, case.rounds) == ("round_limit", 3)
    assert case.detail == "still failing after 2 revision(s) (--max-rounds 2)"
    assert [row["verdict"] for row in read_rounds(tmp_path / "out")] == ["candidate_failure"] * 3


@needs_sandbox
def test_budget_usd_stops_before_the_next_reviser_call(tmp_path: Path) -> None:
    cases, candidate = _counter_case(tmp_path)
    summary = _correct(tmp_path, cases, candidate, _reviser(tmp_path, "count", COUNTER_REVISER), budget_usd=0.003)
    case = summary.cases[0]
    assert (case.stop, case.rounds, case.usd) == ("budget_usd", 3, 0.004)
    assert case.detail == "$0.0040 spent of the $0.003 budget"


@needs_sandbox
def test_budget_seconds_cuts_the_reviser_timeout_and_stops(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cases, candidate = _counter_case(tmp_path)
    monkeypatch.setenv("REVISER_SLEEP", "30")
    summary = _correct(tmp_path, cases, candidate, _reviser(tmp_path, "count", COUNTER_REVISER), budget_seconds=1.5)
    case = summary.cases[0]
    assert case.stop == "budget_seconds"
    assert case.detail.endswith("s: the time budget ran out")
    assert case.seconds < 3.0


@needs_sandbox
def test_infrastructure_failure_is_retried_as_infra_and_never_shown_to_the_reviser(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    write_case(cases, "broken", command=["python3", "/verifier/missing.py"])
    (tmp_path / "candidate" / "broken").mkdir(parents=True)
    (tmp_path / "candidate" / "broken" / "x.py").write_text("x = 1\n")
    summary = _correct(tmp_path, cases, tmp_path / "candidate", DEMO_REVISER, infra_retries=1)
    assert summary.cases[0].stop == "infrastructure"
    assert "2 of 2" not in summary.cases[0].detail
    assert "1 of 1 trials ended in infra_error" in summary.cases[0].detail
    records = read_records(tmp_path / "out/rounds/broken/r00/records.jsonl").records
    assert [(r["attempt"], r["outcome"]) for r in records] == [(0, "infra_error"), (1, "infra_error")]
    assert not (tmp_path / "out/revisions").exists()
    assert not (tmp_path / "out/feedback").exists()


@needs_sandbox
@pytest.mark.parametrize(
    ("script", "extra_contract", "reason", "detail"),
    [
        (
            "raise ValueError('verifier bug')\n",
            {},
            "evaluator_crash",
            "trial 0: the verifier crashed: uncaught ValueError in /verifier/run.py",
        ),
        (
            "raise SystemExit(70)\n",
            {"feedback": {"evaluator_exit": [70]}},
            "evaluator_crash",
            "trial 0: the verifier reported its own failure: exit status 70 is in contract.feedback.evaluator_exit",
        ),
        (
            "import os\nraise SystemExit(int(os.environ['GATESTATS_TRIAL']))\n",
            {},
            "evaluator_nondeterministic",
            "identical bytes, different verdicts: 1 of 2 trials passed",
        ),
    ],
)
def test_evaluator_failures_block_without_a_revision(
    tmp_path: Path, script: str, extra_contract: dict[str, Any], reason: str, detail: str
) -> None:
    cases = tmp_path / "cases"
    write_case(cases, "ev", script=script)
    body = json.loads((cases / "ev" / "case.json").read_text())
    body["contract"].update(extra_contract)
    (cases / "ev" / "case.json").write_text(json.dumps(body))
    (tmp_path / "candidate" / "ev").mkdir(parents=True)
    (tmp_path / "candidate" / "ev" / "x.py").write_text("x = 1\n")
    summary = _correct(tmp_path, cases, tmp_path / "candidate", DEMO_REVISER, trials=2)
    assert (summary.cases[0].stop, summary.cases[0].detail) == (reason, detail)
    assert not (tmp_path / "out/revisions").exists()


@needs_sandbox
def test_an_assertion_raised_in_the_verifier_is_the_candidates_failure(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    write_case(cases, "cand", script="assert open('/workspace/x.py').read() == 'x = 2\\n', 'x must be 2'\n")
    (tmp_path / "candidate" / "cand").mkdir(parents=True)
    (tmp_path / "candidate" / "cand" / "x.py").write_text("x = 1\n")
    fix = _reviser(
        tmp_path, "fix", "open(os.path.join(os.environ['GATESTATS_OUTPUT'], 'x.py'), 'w').write('x = 2\\n')\n"
    )
    summary = _correct(tmp_path, cases, tmp_path / "candidate", fix)
    assert (summary.cases[0].stop, summary.cases[0].first_verdict) == ("passed", "candidate_failure")
    package = json.loads((tmp_path / "out/feedback/cand/r00/feedback.json").read_text())
    # No channel is deployable: the reviser learns that it failed, and nothing of the verifier's output.
    assert package["excerpt"] == "failed: a hidden check failed (its output is withheld)"
    assert package["files"] == []
    assert package["traceback"] is None


BAD_REVISERS = {
    "crash": ("sys.stderr.write('agent fell over\\n'); sys.exit(3)\n", "reviser_crashed",
              "the reviser exited with status 3: agent fell over"),
    "hang": ("time.sleep(30)\n", "reviser_timeout",
             "the reviser did not finish within 0.5 s (its process group was killed)"),
    "nothing": ("pass\n", "reviser_wrote_nothing", "the reviser exited 0 but output/ is empty"),
    "outside": ("open(os.path.join(os.environ['GATESTATS_CANDIDATE'], 'titles.txt'), 'w').write('x')\n"
                "open(os.path.join(os.environ['GATESTATS_OUTPUT'], 'a.py'), 'w').write('x')\n",
                "reviser_wrote_outside",
                "outside output/ (request.md, candidate/ or feedback/)"),
    "symlink": ("os.symlink('/etc/passwd', os.path.join(os.environ['GATESTATS_OUTPUT'], 'p'))\n",
                "reviser_wrote_outside", "is a symlink (to '/etc/passwd'); a revised candidate holds files only"),
    "same": ("shutil.rmtree(os.environ['GATESTATS_OUTPUT'])\n"
             "shutil.copytree(os.environ['GATESTATS_CANDIDATE'], os.environ['GATESTATS_OUTPUT'])\n",
             "reviser_same_bytes", "the revision has the bytes of the round 0 candidate"),
}  # fmt: skip


@needs_sandbox
@pytest.mark.parametrize("kind", sorted(BAD_REVISERS))
def test_bad_reviser_is_a_classified_stop_and_loses_nothing(tmp_path: Path, kind: str) -> None:
    body, reason, detail = BAD_REVISERS[kind]
    cases, candidate = _demo(tmp_path, "title-case")
    summary = _correct(tmp_path, cases, candidate, _reviser(tmp_path, kind, body), reviser_timeout=0.5)
    case = summary.cases[0]
    assert case.stop == reason
    assert detail in case.detail
    out = tmp_path / "out"
    assert (out / "revisions/title-case/r01/reviser.stderr").is_file()  # the evidence stays
    assert len(read_records(out / "rounds/title-case/r00/records.jsonl").records) == 1
    assert _journal(out)[-1]["event"] == "stopped"
    assert _journal(out)[-1]["reason"] == reason


def test_option_errors_are_refused_before_anything_is_written(tmp_path: Path) -> None:
    cases, candidate = _demo(tmp_path, "median")
    for kw, message in [
        ({"max_rounds": -1}, "--max-rounds: expected an integer >= 0 (got -1)"),
        ({"trials": 0}, "--trials: expected an integer >= 1 (got 0)"),
        ({"budget_usd": float("nan")}, "--budget-usd: expected a finite number > 0 (got nan)"),
        ({"reviser_timeout": 0}, "--reviser-timeout: expected a finite number > 0 (got 0)"),
    ]:
        with pytest.raises(OptionError) as info:
            _correct(tmp_path, cases, candidate, DEMO_REVISER, **kw)
        assert str(info.value) == message
    assert not (tmp_path / "out").exists()


def test_resume_without_a_journal_and_a_second_start_are_refused(tmp_path: Path) -> None:
    cases, candidate = _demo(tmp_path, "median")
    with pytest.raises(RunSetError, match="no correction journal"):  # no --out at all (an empty one starts)
        _correct(tmp_path, cases, candidate, DEMO_REVISER, resume=True)
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "x").write_text("")
    with pytest.raises(RunSetError, match="exists and is not empty"):
        _correct(tmp_path, cases, candidate, DEMO_REVISER)


def test_unknown_feedback_channel_is_a_case_error(tmp_path: Path) -> None:
    case = write_case(tmp_path, "c", artifacts=["reports/a.xml"])
    body = json.loads((case / "case.json").read_text())
    body["contract"]["feedback"] = {"deployable": ["reports/b.xml"]}
    (case / "case.json").write_text(json.dumps(body))
    with pytest.raises(CaseError) as info:
        load_case(case)
    assert str(info.value) == (
        f"{case / 'case.json'}: field 'contract.feedback.deployable': channel 'reports/b.xml' is neither "
        "exit_status, stdout, stderr nor an artifact path of the contract"
    )
    body["contract"]["feedback"] = {"deployable": ["reports/a.xml", "stderr"], "evaluator_exit": [70]}
    (case / "case.json").write_text(json.dumps(body))
    loaded = load_case(case).contract
    assert (loaded.deployable, loaded.evaluator_exit) == (("reports/a.xml", "stderr"), (70,))


SLOW_COUNTER_VERIFIER = """
import os, time
n = open('/workspace/n.txt').read().strip()
if n == '2':
    time.sleep(3)
os.makedirs('/workspace/reports', exist_ok=True)
with open('/workspace/reports/public.xml', 'w') as f:
    f.write(f'<testsuite><testcase classname="t" name="test_{n}"><failure message="n={n}">n={n}</failure></testcase></testsuite>')
raise SystemExit(1)
"""
SLOW_COUNTER_REVISER = COUNTER_REVISER.replace(
    "time.sleep(float(os.environ.get('REVISER_SLEEP', '0')))",
    "time.sleep(4 if os.environ['GATESTATS_ROUND'] == '1' else 0)",
)
LOOP_SCRIPT = """
import sys
from pathlib import Path
from gatestats_runner.correction import CorrectionOptions, run_correction
tmp = Path(sys.argv[1])
run_correction(CorrectionOptions(cases=tmp / 'cases', candidate=tmp / 'candidate', out=tmp / 'out', max_rounds=3,
    reviser=(sys.executable, str(tmp / 'slow.py')), resume=sys.argv[2] == 'resume'))
"""


def _kill_when(tmp_path: Path, resume: bool, event: str, rnd: int, after: float) -> None:
    """Start the loop in its own process group; kill -9 the group ``after`` s after ``event`` of round ``rnd``."""
    import signal
    import subprocess
    import time

    script = tmp_path / "loop.py"
    script.write_text(LOOP_SCRIPT)
    env = os.environ | {"PYTHONPATH": os.pathsep.join(sys.path)}
    proc = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), "resume" if resume else "new"], env=env, start_new_session=True
    )
    deadline = time.monotonic() + 60
    try:
        while time.monotonic() < deadline:
            journal = tmp_path / "out" / "journal.jsonl"
            lines = _journal(tmp_path / "out") if journal.exists() else []
            if lines and lines[-1]["event"] == event and lines[-1].get("round") == rnd:
                time.sleep(after)
                break
            assert proc.poll() is None, "the loop ended before it could be killed"
            time.sleep(0.02)
        else:
            pytest.fail(f"no {event} of round {rnd} within 60 s")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


@pytest.mark.slow  # a kill -9 loop end to end (issue 28, item 3: out of the fast loop)
@needs_sandbox
def test_kill_9_during_the_loop_then_resume_loses_and_duplicates_no_round(tmp_path: Path) -> None:
    cases, candidate = _counter_case(tmp_path)
    (cases / "counter" / "verifier" / "run.py").write_text(SLOW_COUNTER_VERIFIER)
    (tmp_path / "slow.py").write_text("import json, os, shutil, sys, time\n" + textwrap.dedent(SLOW_COUNTER_REVISER))
    _kill_when(tmp_path, False, "revision_started", 1, after=0.5)  # mid reviser call
    _kill_when(tmp_path, True, "round_started", 2, after=1.0)  # mid trial of round 2
    options = CorrectionOptions(
        cases=cases,
        candidate=candidate,
        out=tmp_path / "out",
        max_rounds=3,
        reviser=(sys.executable, str(tmp_path / "slow.py")),
        resume=True,
    )
    summary = run_correction(options)
    case = summary.cases[0]
    assert (case.stop, case.rounds) == ("round_limit", 4)
    events = _journal(tmp_path / "out")
    count = {(e["event"], e.get("round")) for e in events}
    for rnd in range(4):
        assert [e["event"] for e in events if e.get("round") == rnd and e["event"] == "round_started"] == [
            "round_started"
        ]
        assert sum(1 for e in events if e["event"] == "round_finished" and e["round"] == rnd) == 1
        records = read_records(tmp_path / f"out/rounds/counter/r{rnd:02d}/records.jsonl").records
        assert [(r["trial"], r["attempt"], r["correction_round"]) for r in records] == [(0, 0, rnd)]
    assert ("revision_started", 1) in count
    assert sum(1 for e in events if e["event"] == "revision_started" and e["round"] == 1) == 2  # the killed call, again
    assert sum(1 for e in events if e["event"] == "revision_finished" and e["round"] == 1) == 1
    lineage = case.lineage
    assert [x["parent_digest"] for x in lineage[1:]] == [x["candidate_digest"] for x in lineage[:-1]]
    assert [(tmp_path / f"out/lineage/counter/r{r:02d}/counter/n.txt").read_text() for r in range(4)] == [
        "0",
        "1",
        "2",
        "3",
    ]
    assert (tmp_path / "out/revisions/counter/r01-call2").is_dir()  # the killed call's directory is kept apart


@needs_sandbox
def test_resume_never_decides_an_earlier_round_again(tmp_path: Path) -> None:
    # Spend grows with every revision: re-deciding round 0 on resume would see round 2's spend and
    # stop there for the budget, losing two rounds. Cut the journal as a kill after round 2 started would.
    cases, candidate = _counter_case(tmp_path)
    reviser = _reviser(tmp_path, "count", COUNTER_REVISER)
    first = _correct(tmp_path, cases, candidate, reviser, budget_usd=0.003).cases[0]
    assert (first.stop, first.rounds) == ("budget_usd", 3)
    out = tmp_path / "out"
    lines = (out / "journal.jsonl").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(lines) if '"event":"round_started"' in line and '"round":2' in line)
    (out / "journal.jsonl").write_text("".join(lines[: cut + 1]))
    shutil.rmtree(out / "rounds/counter/r02")
    resumed = _correct(tmp_path, cases, candidate, reviser, budget_usd=0.003, resume=True).cases[0]
    assert (resumed.stop, resumed.rounds, resumed.usd) == ("budget_usd", 3, 0.004)
    assert [e["event"] for e in _journal(out)].count("revision_started") == 2


@needs_sandbox
def test_a_torn_journal_line_is_set_aside_on_resume(tmp_path: Path) -> None:
    cases, candidate = _demo(tmp_path, "initials")
    _correct(tmp_path, cases, candidate, DEMO_REVISER)
    journal = tmp_path / "out" / "journal.jsonl"
    whole = journal.read_bytes()
    with journal.open("ab") as handle:
        handle.write(b'{"event":"stop')
    assert len(read_rounds(tmp_path / "out")) == 1  # a reader skips the torn line and changes nothing
    with pytest.raises(RunSetError, match="last line is torn"):
        read_journal(journal)
    summary = _correct(tmp_path, cases, candidate, DEMO_REVISER, resume=True)
    assert summary.torn_line_set_aside == journal.with_name("journal.jsonl.torn-1")
    assert summary.torn_line_set_aside.read_bytes() == b'{"event":"stop'
    assert journal.read_bytes() == whole
    assert summary.cases[0].stop == "passed"


@needs_sandbox
def test_deployable_stderr_and_exit_status_give_the_first_traceback_and_the_status(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    write_case(
        cases,
        "cand",
        script="print('noise')\nassert open('/workspace/x.py').read() == 'x = 2\\n', 'x must be 2'\n",
        extra={},
    )
    body = json.loads((cases / "cand" / "case.json").read_text())
    body["contract"]["feedback"] = {"deployable": ["stderr", "exit_status"]}
    (cases / "cand" / "case.json").write_text(json.dumps(body))
    (tmp_path / "candidate" / "cand").mkdir(parents=True)
    (tmp_path / "candidate" / "cand" / "x.py").write_text("x = 1\n")
    summary = _correct(tmp_path, cases, tmp_path / "candidate", DEMO_REVISER, max_rounds=0)
    assert summary.cases[0].stop == "round_limit"
    feedback = tmp_path / "out/feedback"
    assert not feedback.exists()  # no revision may run at --max-rounds 0: no package is made
    summary = _correct(tmp_path / "again", cases, tmp_path / "candidate", _reviser(tmp_path, "nothing", "pass\n"))
    package = json.loads((tmp_path / "again/out/feedback/cand/r00/feedback.json").read_text())
    assert package["exit_status"] == {"expected": 0, "got": 1}
    assert package["traceback"].startswith("Traceback (most recent call last):\n")
    assert package["traceback"].endswith("AssertionError: x must be 2")
    assert package["excerpt"].startswith("exit_status: expected 0 (got 1)\nTraceback")
    assert [f["path"] for f in package["files"]] == ["evidence/stderr"]  # stdout stays hidden


def test_a_resumed_loop_with_no_round_left_sweeps_what_a_killed_runner_left(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A loop killed in its last round's runner, resumed after that round's records were complete: no runner starts,
    # so no runner's start-up sweep removes the killed runner's scratch (its bind mount stayed, found by the kill -9
    # loop over correct in session 41). The resume sweeps it itself; a scratch whose runner is alive stays.
    from gatestats_runner.store import LOCK

    scratch_root = tmp_path / "scratch-root"
    scratch_root.mkdir()
    monkeypatch.setattr("gatestats_runner.runset.scratch_root", lambda: scratch_root)
    cases, candidate = _demo(tmp_path, "median")
    first = _correct(tmp_path, cases, candidate, DEMO_REVISER)
    killed, alive = scratch_root / "rs-20261205T112907Z-2dc14242", scratch_root / "rs-20261205T112908Z-0a0b0c0d"
    for scratch in (killed, alive):
        (scratch / "workspace-1").mkdir(parents=True)
        (scratch / LOCK).touch()
    import fcntl

    held = os.open(alive / LOCK, os.O_RDWR)
    try:
        fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)
        again = _correct(tmp_path, cases, candidate, DEMO_REVISER, resume=True)
        assert not killed.exists()
        assert (alive / "workspace-1").is_dir()
    finally:
        os.close(held)
    assert [(c.stop, c.rounds, c.final_digest) for c in again.cases] == [
        (c.stop, c.rounds, c.final_digest) for c in first.cases
    ]
