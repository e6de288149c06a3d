"""Clean-up off the trial's path: steps run in order, close waits and reports, a trial does not wait for them."""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from gatestats_runner.case import load_case
from gatestats_runner.cgroups import _exiting
from gatestats_runner.sandbox import Capabilities
from gatestats_runner.teardown import Teardown
from gatestats_runner.trial import TrialSpec, run_trial
from tests.runner.conftest import cgroups_left, mounts_under, needs_sandbox, write_case


def test_steps_run_in_the_order_they_were_deferred_and_close_waits_for_them() -> None:
    done: list[int] = []

    def step(i: int) -> Callable[[], None]:
        def run() -> None:
            time.sleep(0.002)
            done.append(i)

        return run

    teardown = Teardown(limit=4)
    for i in range(10):
        teardown.defer(step(i))
    teardown.close()
    assert done == list(range(10))


def test_close_raises_the_first_error_after_every_step_ran() -> None:
    done: list[str] = []

    def fail(text: str) -> Callable[[], None]:
        def step() -> None:
            done.append(text)
            raise OSError(text)

        return step

    teardown = Teardown(limit=2)
    teardown.defer(fail("first"))
    teardown.defer(fail("second"))
    teardown.defer(lambda: done.append("third"))
    with pytest.raises(OSError, match=r"^first$"):
        teardown.close()
    assert done == ["first", "second", "third"]


def test_defer_blocks_while_limit_steps_wait() -> None:
    gate = threading.Event()
    teardown = Teardown(limit=2)
    teardown.defer(gate.wait)  # running
    teardown.defer(lambda: None)  # waiting: the limit is reached
    third = threading.Thread(target=teardown.defer, args=(lambda: None,))
    third.start()
    third.join(0.2)
    assert third.is_alive(), "a third step was queued beyond the limit"
    gate.set()
    third.join(5)
    assert not third.is_alive()
    teardown.close()


def test_a_step_deferred_after_close_runs_at_once() -> None:
    teardown = Teardown(limit=1)
    teardown.close()
    done: list[int] = []
    teardown.defer(lambda: done.append(1))
    assert done == [1]


def test_a_limit_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^limit: expected an integer >= 1 \(got 0\)$"):
        Teardown(limit=0)


def test_a_running_process_is_not_exiting_and_a_reaped_one_is_gone() -> None:
    assert _exiting(os.getpid()) is False
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    assert _exiting(pid) is True


@needs_sandbox
def test_a_trial_returns_before_its_cgroups_and_workspace_are_removed(tmp_path: Path, caps: Capabilities) -> None:
    case_dir = write_case(tmp_path / "cases", "fast", command=["true"])
    run_set_id = f"rs-test-{uuid.uuid4().hex}"
    spec = TrialSpec(
        case=load_case(case_dir),
        candidate_layer=None,
        candidate_digest="sha256:test",
        trial=0,
        attempt=0,
        run_set_id=run_set_id,
        record_base={"system": "test"},
        evidence_dir=tmp_path / "evidence",
        evidence_rel="trials/fast/t0000-a0",
        scratch=tmp_path / "scratch",
    )
    steps: list[Callable[[], None]] = []
    result = run_trial(spec, caps, defer=steps.append)
    assert result.record["outcome"] == "passed", result.evidence
    assert result.evidence["execution"]["leftover_processes"] is False
    assert len(steps) == 2  # the cgroups, then the workspace
    assert mounts_under(tmp_path / "scratch") != []
    if caps.cgroups.unified or caps.cgroups.memory or caps.cgroups.pids:
        assert cgroups_left(caps, run_set_id) != []
    for step in steps:
        step()
    assert cgroups_left(caps, run_set_id) == []
    assert mounts_under(tmp_path / "scratch") == []


_MAIN_THREAD_EXITS = """
import ctypes, sys, threading, time
path = sys.argv[1]
def write_on() -> None:
    while True:
        with open(path, "a") as f:
            f.write("x")
        time.sleep(0.01)
threading.Thread(target=write_on, daemon=False).start()
time.sleep(0.1)
ctypes.CDLL(None).pthread_exit(None)  # the main thread ends; the writer thread runs on
"""


@needs_sandbox
def test_settle_kills_a_process_whose_main_thread_exited_while_its_threads_run(
    tmp_path: Path, caps: Capabilities
) -> None:
    """Such a process shows PF_EXITING like a dying one: settle() once took it for gone and left it running."""
    import subprocess
    import sys

    from gatestats_runner.cgroups import TrialCgroup

    if caps.cgroups is None:
        pytest.skip("no cgroups")
    cgroup = TrialCgroup(caps.cgroups, f"gatestats-test-{uuid.uuid4().hex[:8]}", memory_bytes=1 << 28, processes=64)
    out = tmp_path / "written"
    child = subprocess.Popen([sys.executable, "-c", _MAIN_THREAD_EXITS, str(out)])
    try:
        for procs in cgroup.procs_files:
            Path(procs).write_text(str(child.pid))
        deadline = time.monotonic() + 10
        while not (_exiting(child.pid) and out.exists()) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _exiting(child.pid), "the child's main thread did not exit"
        assert cgroup.settle() is True
        time.sleep(0.1)
        size = out.stat().st_size
        time.sleep(0.3)
        assert out.stat().st_size == size, "a thread of the trial still wrote after settle()"
    finally:
        child.kill()
        child.wait()
        cgroup.remove_when_empty()
