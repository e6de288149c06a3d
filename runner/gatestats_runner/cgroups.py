"""Control groups for one trial: memory, process count, whole-tree CPU and the final kill.

The runner never creates a group at a hierarchy's root by assumption: it reads its own groups from
``/proc/self/cgroup``, finds where each hierarchy is mounted in ``/proc/self/mountinfo`` and
creates each trial's group as a child of its own. Both layouts are handled: a controller in a
cgroup-v1 hierarchy (``memory``, ``pids``, ``cpuacct``) or in the v2 ``unified`` tree (used when
the controller is enabled in the runner's ``cgroup.subtree_control``). The v2 tree also gives
``cgroup.kill`` (kill every process of the group at once) and ``cpu.stat`` (CPU of the whole tree)
even without any v2 controller.

A hierarchy that is missing or not writable is simply absent from :class:`CgroupSupport`; the
sandbox then records the limits it cannot enforce.
"""

from __future__ import annotations

import contextlib
import errno
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

__all__ = ["CgroupSupport", "TrialCgroup", "detect_cgroups", "sweep_cgroups"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CgroupSupport:
    """Parent directories (the runner's own groups) under which trial groups are created."""

    memory: Path | None = None
    memory_v2: bool = False
    pids: Path | None = None
    pids_v2: bool = False
    unified: Path | None = None
    unified_kill: bool = False
    cpuacct: Path | None = None

    @property
    def cpu_accounting(self) -> str | None:
        if self.unified is not None:
            return "cgroup v2 cpu.stat"
        if self.cpuacct is not None:
            return "cgroup v1 cpuacct"
        return None

    def describe(self) -> dict[str, str | None]:
        """Which file each mechanism uses (for the run-set manifest).

        Returns
        -------
        dict
            Mechanism name to the cgroup file it uses (``None`` where there is none).
        """
        return {
            "memory": None if self.memory is None else str(self.memory),
            "pids": None if self.pids is None else str(self.pids),
            "unified": None if self.unified is None else str(self.unified),
            "cpuacct": None if self.cpuacct is None else str(self.cpuacct),
        }


def _own_groups() -> tuple[dict[str, str], str | None]:
    v1: dict[str, str] = {}
    v2: str | None = None
    with open("/proc/self/cgroup", encoding="utf-8") as handle:
        for line in handle:
            hid, controllers, path = line.rstrip("\n").split(":", 2)
            if hid == "0" and controllers == "":
                v2 = path
            for controller in controllers.split(","):
                if controller:
                    v1[controller] = path
    return v1, v2


def _mounts() -> tuple[dict[str, tuple[str, str]], tuple[str, str] | None]:
    """Controller -> (mount root, mount point) for v1; (root, mount point) of the v2 tree."""
    v1: dict[str, tuple[str, str]] = {}
    v2: tuple[str, str] | None = None
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        for line in handle:
            left, _, right = line.partition(" - ")
            fields, rfields = left.split(), right.split()
            if len(fields) < 5 or len(rfields) < 3:
                continue
            root, point, fstype = fields[3], fields[4].replace("\\040", " "), rfields[0]
            if fstype == "cgroup2" and v2 is None:
                v2 = (root, point)
            elif fstype == "cgroup":
                for option in rfields[2].split(","):
                    v1.setdefault(option, (root, point))
    return v1, v2


def _locate(mount: tuple[str, str] | None, path: str | None) -> Path | None:
    if mount is None or path is None:
        return None
    root, point = mount
    if root != "/" and not (path == root or path.startswith(root + "/")):
        return None
    rel = path[len(root) :] if root != "/" else path
    return Path(point + rel) if rel not in {"", "/"} else Path(point)


def _writable(parent: Path | None) -> Path | None:
    """``parent`` if a child group can be created and removed there, else None."""
    if parent is None or not parent.is_dir():
        return None
    probe = parent / f"gatestats-probe-{os.getpid()}-{time.monotonic_ns()}"
    try:
        probe.mkdir()
    except OSError:
        return None
    with contextlib.suppress(OSError):
        probe.rmdir()
    return parent


def _read(path: Path) -> str | None:
    try:
        with open(path, encoding="utf-8") as handle:
            return handle.read()
    except OSError:
        return None


def _write(path: Path, value: str) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(value)


def detect_cgroups() -> CgroupSupport:
    """Find the runner's own groups and keep those where trial groups can be created.

    Returns
    -------
    CgroupSupport
        The writable controllers found (empty when none can be used).
    """
    try:
        own_v1, own_v2 = _own_groups()
        mounts_v1, mount_v2 = _mounts()
    except OSError:
        return CgroupSupport()
    unified = _writable(_locate(mount_v2, own_v2))
    subtree = set((_read(unified / "cgroup.subtree_control") or "").split()) if unified else set()
    memory_v1 = None if "memory" in subtree else _writable(_locate(mounts_v1.get("memory"), own_v1.get("memory")))
    pids_v1 = None if "pids" in subtree else _writable(_locate(mounts_v1.get("pids"), own_v1.get("pids")))
    cpuacct = None
    if unified is None:
        cpuacct = _writable(_locate(mounts_v1.get("cpuacct"), own_v1.get("cpuacct")))
    unified_kill = False
    if unified is not None:
        probe = unified / f"gatestats-probe-{os.getpid()}-kill"
        try:
            probe.mkdir()
            unified_kill = (probe / "cgroup.kill").exists()
        except OSError:
            pass
        finally:
            with contextlib.suppress(OSError):
                probe.rmdir()
    return CgroupSupport(
        memory=unified if "memory" in subtree else memory_v1,
        memory_v2="memory" in subtree,
        pids=unified if "pids" in subtree else pids_v1,
        pids_v2="pids" in subtree,
        unified=unified,
        unified_kill=unified_kill,
        cpuacct=cpuacct,
    )


def _counter(text: str | None, key: str) -> int | None:
    if text is None:
        return None
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 2 and parts[0] == key:
            return int(parts[1])
    return None


#: ``PF_EXITING`` in the flags of ``/proc/PID/stat`` (include/linux/sched.h): the task is in do_exit.
_PF_EXITING = 0x4


def _exiting(pid: int) -> bool:
    """Whether ``pid`` is gone or exiting (it can never run user code again)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return True  # reaped since the group was read
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return int(fields[6]) & _PF_EXITING != 0
    except (IndexError, ValueError):
        return False


class TrialCgroup:
    """The groups of one trial, created with their limits; every process of the trial joins all of them."""

    def __init__(self, support: CgroupSupport, name: str, *, memory_bytes: int, processes: int) -> None:
        self.support = support
        self.dirs: list[Path] = []
        self.memory: Path | None = None
        self.pids: Path | None = None
        self.unified: Path | None = None
        self.cpuacct: Path | None = None
        try:
            if support.unified is not None:
                self.unified = self._make(support.unified / name)
            if support.memory is not None:
                self.memory = self.unified if support.memory_v2 else self._make(support.memory / name)
                if self.memory is not None:
                    self._limit_memory(self.memory, memory_bytes, v2=support.memory_v2)
            if support.pids is not None:
                self.pids = self.unified if support.pids_v2 else self._make(support.pids / name)
                if self.pids is not None:
                    _write(self.pids / "pids.max", str(processes))
            if support.cpuacct is not None:
                self.cpuacct = self._make(support.cpuacct / name)
        except OSError:
            self.remove()
            raise

    def _make(self, path: Path) -> Path:
        path.mkdir()
        self.dirs.append(path)
        return path

    @staticmethod
    def _limit_memory(path: Path, limit: int, *, v2: bool) -> None:
        if v2:
            _write(path / "memory.max", str(limit))
            if (path / "memory.swap.max").exists():
                _write(path / "memory.swap.max", "0")
            return
        _write(path / "memory.limit_in_bytes", str(limit))
        if (path / "memory.memsw.limit_in_bytes").exists():
            with contextlib.suppress(OSError):
                _write(path / "memory.memsw.limit_in_bytes", str(limit))

    @property
    def procs_files(self) -> list[str]:
        """``cgroup.procs`` of every group: the trial's first process writes its pid into each."""
        return [str(d / "cgroup.procs") for d in self.dirs]

    def cpu_seconds(self) -> float | None:
        """CPU time of every process the trial ever ran (user + system), from the kernel.

        Returns
        -------
        float or None
            Seconds; ``None`` where no CPU accounting is available.
        """
        if self.unified is not None:
            usec = _counter(_read(self.unified / "cpu.stat"), "usage_usec")
            return None if usec is None else usec / 1e6
        if self.cpuacct is not None:
            text = _read(self.cpuacct / "cpuacct.usage")
            return None if text is None else int(text) / 1e9
        return None

    def pids_max_events(self) -> int | None:
        """How often a fork or clone was refused because the process bound was reached.

        Returns
        -------
        int or None
            The count; ``None`` without a pids cgroup.
        """
        return None if self.pids is None else _counter(_read(self.pids / "pids.events"), "max")

    def pids_peak(self) -> int | None:
        """The most processes the trial had at once.

        Returns
        -------
        int or None
            The count; ``None`` without a pids cgroup or where the kernel does not keep ``pids.peak``.
        """
        if self.pids is None:
            return None
        text = _read(self.pids / "pids.peak")
        return None if text is None else int(text)

    def oom_kills(self) -> int | None:
        """How many processes the kernel's OOM killer killed because of the memory bound.

        Returns
        -------
        int or None
            The count; ``None`` without a memory cgroup.
        """
        if self.memory is None:
            return None
        if self.support.memory_v2:
            return _counter(_read(self.memory / "memory.events"), "oom_kill")
        return _counter(_read(self.memory / "memory.oom_control"), "oom_kill")

    def memory_peak(self) -> int | None:
        """The most memory the trial's processes used at once, in bytes.

        Returns
        -------
        int or None
            Bytes; ``None`` without a memory cgroup or where the kernel does not keep the peak.
        """
        if self.memory is None:
            return None
        name = "memory.peak" if self.support.memory_v2 else "memory.max_usage_in_bytes"
        text = _read(self.memory / name)
        return None if text is None else int(text)

    def _pids(self) -> set[int]:
        found: set[int] = set()
        for d in self.dirs:
            text = _read(d / "cgroup.procs")
            if text:
                found.update(int(p) for p in text.split())
        return found

    def kill(self) -> None:
        """SIGKILL every process of the trial: ``cgroup.kill`` where the v2 tree has it, else one by one."""
        if self.unified is not None and self.support.unified_kill:
            with contextlib.suppress(OSError):
                _write(self.unified / "cgroup.kill", "1")
        for pid in self._pids():
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)

    def wait_empty(self, timeout: float = 5.0) -> bool:
        """Kill until no process is left in any group; False if some survive ``timeout`` seconds.

        Parameters
        ----------
        timeout
            Seconds to keep killing.

        Returns
        -------
        bool
            True when every group is empty.
        """
        return self._kill_until(lambda pids: not pids, timeout)

    def settle(self, timeout: float = 5.0) -> bool:
        """Kill until every process left in the groups is gone or exiting; False if some run on after ``timeout``.

        Every process left is sent SIGKILL first, unconditionally: a process whose main thread
        exited while its other threads run on also shows ``PF_EXITING``, and only a pending
        SIGKILL makes "exiting" mean that no thread runs user code again. An exiting process (the
        sandbox's first process still dropping its namespaces, a zombie) then cannot touch the
        workspace, so the trial's outcome is known without waiting for it; its last exit work
        (freeing its memory) may still be charged to the group's CPU counter after this returns,
        a few milliseconds that ``cpu_seconds`` does not include. :meth:`wait_empty` waits until it
        is gone, before the groups are removed.

        Returns
        -------
        bool
            True when no process of the trial can run any more.

        Parameters
        ----------
        timeout
            As in :meth:`wait_empty`.
        """
        self.kill()
        return self._kill_until(lambda pids: all(_exiting(pid) for pid in pids), timeout)

    def _kill_until(self, done: Callable[[set[int]], bool], timeout: float) -> bool:
        """Kill the groups' processes, backing off, until ``done(pids left)``; False after ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        delay = 0.0005
        while not done(self._pids()):
            if time.monotonic() > deadline:
                return False
            self.kill()
            time.sleep(delay)
            delay = min(delay * 2, 0.02)
        return True

    def remove_when_empty(self, timeout: float = 5.0) -> None:
        """:meth:`wait_empty`, then :meth:`remove` (a group with a process left cannot be removed; it stays).

        Parameters
        ----------
        timeout
            As in :meth:`wait_empty`.
        """
        self.wait_empty(timeout)
        self.remove()

    def remove(self) -> None:
        """Remove the groups (children first is not needed: they have none)."""
        for d in reversed(self.dirs):
            for _ in range(200):
                try:
                    d.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError as exc:
                    if exc.errno != errno.EBUSY:
                        break
                    time.sleep(0.005)
        self.dirs.clear()


def sweep_cgroups(support: CgroupSupport, prefix: str) -> int:
    """Kill and remove groups whose name starts with ``prefix`` (left by a runner that was killed).

    Parameters
    ----------
    support
        The controllers in use (:func:`detect_cgroups`).
    prefix
        The name prefix of the groups to remove, e.g. ``gatestats-HEX12-``.

    Returns
    -------
    int
        How many groups were removed.
    """
    removed = 0
    for parent in {support.memory, support.pids, support.unified, support.cpuacct}:
        if parent is None or not parent.is_dir():
            continue
        for child in parent.iterdir():
            if not (child.is_dir() and child.name.startswith(prefix)):
                continue
            text = _read(child / "cgroup.procs") or ""
            if (child / "cgroup.kill").exists():
                with contextlib.suppress(OSError):
                    _write(child / "cgroup.kill", "1")
            for pid in (int(p) for p in text.split()):
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            for _ in range(200):
                try:
                    child.rmdir()
                    removed += 1
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.005)
    return removed
