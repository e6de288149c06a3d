"""Isolation and bounds for one command: bubblewrap, cgroups, rlimits and the runner's own timer.

What runs, outermost first::

    /bin/sh wrapper          joins the trial's cgroups (writes its pid to each cgroup.procs),
                             sets rlimits (CPU and file size with soft < hard, open files,
                             no core dumps), then execs
    bwrap                    new user (with further user namespaces disabled), PID, network,
                             IPC, UTS and cgroup namespaces; every capability dropped;
                             --die-with-parent; a read-only minimal root (/usr, /etc with the
                             files that are not world-readable masked, /proc, a private /dev);
                             /workspace and /tmp from the trial's workspace; /verifier read-only;
                             a cleared environment. --json-status-fd reports the command's exit
                             status only if the command really ran.
    the contract command

Standard output and error go to files, never pipes, so a leftover process holding them cannot
hang the runner. The runner waits on a pidfd and, every tick, checks the wall clock, the whole
tree's CPU (cgroup ``cpu.stat``), refused forks (``pids.events``), OOM kills, the output size and
the free space of the workspace's tmpfs; the first bound that fires kills the whole trial
(``cgroup.kill``) and is recorded with its evidence. Just before the command is executed, a start
mark is written to the status file (so a killed trial is known to have started), and once the
trial has ended its stdout and stderr are cut to their first bytes, together at most the output
bound (:func:`cap_output`).

Where a mechanism is missing (no bwrap, no root, no cgroups) the command still runs with what is
there, and :meth:`Capabilities.enforcement` says which bounds are not enforced.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gatestats_runner._util import JSONObject
from gatestats_runner.capabilities import Capabilities, Isolation, SandboxError, bwrap_base, detect_capabilities
from gatestats_runner.case import Limits
from gatestats_runner.cgroups import TrialCgroup
from gatestats_runner.proccpu import CommandCpu
from gatestats_runner.statusfile import status_documents
from gatestats_runner.teardown import Defer, now
from gatestats_runner.workspace import Workspace

__all__ = [
    "ABORT",
    "BOUNDS",
    "Capabilities",
    "Execution",
    "Isolation",
    "SandboxError",
    "detect_capabilities",
    "execute",
]

BOUNDS = ("wall_clock", "cpu", "memory", "processes", "disk", "output")
#: Tasks the sandbox itself adds to the trial's process count (bwrap outside and its init inside).
SANDBOX_TASKS = 2
#: The disk bound fires when the workspace tmpfs has less than this many bytes (or no inode) left.
DISK_FULL_BYTES = 16 * 1024
TICK_SECONDS = 0.02
#: How far the kernel's tick-sampled CPU time (what RLIMIT_CPU checks) may run ahead of the cgroup's
#: precise count when it sends SIGXCPU: a few scheduler ticks (4 ms each at HZ=250, 10 ms at HZ=100).
CPU_TICK_SLACK_SECONDS = 0.05
_WRAPPER_START_FAILED = 125


#: Set by the run set when it is interrupted (Ctrl-C, an error): every running trial is killed at
#: its next tick and its result is discarded, never recorded.
ABORT = threading.Event()


@dataclass(slots=True, kw_only=True)
class Execution:
    """What happened to one command: whether it ran, how it ended, which bound fired and the evidence."""

    started: bool = False
    exit_code: int | None = None
    killed_by: str | None = None
    aborted: bool = False
    start_error: str | None = None
    wall_seconds: float = 0.0
    cpu_seconds: float | None = None
    evidence: JSONObject = field(default_factory=dict)
    leftover_processes: bool = False


def rlimit_cpu_seconds(caps: Capabilities, limits: Limits) -> int:
    """The soft RLIMIT_CPU of each candidate process (the hard limit is one second more).

    Without cgroup CPU accounting the rlimit is the CPU bound itself (whole seconds, rounded up).
    With it, the runner's watch kills the whole tree when the cgroup's precise count reaches the
    bound, and the rlimit is a backstop at twice the bound plus one second: the kernel checks
    RLIMIT_CPU against its tick-sampled CPU time, which under load runs far ahead of the precise
    count (measured on a 2-core machine at load 6-10: SIGXCPU at a 1 s rlimit with 0.71-0.93 s on
    the cgroup's count), so an rlimit at the bound would kill before the bound is reached and
    leave a record saying "killed for CPU" with less CPU than the bound on it.
    """
    bound = max(1, int(limits.cpu_s + 0.999))
    return 2 * bound + 1 if caps.cgroups.cpu_accounting else bound


def _wrapper_script(caps: Capabilities, limits: Limits, *, chdir: str | None) -> str:
    cpu_soft = rlimit_cpu_seconds(caps, limits)
    fsize = max(limits.output_bytes, limits.disk_bytes) + 65536
    f_soft = -(-fsize // caps.fsize_unit)
    lines = [
        'n=$1; shift; i=0; while [ "$i" -lt "$n" ]; do echo $$ > "$1" || exit 125; shift; i=$((i+1)); done',
        f"ulimit -S -t {cpu_soft} 2>/dev/null; ulimit -H -t {cpu_soft + 1} && ulimit -S -t {cpu_soft} || exit 125",
        f"ulimit -S -f {f_soft} 2>/dev/null; ulimit -H -f {f_soft + 1} && ulimit -S -f {f_soft} || exit 125",
        f"ulimit -n {limits.open_files} || exit 125",
        "ulimit -c 0",
    ]
    if chdir is not None:  # no bubblewrap: mark the start on fd 3 (then closed) and run the command
        lines.append('cd "$GATESTATS_WORKSPACE" || exit 125')
        lines.append(_start_script(3))
    else:
        lines.append('exec "$@"')
    return "\n".join(lines)


#: The line the sandbox writes to the status file just before it executes the contract command.
START_MARK = '{"gatestats-started": true}'
#: Where the start mark goes inside bubblewrap (fd 3 is bubblewrap's own --json-status-fd).
_START_FD_IN_SANDBOX = 4


def _start_script(fd: int) -> str:
    """Shell that checks the command can be executed, writes :data:`START_MARK` to ``fd``, closes it and execs.

    The last step before the command (inside bubblewrap, or in the wrapper without it): the mark
    proves the candidate's process was started, even when a bound kills it before it ends
    (bubblewrap reports an exit code only for a command that ended). A program that is missing or
    not executable leaves no mark (exit 127): the sandbox failed to start, not the candidate. The
    descriptor is closed before the command runs, so the candidate cannot write to the status file.
    """
    return "\n".join(
        [
            'case $1 in */*) [ -f "$1" ] && [ -x "$1" ] ;; *) command -v "$1" >/dev/null 2>&1 ;; esac || exit 127',
            f"printf '%s\\n' '{START_MARK}' >&{fd} && exec {fd}>&- || exit 125",
            'exec "$@"',
        ]
    )


def _bwrap_argv(caps: Capabilities, workspace: Workspace, verifier: Path | None, env: dict[str, str]) -> list[str]:
    if caps.bwrap is None:
        msg = "bwrap argv requested without bwrap"
        raise SandboxError(msg)
    args = bwrap_base(caps.bwrap, userns=caps.bwrap_userns)
    args += ["--ro-bind", "/usr", "/usr"]
    for name, target in caps.system_links:
        args += ["--symlink", target, name] if target else ["--ro-bind", name, name]
    args += ["--ro-bind", "/etc", "/etc"]
    for path, is_dir in caps.etc_masks:
        args += ["--tmpfs", path, "--remount-ro", path] if is_dir else ["--ro-bind", "/dev/null", path]
    args += ["--proc", "/proc", *caps.proc_args]
    args += ["--dev", "/dev", "--bind", str(workspace.shm), "/dev/shm", "--remount-ro", "/dev"]
    args += ["--bind", str(workspace.root), "/workspace", "--bind", str(workspace.tmp), "/tmp"]
    if verifier is not None and verifier.is_dir():
        args += ["--ro-bind", str(verifier), "/verifier"]
    # Nothing but /workspace, /tmp and /dev/shm (all on the trial's size-limited tmpfs) is writable.
    args += ["--remount-ro", "/", "--chdir", "/workspace", "--clearenv"]
    for key, value in env.items():
        args += ["--setenv", key, value]
    args += ["--json-status-fd", "3", "--"]
    # Inside: mark the start on fd 4 (a second descriptor of the status file), close it, exec the command.
    args += ["/bin/sh", "-c", _start_script(_START_FD_IN_SANDBOX), "gatestats-start"]
    return args


def _read_status(path: Path) -> tuple[bool, int | None]:
    """(command started, its exit code) from the status file.

    The file holds bubblewrap's ``--json-status-fd`` objects (``child-pid`` once the sandbox is
    cloned, ``exit-code`` once the command has ended by itself) and :data:`START_MARK`, which the
    sandbox writes just before it executes the command. Started means the mark is there; the exit
    code is bubblewrap's last ``exit-code`` (None when the command was killed or never ran).
    """
    exit_code, started = None, False
    for doc in status_documents(path):
        if isinstance(doc, dict) and isinstance(doc.get("exit-code"), int):
            exit_code = doc["exit-code"]
        if doc == {"gatestats-started": True}:
            started = True
    return started, exit_code


def _status_code(status: int) -> int:
    if os.WIFSIGNALED(status):
        return 128 + os.WTERMSIG(status)
    return os.waitstatus_to_exitcode(status)


def _command_line(
    caps: Capabilities, command: tuple[str, ...], env: dict[str, str], workspace: Workspace, verifier: Path | None
) -> tuple[list[str], dict[str, str], str | None]:
    """The argv after the wrapper, the wrapper's environment and its working directory, for this isolation."""
    if caps.isolation == "bwrap":
        inner_env = dict(env)
        return [*_bwrap_argv(caps, workspace, verifier, inner_env), *command], {"PATH": "/usr/bin:/bin"}, None
    argv_tail = [_host_path(arg, workspace, verifier) for arg in command]
    spawn_env = {k: _host_path(v, workspace, verifier) for k, v in env.items()}
    spawn_env["GATESTATS_WORKSPACE"] = str(workspace.root)
    spawn_env["GATESTATS_VERIFIER"] = str(verifier) if verifier else ""
    return argv_tail, spawn_env, str(workspace.root)


