"""The attempt feed: every attempt yielded once as it finishes, a bounded window, retries that do not block."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from gatestats_runner.case import Case
from gatestats_runner.dispatch import AttemptFeed, feed_window
from gatestats_runner.trial import TrialResult, TrialSpec


def _spec(trial: int, attempt: int = 0) -> TrialSpec:
    case: Any = Case.__new__(Case)  # the feed never looks inside the case
    return TrialSpec(
        case=case,
        candidate_layer=None,
        candidate_digest="sha256:x",
        trial=trial,
        attempt=attempt,
        run_set_id="rs-test",
        record_base={},
        evidence_dir=Path("/nonexistent"),
        evidence_rel=f"trials/t{trial}",
        scratch=Path("/nonexistent"),
    )


class _ManualExecutor:
    """Futures the test finishes by hand; counts what is submitted and not yet finished."""

    name = "local"

    def __init__(self, workers: int = 1) -> None:
        self.workers = workers
        self.submitted: list[tuple[TrialSpec, Future[TrialResult]]] = []
        self.most_open = 0
        self.changed = threading.Condition()

    def start(self, caps: Any) -> None:
        del caps

    def submit(self, spec: TrialSpec) -> Future[TrialResult]:
        future: Future[TrialResult] = Future()
        with self.changed:
            self.submitted.append((spec, future))
            self.most_open = max(self.most_open, sum(not f.done() for _, f in self.submitted))
            self.changed.notify_all()
        return future

    def shutdown(self, *, cancel: bool = False) -> None:
        del cancel


def _finish(future: Future[TrialResult], trial: int) -> None:
    future.set_result(TrialResult(record={"trial": trial}))


#: How long a helper thread waits for the attempt it finishes to be submitted before it fails the test's wait.
SUBMIT_DEADLINE = 60.0


def _later(delay: float, executor: _ManualExecutor, index: int, act: Callable[[Future[TrialResult]], None]) -> None:
    """After ``delay`` s and once the ``index``-th attempt is submitted, ``act`` on its future (in a thread).

    A bare timer read ``executor.submitted[index]`` when it fired: on a loaded machine the feed had not submitted yet,
    the timer's thread died of an IndexError and the test's ``next()`` waited forever (session 47: two inner-loop runs
    at load 14-17 hung here). An attempt never submitted within :data:`SUBMIT_DEADLINE` fails every open future
    instead, so the test fails rather than hangs.
    """

    def run() -> None:
        time.sleep(delay)
        with executor.changed:
            submitted = executor.changed.wait_for(lambda: len(executor.submitted) > index, timeout=SUBMIT_DEADLINE)
            futures = [f for _, f in executor.submitted]
        if not submitted:
            for future in futures:
                if not future.done():
                    future.set_exception(AssertionError(f"attempt {index} was never submitted"))
            return
        act(futures[index])

    threading.Thread(target=run, daemon=True).start()


class _ImmediateExecutor(_ManualExecutor):
    """Every attempt is finished as it is submitted."""

    def submit(self, spec: TrialSpec) -> Future[TrialResult]:
        future = super().submit(spec)
        _finish(future, spec.trial)
        return future


def test_every_attempt_is_yielded_once_in_submission_order_when_they_finish_at_once() -> None:
    executor = _ImmediateExecutor(workers=2)
    feed = AttemptFeed(executor, (_spec(t) for t in range(50)), window=4)
    got = [(spec.trial, future.result().record["trial"]) for spec, future in feed]
    assert got == [(t, t) for t in range(50)]


def test_a_local_executor_is_never_given_more_than_the_window() -> None:
    executor = _ManualExecutor(workers=3)
    feed = AttemptFeed(executor, (_spec(t) for t in range(20)), window=feed_window(executor))
    finisher_stop = threading.Event()

    def finisher() -> None:
        while not finisher_stop.is_set():
            for spec, future in list(executor.submitted):
                if not future.done():
                    _finish(future, spec.trial)
                    break
            time.sleep(0.001)

    thread = threading.Thread(target=finisher)
    thread.start()
    try:
        trials = sorted(spec.trial for spec, _ in feed)
    finally:
        finisher_stop.set()
        thread.join()
    assert trials == list(range(20))
    assert feed_window(executor) == 6
    assert 2 <= executor.most_open <= 6  # bounded by the window (how close it gets depends on timing)


def test_a_remote_executor_gets_every_attempt_at_once() -> None:
    executor = _ManualExecutor(workers=2)
    executor.name = "ray"
    assert feed_window(executor) is None
    feed = iter(AttemptFeed(executor, (_spec(t) for t in range(30)), window=None))
    _later(0.05, executor, 7, lambda f: _finish(f, 7))
    spec, _ = next(feed)
    assert spec.trial == 7
    assert len(executor.submitted) == 30


class _RetryFinishesAtOnceExecutor(_ManualExecutor):
    """Records when each attempt was submitted; a retry (attempt >= 1) finishes as it is submitted."""

    def __init__(self, workers: int = 1) -> None:
        super().__init__(workers)
        self.submitted_at: list[float] = []

    def submit(self, spec: TrialSpec) -> Future[TrialResult]:
        self.submitted_at.append(time.monotonic())
        future = super().submit(spec)
        if spec.attempt >= 1:
            _finish(future, spec.trial)
        return future


def test_a_delayed_retry_does_not_hold_up_an_attempt_that_finishes_meanwhile() -> None:
    executor = _RetryFinishesAtOnceExecutor(workers=2)
    feed = AttemptFeed(executor, [_spec(0), _spec(1)], window=2)
    it = iter(feed)  # the first next() submits both attempts; trial 0 finishes from a timer
    _later(0.01, executor, 0, lambda f: _finish(f, 0))
    spec, _ = next(it)
    assert (spec.trial, spec.attempt) == (0, 0)
    retried_at = time.monotonic()
    feed.retry(_spec(0, attempt=1), delay=0.3)  # trial 0 hit an infra_error: back off 0.3 s
    _later(0.02, executor, 1, lambda f: _finish(f, 1))
    spec, _ = next(it)
    assert (spec.trial, spec.attempt) == (1, 0)
    assert time.monotonic() - retried_at < 0.25, "trial 1 waited for trial 0's back-off"
    assert len(executor.submitted) == 2  # the retry is not submitted before its delay
    spec, _ = next(it)
    assert (spec.trial, spec.attempt) == (0, 1)
    assert executor.submitted_at[2] >= retried_at + 0.3, "the retry was submitted before its back-off"
    assert next(it, None) is None


def test_a_waiting_retry_keeps_its_slot_in_the_window() -> None:
    executor = _RetryFinishesAtOnceExecutor(workers=1)
    feed = AttemptFeed(executor, (_spec(t) for t in range(5)), window=2)
    it = iter(feed)
    _later(0.01, executor, 0, lambda f: _finish(f, 0))
    spec, _ = next(it)
    assert (spec.trial, len(executor.submitted)) == (0, 2)
    feed.retry(_spec(0, attempt=1), delay=0.2)
    _later(0.05, executor, 1, lambda f: _finish(f, 1))
    spec, _ = next(it)
    assert spec.trial == 1
    spec, _ = next(it)  # trial 2 takes trial 1's slot; the retry, due after 0.2 s, takes the other
    assert (spec.trial, spec.attempt) == (0, 1)
    assert [s.trial for s, _ in executor.submitted] == [0, 1, 2, 0]  # not trial 3: that slot was the retry's
    assert executor.most_open <= 2
    for _ in range(2):
        _finish(next(f for s, f in executor.submitted if not f.done()), -1)
        next(it)
    assert executor.most_open <= 2


def test_an_attempt_that_raised_is_yielded_with_its_exception() -> None:
    executor = _ManualExecutor()
    feed = iter(AttemptFeed(executor, [_spec(0)], window=1))
    _later(0.01, executor, 0, lambda f: f.set_exception(RuntimeError("worker lost")))
    spec, future = next(feed)
    assert spec.trial == 0
    with pytest.raises(RuntimeError, match=r"^worker lost$"):
        future.result()


def test_a_window_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match=r"^window: expected an integer >= 1 or None \(got 0\)$"):
        AttemptFeed(_ManualExecutor(), [], window=0)
