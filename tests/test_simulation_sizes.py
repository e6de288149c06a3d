"""Every simulation test states its suite size and its full size; the full mode runs the full sizes (issue 28, item 3).

A simulation test (``@pytest.mark.simulation``) and an oracle identity test re-run at a reduced size in the
whole suite state each size as a module constant ``NAME = reps(suite=n, full=m)`` (:func:`tests.simulations.reps`).
A literal size (``reps=200``, ``draws = 24``) would run the reduced size in ``benchmarks/simulations_full.py`` too:
it is refused here, like a literal ``max_examples`` in ``tests/test_hypothesis_counts.py``.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from pathlib import Path
from types import ModuleType

import pytest

from tests.simulations import DRIVERS, SIZE_ENV, load_simulation, reps, size_mode, sized_files
from tests.test_simulation_markers import _is_simulation_mark, _module_marked

TESTS = Path(__file__).resolve().parent
#: Keyword arguments and names that are a simulation's size.
SIZE_WORDS = ("reps", "n_reps", "power_reps", "replications", "draws", "seeds")


def _is_sized_name(name: str) -> bool:
    lowered = name.lower()
    return any(lowered == w or lowered.endswith("_" + w) or lowered.startswith(w + "_") for w in SIZE_WORDS)


def _is_reps_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "reps"


def driver_size_positions() -> dict[tuple[str, str], set[int]]:
    """(script, driver) -> the positions of the driver's parameters that are a size (``reps``, ``n_reps``, ...)."""
    positions: dict[tuple[str, str], set[int]] = {}
    for script, names in DRIVERS.items():
        module = load_simulation(script)
        for name in names:
            parameters = list(inspect.signature(getattr(module, name)).parameters)
            positions[script, name] = {i for i, parameter in enumerate(parameters) if _is_sized_name(parameter)}
    return positions


def _script_of(call: ast.AST, helpers: dict[str, str]) -> str | None:
    """The script of ``load_simulation("script")``, or of a call to a module function returning one."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    if call.func.id == "load_simulation" and call.args and isinstance(call.args[0], ast.Constant):
        return str(call.args[0].value)
    return helpers.get(call.func.id)


def _loaded_scripts(tree: ast.AST) -> dict[str, set[str]]:
    """Names bound to a loaded script (``load_simulation("script")`` or a function returning it) -> the scripts."""
    helpers: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef):
            for inner in ast.walk(node):
                if isinstance(inner, ast.Return) and (script := _script_of(inner.value, {})) is not None:
                    helpers[node.name] = script
    bound: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and (script := _script_of(node.value, helpers)) is not None:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    bound.setdefault(target.id, set()).add(script)
    return bound


def _positional_sizes(
    node: ast.Call, scripts: dict[str, set[str]], drivers: dict[tuple[str, str], set[int]]
) -> list[str]:
    """A literal passed by position where a loaded script's driver takes its size (``sim.simulate(cell, 80)``)."""
    func = node.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
        return []
    sized: set[int] = set()
    for script in scripts.get(func.value.id, set()):
        sized |= drivers.get((script, func.attr), set())
    return [
        f"line {arg.lineno}: literal size {arg.value} passed by position to {func.attr}()"
        for i, arg in enumerate(node.args)
        if i in sized and isinstance(arg, ast.Constant) and type(arg.value) is int and arg.value > 1
    ]


def registered_sizes(
    source: str, drivers: dict[tuple[str, str], set[int]] | None = None
) -> tuple[dict[str, tuple[int, int]], list[str]]:
    """The module's registered sizes (``NAME -> (suite, full)``) and what the rule refuses in it (with line numbers).

    ``drivers`` (:func:`driver_size_positions`): a literal passed by position where a driver takes its size
    (``sim.simulate(cell, 80, seed)``, ``sim`` bound to ``load_simulation("script")`` or to a call of a module
    function returning it) is refused too. A script reached another way is not followed.
    """
    tree = ast.parse(source)
    scripts = _loaded_scripts(tree)
    sizes: dict[str, tuple[int, int]] = {}
    refused: list[str] = []
    top_level: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.Assign | ast.AnnAssign) and _is_reps_call(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            call = node.value
            assert isinstance(call, ast.Call)
            keywords = {k.arg: k.value for k in call.keywords}
            literal = all(isinstance(keywords.get(k), ast.Constant) for k in ("suite", "full"))
            if len(targets) != 1 or not isinstance(targets[0], ast.Name) or call.args or not literal:
                refused.append(f"line {node.lineno}: NAME = reps(suite=<int>, full=<int>), literal keywords only")
            else:
                suite, full = (keywords[k].value for k in ("suite", "full"))  # type: ignore[union-attr]
                sizes[targets[0].id] = (int(suite), int(full))
            top_level.add(id(call))
    for node in ast.walk(tree):
        if _is_reps_call(node) and id(node) not in top_level:
            refused.append(f"line {node.lineno}: reps() outside a module constant")  # type: ignore[attr-defined]
        if (
            isinstance(node, ast.keyword)
            and node.arg is not None
            and _is_sized_name(node.arg)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, int)
            and node.value.value > 1
        ):
            refused.append(f"line {node.value.lineno}: literal size {node.arg}={node.value.value}")
        if isinstance(node, ast.Call) and drivers:
            refused += _positional_sizes(node, scripts, drivers)
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, int):
            for target in node.targets:
                if isinstance(target, ast.Name) and _is_sized_name(target.id) and node.value.value > 1:
                    refused.append(f"line {node.lineno}: literal size {target.id} = {node.value.value}")
    return sizes, sorted(refused, key=lambda r: int(r.split(":")[0].removeprefix("line ")))