def _file_actions(caps: Capabilities, out_fd: int, err_fd: int, status_fd: int) -> list[tuple[Any, ...]]:
    """stdin from /dev/null, stdout, stderr and the status pipe on 1-3 (and inside bwrap), every other fd closed."""
    actions: list[tuple[Any, ...]] = [
        (os.POSIX_SPAWN_OPEN, 0, "/dev/null", os.O_RDONLY, 0),
        (os.POSIX_SPAWN_DUP2, out_fd, 1),
        (os.POSIX_SPAWN_DUP2, err_fd, 2),
        (os.POSIX_SPAWN_DUP2, status_fd, 3),
    ]
    if caps.isolation == "bwrap":
        actions.append((os.POSIX_SPAWN_DUP2, status_fd, _START_FD_IN_SANDBOX))
    keep = {0, 1, 2, 3, _START_FD_IN_SANDBOX}
    actions += [(os.POSIX_SPAWN_CLOSE, fd) for fd in _inheritable_fds() if fd not in keep]
    return actions


def execute(
    caps: Capabilities,
    *,
    command: tuple[str, ...],
    env: dict[str, str],
    workspace: Workspace,
    verifier: Path | None,
    limits: Limits,
    stdout_path: Path,
    stderr_path: Path,
    status_path: Path,
    cgroup_name: str,
    defer: Defer = now,
) -> Execution:
    """Run ``command`` in the trial's sandbox under ``limits``; never raises for the command's behaviour.

    Parameters
    ----------
    caps
        The isolation (bubblewrap or the host) and the cgroups to use.
    command
        The contract's command (paths as the sandbox sees them: ``/workspace``, ``/verifier``).
    env
        The command's whole environment.
    workspace
        The trial's fresh workspace.
    verifier
        The case's verifier directory, mounted read-only at ``/verifier``.
    limits
        The bounds: wall clock, CPU, memory, processes, disk, output.
    stdout_path, stderr_path
        Where the command's output goes (cut to ``limits.output_bytes`` together).
    status_path
        The wrapper's start/exit status file.
    cgroup_name
        The name of the trial's cgroups (unique per attempt).
    defer
        Where removing the cgroups goes once every process is gone or exiting: done at once by
        default, or handed to a :class:`~gatestats_runner.teardown.Teardown` (the sandbox's own
        teardown in the kernel then no longer holds up the next trial).

    Returns
    -------
    Execution
        Exit status, the bound that fired, wall and CPU time, whether the command started, and the
        evidence (counters, output sizes); ``start_error`` when the sandbox could not start.
    """
    result = Execution()
    try:
        cgroup = TrialCgroup(
            caps.cgroups,
            cgroup_name,
            memory_bytes=limits.memory_bytes,
            processes=limits.processes + SANDBOX_TASKS,
        )
    except OSError as exc:
        result.start_error = f"could not create the trial's cgroups: {exc}"
        return result
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC
    out_fd = os.open(stdout_path, flags | os.O_APPEND, 0o644)
    err_fd = os.open(stderr_path, flags | os.O_APPEND, 0o644)
    status_fd = os.open(status_path, flags, 0o600)
    try:
        argv_tail, spawn_env, chdir = _command_line(caps, command, env, workspace, verifier)
        procs = cgroup.procs_files
        script = _wrapper_script(caps, limits, chdir=chdir)
        argv = ["/bin/sh", "-c", script, "gatestats-trial", str(len(procs)), *procs, *argv_tail]
        fds = (out_fd, err_fd, status_fd)
        if not _spawn_and_monitor(result, argv, spawn_env, caps, cgroup, workspace, limits, fds, status_path):
            return result
    finally:
        for fd in (out_fd, err_fd, status_fd):
            os.close(fd)
        result.leftover_processes = not cgroup.settle()
        result.evidence["output"] = cap_output(stdout_path, stderr_path, limits.output_bytes)
        _collect(result, cgroup)
        defer(cgroup.remove_when_empty)
    _read_start(result, status_path, caps)
    return result


