"""Removing what a finished trial leaves (its cgroups, its workspace) off the trial's own path.

When a sandboxed command has ended, the kernel still tears its sandbox down: the namespaces'
first process exits (its mount and network namespaces are dropped, which waits for RCU grace
periods), only then can the trial's cgroups be removed, and the workspace's mounts are
detached and deleted. None of it changes the trial's record, so a worker need not wait for it
before running the next trial: a :class:`Teardown` runs these steps on a thread of its own, in
order, and :meth:`Teardown.close` waits for all of them. At most ``limit`` steps wait at a time
(each holds a tmpfs in memory until it is removed): beyond that, :meth:`Teardown.defer` blocks.
A runner killed before its steps ran leaves mounts and cgroups that the next runner sweeps
(:func:`~gatestats_runner.workspace.sweep_mounts`, :func:`~gatestats_runner.cgroups.sweep_cgroups`).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable

__all__ = ["Defer", "Teardown", "now"]

#: Where a trial hands a clean-up step: run it now (:func:`now`) or later (:meth:`Teardown.defer`).
Defer = Callable[[Callable[[], None]], None]


def now(step: Callable[[], None]) -> None:
    """Run ``step`` at once (no :class:`Teardown`: a remote worker, a test, a benchmark).

    Parameters
    ----------
    step
        The clean-up step.
    """
    step()


class Teardown:
    """Clean-up steps run in order on one background thread; :meth:`close` waits for all of them.

    Parameters
    ----------
    limit
        The most steps queued and not yet done; :meth:`defer` blocks beyond it (>= 1).
    """

    def __init__(self, limit: int) -> None:
        if limit < 1:
            msg = f"limit: expected an integer >= 1 (got {limit!r})"
            raise ValueError(msg)
        self._steps: queue.SimpleQueue[Callable[[], None] | None] = queue.SimpleQueue()
        self._room = threading.BoundedSemaphore(limit)
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, name="gatestats-teardown", daemon=True)
        self._thread.start()
        self._closed = False

    def defer(self, step: Callable[[], None]) -> None:
        """Queue ``step`` (after the steps queued before it); blocks while ``limit`` steps wait.

        Parameters
        ----------
        step
            The clean-up step; an exception in it is raised again by :meth:`close`.
        """
        if self._closed:
            step()
            return
        self._room.acquire()
        self._steps.put(step)

    def close(self) -> None:
        """Run every queued step, stop the thread, and raise the first exception a step raised."""
        if not self._closed:
            self._closed = True
            self._steps.put(None)
            self._thread.join()
        if self._error is not None:
            error, self._error = self._error, None
            raise error

    def _run(self) -> None:
        while True:
            step = self._steps.get()
            if step is None:
                return
            try:
                step()
            except BaseException as exc:  # kept for close(): the thread must drain the queue regardless
                if self._error is None:
                    self._error = exc
            finally:
                self._room.release()
