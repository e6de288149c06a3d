"""Unresolved attempts (final attempt ``infra_error``) decide every rule as a bound (issue 30, docs/gate.md).

``pass`` must hold with the candidate's unresolved attempts counted as failures (the baseline's as
passes); ``fail`` with the opposite; in between the row is insufficient evidence. Each test also
runs the engine as it was before (:func:`_today`: the unresolved attempts dropped as missing at
random) where that shows the test can fail.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from pathlib import Path

import pytest
from rich.console import Console

from gatestats.cli.gate import render_verdict
from gatestats.gate import Verdict, evaluate_gate, load_record_set, parse_policy
from tests.gate.factory import policy_text, write_run_set
from tests.gate.test_infra_bounds_simulation import simulation

NOW = "2026-12-01T00:00:00Z"
FLOOR = '[[rules]]\nname = "floor"\nmetric = "pass_rate"\nthreshold = 0.6\n'
NI = '[[rules]]\nname = "ni"\nmetric = "pass_rate"\ntest = "paired"\nmargin = 0.05\n'


def _today() -> AbstractContextManager[None]:
    """The engine before issue 30: unresolved attempts dropped (the simulation's own switch)."""
    return simulation()._today()  # type: ignore[no-any-return]


def _cases(pattern: dict[tuple[str, ...], int]) -> dict[str, list[str]]:
    """``{trial outcomes: number of cases}`` → outcomes per case id."""
    out: dict[str, list[str]] = {}
    for outcomes, n in pattern.items():
        for _ in range(n):
            out[f"c{len(out):04d}"] = list(outcomes)
    return out


def _verdict(tmp_path: Path, rules: str, base: dict[str, list[str]], cand: dict[str, list[str]], *,
             extra: str = "", slices: dict[str, list[str]] | None = None, today: bool = False) -> Verdict:  # fmt: skip
    text = policy_text(rules, k=1, min_trials=1, min_cases=10, extra=extra)
    text = text.replace("max_infra_error_rate = 0.1", "max_infra_error_rate = 0.5")
    policy = parse_policy(text.encode())
    tag = "today" if today else "bounded"
    b = write_run_set(tmp_path / f"base-{tag}", system="baseline", outcomes=base, slices=slices)
    c = write_run_set(tmp_path / f"cand-{tag}", system="candidate", outcomes=cand, policy=policy, slices=slices)
    if today:
        with _today():
            return evaluate_gate(policy, load_record_set(b), load_record_set(c), now=NOW)
    return evaluate_gate(policy, load_record_set(b), load_record_set(c), now=NOW)


P, F, X = "passed", "failed", "infra_error"


def test_a_clear_pass_holds_even_if_every_unresolved_attempt_had_failed(tmp_path: Path) -> None:
    cand = _cases({(P, P): 180, (F, F): 15, (P, X): 5})
    verdict = _verdict(tmp_path, FLOOR, cand, cand)
    (row,) = verdict.rules
    assert row.decision == "pass"
    assert row.unresolved is not None
    assert (row.unresolved.candidate, row.unresolved.baseline) == (5, 0)  # a threshold row: the baseline's do not count
    assert row.unresolved.summary == "passes even if all 5 unresolved attempts of the candidate had failed"
    assert row.unresolved.observed_if_failed == pytest.approx((180 + 5 * 0.5) / 200)
    assert row.unresolved.observed_if_passed == pytest.approx(185 / 200)
    assert row.observed == pytest.approx(185 / 200)  # valid outcomes only, as before


def test_a_boundary_candidate_does_not_pass_on_its_unresolved_attempts(tmp_path: Path) -> None:
    # 200 cases x 2 trials at exactly 0.60, with one failure in 60 of the 1-of-2 cases unresolved instead
    cand = _cases({(P, P): 70, (P, F): 40, (P, X): 60, (F, F): 30})
    base = _cases({(P, P): 200})
    today = _verdict(tmp_path, FLOOR, base, cand, today=True)
    assert today.rules[0].decision == "pass"  # observed 0.75 on valid outcomes: the old gate passed it
    (row,) = _verdict(tmp_path, FLOOR, base, cand).rules
    assert row.decision == "insufficient_evidence"
    assert row.unresolved is not None
    assert row.unresolved.observed_if_failed == pytest.approx(0.60)
    assert row.reason is not None
    assert "between the bounds: 0.6 if all 60 unresolved attempts of the candidate had failed" in row.reason


def test_a_candidate_is_never_failed_for_infrastructure(tmp_path: Path) -> None:
    # valid outcomes well below 0.6, but had the unresolved attempts passed the rule would hold
    cand = _cases({(P, P): 60, (F, F): 60, (P, X): 0, (X, X): 80})
    base = _cases({(P, P): 200})
    today = _verdict(tmp_path, FLOOR, base, cand, today=True)
    assert today.rules[0].decision == "insufficient_evidence"  # cases without a valid trial: undefined
    cand = _cases({(P, P): 40, (F, F): 40, (P, X): 60, (F, X): 60})  # valid 0.5 per case, best end 0.65
    today = _verdict(tmp_path / "b", FLOOR, base, cand, today=True)
    assert today.rules[0].decision == "fail"
    (row,) = _verdict(tmp_path / "b", FLOOR, base, cand).rules
    assert row.decision == "insufficient_evidence"
    assert row.unresolved is not None
    assert row.unresolved.observed_if_passed == pytest.approx(0.65)


def test_a_clear_failure_fails_even_if_every_unresolved_attempt_had_passed(tmp_path: Path) -> None:
    cand = _cases({(P, P): 20, (F, F): 170, (F, X): 10})
    (row,) = _verdict(tmp_path, FLOOR, _cases({(P, P): 200}), cand).rules
    assert row.decision == "fail"
    assert row.unresolved is not None
    assert row.unresolved.summary == "fails even if all 10 unresolved attempts of the candidate had passed"


def test_a_paired_row_counts_the_baseline_s_unresolved_attempts_as_passes_at_the_pessimistic_end(
    tmp_path: Path,
) -> None:
    # the candidate equals the baseline on valid outcomes; the baseline's 30 unresolved attempts decide
    base = _cases({(P, P): 140, (F, F): 30, (X, X): 0, (P, X): 0, (F, X): 30})
    cand = _cases({(P, P): 140, (F, F): 60})
    today = _verdict(tmp_path, NI, base, cand, today=True)
    (row,) = _verdict(tmp_path, NI, base, cand).rules
    assert row.unresolved is not None
    assert (row.unresolved.candidate, row.unresolved.baseline) == (0, 30)
    assert row.unresolved.observed_if_failed == pytest.approx(-30 * 0.5 / 200)  # the baseline's passed
    assert row.unresolved.observed_if_passed == pytest.approx(0.0)
    assert row.pvalue_pass is not None
    assert today.rules[0].pvalue_pass is not None
    assert row.pvalue_pass > today.rules[0].pvalue_pass  # the pass side is tested at the worse end


def test_a_severe_slice_with_an_unresolved_attempt_does_not_pass(tmp_path: Path) -> None:
    base = _cases({(P, P): 40})
    cand = _cases({(P, P): 39, (P, X): 1})
    slices = {c: (["security"] if i < 5 else []) for i, c in enumerate(cand)}
    cand = dict(cand)
    cand["c0000"] = [P, X]  # in the severe slice
    cand["c0039"] = [P, P]
    extra = 'severe_slices = ["security"]'
    today = _verdict(tmp_path, FLOOR, base, cand, extra=extra, slices=slices, today=True)
    assert today.severe_slices[0].decision == "pass"
    verdict = _verdict(tmp_path, FLOOR, base, cand, extra=extra, slices=slices)
    (severe,) = verdict.severe_slices
    assert severe.decision == "insufficient_evidence"
    assert severe.unresolved == 1
    assert severe.reason is not None
    assert (
        "1 unresolved attempt(s) of the candidate (final attempt infra_error, or retried after one) could hide a "
        'failure; under the policy\'s infra_retries = "bounded" a re-run stays a bound' in severe.reason
    )
    assert severe.to_dict()["unresolved"] == 1
    cand["c0001"] = [F, P]  # a real failure: fail, whatever the unresolved attempt
    (severe,) = _verdict(tmp_path / "f", FLOOR, base, cand, extra=extra, slices=slices).severe_slices
    assert severe.decision == "fail"


def test_no_unresolved_attempt_leaves_every_row_as_before(tmp_path: Path) -> None:
    cand = _cases({(P, P): 150, (F, F): 50})
    bounded = _verdict(tmp_path, FLOOR + NI, cand, cand, extra="max_cost_increase = 0.15")
    today = _verdict(tmp_path, FLOOR + NI, cand, cand, extra="max_cost_increase = 0.15", today=True)
    assert [r.to_dict() for r in bounded.rules] == [r.to_dict() for r in today.rules]
    assert (bounded.verdict, bounded.reasons) == (today.verdict, today.reasons)
    assert all("unresolved" not in r for r in bounded.to_dict()["rules"])


def test_the_cost_row_is_bounded_too(tmp_path: Path) -> None:
    cand = _cases({(P, P): 150, (F, F): 40, (P, X): 10})
    verdict = _verdict(tmp_path, FLOOR, _cases({(P, P): 150, (F, F): 50}), cand, extra="max_cost_increase = 0.15")
    cost = [r for r in verdict.rules if r.kind == "cost_increase"]
    assert len(cost) == 1
    assert cost[0].unresolved is not None
    assert cost[0].unresolved.candidate == 10
    # the worse end for the candidate is the higher cost per accepted outcome
    assert cost[0].unresolved.observed_if_failed is not None
    assert cost[0].unresolved.observed_if_passed is not None
    assert cost[0].unresolved.observed_if_failed > cost[0].unresolved.observed_if_passed


def test_the_bound_round_trips_and_is_shown_in_markdown_and_the_terminal(tmp_path: Path) -> None:
    cand = _cases({(P, P): 180, (F, F): 15, (P, X): 5})
    verdict = _verdict(tmp_path, FLOOR, _cases({(P, P): 200}), cand)
    body = verdict.to_dict()
    assert list(body["rules"][0])[-1] == "unresolved"  # the new key comes last
    assert Verdict.from_dict(body).to_dict() == body
    markdown = verdict.to_markdown()
    assert "### Unresolved attempts (decided on the bound)" in markdown
    assert "passes even if all 5 unresolved attempts of the candidate had failed" in markdown
    console = Console(record=True, width=300)
    render_verdict(verdict, console)
    assert "unresolved attempts: floor: pass rate ≥ 0.6: passes even if all 5 unresolved" in console.export_text()


@pytest.fixture(scope="module")
def sequential_example(tmp_path_factory: pytest.TempPathFactory, sequential_example_run: Path) -> Path:
    from tests.conftest import copy_sequential_example

    return copy_sequential_example(sequential_example_run, tmp_path_factory.mktemp("bounds-sequential") / "out")


def test_a_sequential_row_passes_only_at_the_pessimistic_end(sequential_example: Path) -> None:
    import dataclasses

    import polars as pl

    from gatestats.gate import load_policy
    from tests.sequential.run.conftest import EXAMPLE

    policy = load_policy(EXAMPLE / "policy.toml")
    base = load_record_set(sequential_example / "baseline")
    cand = load_record_set(sequential_example / "candidate")
    assert evaluate_gate(policy, base, cand, now=NOW).verdict == "pass"  # the example as it ran
    # every second trial of the candidate unresolved: its valid outcomes still all pass
    hidden = (pl.col("trial") % 2 == 1) & (pl.col("outcome") == "passed")
    unresolved = dataclasses.replace(
        cand,
        records=cand.records.with_columns(  # retries spent (attempt 2 of the runner's 2): final
            pl.when(hidden).then(pl.lit(X)).otherwise(pl.col("outcome")).alias("outcome"),
            pl.when(hidden).then(pl.lit(2)).otherwise(pl.col("attempt")).alias("attempt"),
        ),
    )
    with _today():
        assert [r.decision for r in evaluate_gate(policy, base, unresolved, now=NOW).rules] == ["pass", "pass"]
    verdict = evaluate_gate(policy, base, unresolved, now=NOW)
    assert [r.decision for r in verdict.rules] == ["insufficient_evidence", "insufficient_evidence"]
    assert all(r.unresolved is not None and r.unresolved.candidate > 0 for r in verdict.rules)
    assert verdict.verdict != "pass"


def test_the_baseline_s_unresolved_attempts_leave_a_threshold_row_alone_and_bound_a_paired_one(tmp_path: Path) -> None:
    cand = _cases({(P, P): 150, (F, F): 50})
    base = _cases({(P, P): 150, (F, F): 40, (F, X): 10})
    verdict = _verdict(tmp_path, FLOOR + NI, base, cand)
    today = _verdict(tmp_path, FLOOR + NI, base, cand, today=True)
    floor, ni = verdict.rules
    assert floor.to_dict() == today.rules[0].to_dict()  # the candidate's own rate: nothing unresolved
    assert ni.unresolved is not None
    assert (ni.unresolved.candidate, ni.unresolved.baseline) == (0, 10)


def test_the_release_report_lists_the_bounded_rows_in_words(tmp_path: Path) -> None:
    from types import SimpleNamespace

    from gatestats.report._release_html import _bounded

    cand = _cases({(P, P): 180, (F, F): 15, (P, X): 5})
    verdict = _verdict(tmp_path, FLOOR, _cases({(P, P): 200}), cand)
    html = _bounded(SimpleNamespace(verdict=verdict))  # type: ignore[arg-type]
    assert "<strong>Unresolved attempts (decided on the bound)</strong>" in html
    assert "<li><strong>floor: pass rate ≥ 0.6</strong>: passes even if all 5 unresolved attempts" in html
    plain = _verdict(tmp_path / "plain", FLOOR, _cases({(P, P): 200}), _cases({(P, P): 200}))
    assert _bounded(SimpleNamespace(verdict=plain)) == ""  # type: ignore[arg-type]


def _retried_verdict(tmp_path: Path, cand: dict[str, list[str]], retried: list[str], *, retries: str | None) -> Verdict:
    """A threshold row at 0.6 whose candidate's trial 0 of ``retried`` cases had an infra error, then its final outcome."""
    extra = "" if retries is None else f'infra_retries = "{retries}"\n'
    text = policy_text(FLOOR, k=1, min_trials=1, min_cases=10, extra=extra)
    policy = parse_policy(text.replace("max_infra_error_rate = 0.1", "max_infra_error_rate = 0.5").encode())
    tag = retries or "default"
    b = write_run_set(tmp_path / f"base-{tag}", system="baseline", outcomes=cand)
    c = write_run_set(tmp_path / f"cand-{tag}", system="candidate", outcomes=cand, policy=policy,
                      retries={(case, 0): 1 for case in retried})  # fmt: skip
    return evaluate_gate(policy, load_record_set(b), load_record_set(c), now=NOW)


def test_a_retry_that_passed_is_a_second_chance_the_default_policy_does_not_count(tmp_path: Path) -> None:
    # 200 cases at 0.50 once the 40 retried trials are counted as failures; their retries passed (0.70)
    cand = _cases({(P,): 100, (F,): 60, ("retried-pass",): 40})
    retried = [case for case, outs in cand.items() if outs == ["retried-pass"]]
    cand = {case: [P if outs == ["retried-pass"] else outs[0]] for case, outs in cand.items()}
    counted = _retried_verdict(tmp_path, cand, retried, retries="counted")
    assert counted.rules[0].decision == "pass"  # 140 of 200 observed: the retries count
    assert counted.rules[0].unresolved is None
    for retries in (None, "bounded"):  # the default is bounded
        (row,) = _retried_verdict(tmp_path, cand, retried, retries=retries).rules
        assert row.decision == "insufficient_evidence"
        assert row.observed == pytest.approx(0.7)  # the estimate still reads the retries
        assert row.unresolved is not None
        assert (row.unresolved.candidate, row.unresolved.observed_if_failed) == (40, pytest.approx(0.5))


def test_a_retry_that_failed_does_not_fail_a_candidate_for_infrastructure(tmp_path: Path) -> None:
    # the optimistic end counts a retried trial as a pass: 80 of 200 observed, at most 120 (0.60) with the retries
    cand = _cases({(P,): 80, (F,): 80, ("retried-fail",): 40})
    retried = [case for case, outs in cand.items() if outs == ["retried-fail"]]
    cand = {case: [F if outs == ["retried-fail"] else outs[0]] for case, outs in cand.items()}
    assert _retried_verdict(tmp_path, cand, retried, retries="counted").rules[0].decision == "fail"
    (row,) = _retried_verdict(tmp_path, cand, retried, retries="bounded").rules
    assert row.decision == "insufficient_evidence"
    assert row.unresolved is not None
    assert row.unresolved.observed_if_passed == pytest.approx(0.6)


def test_an_unknown_infra_retries_value_is_refused_naming_the_key() -> None:
    from gatestats.gate import PolicyError

    text = policy_text(FLOOR, k=1, min_trials=1, min_cases=10, extra='infra_retries = "ignored"\n')
    with pytest.raises(PolicyError, match=r"infra_retries.*expected one of 'bounded', 'counted'"):
        parse_policy(text.encode())
