"""Where trials run: threads on this machine, or tasks on a Ray cluster — the same specs, the same records.

An executor turns a :class:`~gatestats_runner.trial.TrialSpec` into a
``concurrent.futures.Future`` of a :class:`~gatestats_runner.trial.TrialResult`. The run set
(:mod:`gatestats_runner.runset`) alone appends records, so an executor never touches the record
store: a remote executor returns the evidence files' bytes and the driver writes them.

Ray is optional (``pip install 'gatestats[ray]'``) and imported only when :class:`RayExecutor`
is made. Its workers must see the cases directory and the run set's ``candidate/`` copy at the
same paths as the driver (one machine, or a shared file system); each worker detects its own
isolation and runs trials as root with bubblewrap like the local executor. A local Ray instance
that the executor starts is its to clean up: it runs with token authentication set explicitly
(Ray's default, without the notice Ray prints when it picks that default), keeps its session
files in a temporary directory of its own rather than ``/tmp/ray``, and is shut down and removed
by :meth:`RayExecutor.shutdown`.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
import shutil
import sys
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Protocol

from gatestats_runner._util import JSONObject
from gatestats_runner.sandbox import Capabilities, Isolation, detect_capabilities
from gatestats_runner.teardown import Teardown
from gatestats_runner.trial import TrialResult, TrialSpec, run_trial
from gatestats_runner.workspace import WorkspaceMode

__all__ = ["RAY_INSTALL_HINT", "Executor", "LocalExecutor", "RayExecutor", "RayUnavailableError", "default_workers"]

#: How to get Ray, said wherever its absence stops a run.
RAY_INSTALL_HINT = "pip install 'gatestats[ray]'"


def default_workers() -> int:
    """The number of cores this process may use.

    Returns
    -------
    int
        At least 1: the CPUs in this process's affinity mask (else the machine's count).
    """
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return max(1, os.cpu_count() or 1)


class Executor(Protocol):
    """Runs trial specs somewhere and returns futures of their results."""

    name: str
    workers: int

    def start(self, caps: Capabilities) -> None:
        """Get ready to run trials (a pool, a Ray session); called once, before :meth:`submit`.

        Parameters
        ----------
        caps
            The isolation to run the trials with.
        """
        ...

    def submit(self, spec: TrialSpec) -> Future[TrialResult]:
        """Start one trial attempt.

        Parameters
        ----------
        spec
            The attempt.

        Returns
        -------
        Future of TrialResult
            Its result; an exception in it is a lost attempt (``infra_error`` on a remote executor).
        """
        ...

    def shutdown(self, *, cancel: bool = False) -> None:
        """Wait for the submitted attempts and release what :meth:`start` took.

        Parameters
        ----------
        cancel
            Drop the attempts not yet started (the run set is being aborted).
        """
        ...


class LocalExecutor:
    """Trials on this machine, ``workers`` at a time, on threads (each trial is one sandboxed process tree).

    What a finished trial leaves (its cgroups once the sandbox has exited, its workspace) is
    removed by a :class:`~gatestats_runner.teardown.Teardown` while the worker runs its next
    trial; :meth:`shutdown` waits for it.
    """

    name = "local"

    def __init__(self, workers: int | None = None) -> None:
        if workers is not None and workers < 1:
            msg = f"workers: expected an integer >= 1 (got {workers})"
            raise ValueError(msg)
        self.workers = workers or default_workers()
        self._pool: ThreadPoolExecutor | None = None
        self._caps: Capabilities | None = None
        self._teardown: Teardown | None = None

    def start(self, caps: Capabilities) -> None:
        """Start the thread pool.

        Parameters
        ----------
        caps
            As in :meth:`Executor.start`.
        """
        self._caps = caps
        self._teardown = Teardown(limit=2 * self.workers)
        self._pool = ThreadPoolExecutor(max_workers=self.workers, thread_name_prefix="gatestats-trial")

    def submit(self, spec: TrialSpec) -> Future[TrialResult]:
        """Run :func:`~gatestats_runner.trial.run_trial` for ``spec`` on the pool (after :meth:`start`).

        Parameters
        ----------
        spec
            As in :meth:`Executor.submit`.

        Returns
        -------
        Future of TrialResult
            The pool's future.
        """
        if self._pool is None or self._caps is None or self._teardown is None:
            msg = "LocalExecutor.submit before start"
            raise RuntimeError(msg)
        return self._pool.submit(run_trial, spec, self._caps, defer=self._teardown.defer)

    def shutdown(self, *, cancel: bool = False) -> None:
        """Wait for the pool's trials and stop it, then for the removal of what they left.

        Parameters
        ----------
        cancel
            As in :meth:`Executor.shutdown`.
        """
        try:
            if self._pool is not None:
                pool, self._pool = self._pool, None
                pool.shutdown(wait=True, cancel_futures=cancel)
        finally:  # even when interrupted: the scratch is released only after the teardown thread is done
            if self._teardown is not None:
                teardown, self._teardown = self._teardown, None
                try:
                    teardown.close()
                except OSError:
                    if not cancel:  # an abort keeps its own exception; a clean-up error does not replace it
                        raise


_WORKER_CAPS: dict[tuple[str, str], Capabilities] = {}


def ray_trial(spec: TrialSpec, isolation: Isolation, workspace: WorkspaceMode) -> TrialResult:
    """Run one trial in a Ray worker: detect isolation once per worker, return the evidence as bytes.

    Parameters
    ----------
    spec
        The attempt; its evidence and scratch directories are replaced by the worker's own.
    isolation, workspace
        The isolation and workspace mode the driver detected (the worker detects its own with them).

    Returns
    -------
    TrialResult
        The record, with the evidence files' bytes for the driver to write.
    """
    key = (isolation, workspace)
    if key not in _WORKER_CAPS:
        _WORKER_CAPS[key] = detect_capabilities(isolation, workspace=workspace)
    local = Path(tempfile.mkdtemp(prefix="gatestats-ray-"))
    try:
        remote = dataclasses.replace(spec, evidence_dir=local / "evidence", scratch=local / "scratch")
        result = run_trial(remote, _WORKER_CAPS[key])
        files: dict[str, bytes] = {}
        for path in sorted((local / "evidence").rglob("*")):
            if path.is_file() and not path.is_symlink():
                files[path.relative_to(local / "evidence").as_posix()] = path.read_bytes()
        result.files = files
        return result
    finally:
        shutil.rmtree(local, ignore_errors=True)


class RayUnavailableError(ImportError):
    """Ray cannot be imported: it is not installed (or its installation is broken)."""


def _session_parent() -> str:
    """Where a local Ray instance keeps its session: a short path (Ray's sockets live there; 107 bytes at most)."""
    return "/tmp" if os.path.isdir("/tmp") and os.access("/tmp", os.W_OK) else tempfile.gettempdir()


class RayExecutor:
    """Trials as Ray tasks (one CPU each) on the cluster at ``address`` (None: start a local instance).

    Whatever :meth:`start` began (a local instance, or a connection to ``address``) :meth:`shutdown`
    ends, and the local instance's session directory is removed. A Ray that was already
    initialised by the caller is left running unless ``shutdown_ray`` is true.

    Raises
    ------
    RayUnavailableError
        Ray is not installed (the message says how to install it: :data:`RAY_INSTALL_HINT`).
    """

    name = "ray"

    def __init__(self, address: str | None = None, workers: int | None = None, *, shutdown_ray: bool = False) -> None:
        if address is None:
            # A local instance stays on the loopback interface: Ray then uses 127.0.0.1 as the node
            # address instead of the machine's outward-facing one (read when ray is imported).
            os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
            if "ray" not in sys.modules:
                # Token authentication is what Ray picks for a new local instance; saying so keeps
                # Ray from printing a notice about that default on every run (a user's own
                # RAY_AUTH_MODE wins). Read when ray is imported: set later, the driver and the
                # processes it starts would disagree.
                os.environ.setdefault("RAY_AUTH_MODE", "token")
        try:
            self.ray: Any = importlib.import_module("ray")
        except ImportError as exc:
            msg = f"Ray is not installed ({exc}); install it with: {RAY_INSTALL_HINT}"
            raise RayUnavailableError(msg) from None
        self.address = address
        self.workers = workers or default_workers()
        self._shutdown_ray = shutdown_ray
        self._remote: Any = None
        self._caps: Capabilities | None = None
        self._started = False
        self._session_dir: Path | None = None

    def start(self, caps: Capabilities) -> None:
        """Join the Ray cluster at ``address`` (or start a local Ray in a session directory of ours).

        Parameters
        ----------
        caps
            The driver's isolation and workspace mode; each worker detects its own with them.
        """
        self._caps = caps
        if not self.ray.is_initialized():
            kwargs: JSONObject = {
                "include_dashboard": False,
                "log_to_driver": False,
                "configure_logging": False,
            }
            if self.address:
                kwargs["address"] = self.address
            else:
                kwargs["num_cpus"] = self.workers
                # The session goes to a directory of ours, removed at shutdown (not /tmp/ray).
                self._session_dir = Path(tempfile.mkdtemp(prefix="gatestats-ray-session-", dir=_session_parent()))
                kwargs["_temp_dir"] = str(self._session_dir)
            try:
                self.ray.init(**kwargs)
            except BaseException:
                self._remove_session_dir()
                raise
            self._started = True
        self._remote = self.ray.remote(num_cpus=1, max_retries=0)(ray_trial)

    def submit(self, spec: TrialSpec) -> Future[TrialResult]:
        """Run :func:`ray_trial` for ``spec`` as a Ray task: one CPU, never retried by Ray (after :meth:`start`).

        Parameters
        ----------
        spec
            The attempt, pickled to a Ray worker.

        Returns
        -------
        Future of TrialResult
            The future of the task's object reference.
        """
        if self._remote is None or self._caps is None:
            msg = "RayExecutor.submit before start"
            raise RuntimeError(msg)
        ref = self._remote.remote(spec, self._caps.isolation, self._caps.workspace_mode)
        future: Future[TrialResult] = ref.future()
        return future

    def shutdown(self, *, cancel: bool = False) -> None:
        """End what :meth:`start` began (and a caller's Ray with ``shutdown_ray``); remove the session directory.

        Parameters
        ----------
        cancel
            Ignored: a Ray session started here ends with its tasks.
        """
        if (self._started or self._shutdown_ray) and self.ray.is_initialized():
            self.ray.shutdown()
        self._started = False
        self._remove_session_dir()

    def _remove_session_dir(self) -> None:
        if self._session_dir is not None:
            shutil.rmtree(self._session_dir, ignore_errors=True)
            self._session_dir = None
