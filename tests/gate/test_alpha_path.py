"""The rule's alpha reaches the paired test that decides as it is (issue 29: no round trip).

Sources of the expected values
------------------------------
- The exact one-sided conditional McNemar test can reach at best p = 2^-m with m discordant units
  (all favouring one side): 2^-4 = 0.0625 > 0.05 >= 2^-5, so 5 discordant units are needed at
  alpha 0.05 and 7 at 0.01 (2^-7 = 0.0078 <= 0.01 < 2^-6); at the observed rate m/N the resolution
  check asks for ceil(5 N / m) cases (``gatestats.paired.resolution``).
- The non-inferiority rows are checked against ``gatestats.paired.compare`` called directly.
"""

from __future__ import annotations

from collections.abc import Callable

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate.policy import Rule
from gatestats.gate.rules import RuleEvidence, paired_evidence
from gatestats.paired import compare, noninferiority_test, resolution
from gatestats.paired.cases_trials import plan_cases_trials
from gatestats.paired.planning import cases_needed, false_block

_SCHEMA = ["system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome"]


def _records(base: list[int], cand: list[int], trials: int = 1) -> pl.DataFrame:
    word = {1: "passed", 0: "failed"}
    rows = [
        (system, f"c{i}", None, None, t, 0, word[x])
        for system, outcomes in (("baseline", base), ("candidate", cand))
        for i, x in enumerate(outcomes)
        for t in range(trials)
    ]
    return pl.DataFrame(rows, schema=_SCHEMA, orient="row")


def _rule(*, margin: float | None, alpha: float) -> Rule:
    return Rule(name="r", metric="pass_rate", slice="all", direction="higher", threshold=None, test="paired",
                margin=margin, alpha=alpha, action="block", k=1, grader=None)  # fmt: skip


def _evidence(records: pl.DataFrame, rule: Rule, confidence_level: float) -> RuleEvidence:
    return paired_evidence(records, rule=rule, baseline="baseline", candidate="candidate", alpha=rule.alpha,
                           confidence_level=confidence_level, seed=0)  # fmt: skip


@pytest.mark.parametrize(("alpha", "needed"), [(0.05, 40), (0.01, 56)])
@pytest.mark.parametrize("confidence_level", [0.9, 0.95, 0.99])
def test_margin_zero_resolution_is_checked_at_the_rules_alpha_whatever_the_interval_level(
    alpha: float, needed: int, confidence_level: float
) -> None:
    # 8 cases, one discordant unit (the candidate passes c0 only): 5 (alpha 0.05) or 7 (0.01)
    # discordant units are needed, ceil(5 * 8 / 1) = 40 or ceil(7 * 8 / 1) = 56 cases.
    ev = _evidence(_records([0, 1, 1, 1, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1, 0]), _rule(margin=None, alpha=alpha),
                   confidence_level)  # fmt: skip
    assert (ev.test, ev.status, ev.cases_needed) == ("exact McNemar", "cannot_resolve", needed)
    assert ev.reason is not None
    assert f"> alpha = {alpha:g};" in ev.reason
    assert (ev.pvalue_pass, ev.pvalue_fail) == (0.5, 1.0)  # 2^-1, and the other tail


def test_a_margin_row_tests_at_the_rules_alpha_and_shows_the_policys_interval() -> None:
    records = _records([1] * 30 + [0] * 10, [1] * 29 + [0] * 11, trials=1)
    rule = _rule(margin=0.1, alpha=0.05)
    rows = {level: _evidence(records, rule, level) for level in (0.9, 0.95)}
    # The test and its p-values do not depend on the interval's level; the interval shown does.
    assert rows[0.9].pvalue_pass == rows[0.95].pvalue_pass
    assert rows[0.9].pvalue_fail == rows[0.95].pvalue_fail
    for level, ev in rows.items():
        direct = compare(records, baseline="baseline", candidate="candidate", margin=0.1, alpha=0.05,
                         confidence_level=level)  # fmt: skip
        assert direct.noninferiority is not None
        assert direct.noninferiority.alpha == 0.05
        assert (ev.pvalue_pass, ev.pvalue_fail) == (direct.noninferiority.pvalue, direct.noninferiority.pvalue_worse)
        assert (ev.ci_low, ev.ci_high) == (direct.diff_ci_low, direct.diff_ci_high)
    assert rows[0.9].ci_low is not None
    assert rows[0.95].ci_low is not None
    assert rows[0.9].ci_low > rows[0.95].ci_low  # the narrower interval at 90%


def test_compare_without_alpha_keeps_the_levels_that_agree_with_its_interval() -> None:
    records = _records([1] * 30 + [0] * 10, [1] * 29 + [0] * 11)
    implicit = compare(records, baseline="baseline", candidate="candidate", margin=0.1, confidence_level=0.9)
    assert implicit.noninferiority is not None
    assert implicit.noninferiority.alpha == 0.05  # (1 - 0.9) / 2, one-sided
    assert implicit.resolution is not None
    assert implicit.resolution.alpha == 0.1  # 1 - 0.9, the two-sided test's level
    explicit = compare(records, baseline="baseline", candidate="candidate", margin=0.1, alpha=0.05)
    assert explicit.noninferiority is not None
    assert explicit.resolution is not None
    assert (explicit.noninferiority.alpha, explicit.resolution.alpha) == (0.05, 0.05)


@pytest.mark.parametrize(
    ("alpha", "error", "message"),
    [
        (0.0, ValueError, r"alpha must lie in \(0, 0.5\] \(got 0.0\)"),
        (0.6, ValueError, r"alpha must lie in \(0, 0.5\] \(got 0.6\)"),
        (float("nan"), ValueError, r"alpha must lie in \(0, 0.5\] \(got nan\)"),
        (True, TypeError, r"alpha must be a number in \(0, 0.5\] \(got True\)"),
        ("0.05", TypeError, r"alpha must be a number in \(0, 0.5\] \(got '0.05'\)"),
    ],
)
def test_compare_checks_alpha_with_the_vocabulary(alpha: object, error: type[Exception], message: str) -> None:
    records = _records([1, 0], [1, 1])
    with pytest.raises(error, match=message):
        compare(records, baseline="baseline", candidate="candidate", alpha=alpha)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "call",
    [
        lambda alpha: cases_needed(0.1, 0.2, alpha=alpha),
        lambda alpha: false_block(10, 2, 0.01, alpha=alpha),
        lambda alpha: plan_cases_trials(mde=0.05, between_case_variance=0.02, within_case_variance=0.1, alpha=alpha),
        lambda alpha: noninferiority_test(16, 6, 161, margin=0.15, alpha=alpha),
        lambda alpha: resolution(21, 4, alpha=alpha),
    ],
)
def test_every_paired_function_checks_alpha_with_the_one_validator(call: Callable[[object], object]) -> None:
    with pytest.raises(ValueError, match=r"^alpha must lie in \(0, 0.5\] \(got 0.7\)$"):
        call(0.7)
    with pytest.raises(TypeError, match=r"^alpha must be a number in \(0, 0.5\] \(got None\)$"):
        call(None)


@pytest.mark.parametrize(
    "args",
    [
        ["plan", "cases", "--delta", "0.1", "--discordance", "0.2", "--alpha", "0.7"],
        ["drift", "stored", "rerun", "--alpha", "0.7"],
    ],
)
def test_commands_refuse_an_alpha_outside_the_vocabularys_range_as_a_usage_error(args: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert "--alpha" in result.output
    assert "must lie in (0, 0.5] (got 0.7)" in result.output
