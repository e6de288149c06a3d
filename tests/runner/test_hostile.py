"""Hostile candidates: every test asserts the exact outcome and bound, and that nothing of the trial is left.

Scripts that try to escape exit 0 when the escape worked (the contract expects 0, so an escape
would *pass*) and 3 when they were blocked; ``failed`` with exit code 3 therefore proves that
the script ran, tried and was stopped. Resource hogs must end as ``resource_killed`` with the
bound that fired and the kernel's evidence. The ``marker`` fixture fails the test if any process
carrying the trial's marker is still alive afterwards.
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from gatestats_runner.runset import RunSetOptions, run_run_set
from gatestats_runner.sandbox import Capabilities, output_shares
from gatestats_runner.store import read_records
from tests.runner.conftest import Trial, assert_no_leftovers, needs_sandbox, write_case

pytestmark = needs_sandbox

BLOCKED = 3


def _blocked(trial: Trial) -> None:
    assert trial.record["outcome"] == "failed", trial.evidence.get("excerpt")
    assert trial.record["failed_check"] == "exit_status"
    assert trial.record["exit_code"] == BLOCKED, trial.stderr()
    assert trial.record["bound"] is None


def _killed(trial: Trial, bound: str) -> None:
    assert trial.record["outcome"] == "resource_killed", (trial.record, trial.evidence)
    assert trial.record["bound"] == bound, trial.evidence
    # Every bound fires after the candidate's process started: evidence.json says so.
    assert trial.evidence["execution"]["started"] is True, trial.evidence
    assert json.loads((trial.dir / "evidence.json").read_text())["execution"]["started"] is True


@pytest.fixture
def scratch(tmp_path: Path) -> Path:
    return tmp_path / "scratch"


def test_tcp_to_a_listener_outside_the_sandbox_is_refused(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    listener.setblocking(False)
    port = listener.getsockname()[1]
    try:
        trial = run_case(
            f"""
            import socket, sys  # {marker}
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3).sendall(b"escaped")
            except OSError as exc:
                print("blocked:", exc)
                sys.exit(3)
            sys.exit(0)
            """,
        )
        with pytest.raises(BlockingIOError):
            listener.accept()
    finally:
        listener.close()
    _blocked(trial)
    assert "Connection refused" in trial.stdout()
    assert_no_leftovers(trial, caps, scratch)


def test_dns_lookup_fails(run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str) -> None:
    trial = run_case(
        f"""
        import socket, sys  # {marker}
        try:
            print(socket.getaddrinfo("example.com", 443))
        except OSError as exc:
            print("blocked:", exc)
            sys.exit(3)
        sys.exit(0)
        """
    )
    _blocked(trial)
    assert_no_leftovers(trial, caps, scratch)


def test_unix_sockets_outside_the_workspace_are_unreachable(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, tmp_path: Path, marker: str
) -> None:
    path = tmp_path / "host.sock"
    abstract = f"\0gatestats-test-{uuid.uuid4().hex}"
    servers = [socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) for _ in range(2)]
    servers[0].bind(str(path))
    servers[1].bind(abstract)
    for server in servers:
        server.listen(4)
        server.setblocking(False)
    try:
        trial = run_case(
            f"""
            import socket, sys  # {marker}
            reached = []
            for address in ({str(path)!r}, {abstract!r}):
                s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                try:
                    s.connect(address)
                    reached.append(address)
                except OSError as exc:
                    print("blocked:", repr(address), exc)
            sys.exit(0 if reached else 3)
            """
        )
        for server in servers:
            with pytest.raises(BlockingIOError):
                server.accept()
    finally:
        for server in servers:
            server.close()
    _blocked(trial)
    assert_no_leftovers(trial, caps, scratch)


def test_fork_bomb_is_killed_by_the_process_bound(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import os  # {marker}
        while True:
            try:
                os.fork()
            except OSError:
                pass
        """,
        limits={"processes": 32, "wall_clock_s": 20},
    )
    _killed(trial, "processes")
    assert trial.evidence["execution"]["pids_events_max"] >= 1
    assert trial.evidence["execution"]["killed_after_seconds"] < 10
    assert_no_leftovers(trial, caps, scratch)