def _spawn_and_monitor(
    result: Execution,
    argv: list[str],
    spawn_env: dict[str, str],
    caps: Capabilities,
    cgroup: TrialCgroup,
    workspace: Workspace,
    limits: Limits,
    fds: tuple[int, int, int],
    status_path: Path,
) -> bool:
    """Start the wrapper and watch it to its end under ``limits``; False (``start_error`` set) when it cannot start."""
    # under bubblewrap the rusage is bubblewrap's own: the command's CPU is read from /proc instead
    command_cpu = CommandCpu(status_path) if caps.isolation == "bwrap" else None
    out_fd, err_fd, status_fd = fds
    actions = _file_actions(caps, out_fd, err_fd, status_fd)
    start = time.monotonic()
    try:
        pid = os.posix_spawn("/bin/sh", argv, spawn_env, file_actions=actions, setsid=True)
    except OSError as exc:
        result.start_error = f"could not start the sandbox: {exc}"
        return False
    watch = _Watch(
        cgroup=cgroup, workspace=workspace, limits=limits, out_fd=out_fd, err_fd=err_fd, command_cpu=command_cpu
    )
    _monitor(result, pid, watch, start)
    result.wall_seconds = time.monotonic() - start
    return True


def _read_start(result: Execution, status_path: Path, caps: Capabilities) -> None:
    """Whether the command started and its exit status (bwrap's status file, else the wrapper's wait status)."""
    result.started, code = _read_status(status_path)
    if result.started:
        wait = result.evidence.get("wait_status_code")  # an int the wrapper's wait status gave, or absent
        result.exit_code = code if caps.isolation == "bwrap" else (wait if isinstance(wait, int) else None)
    if (
        not result.started
        and result.killed_by is None
        and result.evidence.get("wait_status_code") == (_WRAPPER_START_FAILED)
    ):
        result.start_error = "the sandbox wrapper could not join the cgroups or set the rlimits"


