"""The command line runs BLAS on one thread unless the user sizes the pool (session 36).

One thread: the same digits on every machine (the ones the suite checks: tests/conftest.py runs
one thread) and no OpenBLAS thread pool to start (≈0.1 CPU-s of every command's start-up).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from gatestats.cli import BLAS_THREAD_VARIABLES, one_blas_thread


def test_one_thread_is_asked_for_when_the_user_sets_none() -> None:
    environ = {"PATH": "/usr/bin"}
    assert one_blas_thread(environ) is True
    assert environ == {"PATH": "/usr/bin", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


@pytest.mark.parametrize("name", BLAS_THREAD_VARIABLES)
def test_a_users_own_setting_wins(name: str) -> None:
    environ = {name: "4"}
    assert one_blas_thread(environ) is False
    assert environ == {name: "4"}


_CHILD = """
import json, os, sys
sys.argv = ["gatestats", "--help"]
from gatestats.cli import main
try:
    main()
except SystemExit:
    pass
before = len(os.listdir("/proc/self/task"))
import numpy
started = len(os.listdir("/proc/self/task")) - before  # OpenBLAS's pool: its threads beyond the caller
print(json.dumps({"env": os.environ.get("OPENBLAS_NUM_THREADS"), "started": started}), file=sys.stderr)
"""


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc (Linux)")
@pytest.mark.parametrize(("given", "threads"), [(None, 1), ("2", 2)])
def test_the_entry_point_starts_numpy_with_one_blas_thread_unless_told(given: str | None, threads: int) -> None:
    env = {k: v for k, v in os.environ.items() if k not in BLAS_THREAD_VARIABLES}
    if given is not None:
        env["OPENBLAS_NUM_THREADS"] = given
    done = subprocess.run([sys.executable, "-c", _CHILD], env=env, capture_output=True, text=True, check=True)
    seen = json.loads(done.stderr.strip().splitlines()[-1])
    assert seen["env"] == ("1" if given is None else given)
    if (os.cpu_count() or 1) >= threads:
        assert seen["started"] == threads - 1  # one thread: no pool at all
