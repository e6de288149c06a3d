"""Feeding trial attempts to an executor and taking them back as they finish: constant work per attempt.

The run set (:mod:`gatestats_runner.runset`) appends every record on its own thread; this module is
how that thread learns which attempt finished. Each future reports itself on a queue when it is
done (``add_done_callback``), so taking the next finished attempt costs the same whether 10 or
100,000 attempts are planned (``concurrent.futures.wait`` over every pending future locks each of
them on every call: at 10,000 pending attempts that is about 9 ms of the interpreter lock per
finished trial, taken from the workers). A local executor is fed at most ``window`` attempts at a
time, so a large run set does not build every spec and future up front and an interrupted one has
little to cancel. A retry that must wait (the back-off after an ``infra_error``) waits in a queue
of its own instead of putting the recording thread to sleep.
"""

from __future__ import annotations

import heapq
import itertools
import queue
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import Future

from gatestats_runner.executors import Executor
from gatestats_runner.trial import TrialResult, TrialSpec

__all__ = ["AttemptFeed", "feed_window"]


def feed_window(executor: Executor) -> int | None:
    """How many attempts to keep submitted to ``executor`` at once (None: all of them).

    Parameters
    ----------
    executor
        Where the attempts run.

    Returns
    -------
    int or None
        Twice the workers of a local executor (each worker always has its next attempt queued);
        None for a remote executor, whose cluster may hold more workers than this machine knows of.
    """
    return 2 * max(1, executor.workers) if executor.name == "local" else None


class AttemptFeed:
    """The attempts of a run set, submitted ``window`` at a time and yielded as they finish.

    Iterating yields ``(spec, future)`` for each finished attempt (its future is done: its result
    or its exception is ready); :meth:`retry` adds an attempt to run again, after a delay, and it
    is yielded in turn. Iteration ends when every attempt from ``specs`` and every retry has
    been yielded. Single-threaded: only the thread that iterates calls :meth:`retry`.

    Parameters
    ----------
    executor
        A started executor.
    specs
        The attempts to run, in order (consumed lazily, as the window frees).
    window
        The most attempts submitted and not yet yielded, counting retries waiting for their delay
        (None: submit all at once); >= 1.
    """

    def __init__(self, executor: Executor, specs: Iterable[TrialSpec], *, window: int | None) -> None:
        if window is not None and window < 1:
            msg = f"window: expected an integer >= 1 or None (got {window!r})"
            raise ValueError(msg)
        self._executor = executor
        self._source: Iterator[TrialSpec] = iter(specs)
        self._window = window
        self._done: queue.SimpleQueue[Future[TrialResult]] = queue.SimpleQueue()
        self._inflight: dict[Future[TrialResult], TrialSpec] = {}
        self._delayed: list[tuple[float, int, TrialSpec]] = []
        self._order = itertools.count()
        self._exhausted = False

    def retry(self, spec: TrialSpec, *, delay: float = 0.0) -> None:
        """Run ``spec`` once ``delay`` seconds have passed (it is yielded when it finishes).

        Parameters
        ----------
        spec
            The next attempt of a trial.
        delay
            Seconds to wait before it is submitted; meanwhile other attempts are yielded.
        """
        heapq.heappush(self._delayed, (time.monotonic() + max(0.0, delay), next(self._order), spec))

    def __iter__(self) -> Iterator[tuple[TrialSpec, Future[TrialResult]]]:
        while True:
            self._submit_due()
            self._fill()
            if not self._inflight:
                if not self._delayed:
                    return
                time.sleep(max(0.0, self._delayed[0][0] - time.monotonic()))
                continue
            try:
                future = self._done.get(timeout=self._until_due())
            except queue.Empty:
                continue  # a delayed retry is due
            yield self._inflight.pop(future), future

    def _submit(self, spec: TrialSpec) -> None:
        future = self._executor.submit(spec)
        self._inflight[future] = spec
        future.add_done_callback(self._done.put)

    def _fill(self) -> None:
        """Submit attempts from the source while the window has room (a waiting retry keeps its slot)."""
        while not self._exhausted and (self._window is None or len(self._inflight) + len(self._delayed) < self._window):
            spec = next(self._source, None)
            if spec is None:
                self._exhausted = True
                return
            self._submit(spec)

    def _submit_due(self) -> None:
        """Submit the retries whose delay has passed (each into the slot :meth:`_fill` kept for it)."""
        now = time.monotonic()
        while self._delayed and self._delayed[0][0] <= now:
            self._submit(heapq.heappop(self._delayed)[2])

    def _until_due(self) -> float | None:
        """Seconds until the next delayed retry is due (None: no retry waits)."""
        if not self._delayed:
            return None
        return max(0.0, self._delayed[0][0] - time.monotonic())
