"""Degraded machines: the runner runs with what it has and never claims a bound it could not enforce."""

from __future__ import annotations

import dataclasses
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from gatestats_runner.case import Limits
from gatestats_runner.cgroups import CgroupSupport
from gatestats_runner.runset import RunSetOptions, run_run_set
from gatestats_runner.sandbox import Capabilities, detect_capabilities, rlimit_cpu_seconds
from gatestats_runner.store import RECORDS, RunSetError, read_manifest, read_records
from gatestats_runner.workspace import sweep_mounts
from tests.runner.conftest import Trial, needs_sandbox, processes_with, write_case

pytestmark = needs_sandbox


def test_without_bubblewrap_the_manifest_says_what_is_not_enforced(tmp_path: Path) -> None:
    write_case(tmp_path / "cases", "c0", script="import os; print(os.getcwd())\n")
    (tmp_path / "candidate").mkdir()
    summary = run_run_set(
        RunSetOptions(
            cases=tmp_path / "cases",
            candidate=tmp_path / "candidate",
            out=tmp_path / "rs",
            trials=1,
            isolation="none",
            workspace="dir-copy",
        )
    )
    assert summary.complete
    isolation = read_manifest(tmp_path / "rs")["sessions"][0]["isolation"]
    assert set(isolation["not_enforced"]) == {"network", "filesystem", "disk"}
    assert "memory" in isolation["enforced"]
    [record] = read_records(tmp_path / "rs" / RECORDS).records
    assert record["outcome"] == "passed"
    assert record["source"].endswith("(none, dir-copy)")


def test_a_required_bound_that_cannot_be_enforced_stops_the_run(tmp_path: Path) -> None:
    write_case(tmp_path / "cases", "c0")
    (tmp_path / "candidate").mkdir()
    options = RunSetOptions(
        cases=tmp_path / "cases",
        candidate=tmp_path / "candidate",
        out=tmp_path / "rs",
        trials=1,
        isolation="none",
        require_enforced=("memory", "network"),
    )
    with pytest.raises(
        RunSetError,
        match=r"required bounds cannot be enforced on this machine: network: no bubblewrap: the command runs on the host",
    ):
        run_run_set(options)
    assert not (tmp_path / "rs").exists()


def test_without_cgroups_cpu_memory_and_processes_are_reported_missing() -> None:
    caps = dataclasses.replace(detect_capabilities(), cgroups=CgroupSupport())
    missing = caps.enforcement()["not_enforced"]
    assert set(missing) == {"cpu", "memory", "processes"}
    assert missing["cpu"] == "no cgroup CPU accounting: RLIMIT_CPU bounds each process, not the whole tree"


@pytest.mark.parametrize(("cpu_s", "bound", "backstop"), [(1, 1, 3), (0.2, 1, 3), (2.5, 3, 7), (600, 600, 1201)])
def test_rlimit_cpu_is_the_bound_only_without_cgroup_accounting(cpu_s: float, bound: int, backstop: int) -> None:
    """Without cgroup CPU accounting RLIMIT_CPU is the bound; with it, a backstop the cgroup's watch never reaches."""
    caps = detect_capabilities()
    limits = Limits(cpu_s=cpu_s)
    assert rlimit_cpu_seconds(dataclasses.replace(caps, cgroups=CgroupSupport()), limits) == bound
    counted = dataclasses.replace(caps, cgroups=CgroupSupport(unified=Path("/sys/fs/cgroup")))
    assert counted.cgroups.cpu_accounting is not None
    assert rlimit_cpu_seconds(counted, limits) == backstop


def test_without_bubblewrap_the_wall_clock_still_kills_the_whole_tree(
    run_case: Callable[..., Trial], caps: Capabilities, marker: str
) -> None:
    plain = dataclasses.replace(caps, isolation="none", bwrap=None)
    trial = run_case(
        f"""
        import os, time  # {marker}
        if os.fork() == 0:
            os.setsid()  # escapes the process group, not the cgroup
        time.sleep(60)
        """,
        limits={"wall_clock_s": 0.5},
        capabilities=plain,
    )
    assert (trial.record["outcome"], trial.record["bound"]) == ("resource_killed", "wall_clock")


def test_a_workspace_lost_mid_trial_is_an_infra_error(
    run_case: Callable[..., Trial], tmp_path: Path, marker: str
) -> None:
    result: list[Trial] = []
    worker = threading.Thread(
        target=lambda: result.append(run_case(f"import time; time.sleep(1.5)  # {marker}\n")),
    )
    worker.start()
    scratch = tmp_path / "scratch"
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not processes_with(marker):
        time.sleep(0.02)
    assert sweep_mounts(scratch) >= 1  # someone unmounts the workspace under the running trial
    worker.join()
    [trial] = result
    assert trial.record["outcome"] == "infra_error"
    assert trial.evidence["infra_error"] == "workspace lost: the trial's workspace disappeared while the command ran"


@pytest.fixture
def bwrap_without_cgroups(caps: Capabilities) -> Capabilities:
    if caps.isolation != "bwrap":
        pytest.fail("these tests need bubblewrap (.ci/run installs it)")
    return dataclasses.replace(caps, cgroups=CgroupSupport())


def test_under_bubblewrap_without_cgroups_a_cpu_hog_is_killed_for_cpu(
    run_case: Callable[..., Trial], bwrap_without_cgroups: Capabilities
) -> None:
    """RLIMIT_CPU is the bound there; the runner samples the command's own CPU time to confirm SIGXCPU.

    Before session 37 the only account was bubblewrap's rusage (≈0.003 s: bubblewrap does not reap
    the sandbox's init), so a genuine CPU kill was recorded as an ordinary failure (exit 152).
    """
    trial = run_case(
        "while True:\n    pass\n", limits={"cpu_s": 1, "wall_clock_s": 20}, capabilities=bwrap_without_cgroups
    )
    assert (trial.record["outcome"], trial.record["bound"]) == ("resource_killed", "cpu"), trial.evidence["execution"]
    # 0.87-1.02 s sampled at load 10 (the kernel's tick-sampled time runs ahead): OWN_CPU_CONFIRMS is 0.5
    assert trial.evidence["execution"]["sampled_cpu_seconds"] >= 0.5
    assert trial.evidence["execution"]["rusage_cpu_seconds"] < 0.1  # bubblewrap's own: why it is sampled


@pytest.mark.parametrize(
    "fake",
    [
        "os.kill(os.getpid(), signal.SIGXCPU)",
        # the CPU is burnt by a child: the main process's own time stays far below the bound
        "import subprocess\nsubprocess.run([sys.executable, '-c', 'import time\\nt=time.process_time()\\n"
        "while time.process_time() - t < 1.2: pass'])\nos.kill(os.getpid(), signal.SIGXCPU)",
    ],
)
def test_under_bubblewrap_without_cgroups_a_faked_sigxcpu_is_an_ordinary_failure(
    run_case: Callable[..., Trial], bwrap_without_cgroups: Capabilities, fake: str
) -> None:
    trial = run_case(
        f"import os, signal, sys\n{fake}\n", limits={"cpu_s": 1, "wall_clock_s": 20}, capabilities=bwrap_without_cgroups
    )
    assert (trial.record["outcome"], trial.record["bound"], trial.record["exit_code"]) == ("failed", None, 152)
