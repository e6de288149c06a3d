"""``kill -9`` loops over ``report``, ``gate -o`` and ``correct`` (issue 24, "Must show").

Each command runs as its own process (the installed ``gatestats`` script, its own process group) and is
killed with SIGKILL: once at the moment its output appears (the build's lock file for ``report``, the
``--out`` folder for ``correct``), then at delays drawn from ``random.Random(SEED)``. Then it runs to
the end: that last run is never killed and only its exit code, stderr and files are read, so it runs in
this process (:func:`_in_process`; ``gate`` and ``correct`` since session 42, ``report`` since session 45,
whose kernel stays a process of its own). Each loop must end with no litter (no ``.building-*``, ``*.tmp``,
``.creating-*``, kernel connection file, and no process of the killed command left), with every version of the report that
existed before untouched and the next version correct, and, for ``correct``, with a loop that resumes
to the same stops as a loop never killed. Slow, each wait bounded: measured on the shared 2-core
machine (seed 20261203), ``report`` 88-98 s (4 kills, then the next version), ``gate -o`` 24-32 s
(6 kills; since session 41 5 kills: at the first temporary file, in each third of the time before
it, and when the verdict is linked), ``correct`` 14-28 s (a clean loop, 6 kills, the resume; since session 41 each resume is killed after 1-3 new
journal events, so every kill lands in work that is left).
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any
from unittest import mock

import pytest

from gatestats.gate import read_verdict
from gatestats.report.release import load_release_data
from tests.report.scenarios import make_one_trial_verdict

pytestmark = pytest.mark.slow

SEED = 20261203
GATESTATS = Path(sys.executable).with_name("gatestats")
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "correction"
LITTER = re.compile(r"^\.building-|\.tmp$|\.creating-|^\.kernel-.*\.json$|\.lock\.new$")
#: Most seconds any one command may run (a bound, not an expectation).
BOUND_S = 600


def _litter(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*") if LITTER.search(p.name))


def _env(tmp_path: Path) -> dict[str, str]:
    tmp = tmp_path / "systmp"
    tmp.mkdir(exist_ok=True)
    return os.environ | {"TMPDIR": str(tmp)}  # what the command leaves in its temporary directory is seen


def _start(args: list[str], tmp_path: Path) -> subprocess.Popen[bytes]:
    """Start ``args`` in its own session; its stderr goes to ``tmp_path/stderr/N.txt`` (read by failure messages)."""
    logs = tmp_path / "stderr"
    logs.mkdir(exist_ok=True)
    with (logs / f"{len(os.listdir(logs))}.txt").open("wb") as err:
        return subprocess.Popen(
            args, cwd=tmp_path, env=_env(tmp_path), stdout=subprocess.DEVNULL, stderr=err, start_new_session=True
        )


def _stderr(tmp_path: Path) -> str:
    """What the started commands wrote to stderr, numbered (for a failure message)."""
    logs = sorted((tmp_path / "stderr").glob("*.txt"), key=lambda p: int(p.stem))
    return "\n".join(f"[{p.stem}] {p.read_text(errors='replace')[-2000:]}" for p in logs)


def _kill(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=60)


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """Run ``args`` to the end (bounded)."""
    return subprocess.run(
        args, check=False, cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True, timeout=BOUND_S
    )


def _in_process(args: list[str], tmp_path: Path) -> Any:
    """Run ``args`` (the installed script and its arguments) to the end in this process, as :func:`_run` would.

    typer's CliRunner, in ``tmp_path`` with :func:`_env`'s temporary directory. For the runs that are not killed
    and are read only for their exit code, stderr and files (session 42: a process's start-up cost ~0.5 CPU-s
    each); the killed runs are processes.
    """
    from typer.testing import CliRunner

    from gatestats.cli import app

    assert args[0] == str(GATESTATS)
    env = _env(tmp_path)
    with (
        mock.patch.dict(os.environ, env),
        mock.patch.object(tempfile, "tempdir", env["TMPDIR"]),
        contextlib.chdir(tmp_path),
    ):
        return CliRunner().invoke(app, args[1:])


def _kill_when(
    args: list[str], tmp_path: Path, *, appeared: Path | None = None, prefix: str = "", delay: float = 0.0
) -> bool:
    """Run ``args``; SIGKILL its group when ``appeared`` (or an entry of it named ``prefix…``) exists, or after ``delay`` s.

    Returns whether it was killed (False: it finished first).
    """
    proc = _start(args, tmp_path)
    deadline = time.monotonic() + BOUND_S
    try:
        if appeared is None:
            time.sleep(delay)
        else:
            while time.monotonic() < deadline and proc.poll() is None:
                if (not prefix and appeared.exists()) or (
                    prefix and appeared.is_dir() and any(n.startswith(prefix) for n in os.listdir(appeared))
                ):
                    break
                time.sleep(0.0005)
        return proc.poll() is None
    finally:
        _kill(proc)


def _lines(path: Path) -> int:
    try:
        return path.read_bytes().count(b"\n")
    except FileNotFoundError:
        return 0


def _kill_after_events(args: list[str], tmp_path: Path, journal: Path, *, events: int, extra: float) -> bool:
    """Run ``args``; SIGKILL its group ``extra`` s after ``journal`` has ``events`` more lines than at its start.

    Returns whether it was killed (False: it finished first).
    """
    start = _lines(journal)
    proc = _start(args, tmp_path)
    deadline = time.monotonic() + BOUND_S
    try:
        while time.monotonic() < deadline and proc.poll() is None and _lines(journal) < start + events:
            time.sleep(0.002)
        time.sleep(extra)
        return proc.poll() is None
    finally:
        _kill(proc)


def _mounts_under(root: Path) -> list[str]:
    """Mount points under ``root`` (a killed runner's scratch and workspaces until something sweeps them)."""
    prefix = os.path.realpath(root) + "/"
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        return [f.split()[4] for f in handle if f.split()[4].replace("\\040", " ").startswith(prefix)]


def _no_process_mentions(text: str) -> list[str]:
    """Command lines of live processes that mention ``text`` (waits up to 15 s for orphans to notice)."""
    deadline = time.monotonic() + 15
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
                except OSError:
                    continue
                if text in cmdline and entry.name != str(os.getpid()):
                    found.append(cmdline)
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.5)


