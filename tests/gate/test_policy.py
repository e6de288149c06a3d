"""The policy file: strict reading, errors that name key and line, digest of the bytes."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import PolicyError, load_policy, parse_policy
from tests.gate.factory import policy_text

RULE = """
[[rules]]
name = "not worse"
metric = "pass_rate"
test = "paired"
margin = 0.05
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(PolicyError) as info:
        parse_policy(text.encode(), path="p.toml")
    return [str(p) for p in info.value.problems]


def test_a_valid_policy_reads_with_defaults_and_a_digest_of_its_bytes() -> None:
    text = policy_text(RULE)
    p = parse_policy(text.encode(), path="p.toml")
    assert p.baseline.system == "baseline"
    assert p.candidate.pins == {"model_id": "model-new"}
    assert p.rules[0].margin == 0.05
    assert p.rules[0].alpha == 0.05
    assert p.multiplicity == "holm"
    assert p.rules[0].line == text.splitlines().index("[[rules]]") + 1
    # one byte more (a comment) is another policy
    assert parse_policy((text + "# edit\n").encode()).digest != p.digest


def test_an_unknown_key_is_named_with_its_line() -> None:
    text = policy_text(RULE + "treshold = 0.9\n")
    line = len(text.splitlines())
    assert _problems(text) == [
        f"p.toml:{line}: key 'rules[0].treshold': unknown key (expected one of: name, metric, slice, direction, "
        "threshold, test, margin, alpha, action, k, grader)"
    ]


def test_a_wrong_type_is_named_with_its_line() -> None:
    text = policy_text(RULE).replace("k = 1", 'k = "four"')
    line = text.splitlines().index('k = "four"') + 1
    assert _problems(text) == [f"p.toml:{line}: key 'k': expected an integer (got a string 'four')"]


def test_a_missing_baseline_is_an_error() -> None:
    text = policy_text(RULE).replace('[baseline]\nsystem = "baseline"\n', "")
    assert _problems(text) == ["p.toml: key 'baseline': required key is missing"]


def test_insufficient_evidence_can_only_block() -> None:
    text = policy_text(RULE).replace('on_insufficient_evidence = "block"', 'on_insufficient_evidence = "pass"')
    (problem,) = _problems(text)
    assert "key 'on_insufficient_evidence': expected 'block' (got 'pass')" in problem


@pytest.mark.parametrize(
    ("rule", "expected"),
    [
        ('name = "r"\nmetric = "pass_rate"\n', "key 'rules[0]': a rule needs a threshold, test = 'paired', or both"),
        ('name = "r"\nmetric = "accuracy"\nthreshold = 0.5\n', "key 'rules[0].metric': expected one of"),
        (
            'name = "r"\nmetric = "pass_rate"\nthreshold = 1.5\n',
            "key 'rules[0].threshold': expected a number in [0, 1]",
        ),
        ('name = "r"\nmetric = "pass_rate"\nmargin = 0.1\nthreshold = 0.5\n', "a margin needs test = 'paired'"),
        ('name = "r"\nmetric = "pass_rate"\nslice = "security"\nthreshold = 0.5\n', "is a severe slice"),
        (
            'name = "r"\nmetric = "pass_rate"\nk = 2\nthreshold = 0.5\n',
            "pass_rate has no k; k applies to pass_hat_k and pass_at_k",
        ),
        ('name = "r"\nmetric = "pass_rate"\ngrader = "judge"\nthreshold = 0.5\n', "no [judges.judge] table"),
        ('name = "r"\nmetric = "cost_per_accepted"\ndirection = "higher"\nthreshold = 0.5\n', "is better when lower"),
    ],
)
def test_bad_rules_are_named(rule: str, expected: str) -> None:
    text = policy_text("[[rules]]\n" + rule, extra='severe_slices = ["security"]')
    problems = _problems(text)
    assert any(expected in p for p in problems), problems


def test_min_trials_below_k_is_refused() -> None:
    (problem,) = _problems(policy_text(RULE, k=4, min_trials=2))
    assert "key 'min_trials': must be at least k = 4 (got 2)" in problem


def test_not_toml_names_the_line(tmp_path: Path) -> None:
    path = tmp_path / "p.toml"
    path.write_text('format = "gatestats-policy/1"\nname = \n')
    with pytest.raises(PolicyError, match=r"p.toml:2: key '\(syntax\)': not TOML"):
        load_policy(path)


def test_the_bundled_example_policy_is_valid() -> None:
    p = load_policy(Path("data/golden_bugfix/policy.toml"))
    assert p.severe_slices == ("security",)
    assert p.on_insufficient_evidence == "block"


def test_policy_check_cli_exit_codes(tmp_path: Path) -> None:
    good, bad = tmp_path / "good.toml", tmp_path / "bad.toml"
    good.write_text(policy_text(RULE))
    bad.write_text(policy_text(RULE + "colour = 'red'\n"))
    runner = CliRunner()
    ok = runner.invoke(app, ["policy", "check", str(good)])
    assert ok.exit_code == 0, ok.output
    assert "digest: sha256:" in ok.output
    wrong = runner.invoke(app, ["policy", "check", str(bad)])
    assert wrong.exit_code == 2
    assert "key 'rules[0].colour': unknown key" in wrong.output
