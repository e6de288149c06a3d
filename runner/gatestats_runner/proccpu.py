"""The CPU time of the command inside bubblewrap, read from ``/proc`` while it runs.

Where no cgroup counts the trial's CPU, RLIMIT_CPU is the CPU bound and the kernel enforces it with
SIGXCPU. A candidate can send itself SIGXCPU (or exit 152) to pass a failure off as a fired bound,
so the runner confirms the signal against the command's own CPU time. Without bubblewrap the
wrapper execs the command and ``wait4`` gives its rusage; under bubblewrap it does not:
bubblewrap does not reap the sandbox's init, so the rusage the runner gets is bubblewrap's own
(≈0.003 s) and a genuine CPU kill was recorded as an ordinary failure (session 36).

:class:`CommandCpu` finds the command from bubblewrap's ``--json-status-fd`` (``child-pid`` is the
sandbox's init in the host's PID namespace; with ``--unshare-pid`` the init forks the command as
its one child) and reads its ``utime + stime`` from ``/proc/PID/stat`` at every tick of the
runner's watch. The command's own time only, never its children's: CPU burnt by a child must not
confirm a SIGXCPU the main process sent itself. A sample is at most one tick (20 ms) older than the
command's end. The process's start time is checked at each sample, so a reused PID is never read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from gatestats_runner.statusfile import status_documents

__all__ = ["CommandCpu", "process_cpu"]

_TICKS_PER_SECOND = os.sysconf("SC_CLK_TCK")


def process_cpu(pid: int) -> tuple[float, int] | None:
    """``(utime + stime in seconds, start time in ticks)`` of ``pid`` from ``/proc``, or ``None`` if it is gone.

    Parameters
    ----------
    pid
        A process id in this PID namespace.

    Returns
    -------
    tuple of (float, int) or None
        Its own CPU seconds (children not included) and its start time since boot, in clock ticks.
    """
    try:
        text = Path(f"/proc/{pid}/stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # the command name (field 2) is in parentheses and may hold spaces or ')': split after the last one
    fields = text[text.rfind(")") + 2 :].split()
    try:
        utime, stime, start = int(fields[11]), int(fields[12]), int(fields[19])
    except (IndexError, ValueError):
        return None
    return (utime + stime) / _TICKS_PER_SECOND, start


def _first_child(pid: int) -> int | None:
    """The first child of ``pid`` (``/proc/PID/task/PID/children``), or ``None``."""
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text(encoding="ascii").split()
    except OSError:
        return None
    return int(children[0]) if children and children[0].isdigit() else None


def _sandbox_init(status_path: Path) -> int | None:
    """bubblewrap's ``child-pid`` from its ``--json-status-fd`` objects in ``status_path``, or ``None`` yet."""
    for doc in status_documents(status_path):
        if isinstance(doc, dict) and isinstance(doc.get("child-pid"), int):
            return int(doc["child-pid"])
    return None


@dataclass(slots=True)
class CommandCpu:
    """The largest CPU time of the sandboxed command seen so far (``seconds``; ``None`` until one is read).

    Attributes
    ----------
    status_path
        The trial's status file (bubblewrap's ``--json-status-fd`` writes ``child-pid`` there).
    seconds
        The command's own CPU seconds at the latest sample (they only grow).
    """

    status_path: Path
    seconds: float | None = None
    _pid: int | None = None
    _start: int | None = None
    _lost: bool = False

    def sample(self) -> None:
        """Read the command's CPU time once (cheap: two or three small ``/proc`` reads)."""
        if self._lost:
            return
        if self._pid is None:
            init = _sandbox_init(self.status_path)
            command = None if init is None else _first_child(init)
            if command is None:
                return
            found = process_cpu(command)
            if found is None:
                return
            self._pid, self._start = command, found[1]
        read = process_cpu(self._pid)
        if read is None or read[1] != self._start:
            self._lost = True  # ended (or the PID reused): the last sample stands
            return
        if self.seconds is None or read[0] > self.seconds:
            self.seconds = read[0]