def _versions(release: Path) -> list[str]:
    """The version directories of ``release``, in order."""
    return sorted((n for n in os.listdir(release) if n.isdigit()), key=int)


def test_kill_9_loop_over_report_ends_clean_with_the_next_version(tmp_path: Path) -> None:
    verdict = make_one_trial_verdict(tmp_path / "s")
    out = tmp_path / "reports"
    release = out / "test-policy-candidate"
    (release / "1").mkdir(parents=True)
    (release / "1" / "made-before.txt").write_text("version 1, never touched")
    args = [str(GATESTATS), "report", str(verdict), "--out", str(out)]
    # kills at random moments of a build: fractions of the time one whole build takes here, now (a render
    # takes 8-90 s with the machine's load; fixed delays sometimes outlived it)
    start = time.monotonic()
    timing = _run([str(GATESTATS), "report", str(verdict), "--out", str(tmp_path / "timing")], tmp_path)
    assert timing.returncode == 0, timing.stderr
    whole = time.monotonic() - start
    rng = random.Random(SEED)
    delays = [rng.uniform(0.1, 0.5) * whole for _ in range(3)]
    assert _kill_when(args, tmp_path, appeared=release, prefix=".building-")  # at the build's first file
    finished = 0  # builds that placed their version before their kill (the machine got quieter than when timed)
    for delay in delays:
        tries = [delay / 2**i for i in range(6)]  # a build that outran its kill is followed by one killed sooner
        # A build that outran its kill: it ended first, or was killed after placing its version (between the
        # rename and its exit; seen at load 17). Its version is whole (checked below with every version made).
        while not _kill_when(args, tmp_path, delay=tries.pop(0)) or _versions(release)[-1] == str(finished + 2):
            finished += 1
            assert tries, f"every build outran its kill (delay {delay:.2f} s of {whole:.1f} s): " + _stderr(tmp_path)
        # no version was taken by a build killed before it placed it: only version 1 and the builds that finished
        assert _versions(release) == [str(v) for v in range(1, finished + 2)]
    # Run to the end in this process (only its exit code, stderr and files are read; session 45: a process's start-up
    # and imports, ~0.5-0.8 CPU-s); its kernel is still a process of its own. The killed builds above are processes.
    done = _in_process(args, tmp_path)
    assert done.exit_code == 0, done.stderr
    # the next version; abandoned builds and locks swept
    assert sorted(os.listdir(release), key=lambda n: n.zfill(12)) == [str(v) for v in range(1, finished + 3)]
    assert (release / "1" / "made-before.txt").read_text() == "version 1, never touched"
    for version in range(2, finished + 3):  # every version made (the last one and any that outran a kill) is whole
        made = json.loads((release / str(version) / "report.json").read_text())
        assert made["verdict_digest"] == read_verdict(verdict).digest
        data = load_release_data(release / str(version) / "data")  # digests checked
        assert data.verdict.verdict == "insufficient_evidence"
        assert (release / str(version) / "report.html").stat().st_size > 0
    assert _litter(tmp_path) == []
    assert list((tmp_path / "systmp").iterdir()) == []
    assert _no_process_mentions(str(tmp_path)) == []  # no kernel of a killed render left running


