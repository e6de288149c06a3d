"""The statistical simulations of ``benchmarks/``, loaded for the tests that re-run them smaller.

A simulation establishes a property once (a size study, a coverage study, a false-pass rate at a
rule's boundary). Its code lives in one script under ``benchmarks/``, run at full size on demand
(``.venv/bin/python benchmarks/<name>.py``); a test calls the same functions at a reduced size that
still fails when the property breaks (each test says what was planted to check that).

Every test that calls a simulation's driver (:data:`DRIVERS`) carries ``@pytest.mark.simulation``
(checked by ``tests/test_simulation_markers.py``); ``tests/conftest.py`` marks those tests ``slow``
too, so ``-m "not slow"`` (``python3 dev.py test --fast``) leaves them out.

A planted break (:func:`planted_from_env`) shows on demand that a test still fails when the
property breaks: ``GATESTATS_PLANTED_BREAK=alpha:3 pytest tests/gate/test_size_gate.py -n 0`` runs
the gate's size tests with every row decided at three times its alpha (they must fail).

Suite size and full size (issue 28, item 3): a test states each size it runs as a module constant
``NAME = reps(suite=<n>, full=<m>)``. The whole suite (``python3 dev.py test``, CI) runs ``n``, the
smallest size found at which every planted break still fails (benchmarks/RESULTS.md, "Issue 28 item 3,
session 41"); ``benchmarks/simulations_full.py`` runs the same tests at ``m`` (it sets
``GATESTATS_SIMULATION_SIZE=full``). Limits such as alpha + 2 SE are computed from the size run.
``tests/test_simulation_sizes.py`` refuses a simulation test without its sizes registered.
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import sys
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"

#: Simulation script (``benchmarks/<name>.py``) -> the functions that run replications.
DRIVERS: dict[str, tuple[str, ...]] = {
    "coverage_simulation": ("simulate", "simulate_cell"),
    "size_study": ("section_a", "section_b", "section_c", "section_d"),
    "infra_bounds_simulation": ("rates",),
    "grouping_simulation": ("run_cell",),
    "family_simulation": ("simulate",),
    "gate_rate_simulation": ("pass_rate", "aa_verdicts"),
    "sequential_simulation": ("type1_table", "savings_table"),
    "monitor_simulation": ("simulate",),
    "ppi_coverage": ("simulate", "simulate_cell"),
    "simultaneous_coverage": ("coverage", "replicate"),
    "eprocess_level": ("crossing_rate",),
}


@cache
def load_simulation(name: str) -> ModuleType:
    """``benchmarks/<name>.py`` as a module (loaded once per process, registered in ``sys.modules``).

    Parameters
    ----------
    name
        A key of :data:`DRIVERS`.

    Returns
    -------
    ModuleType
        The script as a module.
    """
    if name not in DRIVERS:
        msg = f"unknown simulation {name!r}: add it to tests.simulations.DRIVERS with its drivers"
        raise ValueError(msg)
    if str(BENCHMARKS) not in sys.path:
        sys.path.insert(0, str(BENCHMARKS))  # scripts import their siblings (family -> grouping)
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module through sys.modules
    spec.loader.exec_module(module)
    return module


#: The environment variable that selects the size: unset (or ``suite``) the suite's, ``full`` the full one.
SIZE_ENV = "GATESTATS_SIMULATION_SIZE"
SIZES = ("suite", "full")


def size_mode() -> str:
    """``"suite"`` or ``"full"``, from :data:`SIZE_ENV` (unset: ``"suite"``; anything else is refused).

    Returns
    -------
    str
        The size the sized tests run at.
    """
    mode = os.environ.get(SIZE_ENV) or "suite"
    if mode not in SIZES:
        msg = f"{SIZE_ENV}={mode!r}: expected one of {', '.join(SIZES)}"
        raise ValueError(msg)
    return mode


def reps(*, suite: int, full: int) -> int:
    """The size to run: ``suite`` in the whole suite, ``full`` under ``GATESTATS_SIMULATION_SIZE=full``.

    Parameters
    ----------
    suite
        The reduced size (replications, draws, seeds) at which every planted break still fails.
    full
        The size that establishes the property (the benchmark's, or the test's size before issue 28).

    Returns
    -------
    int
        ``suite`` or ``full``.
    """
    if not 1 <= suite <= full:
        msg = f"sizes must satisfy 1 <= suite <= full, got suite={suite}, full={full}"
        raise ValueError(msg)
    return full if size_mode() == "full" else suite


def sized_files(tests: Path = ROOT / "tests") -> list[Path]:
    """The test files that register a size with :func:`reps` (what ``benchmarks/simulations_full.py`` runs).

    ``tests/test_simulation_sizes.py`` (the rule's own examples) is not one of them.

    Parameters
    ----------
    tests
        The folder searched.

    Returns
    -------
    list of Path
        Sorted paths.
    """
    return sorted(
        p
        for p in tests.rglob("test_*.py")
        if p.name != "test_simulation_sizes.py" and "reps(suite=" in p.read_text(encoding="utf-8")
    )


#: The environment variable that plants a break for :func:`planted_from_env` (``name`` or ``name:factor``).
PLANTED_BREAK_ENV = "GATESTATS_PLANTED_BREAK"


@contextlib.contextmanager
def planted_from_env() -> Iterator[str | None]:
    """Run the block with the break named by ``GATESTATS_PLANTED_BREAK`` planted (unset: nothing planted).

    The breaks are those of ``benchmarks/gate_rate_simulation.py`` (``planted``): ``alpha``, ``case_t``,
    ``evalue``, ``no_groups``, ``no_holm``, each with an optional ``:factor`` (default 3). Only for
    showing teeth on demand; the suite runs with the variable unset.

    Yields
    ------
    str or None
        The planted break as given, or ``None``.
    """
    given = os.environ.get(PLANTED_BREAK_ENV) or None
    name, _, factor = (given or "").partition(":")
    sim = load_simulation("gate_rate_simulation")
    with sim.planted(name or None, float(factor) if factor else sim.TEETH_FACTOR):
        yield given