def test_memory_balloon_is_killed_by_the_memory_bound(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        blocks = []  # {marker}
        while True:
            blocks.append(bytearray(16 * 1024 * 1024))
        """,
        limits={"memory_mb": 64},
    )
    _killed(trial, "memory")
    assert trial.evidence["execution"]["oom_kill"] >= 1
    assert_no_leftovers(trial, caps, scratch)


def test_filling_the_disk_is_killed_by_the_disk_bound(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import sys  # {marker}
        chunk = b"x" * (1 << 20)
        with open("/workspace/fill", "wb") as handle:
            try:
                while True:
                    handle.write(chunk)
                    handle.flush()
            except OSError as exc:
                print("disk full:", exc)
        sys.exit(0)
        """,
        limits={"disk_mb": 16, "memory_mb": 256},
    )
    _killed(trial, "disk")
    assert trial.evidence["execution"]["disk_free_bytes"] < 16 * 1024
    assert_no_leftovers(trial, caps, scratch)


def test_a_gigabyte_to_stdout_is_killed_by_the_output_bound(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import sys  # {marker}
        chunk = b"y" * (1 << 20)
        for _ in range(1024):
            sys.stdout.buffer.write(chunk)
        """,
        limits={"output_mb": 1, "disk_mb": 8},
    )
    _killed(trial, "output")
    kept = (trial.dir / "stdout").stat().st_size + (trial.dir / "stderr").stat().st_size
    assert kept == 1 << 20  # the evidence holds exactly the bound: the first bytes
    output = trial.evidence["execution"]["output"]
    assert output["stdout_bytes"] >= 1 << 20
    assert output["cut_bytes"] == output["stdout_bytes"] + output["stderr_bytes"] - (1 << 20)
    assert_no_leftovers(trial, caps, scratch)


def test_output_far_past_the_bound_keeps_only_the_first_bytes_up_to_the_bound(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import sys  # {marker}
        sys.stderr.write("starting\\n")
        sys.stderr.flush()
        line = 0
        while True:
            sys.stdout.write(f"{{line:09d}}\\n" * 1024)
            line += 1
        """,
        limits={"output_mb": 1, "disk_mb": 64},
    )
    _killed(trial, "output")
    stdout, stderr = (trial.dir / "stdout").read_bytes(), (trial.dir / "stderr").read_bytes()
    assert stderr == b"starting\n"
    assert len(stdout) + len(stderr) == 1 << 20
    expected = b"".join(f"{i:09d}\n".encode() * 1024 for i in range(len(stdout) // 10240 + 1))
    assert stdout == expected[: len(stdout)]  # the first bytes, unchanged
    output = trial.evidence["execution"]["output"]
    assert output["limit_bytes"] == 1 << 20
    assert (output["stdout_kept_bytes"], output["stderr_kept_bytes"]) == (len(stdout), len(stderr))
    assert output["stdout_bytes"] > len(stdout)
    assert output["cut_bytes"] == output["stdout_bytes"] - len(stdout) > 0
    assert trial.record["stdout_digest"] == "sha256:" + hashlib.sha256(stdout).hexdigest()
    assert_no_leftovers(trial, caps, scratch)


@pytest.mark.parametrize(
    ("stdout", "stderr", "kept"),
    [
        (10, 20, (10, 20)),  # both fit
        (100, 100, (50, 50)),  # each keeps its half
        (100, 5, (95, 5)),  # a short stderr leaves the rest to stdout
        (5, 100, (5, 95)),  # and the other way round
        (101, 101, (51, 50)),  # an odd bound: stdout gets the extra byte
        (100, 0, (100, 0)),
    ],
)
def test_output_shares_never_exceed_the_bound(stdout: int, stderr: int, kept: tuple[int, int]) -> None:
    limit = 100 if stdout != 101 else 101
    assert output_shares(stdout, stderr, limit) == kept
    assert sum(output_shares(stdout, stderr, limit)) <= limit


def test_a_descriptor_inherited_by_the_runner_is_closed_in_the_sandbox(
    run_case: Callable[..., Trial], tmp_path: Path, marker: str
) -> None:
    leak = tmp_path / "runner-log"
    fd = os.open(leak, os.O_WRONLY | os.O_CREAT, 0o644)
    os.set_inheritable(fd, True)  # as a CI job's pipe or log file would be
    try:
        trial = run_case(
            f"""
            import os, sys  # {marker}
            try:
                os.write({fd}, b"forged")
            except OSError:
                sys.exit(3)
            sys.exit(0)
            """
        )
    finally:
        os.close(fd)
    _blocked(trial)
    assert leak.read_bytes() == b""


def test_an_infinite_loop_is_killed_by_the_wall_clock(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import time  # {marker}
        while True:
            time.sleep(0.01)
        """,
        limits={"wall_clock_s": 0.5, "cpu_s": 30},
    )
    _killed(trial, "wall_clock")
    assert 0.5 <= trial.evidence["execution"]["killed_after_seconds"] < 2.5
    assert_no_leftovers(trial, caps, scratch)


def test_cpu_burnt_across_four_processes_is_killed_by_the_whole_tree_cpu_bound(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import os  # {marker}
        for _ in range(3):
            if os.fork() == 0:
                break
        while True:
            pass
        """,
        limits={"cpu_s": 1, "wall_clock_s": 20},
    )
    _killed(trial, "cpu")
    execution = trial.evidence["execution"]
    assert execution["cpu_seconds"] >= 1.0
    # The whole tree's CPU fired, not a per-process RLIMIT_CPU (no SIGXCPU): each of the four
    # processes had used about a quarter of the CPU-second when the runner killed them all.
    assert "signal" not in execution
    assert execution["killed_after_seconds"] < 10
    assert_no_leftovers(trial, caps, scratch)


def test_a_double_forked_daemon_does_not_outlive_the_trial(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import os, sys, time  # {marker}
        if os.fork() == 0:
            os.setsid()
            if os.fork() == 0:
                print("daemon holding stdout", flush=True)
                time.sleep(600)
            os._exit(0)
        time.sleep(0.2)
        sys.exit(0)
        """,
        limits={"wall_clock_s": 20},
    )
    assert trial.record["outcome"] == "passed"
    assert trial.evidence["execution"]["wall_seconds"] < 5
    assert_no_leftovers(trial, caps, scratch)


def test_writing_outside_the_workspace_fails(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, tmp_path: Path, marker: str
) -> None:
    host_target = tmp_path / "escaped.txt"
    targets = [
        "/usr/escaped",
        "/etc/escaped",
        "/verifier/escaped",
        "/escaped",  # the sandbox's own root: read-only too, or it would bypass the disk bound
        "/dev/escaped",
        str(host_target),
        "/root/escaped",
        "/proc/sys/vm/drop_caches",  # a global sysctl: needs capabilities the sandbox does not have
        "/proc/sysrq-trigger",
        "/proc/sys/kernel/core_pattern",
    ]
    host_name = socket.gethostname()
    trial = run_case(
        f"""
        import os, sys  # {marker}
        written = []
        for target in {targets!r}:
            try:
                if target.startswith("/proc/"):  # opening for writing is proof enough; never write a knob
                    os.close(os.open(target, os.O_WRONLY))
                else:
                    fd = os.open(target, os.O_WRONLY | os.O_CREAT, 0o644)
                    os.write(fd, b"escaped")
                    os.close(fd)
                written.append(target)
            except OSError as exc:
                print("blocked:", target, exc)
        for allowed in ("/workspace/ok", "/tmp/ok", "/dev/shm/ok"):
            with open(allowed, "w") as handle:
                handle.write("allowed")
        print("written:", written)
        sys.exit(0 if written else 3)
        """
    )
    _blocked(trial)
    assert socket.gethostname() == host_name
    assert not host_target.exists()
    for target in targets[:2]:
        assert not Path(target).exists()
    assert_no_leftovers(trial, caps, scratch)


def test_reading_root_shadow_and_the_runner_environment_finds_nothing(
    run_case: Callable[..., Trial],
    caps: Capabilities,
    scratch: Path,
    marker: str,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secret = f"secret-{uuid.uuid4().hex}"
    monkeypatch.setenv("GATESTATS_TEST_SECRET", secret)
    trial = run_case(
        f"""
        import glob, os, sys  # {marker}
        found = []
        if os.path.exists("/root"):
            found.append("/root exists")
        if any({secret!r} in v for v in os.environ.values()):
            found.append("environment")
        for path in glob.glob("/proc/*/environ"):
            try:
                if {secret!r}.encode() in open(path, "rb").read():
                    found.append(path)
            except OSError:
                pass
        try:
            if open("/etc/shadow").read():
                found.append("/etc/shadow")
        except OSError:
            pass
        print("found:", found, "env keys:", sorted(os.environ))
        sys.exit(0 if found else 3)
        """
    )
    _blocked(trial)
    assert secret not in trial.stdout()
    assert_no_leftovers(trial, caps, scratch)


def test_killing_its_parent_and_everything_else_leaves_the_runner_alive(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, marker: str
) -> None:
    trial = run_case(
        f"""
        import os, signal, sys  # {marker}
        for target in (os.getppid(), 1, -1):
            try:
                os.kill(target, signal.SIGKILL)
            except OSError as exc:
                print("kill", target, exc)
        print("still here")
        sys.exit(3)
        """
    )
    _blocked(trial)
    assert "still here" in trial.stdout()
    assert_no_leftovers(trial, caps, scratch)


def test_appending_to_the_run_set_records_is_impossible(tmp_path: Path, caps: Capabilities, marker: str) -> None:
    out = tmp_path / "run-set"
    records = out / "records.jsonl"
    cases = tmp_path / "cases"
    write_case(
        cases,
        "append",
        script=f"""
        import glob, sys  # {marker}
        line = '{{"outcome": "passed"}}\\n'
        done = []
        for path in [{str(records)!r}, *glob.glob("/proc/*/fd/*"), *glob.glob("/proc/*/cwd/records.jsonl")]:
            try:
                with open(path, "a") as handle:
                    handle.write(line)
                done.append(path)
            except OSError:
                pass
        print("appended to:", done)
        sys.exit(3)
        """,
    )
    candidate = tmp_path / "candidate"
    candidate.mkdir()
    summary = run_run_set(RunSetOptions(cases=cases, candidate=candidate, out=out, trials=2))
    assert summary.complete
    lines = records.read_text().splitlines()
    assert len(lines) == 2
    assert [json.loads(line)["outcome"] for line in lines] == ["failed", "failed"]
    assert [r["exit_code"] for r in read_records(records).records] == [BLOCKED, BLOCKED]


def test_the_leftover_detector_sees_a_live_process_with_the_marker() -> None:
    """Guards the guard: the ``marker`` check would notice a surviving process."""
    import subprocess
    import sys

    from tests.runner.conftest import processes_with

    value = f"gatestats-detector-{uuid.uuid4().hex}"
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", value])
    try:
        deadline = time.monotonic() + 5
        while not processes_with(value) and time.monotonic() < deadline:
            time.sleep(0.01)
        assert processes_with(value) == [proc.pid]
    finally:
        proc.kill()
        proc.wait()
    assert processes_with(value) == []


@pytest.mark.parametrize(
    "fake",
    [
        "sys.exit(152)",
        "os.kill(os.getpid(), signal.SIGXCPU)",
        # CPython ignores SIGXFSZ unless told otherwise
        "signal.signal(signal.SIGXFSZ, signal.SIG_DFL); os.kill(os.getpid(), signal.SIGXFSZ)",
    ],
)
def test_faking_a_resource_signal_is_an_ordinary_failure(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path, fake: str
) -> None:
    """A candidate cannot pass a failure off as a fired bound: the accounting must confirm the signal."""
    trial = run_case(f"import os, signal, sys\n{fake}\n")
    assert (trial.record["outcome"], trial.record["bound"], trial.record["failed_check"]) == (
        "failed",
        None,
        "exit_status",
    )
    assert trial.record["exit_code"] in {152, 153}
    assert_no_leftovers(trial, caps, scratch)


def test_a_cpu_hog_is_killed_at_the_cpu_bound_with_the_bound_on_record(
    run_case: Callable[..., Trial], caps: Capabilities, scratch: Path
) -> None:
    """Killed for CPU, never before the bound: the record's CPU is at least the bound.

    With an rlimit at the bound, the kernel's tick-sampled CPU time fired SIGXCPU under load with
    0.71-0.93 s on the cgroup's precise count, and the trial was recorded as an ordinary failure
    (exit 152) in about a quarter of the runs at load 6-10 (session 36).
    """
    trial = run_case("while True:\n    pass\n", limits={"cpu_s": 1, "wall_clock_s": 20})
    _killed(trial, "cpu")
    assert trial.evidence["execution"]["cpu_seconds"] >= 0.95
    assert_no_leftovers(trial, caps, scratch)
