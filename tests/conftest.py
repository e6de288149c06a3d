"""Shared fixtures: paths to the bundled real data and a builder of minimal valid records."""

from __future__ import annotations

import fcntl
import json
import os
import pickle
import shutil
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import pytest
from hypothesis import settings

from tests.collection_lock import one_worker_at_a_time
from tests.hypothesis_counts import SUITE_PROFILE

if TYPE_CHECKING:
    from tests.fuzz.corpus import Corpus

# One BLAS thread per test process: pytest-xdist already runs a worker per core, and OpenBLAS threads
# spinning on a busy machine cost up to 6x the CPU of the work itself (a size-study cell: 15 s vs 2.6 s).
# Set before numpy is imported here; the xdist workers inherit it.
for _name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_name, "1")
# The suite keeps bytecode (``__pycache__/``, git-ignored) even where the shell says not to
# (PYTHONDONTWRITEBYTECODE): dev.py installs the dependencies without compiling them (uv's default), and the
# suite starts hundreds of interpreters (CLI children, notebook kernels, Ray workers) that would otherwise each
# compile what they import again. The first process to import a module writes it; the others load it.
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

ROOT = Path(__file__).resolve().parents[1]
T = TypeVar("T")
DATA = ROOT / "data"


def pytest_configure(config: pytest.Config) -> None:
    """Load the hypothesis profile pytest was given, else the whole suite's (tests/hypothesis_counts.py).

    Deadlines are wall-clock and flaky on a loaded 2-core CI machine; example counts stay bounded.
    `python3 dev.py test --fast` passes `--hypothesis-profile gatestats-fast`. Loaded here, not when this file is
    imported: an xdist worker imports it after hypothesis' own plugin has loaded the given profile, and loading the
    suite's then would undo it.
    """
    settings.load_profile(config.getoption("--hypothesis-profile") or SUITE_PROFILE)


@pytest.fixture
def tau_raw() -> Path:
    """τ-bench's original result file: gpt-4o tool-calling agent, airline, 50 tasks x 4 trials (MIT)."""
    return DATA / "tau_bench" / "raw" / "gpt-4o-airline.json"


@pytest.fixture
def tau_csv() -> Path:
    """CSV extract of the same 200 trials (columns task_id, trial, reward, success, user_cost_usd, ...)."""
    return DATA / "tau_bench" / "tau_bench_gpt4o_airline_trials.csv"


@pytest.fixture
def tau2_raw() -> Path:
    """τ²-bench developer test run (gpt-4.1, telecom, 5 tasks x 4 trials, with agent cost)."""
    return DATA / "tau_bench" / "raw" / "tau2-gpt-4.1-telecom-no-user-4trials-5tasks.json"


def make_record(**overrides: Any) -> dict[str, Any]:
    """A minimal valid run record (contract v1), with overrides."""
    record: dict[str, Any] = {
        "schema_version": 1,
        "record_id": "r-0",
        "run_set_id": "set-1",
        "system": "baseline",
        "case_id": "case-1",
        "trial": 0,
        "attempt": 0,
        "outcome": "passed",
    }
    record.update(overrides)
    return record


@pytest.fixture
def record() -> Callable[..., dict[str, Any]]:
    return make_record


@pytest.fixture
def write_jsonl(tmp_path: Path) -> Callable[..., Path]:
    """Write records (dicts, or raw strings for deliberately broken lines) as a JSONL file."""

    def write(
        rows: list[dict[str, Any] | str],
        name: str = "records.jsonl",
        *,
        trailing_newline: bool = True,
    ) -> Path:
        lines = [row if isinstance(row, str) else json.dumps(row) for row in rows]
        path = tmp_path / name
        path.write_text("\n".join(lines) + ("\n" if trailing_newline else ""), encoding="utf-8")
        return path

    return write