def output_shares(stdout_bytes: int, stderr_bytes: int, limit: int) -> tuple[int, int]:
    """How many leading bytes of standard output and error the evidence keeps: together at most ``limit``.

    Each stream keeps all of itself when both fit; otherwise each is guaranteed half the bound
    (``limit // 2`` for stderr, the rest for stdout) and a stream shorter than its half leaves the
    unused part to the other.

    Parameters
    ----------
    stdout_bytes, stderr_bytes
        The streams' sizes.
    limit
        The bound on both together.

    Returns
    -------
    tuple of int
        The bytes of stdout and of stderr kept.
    """
    keep_err = min(stderr_bytes, max(limit - stdout_bytes, limit // 2))
    keep_out = min(stdout_bytes, limit - keep_err)
    return keep_out, keep_err


def cap_output(stdout_path: Path, stderr_path: Path, limit: int) -> JSONObject:
    """Cut the trial's stdout and stderr files to their first bytes so that together they hold at most ``limit``.

    Called once the command and every process of the trial have ended. Returns the evidence:
    the bytes each stream had reached, the bytes kept (the first ones) and the bytes cut.

    Parameters
    ----------
    stdout_path, stderr_path
        The streams' files.
    limit
        The bound on both together (:func:`output_shares`).

    Returns
    -------
    dict
        The evidence: bytes reached, kept and cut, per stream.
    """
    sizes = []
    for path in (stdout_path, stderr_path):
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)
    kept = output_shares(sizes[0], sizes[1], limit)
    for path, size, keep in zip((stdout_path, stderr_path), sizes, kept, strict=True):
        if size > keep:
            os.truncate(path, keep)
    return {
        "limit_bytes": limit,
        "stdout_bytes": sizes[0],
        "stderr_bytes": sizes[1],
        "stdout_kept_bytes": kept[0],
        "stderr_kept_bytes": kept[1],
        "cut_bytes": sizes[0] + sizes[1] - kept[0] - kept[1],
    }


def _inheritable_fds() -> list[int]:
    """Descriptors this process would pass to a child (inherited from whoever started the runner).

    Python opens its own files close-on-exec, but a descriptor the runner inherited (a CI job's
    pipe, a terminal, a log file) is inheritable: the sandbox closes every one of them, so the
    candidate cannot write to what the runner's parent left open.
    """
    found: list[int] = []
    try:
        names = os.listdir("/proc/self/fd")
    except OSError:
        return found
    for name in names:
        fd = int(name)
        with contextlib.suppress(OSError):
            if os.get_inheritable(fd):
                found.append(fd)
    return found


def _host_path(value: str, workspace: Workspace, verifier: Path | None) -> str:
    """Without bwrap, /workspace and /verifier in the command are the real host paths."""
    for prefix, real in (("/workspace", workspace.root), ("/verifier", verifier)):
        if real is not None and (value == prefix or value.startswith(prefix + "/")):
            return str(real) + value[len(prefix) :]
    return value


def _kill(pid: int, cgroup: TrialCgroup) -> None:
    cgroup.kill()
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


@dataclass(slots=True, kw_only=True)
class _Watch:
    """The bounds of one running trial, and the least free disk seen while it ran."""

    cgroup: TrialCgroup
    workspace: Workspace
    limits: Limits
    out_fd: int
    err_fd: int
    min_disk_free: int | None = None
    #: The command's own CPU under bubblewrap, sampled at every tick (:mod:`gatestats_runner.proccpu`).
    command_cpu: CommandCpu | None = None

    def bounds(self, deadline: float | None, *, cpu_slack: float = 0.0) -> tuple[str | None, JSONObject]:
        """The bound that fired (or ``None``) and its evidence, as :func:`_check_bounds`; notes the free disk."""
        if self.command_cpu is not None:
            self.command_cpu.sample()
        fired, evidence = _check_bounds(
            self.cgroup, self.workspace, self.limits, self.out_fd, self.err_fd, deadline, cpu_slack=cpu_slack
        )
        free = evidence.get("disk_free_bytes")
        if isinstance(free, int):
            self.min_disk_free = free if self.min_disk_free is None else min(self.min_disk_free, free)
        return fired, evidence


def _pidfd(pid: int) -> int | None:
    """A pidfd for ``pid``, or ``None`` where the kernel offers none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _watch_until_exit(result: Execution, pid: int, pidfd: int | None, watch: _Watch, start: float) -> bool:
    """Poll until the command exits, the run set aborts or a bound fires (then kill the tree).

    Returns False when the command was already reaped here (no pidfd), True when it is left to reap.
    """
    deadline = start + watch.limits.wall_clock_s
    poller = select.poll()
    if pidfd is not None:
        poller.register(pidfd, select.POLLIN)
    while True:
        timeout = max(0.0, min(TICK_SECONDS, deadline - time.monotonic()))
        if pidfd is not None:
            if poller.poll(timeout * 1000):
                return True
        else:
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                result.evidence["wait_status_code"] = _status_code(status)
                return False
            time.sleep(timeout)
        if ABORT.is_set():
            result.aborted = True
            _kill(pid, watch.cgroup)
            return True
        fired, evidence = watch.bounds(deadline)
        if fired is not None:
            result.killed_by = fired
            result.evidence.update(evidence)
            result.evidence["killed_after_seconds"] = round(time.monotonic() - start, 4)
            _kill(pid, watch.cgroup)
            return True


def _monitor(result: Execution, pid: int, watch: _Watch, start: float) -> None:
    """Watch the command until it ends, kill it when a bound fires, and record its exit and accounting."""
    pidfd = _pidfd(pid)
    try:
        if not _watch_until_exit(result, pid, pidfd, watch, start):
            return
        _, status, usage = os.wait4(pid, 0)
        result.evidence["wait_status_code"] = _status_code(status)
        result.evidence["rusage_cpu_seconds"] = round(usage.ru_utime + usage.ru_stime, 6)
        if not result.killed_by and not result.aborted:
            # A bound the kernel enforced may have fired in the last tick. The kernel sends SIGXCPU when
            # the tick-sampled CPU time reaches RLIMIT_CPU, which can run ahead of the precise cgroup
            # count by a few ticks: for a command that died of SIGXCPU, that slack confirms the bound.
            slack = CPU_TICK_SLACK_SECONDS if _status_code(status) == 128 + signal.SIGXCPU else 0.0
            fired, evidence = watch.bounds(None, cpu_slack=slack)
            if fired is not None:
                result.killed_by = fired
                result.evidence.update(evidence)
    finally:
        if pidfd is not None:
            os.close(pidfd)
        if watch.min_disk_free is not None:
            result.evidence["disk_free_bytes_min"] = watch.min_disk_free
        if watch.command_cpu is not None and watch.command_cpu.seconds is not None:
            result.evidence["sampled_cpu_seconds"] = round(watch.command_cpu.seconds, 6)


def _counter_bound(cgroup: TrialCgroup, limits: Limits, cpu_slack: float) -> tuple[str | None, JSONObject]:
    """A bound the cgroup's counters show: an OOM kill, a refused fork, the CPU limit reached."""
    oom = cgroup.oom_kills()
    if oom:
        return "memory", {"oom_kill": oom, "memory_limit_bytes": limits.memory_bytes}
    refused = cgroup.pids_max_events()
    if refused:
        return "processes", {"pids_events_max": refused, "pids_max": limits.processes + SANDBOX_TASKS}
    cpu = cgroup.cpu_seconds()
    if cpu is not None and cpu >= limits.cpu_s - min(cpu_slack, 0.05 * limits.cpu_s):
        return "cpu", {"cpu_seconds": round(cpu, 4), "cpu_limit_seconds": limits.cpu_s}
    return None, {}


def _check_bounds(
    cgroup: TrialCgroup,
    workspace: Workspace,
    limits: Limits,
    out_fd: int,
    err_fd: int,
    deadline: float | None,
    *,
    cpu_slack: float = 0.0,
) -> tuple[str | None, JSONObject]:
    """The first bound that fired (memory, processes, cpu, output, disk, wall clock) and its evidence."""
    fired, evidence = _counter_bound(cgroup, limits, cpu_slack)
    if fired is not None:
        return fired, evidence
    output = os.fstat(out_fd).st_size + os.fstat(err_fd).st_size
    if output >= limits.output_bytes:
        return "output", {"output_bytes": output, "output_limit_bytes": limits.output_bytes}
    disk = workspace.disk_free()
    if disk is not None:
        free_bytes, free_inodes = disk
        evidence["disk_free_bytes"] = free_bytes
        if free_bytes < DISK_FULL_BYTES or free_inodes == 0:
            return "disk", {
                "disk_free_bytes": free_bytes,
                "disk_free_inodes": free_inodes,
                "disk_limit_bytes": limits.disk_bytes,
            }
    if deadline is not None and time.monotonic() >= deadline:
        return "wall_clock", {"wall_clock_limit_seconds": limits.wall_clock_s, **evidence}
    return None, evidence


def _collect(result: Execution, cgroup: TrialCgroup) -> None:
    cpu = cgroup.cpu_seconds()
    result.cpu_seconds = cpu
    for key, value in (
        ("cpu_seconds_total", None if cpu is None else round(cpu, 6)),
        ("oom_kill_total", cgroup.oom_kills()),
        ("pids_events_max_total", cgroup.pids_max_events()),
        ("pids_peak", cgroup.pids_peak()),
        ("memory_peak_bytes", cgroup.memory_peak()),
    ):
        if value is not None:
            result.evidence[key] = value
