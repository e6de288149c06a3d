"""A runner sweeping other run sets' stale scratch never removes the scratch of a run set resumed meanwhile."""

from __future__ import annotations

import fcntl
import os
import threading
import time
from pathlib import Path

import pytest

from gatestats_runner import runset
from gatestats_runner.store import LOCK, RunSetError

STALE = "rs-20261202T010000Z-0123abcd"


def _stale_scratch(root: Path) -> Path:
    """A scratch whose runner was killed: its lock file exists and nobody holds it."""
    scratch = root / STALE
    scratch.mkdir()
    (scratch / LOCK).touch()
    (scratch / "workspace-1").mkdir()
    return scratch


def test_a_stale_scratch_is_removed(tmp_path: Path) -> None:
    scratch = _stale_scratch(tmp_path)
    assert runset._sweep_stale_scratch(tmp_path, keep="rs-other") == [scratch]
    assert not scratch.exists()


def test_a_held_scratch_is_left_alone(tmp_path: Path) -> None:
    scratch = _stale_scratch(tmp_path)
    fd = os.open(scratch / LOCK, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert runset._sweep_stale_scratch(tmp_path, keep="rs-other") == []
        assert (scratch / "workspace-1").is_dir()
    finally:
        os.close(fd)


def test_a_scratch_recreated_between_open_and_lock_is_left_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The race: the sweeper opened the old lock; the resumed run set recreated its scratch and lock."""
    scratch = _stale_scratch(tmp_path)
    real_flock = fcntl.flock
    recreated: list[int] = []

    def flock_after_the_resume(fd: int, operation: int) -> None:
        if not recreated:  # the resumed runner: a new lock file renamed into place, held
            new = scratch / f"{LOCK}.new"
            recreated.append(os.open(new, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o644))
            real_flock(recreated[0], fcntl.LOCK_EX)
            os.rename(new, scratch / LOCK)
        real_flock(fd, operation)  # the sweeper's lock on the old, now unlinked, file succeeds

    monkeypatch.setattr(runset.fcntl, "flock", flock_after_the_resume)
    try:
        assert runset._sweep_stale_scratch(tmp_path, keep="rs-other") == []
        assert (scratch / "workspace-1").is_dir()  # removed before the fix
    finally:
        os.close(recreated[0])


def test_resuming_waits_for_a_sweeper_that_holds_the_old_lock(tmp_path: Path) -> None:
    scratch = _stale_scratch(tmp_path)
    sweeper = os.open(scratch / LOCK, os.O_RDWR)
    fcntl.flock(sweeper, fcntl.LOCK_EX)
    released = threading.Event()

    def finish_the_sweep() -> None:
        time.sleep(0.3)
        released.set()
        os.close(sweeper)

    thread = threading.Thread(target=finish_the_sweep)
    thread.start()
    fd = runset._wait_for_lock(scratch / LOCK, timeout=10)
    thread.join()
    assert fd is not None
    assert released.is_set()  # it did not go on while the sweeper held the lock
    os.close(fd)
    assert runset._wait_for_lock(tmp_path / "missing" / LOCK) is None


def test_a_scratch_held_too_long_is_an_error(tmp_path: Path) -> None:
    scratch = _stale_scratch(tmp_path)
    holder = os.open(scratch / LOCK, os.O_RDWR)
    fcntl.flock(holder, fcntl.LOCK_EX)
    try:
        with pytest.raises(RunSetError, match="held by another process"):
            runset._wait_for_lock(scratch / LOCK, timeout=0.2)
    finally:
        os.close(holder)
