"""The whole suite runs every property test and random loop at its stated count; the inner loop at a quarter."""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import FAST_PROFILE, FLOOR, SUITE_PROFILE, draws, examples

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"


@pytest.mark.parametrize("count", [1, 5, 9, 10, 11, 20, 25, 40, 60, 100, 150, 300, 600])
def test_the_suite_runs_the_stated_count_and_the_inner_loop_a_quarter_never_below_the_floor(count: int) -> None:
    assert examples(count, settings.get_profile(SUITE_PROFILE)) == count
    fast = examples(count, settings.get_profile(FAST_PROFILE))
    assert min(count, FLOOR) <= fast <= count
    assert fast == max(min(count, FLOOR), round(count / 4))


def test_a_count_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        examples(0)


def test_the_loaded_profile_is_the_one_pytest_was_given(request: pytest.FixtureRequest) -> None:
    asked = request.config.getoption("--hypothesis-profile") or SUITE_PROFILE
    assert settings.default.max_examples == settings.get_profile(asked).max_examples
    assert settings.default.deadline is None


RUNS: list[int] = []


@settings(max_examples=examples(40))
@given(st.integers())
def _count_runs(value: int) -> None:
    RUNS.append(value)


def test_a_property_runs_the_count_of_the_loaded_profile(request: pytest.FixtureRequest) -> None:
    RUNS.clear()
    _count_runs()
    asked = request.config.getoption("--hypothesis-profile") or SUITE_PROFILE
    assert len(RUNS) == examples(40, settings.get_profile(asked))


def test_only_the_fast_command_loads_the_inner_loop_profile() -> None:
    source = (ROOT / "dev.py").read_text(encoding="utf-8")
    assert source.count(f'"--hypothesis-profile", "{FAST_PROFILE}"') == 1
    assert f'["-m", "not slow", "--hypothesis-profile", "{FAST_PROFILE}"] if fast else []' in source
    assert "hypothesis-profile" not in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_every_stated_count_goes_through_examples() -> None:
    """A literal ``max_examples=300`` would run 300 examples in the inner loop too: every count is ``examples(n)``."""
    literal = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name == "hypothesis_counts.py":  # the profiles themselves
            continue
        text = path.read_text(encoding="utf-8")
        if "max_examples" not in text:  # no such keyword can be in it: not parsed
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.keyword) and node.arg == "max_examples":
                value = node.value
                if not (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "examples"
                ):
                    literal.append(f"{path.relative_to(ROOT)}:{node.value.lineno}")
    assert literal == []


@pytest.mark.parametrize("floor", [1, 4, FLOOR, 16])
@pytest.mark.parametrize("count", [1, 3, 4, 9, 10, 12, 16, 40, 60, 100, 150, 300])
def test_the_suite_runs_the_stated_draws_and_the_inner_loop_a_quarter_never_below_the_floor(
    count: int, floor: int
) -> None:
    assert draws(count, floor=floor, profile=settings.get_profile(SUITE_PROFILE)) == count
    fast = draws(count, floor=floor, profile=settings.get_profile(FAST_PROFILE))
    assert fast == max(min(count, floor), round(count / 4))
    assert min(count, floor) <= fast <= count
    assert draws(count, profile=settings.get_profile(FAST_PROFILE)) == examples(
        count, settings.get_profile(FAST_PROFILE)
    )


def test_a_draw_count_or_floor_below_one_is_refused() -> None:
    with pytest.raises(ValueError, match="at least 1"):
        draws(0)
    with pytest.raises(ValueError, match="floor is at least 1"):
        draws(10, floor=0)


def _is_draws(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "draws"


def _stated_draws() -> list[tuple[str, str, ast.Call]]:
    """Every ``NAME = draws(...)`` at the top of a test module: (module, NAME, the call)."""
    found = []
    for path in sorted(TESTS.rglob("test_*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        text = path.read_text(encoding="utf-8")
        if "draws(" not in text:  # no call of draws can be in it: not parsed
            continue
        for node in ast.parse(text).body:
            if isinstance(node, ast.Assign) and _is_draws(node.value):
                found += [(module, t.id, node.value) for t in node.targets if isinstance(t, ast.Name)]  # type: ignore[misc]
    return found


def test_every_draw_count_is_a_module_constant_written_as_a_number() -> None:
    """A draw count is stated once, beside its test, as ``NAME = draws(<number>[, floor=<number>])``."""
    elsewhere = []
    for path in sorted(TESTS.rglob("*.py")):
        if path.name in ("hypothesis_counts.py", "test_hypothesis_counts.py"):  # the rule and its own checks
            continue
        text = path.read_text(encoding="utf-8")
        if "draws(" not in text:  # no call of draws can be in it: not parsed
            continue
        tree = ast.parse(text)
        stated = {id(node.value) for node in tree.body if isinstance(node, ast.Assign) and _is_draws(node.value)}
        elsewhere += [f"{path.name}:{n.lineno}" for n in ast.walk(tree) if _is_draws(n) and id(n) not in stated]
    assert elsewhere == []
    stated_draws = _stated_draws()
    for module, name, call in stated_draws:
        assert len(call.args) == 1, (module, name)
        assert isinstance(call.args[0], ast.Constant), (module, name)
        assert all(k.arg == "floor" and isinstance(k.value, ast.Constant) for k in call.keywords), (module, name)
    assert len(stated_draws) >= 7  # the loops of issue 28 item 3 (session 43) go through draws


def test_each_stated_draw_count_runs_at_the_loaded_profiles_share(request: pytest.FixtureRequest) -> None:
    """The whole suite runs the number written beside the test; the inner loop a quarter of it, at least the floor."""
    asked = settings.get_profile(request.config.getoption("--hypothesis-profile") or SUITE_PROFILE)
    for module, name, call in _stated_draws():
        written = call.args[0].value  # type: ignore[attr-defined]
        floor = next((k.value.value for k in call.keywords if isinstance(k.value, ast.Constant)), FLOOR)
        value = getattr(importlib.import_module(module), name)
        assert value == draws(written, floor=floor, profile=asked), (module, name)
        if asked.max_examples >= settings.get_profile(SUITE_PROFILE).max_examples:
            assert value == written, (module, name)
        else:
            assert value == max(min(written, floor), round(written / 4)), (module, name)
