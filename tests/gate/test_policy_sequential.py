"""The policy's ``[sequential]`` table (issue 18): read strictly, every bad key named with its line."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import PolicyError, parse_policy
from gatestats.sequential import SequentialDesign
from tests.gate.factory import policy_text

RULES = """
[[rules]]
name = "not worse"
metric = "pass_rate"
test = "paired"
margin = 0.05

[[rules]]
name = "good enough"
metric = "pass_hat_k"
threshold = 0.6
"""

DESIGN = """
[sequential]
max_cases = 200
trials = 3
batch_cases = 20
"""


def _text(design: str = DESIGN, rules: str = RULES) -> str:
    return policy_text(rules + design, k=2, min_trials=2)


def _problems(text: str) -> list[str]:
    with pytest.raises(PolicyError) as info:
        parse_policy(text.encode(), path="p.toml")
    return [str(p) for p in info.value.problems]


def _line(text: str, start: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if line.startswith(start))


def test_a_sequential_table_is_read_with_its_defaults_and_changes_the_digest() -> None:
    text = _text()
    policy = parse_policy(text.encode(), path="p.toml")
    assert policy.sequential == SequentialDesign(max_cases=200, trials=3, batch_cases=20)
    assert policy.sequential.method == "betting"
    assert policy.sequential.alpha_pass_share == 0.5
    assert policy.sequential.checkpoints()[:3] == (20, 40, 60)
    without = parse_policy(_text(design="").encode(), path="p.toml")
    assert without.sequential is None
    assert without.digest != policy.digest


def test_every_key_of_the_table_is_read() -> None:
    design = DESIGN + 'method = "empirical_bernstein"\nalpha_pass_share = 0.25\n'
    policy = parse_policy(_text(design).encode(), path="p.toml")
    assert policy.sequential is not None
    assert policy.sequential.method == "empirical_bernstein"
    assert policy.sequential.alpha_pass_share == 0.25


@pytest.mark.parametrize(
    ("replace", "by", "key", "message"),
    [
        ("batch_cases = 20", "batch_cases = 400", "batch_cases", "must be at most max_cases = 200 (got 400)"),
        ("batch_cases = 20", "batch_cases = 0", "batch_cases", "expected an integer in [1, 10000000] (got 0)"),
        ("trials = 3", "trials = 2.5", "trials", "expected an integer (got float 2.5)"),
        ("max_cases = 200", 'max_cases = "200"', "max_cases", "expected an integer (got str '200')"),
        ("max_cases = 200", "max_cases = true", "max_cases", "expected an integer (got bool True)"),
        ("trials = 3", 'trials = 3\nmethod = "bayes"', "method", "expected one of 'betting', "),
        (
            "trials = 3",
            "trials = 3\nalpha_pass_share = 1.0",
            "alpha_pass_share",
            "expected a number in (0, 1) (got 1.0)",
        ),
        ("trials = 3", "trials = 3\nalpha_pass_share = 0", "alpha_pass_share", "expected a number in (0, 1) (got 0)"),
        (
            "trials = 3",
            "trials = 3\nalpha_pass_share = nan",
            "alpha_pass_share",
            "expected a number in (0, 1) (got nan)",
        ),
        (
            "trials = 3",
            'trials = 3\nalpha_pass_share = "half"',
            "alpha_pass_share",
            "expected a number in (0, 1) (got str 'half')",
        ),
        ("trials = 3", "trials = 3\nbatch = 5", "batch", "unknown key (expected one of: max_cases, trials, "),
    ],
)
def test_a_bad_design_key_is_a_policy_error_naming_key_and_line(replace: str, by: str, key: str, message: str) -> None:
    text = _text(DESIGN.replace(replace, by))
    line = _line(text, by.splitlines()[-1].split("=")[0])
    problems = _problems(text)
    assert len(problems) == 1, problems
    assert problems[0].startswith(f"p.toml:{line}: key 'sequential.{key}': {message}")


def test_a_missing_design_key_is_named() -> None:
    text = _text(DESIGN.replace("trials = 3\n", ""))
    assert _problems(text) == [
        f"p.toml:{_line(text, '[sequential]')}: key 'sequential.trials': required key is missing"
    ]


def test_a_sequential_key_that_is_not_a_table_is_named() -> None:
    text = _text(design="").replace('name = "', 'sequential = 5\nname = "', 1)
    assert _problems(text) == [
        f"p.toml:{_line(text, 'sequential = 5')}: key 'sequential': expected a table (got an integer 5)"
    ]


def test_a_design_with_fewer_trials_than_min_trials_or_cases_than_min_cases_is_refused() -> None:
    text = _text(
        DESIGN.replace("trials = 3", "trials = 1")
        .replace("max_cases = 200", "max_cases = 5")
        .replace("batch_cases = 20", "batch_cases = 5")
    )
    assert _problems(text) == [
        f"p.toml:{_line(text, 'trials = 1')}: key 'sequential.trials': must be at least min_trials = 2 (got 1)",
        f"p.toml:{_line(text, 'max_cases = 5')}: key 'sequential.max_cases': must be at least min_cases = 10 (got 5)",
    ]


def test_a_cost_rule_in_a_sequential_policy_is_refused() -> None:
    cost_rule = '\n[[rules]]\nname = "cheap"\nmetric = "cost_per_accepted"\nthreshold = 2.0\n'
    text = _text(rules=RULES + cost_rule)
    line = next(i for i, s in enumerate(text.splitlines(), 1) if s == 'metric = "cost_per_accepted"')
    assert _problems(text) == [
        f"p.toml:{line}: key 'rules[2].metric': a [sequential] policy cannot hold a cost rule (no sequential decision)"
    ]
    # the same rule without [sequential] is fine
    assert parse_policy(policy_text(RULES + cost_rule, k=2, min_trials=2).encode()).sequential is None


def test_max_cost_increase_in_a_sequential_policy_is_refused() -> None:
    text = _text().replace('name = "', 'max_cost_increase = 0.1\nname = "', 1)
    assert _problems(text) == [
        f"p.toml:{_line(text, 'max_cost_increase')}: key 'max_cost_increase': a [sequential] policy cannot hold a "
        "cost rule (no sequential decision)"
    ]


def test_policy_check_names_a_bad_design_key_with_its_line_and_exits_2(tmp_path: Path) -> None:
    bad = tmp_path / "bad.toml"
    text = _text(DESIGN.replace("batch_cases = 20", "batch_cases = 400"))
    bad.write_text(text)
    result = CliRunner().invoke(app, ["policy", "check", str(bad)])
    assert result.exit_code == 2
    line = _line(text, "batch_cases = 400")
    assert f"bad.toml:{line}: key 'sequential.batch_cases': must be at most max_cases = 200 (got 400)" in result.output
