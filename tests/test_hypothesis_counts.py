"""The whole suite runs every property test at its stated count; the inner loop at a quarter, never none."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.hypothesis_counts import FAST_PROFILE, FLOOR, SUITE_PROFILE, examples

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
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.keyword) and node.arg == "max_examples":
                value = node.value
                if not (
                    isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and value.func.id == "examples"
                ):
                    literal.append(f"{path.relative_to(ROOT)}:{node.value.lineno}")
    assert literal == []
