"""The words of a sequential stop (``gatestats.gate.sequential_summary``): read from the binding, nothing recomputed."""

from __future__ import annotations

from gatestats.gate.bindings import SequencePointBinding, SequentialBinding, SequentialRulePath
from gatestats.gate.sequential_summary import guarantee_text, rule_stop, stop_text, trials_text


def _point(n: int, e_pass: float, e_fail: float) -> SequencePointBinding:
    return SequencePointBinding(n_cases=n, estimate=0.5, lower=0.1, upper=0.9, e_pass=e_pass, e_fail=e_fail)


def _rule(**changes: object) -> SequentialRulePath:
    given: dict[str, object] = {
        "row": "r: pass rate ≥ 0.6", "status": "fail", "decided_at": 20, "boundary": 0.6, "alpha_pass": 0.01,
        "alpha_fail": 0.04, "cases_needed": None, "path": (_point(10, 0.5, 3.0), _point(20, 0.01, 1e300)),
    }  # fmt: skip
    return SequentialRulePath(**(given | changes))  # type: ignore[arg-type]


def _binding(**changes: object) -> SequentialBinding:
    given: dict[str, object] = {
        "max_cases": 25, "trials": 3, "batch_cases": 10, "method": "hoeffding", "alpha_pass_share": 0.2,
        "order": (), "checkpoints": (10, 20), "stopped_at": 20, "decided": True, "trials_used": 117,
        "trials_fixed": 150, "trials_saved": 33, "rules": (_rule(),),
    }  # fmt: skip
    return SequentialBinding(**(given | changes))  # type: ignore[arg-type]


def test_a_failed_rule_shows_its_last_batch_and_both_levels_as_reciprocals_of_its_alphas() -> None:
    stop = rule_stop(_rule())
    assert (stop.status, stop.e_pass, stop.e_fail) == ("fail at 20 cases", "0.01 (level 100)", "1e+300 (level 25)")


def test_an_undecided_rule_without_a_planning_figure_names_no_cases_needed() -> None:
    stop = rule_stop(_rule(status="undecided", decided_at=None))
    assert stop.status == "undecided after 20 cases"
    assert rule_stop(_rule(status="undecided", decided_at=None, cases_needed=7)).status == (
        "undecided after 20 cases, about 7 more cases needed"
    )


def test_a_rule_without_a_path_or_with_a_nonpositive_alpha_shows_dashes_not_an_error() -> None:
    stop = rule_stop(_rule(path=(), alpha_pass=0.0))
    assert (stop.status, stop.e_pass, stop.e_fail) == ("fail, not read", "— (level —)", "— (level 25)")


def test_a_short_last_batch_counts_in_the_batches_of_the_design() -> None:
    # 25 cases in batches of 10: 10, 20, 25, so three batches at most.
    assert stop_text(_binding(), escape=str) == (
        "stopped after 20 of at most 25 cases (batch 2 of at most 3, batches of 10 cases; hoeffding confidence "
        "sequences, 3 trials per case on both systems): the decision was determined there"
    )
    assert trials_text(_binding()) == (
        "117 of the fixed-size design's 150 trials used (25 cases × 3 trials × 2 systems), 33 saved (22%)"
    )


def test_the_method_goes_through_the_renderer_s_escape() -> None:
    assert "<m> confidence sequences" in stop_text(_binding(method="m"), escape=lambda v: f"<{v}>")


def test_the_guarantee_is_claimed_only_when_a_rule_was_read() -> None:
    assert guarantee_text(_binding()).startswith("Each rule was read after every batch with an anytime-valid test")
    assert guarantee_text(_binding(rules=())).startswith("No rule's sequence was read (see the reasons)")