def test_kill_9_loop_over_gate_output_ends_clean(tmp_path: Path) -> None:
    make_one_trial_verdict(tmp_path / "s")  # its policy and run sets (the verdict itself is not used)
    s = tmp_path / "s"
    outs = tmp_path / "out"
    outs.mkdir()

    def args(n: int) -> list[str]:
        files = ["-o", f"verdict-{n}.json", "--markdown", f"verdict-{n}.md", "--junit", f"verdict-{n}.xml"]
        return [str(GATESTATS), "gate", "--policy", str(s / "policy.toml"), "--baseline", str(s / "base"),
                "--candidate", str(s / "cand"), *[str(outs / f) if f.startswith("verdict") else f for f in files]]  # fmt: skip

    # Kills in each phase of a run (were 6 kills at 0.5-6.0 s, most outliving a run on a quiet machine, where it takes
    # about 2 s, each then run twice more): when its first temporary file appears (writing), at random moments
    # before that (starting, reading, computing: thirds of the time it took), and when the verdict is linked
    # (the summary and JUnit files may not be yet).
    rng = random.Random(SEED)
    n = 0

    def kill(**when: Any) -> None:
        nonlocal n
        _kill_when(args(n), tmp_path, **when)
        written = outs / f"verdict-{n}.json"
        if written.exists():  # killed after the verdict was linked: it is whole, and its path is now taken
            assert read_verdict(written).verdict.verdict == "insufficient_evidence"
            taken = _in_process(
                args(n), tmp_path
            )  # refused, and it sweeps the killed run's temporary files (litter below)
            assert taken.exit_code == 2
            assert "already exists" in taken.stderr
            n += 1

    start = time.monotonic()
    kill(appeared=outs, prefix=f".verdict-{n}.")
    to_writing = time.monotonic() - start
    for third in range(3):
        kill(delay=(third + rng.uniform(0.1, 0.9)) / 3 * to_writing)
    kill(appeared=outs / f"verdict-{n}.json")
    done = _in_process(args(n), tmp_path)
    assert done.exit_code == 12, done.stderr  # the scenario's verdict: insufficient evidence
    assert read_verdict(outs / f"verdict-{n}.json").verdict.verdict == "insufficient_evidence"
    # A path taken by a killed run was swept of its temporary files by the next run on it (the refusal above;
    # session 42: a second refusal of each taken path here repeated it). The killed runs' other files by the last.
    assert _litter(outs) == []


def _stops(out: Path) -> dict[str, tuple[str, int]]:
    events = [json.loads(line) for line in (out / "journal.jsonl").read_text().splitlines()]
    stops = [e for e in events if e["event"] == "stopped"]
    assert len(stops) == len({e["case_id"] for e in stops}), "a case stopped twice"
    finished = [(e["case_id"], e["round"]) for e in events if e["event"] == "round_finished"]
    assert len(finished) == len(set(finished)), "a round was journaled as finished twice"
    return {e["case_id"]: (e["reason"], e["round"]) for e in stops}


def test_kill_9_loop_over_correct_resumes_to_the_same_stops(tmp_path: Path) -> None:
    cases, candidate = tmp_path / "cases", tmp_path / "candidate"
    shutil.copytree(EXAMPLE / "cases", cases)
    shutil.copytree(EXAMPLE / "candidate", candidate)
    base = [str(GATESTATS), "correct", str(cases), "--candidate", str(candidate), "--reviser",
            f"{sys.executable} {EXAMPLE / 'reviser.py'}", "--isolation", "none"]  # fmt: skip
    never_killed = _in_process([*base, "--out", str(tmp_path / "clean")], tmp_path)
    assert never_killed.exit_code == 0, never_killed.stderr
    out = tmp_path / "out"
    first = _kill_when([*base, "--out", str(out)], tmp_path, appeared=out)  # just after --out appears
    assert first
    # Each resume is killed after its journal has grown by 1-3 events (and 0-30 ms): a kill lands in the work that is
    # left whatever the machine's speed. Delays drawn in seconds did not: the whole loop takes ~1 s on a quiet machine,
    # so the first resume finished before its kill and the others had nothing left to kill (session 41).
    rng = random.Random(SEED)
    journal = out / "journal.jsonl"
    landed = [
        _kill_after_events(
            [*base, "--out", str(out), "--resume"],
            tmp_path,
            journal,
            events=rng.randint(1, 3),
            extra=rng.uniform(0, 0.03),
        )
        for _ in range(5)
    ]
    assert landed == [True] * 5, (landed, _stderr(tmp_path))
    done = _in_process([*base, "--out", str(out), "--resume"], tmp_path)
    assert done.exit_code == 0, done.stderr
    assert _stops(out) == _stops(tmp_path / "clean")
    assert _litter(out) == []
    assert _mounts_under(tmp_path) == []  # a killed round's scratch is swept by the resume, even with no round left
    assert _no_process_mentions(str(out)) == []
