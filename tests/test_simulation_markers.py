"""Every test that runs a simulation of ``benchmarks/`` is marked ``simulation`` (so the fast loop skips it).

A test "runs a simulation" when it calls one of the drivers of :data:`tests.simulations.DRIVERS`
on the loaded script (``sim.simulate(...)``), directly or through a helper function of its file.
Simulation scripts are loaded only through :func:`tests.simulations.load_simulation`, so a new
test cannot load one in a way this check does not see.
"""

from __future__ import annotations

import ast
from pathlib import Path

from tests.simulations import DRIVERS

TESTS = Path(__file__).resolve().parent
ALL_DRIVERS = {driver for drivers in DRIVERS.values() for driver in drivers}


def _is_simulation_mark(node: ast.expr) -> bool:
    target = node.func if isinstance(node, ast.Call) else node
    return isinstance(target, ast.Attribute) and target.attr == "simulation"


def _module_marked(tree: ast.Module) -> bool:
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "pytestmark" for t in node.targets):
            values = node.value.elts if isinstance(node.value, ast.List | ast.Tuple) else [node.value]
            if any(_is_simulation_mark(v) for v in values):
                return True
    return False


def _calls_a_driver(function: ast.AST, helpers: set[str]) -> bool:
    for node in ast.walk(function):
        if not isinstance(node, ast.Call):
            continue
        if isinstance(node.func, ast.Attribute) and node.func.attr in ALL_DRIVERS:
            return True
        if isinstance(node.func, ast.Name) and node.func.id in helpers:
            return True
    return False


def _functions(tree: ast.Module) -> list[ast.FunctionDef]:
    found: list[ast.FunctionDef] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef):
            found.append(node)
        elif isinstance(node, ast.ClassDef):
            found.extend(n for n in node.body if isinstance(n, ast.FunctionDef))
    return found


def unmarked_simulation_tests(source: str) -> list[str]:
    """Names of the test functions in ``source`` that call a simulation driver without the mark."""
    tree = ast.parse(source)
    if "load_simulation" not in source:
        return []
    functions = _functions(tree)
    helpers: set[str] = set()
    changed = True
    while changed:  # helpers that call a driver, or a helper that does
        changed = False
        for f in functions:
            if not f.name.startswith("test_") and f.name not in helpers and _calls_a_driver(f, helpers):
                helpers.add(f.name)
                changed = True
    if _module_marked(tree):
        return []
    return [
        f.name
        for f in functions
        if f.name.startswith("test_")
        and _calls_a_driver(f, helpers)
        and not any(_is_simulation_mark(d) for d in f.decorator_list)
    ]


def test_every_test_that_runs_a_simulation_is_marked() -> None:
    offenders = []
    users = 0
    for path in sorted(TESTS.rglob("test_*.py")):
        source = path.read_text(encoding="utf-8")
        users += "load_simulation(" in source
        offenders += [f"{path.relative_to(TESTS)}::{name}" for name in unmarked_simulation_tests(source)]
    assert not offenders, "mark these @pytest.mark.simulation (they run a benchmarks/ simulation): " + ", ".join(
        offenders
    )
    assert users >= 8, users  # the check sees the simulation tests (a rename would make it vacuous)


def test_simulation_scripts_are_loaded_only_through_the_helper() -> None:
    offenders = [
        str(path.relative_to(TESTS))
        for path in sorted(TESTS.rglob("*.py"))
        if path.name not in ("simulations.py", Path(__file__).name)
        and "spec_from_file_location" in (text := path.read_text(encoding="utf-8"))
        and '"benchmarks"' in text
    ]
    assert not offenders, "load benchmarks/ scripts with tests.simulations.load_simulation: " + ", ".join(offenders)


def test_the_check_sees_an_unmarked_driver_call_through_a_helper() -> None:
    source = """
from tests.simulations import load_simulation
import pytest

def _rate(reps):
    return load_simulation("infra_bounds_simulation").rates(None, reps=reps)

def test_quick():
    assert load_simulation("infra_bounds_simulation").CELLS

def test_unmarked():
    assert _rate(10) < 1

@pytest.mark.simulation
def test_marked():
    assert _rate(10) < 1
"""
    assert unmarked_simulation_tests(source) == ["test_unmarked"]
    assert unmarked_simulation_tests("pytestmark = pytest.mark.simulation\n" + source) == []
