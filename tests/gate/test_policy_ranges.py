"""Every numeric policy key has a documented range; values outside it are refused with key and line."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gatestats.gate import PolicyError, parse_policy
from gatestats.gate.policy import NUMERIC_RANGES
from tests.gate.factory import policy_text

ROOT = Path(__file__).resolve().parents[2]
RULE = '[[rules]]\nname = "r"\nmetric = "pass_rate"\nthreshold = 0.5\n'
COST_RULE = '[[rules]]\nname = "c"\nmetric = "cost_per_accepted"\n'
JUDGE = '[judges.j]\ncalibrations = ["cal.json"]\njudge_model = "m"\nrubric_digest = "sha256:00"\n'


def _policy_with(key: str, value: str) -> tuple[bytes, int]:
    """A policy whose ``key`` (as in NUMERIC_RANGES) is ``value``, and the line it is on."""
    table, _, name = key.partition(" ")[0].rpartition(".")
    if table == "":
        head = re.sub(rf"(?m)^{name} = .*\n", "", policy_text(RULE))
        text = head.replace("multiplicity", f"{name} = {value}\nmultiplicity", 1)
    elif table == "cost":
        text = policy_text(RULE) + f"[cost]\n{name} = {value}\n"
    elif table == "rules":
        rule = COST_RULE if "cost_per_accepted" in key else RULE
        rule = rule.replace("threshold = 0.5\n", "") if name == "threshold" else rule
        extra = 'test = "paired"\n' if name == "margin" else ""
        extra += "threshold = 1.0\n" if name != "threshold" and "cost_per_accepted" in key else ""
        text = policy_text("") + rule + extra + f"{name} = {value}\n"
        if name == "k":
            text = text.replace('metric = "pass_rate"', 'metric = "pass_hat_k"')
    else:
        fp = "" if name == "max_false_pass_rate" else "max_false_pass_rate = 0.1\n"
        text = policy_text(RULE) + JUDGE + fp + f"{name} = {value}\n"
    lines = text.splitlines()
    line = next(i for i, s in enumerate(lines, start=1) if s.startswith(f"{name} = {value}"))
    return text.encode(), line


@pytest.mark.parametrize("key", sorted(NUMERIC_RANGES))
def test_both_ends_of_every_range_are_accepted(key: str) -> None:
    low, high = NUMERIC_RANGES[key]
    for value in (low, high if key != "max_infra_error_rate" else 0.99):
        text, _ = _policy_with(key, repr(value))
        problems: tuple[str, ...] = ()
        try:
            parse_policy(text)
        except PolicyError as exc:
            problems = tuple(str(p) for p in exc.problems if "expected" in p.message)
        name = key.split(" ", maxsplit=1)[0].rpartition(".")[2]
        assert not [p for p in problems if f"key '{name}'" in p or f".{name}'" in p], problems


@pytest.mark.parametrize("key", sorted(NUMERIC_RANGES))
def test_a_value_beyond_the_upper_bound_is_refused_with_key_and_line(key: str) -> None:
    low, high = NUMERIC_RANGES[key]
    is_int = isinstance(low, int) and isinstance(high, int)
    value = str(high * 10 + 1) if is_int else repr(high * 10 + 1.0)
    text, line = _policy_with(key, value)
    with pytest.raises(PolicyError) as exc:
        parse_policy(text, path="p.toml")
    name = key.split(" ", maxsplit=1)[0].rpartition(".")[2]
    found = [p for p in exc.value.problems if p.key.endswith(name)]
    assert found, str(exc.value)
    assert found[0].line == line
    expected = f"expected an integer in [{low}, {high}]" if is_int else "expected a number in ["
    assert expected in found[0].message or "[0, 1)" in found[0].message


def test_a_hundred_million_resamples_is_refused_before_the_gate_runs() -> None:
    text = policy_text(RULE) + "[cost]\nn_resamples = 100000000\n"
    with pytest.raises(PolicyError) as exc:
        parse_policy(text.encode(), path="p.toml")
    line = text.splitlines().index("n_resamples = 100000000") + 1
    assert (
        str(exc.value) == f"p.toml:{line}: key 'cost.n_resamples': expected an integer in [200, 100000] (got 100000000)"
    )


@pytest.mark.parametrize(("value", "shown"), [("nan", "nan"), ("inf", "inf"), ("1" + "0" * 400, "inf")])
def test_nan_infinity_and_huge_integers_are_refused_not_a_traceback(value: str, shown: str) -> None:
    text = policy_text(RULE).replace("multiplicity", f"confidence_level = {value}\nmultiplicity", 1)
    with pytest.raises(
        PolicyError, match=rf"key 'confidence_level': expected a number in \[0.5, 0.999\] \(got {shown}\)"
    ):
        parse_policy(text.encode())


def test_huge_integer_is_shown_by_its_digit_count() -> None:
    text = policy_text(RULE).replace("multiplicity", f"seed = {'9' * 500}\nmultiplicity", 1)
    with pytest.raises(
        PolicyError, match=r"key 'seed': expected an integer in \[0, \d+\] \(got an integer of 500 digits\)"
    ):
        parse_policy(text.encode())


def test_readme_documents_every_range() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme[readme.index("### Gate policy") : readme.index("## Release reports")]
    for key in NUMERIC_RANGES:
        name = key.split(" ")[0].rpartition(".")[2]
        assert re.search(rf"`{re.escape(name)}`", section), key
    assert "100000" in section or "100 000" in section or "10^5" in section
