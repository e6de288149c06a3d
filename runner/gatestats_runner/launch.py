"""Starting a run set from another program: the options, an executor by name, progress, the errors to tell apart.

The runner's public API for front ends: ``python -m gatestats_runner run`` and ``gatestats run``
(which adds a progress bar) are two callers of :func:`run_run_set` through this module, and a
program that orchestrates batches of runs uses the same names. What a caller must tell apart:

- :class:`OptionError` — an option no run can have (``trials`` < 1, an unknown executor, Ray
  asked for but not installed): a usage error, exit 2 on both command lines;
- :class:`CaseError`, :class:`RunSetError`, :class:`SandboxError` — invalid input (the cases,
  the candidate, the run set, isolation that was required but is missing): exit 1.
"""

from __future__ import annotations

from gatestats_runner.case import CaseError
from gatestats_runner.executors import RAY_INSTALL_HINT, Executor, LocalExecutor, RayExecutor, RayUnavailableError
from gatestats_runner.runset import (
    ENFORCEABLE,
    SYSTEM_PARTS,
    OptionError,
    Progress,
    RunSetOptions,
    RunSetSummary,
    run_run_set,
)
from gatestats_runner.sandbox import SandboxError
from gatestats_runner.store import RunSetError

__all__ = [
    "ENFORCEABLE",
    "EXECUTORS",
    "RAY_INSTALL_HINT",
    "SYSTEM_PARTS",
    "CaseError",
    "Executor",
    "OptionError",
    "Progress",
    "RunSetError",
    "RunSetOptions",
    "RunSetSummary",
    "SandboxError",
    "make_executor",
    "run_run_set",
]

#: The executors :func:`make_executor` knows by name.
EXECUTORS = ("local", "ray")


def make_executor(name: str, *, workers: int | None, address: str | None) -> Executor:
    """The executor called ``name``: ``local`` (threads here) or ``ray`` (``address`` None starts a local instance).

    Parameters
    ----------
    name
        One of :data:`EXECUTORS`.
    workers
        Parallel trials (None: the number of cores this process may use).
    address
        The Ray cluster to connect to (``ray`` only; None starts a local instance).

    Returns
    -------
    Executor
        Not started yet: :func:`run_run_set` starts it and shuts it down.

    Raises
    ------
    OptionError
        An unknown executor, fewer than one worker, or ``ray`` without Ray installed (the message
        says how to install it). Each is a usage error.
    """
    if workers is not None and (isinstance(workers, bool) or workers < 1):
        msg = f"--workers: expected an integer >= 1 (got {workers!r})"
        raise OptionError(msg)
    if name == "local":
        return LocalExecutor(workers)
    if name == "ray":
        try:
            return RayExecutor(address, workers)
        except RayUnavailableError as exc:
            msg = f"--executor ray: {exc}"
            raise OptionError(msg) from None
    msg = f"--executor: expected 'local' or 'ray' (got {name!r})"
    raise OptionError(msg)