def _simulation_files() -> list[Path]:
    """The test files with a ``simulation``-marked test (a decorator or the module's ``pytestmark``)."""
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        decorated = any(
            _is_simulation_mark(d)
            for node in ast.walk(tree)
            if isinstance(node, ast.FunctionDef)
            for d in node.decorator_list
        )
        if decorated or _module_marked(tree):
            found.append(path)
    return found


def test_every_simulation_test_file_registers_its_sizes_and_states_no_literal_size() -> None:
    simulation = _simulation_files()
    assert len(simulation) >= 12, simulation  # the check sees the simulation tests (a rename would make it vacuous)
    sized = sized_files(TESTS)
    missing = [str(p.relative_to(TESTS)) for p in simulation if p not in sized]
    assert not missing, "register the sizes of these simulation tests with tests.simulations.reps: " + ", ".join(
        missing
    )
    offenders = []
    drivers = driver_size_positions()
    for path in sized:
        sizes, refused = registered_sizes(path.read_text(encoding="utf-8"), drivers)
        offenders += [f"{path.relative_to(TESTS)}: {r}" for r in refused]
        offenders += [f"{path.relative_to(TESTS)}: {name} has suite > full" for name, (s, f) in sizes.items() if s > f]
        if not sizes:
            offenders.append(f"{path.relative_to(TESTS)}: no NAME = reps(suite=..., full=...)")
    assert not offenders, "\n".join(offenders)


def test_the_rule_refuses_a_literal_size_and_a_size_without_its_full_one() -> None:
    source = """
from tests.simulations import reps
REPS = reps(suite=100, full=400)
BAD = reps(suite=100)
def test_x():
    n = reps(suite=1, full=2)
    sim.pass_rate(cell, reps=200, seed=1)
    draws = 24
    sim.pass_rate(cell, reps=REPS, seed=1)
"""
    sizes, refused = registered_sizes(source)
    assert sizes == {"REPS": (100, 400)}
    assert [r.split(":")[0] for r in refused] == ["line 4", "line 6", "line 7", "line 8"]


def test_the_rule_refuses_a_size_passed_by_position_to_a_driver() -> None:
    drivers = driver_size_positions()
    script, name = next((key for key, sized in sorted(drivers.items()) if sized), ("", ""))
    assert script, drivers  # the scripts' size parameters are found (a rename would make this vacuous)
    args = ["cell"] * min(drivers[script, name])
    source = f"""
from tests.simulations import load_simulation, reps
REPS = reps(suite=100, full=400)
sim = load_simulation("{script}")
def test_x():
    sim.{name}({", ".join([*args, "80"])})
    sim.{name}({", ".join([*args, "REPS"])})
    sim.{name}({", ".join([*args, "True"])})
    other.{name}({", ".join([*args, "80"])})
def _study():
    return load_simulation("{script}")
def test_y():
    study = _study()
    study.{name}({", ".join([*args, "40"])})
"""
    _, refused = registered_sizes(source, drivers)
    assert refused == [
        f"line 6: literal size 80 passed by position to {name}()",
        f"line 14: literal size 40 passed by position to {name}()",
    ]


def test_the_suite_runs_the_suite_size_and_refuses_an_unknown_mode(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(SIZE_ENV, raising=False)
    assert (size_mode(), reps(suite=100, full=400)) == ("suite", 100)
    monkeypatch.setenv(SIZE_ENV, "full")
    assert (size_mode(), reps(suite=100, full=400)) == ("full", 400)
    monkeypatch.setenv(SIZE_ENV, "huge")
    with pytest.raises(ValueError, match="GATESTATS_SIMULATION_SIZE='huge'"):
        reps(suite=1, full=2)
    with pytest.raises(ValueError, match="suite <= full"):
        reps(suite=5, full=4)


def _fresh(path: Path) -> ModuleType:
    """The test module executed anew (not the one pytest imported), so its constants are read at the mode set now."""
    spec = importlib.util.spec_from_file_location(f"_sized_{path.stem}", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("mode", ["suite", "full"])
def test_each_mode_runs_the_registered_sizes(mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(SIZE_ENV, mode)
    checked = 0
    for path in sized_files(TESTS):
        sizes, _ = registered_sizes(path.read_text(encoding="utf-8"))
        module = _fresh(path)
        for name, (suite, full) in sizes.items():
            assert getattr(module, name) == (full if mode == "full" else suite), (path.name, name)
            checked += 1
    assert checked >= 12