@pytest.hookimpl(hookwrapper=True, tryfirst=True)
def pytest_collection(session: pytest.Session) -> Iterator[None]:
    """On a clean clone, one xdist worker collects at a time (tests/collection_lock.py)."""
    with one_worker_at_a_time(session.config):
        yield


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A simulation (``@pytest.mark.simulation``, tests/simulations.py) is slow too: ``-m "not slow"`` skips it."""
    for item in items:
        if item.get_closest_marker("simulation") is not None and item.get_closest_marker("slow") is None:
            item.add_marker(pytest.mark.slow)


def built_once_per_run(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], T]) -> T:
    """What ``build(directory)`` returns, built once per test run in a directory its processes share.

    A session fixture is per process: under pytest-xdist each worker built its own (twice on -n 2, the
    inner loop). Here the first process to ask builds it, under an exclusive lock, in the temporary root the
    run's workers share (the parent of each worker's base temp, ``pytest-N/popen-gwK``), and stores what
    ``build`` returned (pickled); the others wait for the lock and load it. It is stored only once ``build``
    returned, so a failed or interrupted build is made again, from scratch, by the next process to ask.
    Without xdist the directory is in the process's own base temp. Readers must not write in it (as for
    any shared session fixture).
    """
    base = tmp_path_factory.getbasetemp()
    root = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    directory, built = root / f"shared-{name}", root / f"shared-{name}.pickle"
    with (root / f"shared-{name}.lock").open("a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file is closed
        if built.exists():
            value: T = pickle.loads(built.read_bytes())
            return value
        shutil.rmtree(directory, ignore_errors=True)
        directory.mkdir()
        value = build(directory)
        built.write_bytes(pickle.dumps(value))
        return value


@pytest.fixture(scope="session")
def sequential_example_run(sequential_example_outcome: tuple[Path, str, int]) -> Path:
    """The bundled sequential example (examples/sequential) run until decided, once per test run.

    Four modules gate or read the same run (≈ 3 CPU-s a run; issue 28, item 3); each reads its own copy
    (:func:`copy_sequential_example`). Built once per test run, not once per xdist worker
    (:func:`built_once_per_run`; session 44: -n 2 ran it twice, and tests/sequential/run/test_controller.py a
    third time: it now checks the run's outcome, :func:`sequential_example_outcome`, and works in a copy).
    """
    run, _, _ = sequential_example_outcome
    return run


@pytest.fixture(scope="session")
def sequential_example_outcome(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, int]:
    """The run of :func:`sequential_example_run`, its final state and the batches it ran (once per test run)."""
    from tests.sequential.run.conftest import run_example

    def build(directory: Path) -> tuple[Path, str, int]:
        result = run_example(directory / "out")
        return directory / "out", result.state, result.batches_run

    return built_once_per_run(tmp_path_factory, "sequential-example", build)


@pytest.fixture(scope="session")
def fuzz_corpus(tmp_path_factory: pytest.TempPathFactory) -> Corpus:
    """The fuzz suite's valid files and the runner's outputs (tests/fuzz/corpus.py), built once per test run.

    Read by tests/fuzz, the option walk (its files, policy and run sets), the drift sample test (the stored run
    set and its re-run) and the one-door and journal tests (the finished correction loop): ≈ 0.5 CPU-s a build,
    and its correction loop and runner outputs were run again by three of those modules (issue 28, item 3). No
    test writes in it: each copies the directory it edits, and every command the fuzz suite runs is checked to
    leave its copy unchanged. Built once per test run, not once per xdist worker (:func:`built_once_per_run`).
    """
    from tests.fuzz.corpus import build_corpus

    return built_once_per_run(tmp_path_factory, "fuzz-corpus", build_corpus)


def copy_sequential_example(run: Path, to: Path) -> Path:
    """A copy of the example's run folder at ``to`` (its lock file left behind), as if it had run there."""
    shutil.copytree(run, to, ignore=shutil.ignore_patterns(".lock"))
    return to
