"""On a clean clone's first run, the xdist workers collect one after the other, not both at once.

``dev.py`` installs the dependencies without compiling them (uv's default: compiling all 11,484 files of the
environment at install costs more than the suite saves, benchmarks/RESULTS.md, session 42). On a clean clone the
two workers of ``pytest -n 2`` would each compile, at the same time, the ~3,700 files their collection imports,
and rewrite the same test modules. Here, while the installed packages have no bytecode yet, the first worker to
collect holds a lock the run's workers share (in the run's temporary root) and the other collects after it, from
the bytecode the first wrote. Measured on a fresh clone, a collection alone (benchmarks/RESULTS.md, session 45):
42.9 → 35.6 and 40.2 → 31.0 CPU-s. When the bytecode is there (every later run, the inner loop) nothing waits.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

#: A large module of a package the collection imports; its bytecode missing means the environment is uncompiled.
SENTINEL = ("polars", "dataframe/frame.py")


def bytecode_cold(package: str = SENTINEL[0], module: str = SENTINEL[1]) -> bool:
    """Whether ``module`` of the installed ``package`` has no cached bytecode (found without importing it)."""
    spec = importlib.util.find_spec(package)
    if spec is None or spec.origin is None:
        return False
    source = Path(spec.origin).parent / module
    return source.exists() and not Path(importlib.util.cache_from_source(str(source))).exists()


def lock_path(config: Any) -> Path | None:
    """The lock file the run's xdist workers share, or None outside a worker."""
    workerinput = getattr(config, "workerinput", None)
    basetemp = getattr(config.option, "basetemp", None)
    if workerinput is None or basetemp is None:
        return None
    return Path(basetemp).parent / f"collect-{workerinput['testrunuid']}.lock"


@contextlib.contextmanager
def one_worker_at_a_time(config: Any, cold: Callable[[], bool] = bytecode_cold) -> Iterator[None]:
    """Hold the run's collection lock around a worker's collection while the bytecode is cold."""
    path = lock_path(config)
    if path is None or not cold():
        yield
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed, or when the worker dies
        yield
