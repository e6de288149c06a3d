"""Recovery rate, rounds and cost per accepted outcome over a correction loop's rounds."""

from __future__ import annotations

import polars as pl
import pytest

from gatestats.errors import InsufficientEvidenceError
from gatestats.estimators.recovery import ROUND_COLUMNS, recovery_summary


def _rounds(rows: list[tuple[str, int, str | None, float, float | None, float | None]]) -> pl.DataFrame:
    """(case, round, verdict, trial seconds, reviser usd, reviser seconds); trials cost $0.01 each round."""
    return pl.DataFrame(
        [
            {
                "case_id": c, "round": r, "candidate_digest": f"sha256:{c}{r}", "parent_candidate_digest": None,
                "feedback_digest": None, "verdict": v, "trials_usd": 0.01, "trials_seconds": s,
                "reviser_usd": ru, "reviser_seconds": rs, "stop_reason": None,
            }
            for c, r, v, s, ru, rs in rows
        ],
        schema=ROUND_COLUMNS,
    )  # fmt: skip


ROWS = [
    ("a", 0, "candidate_failure", 1.0, 0.10, 2.0),
    ("a", 1, "passed", 1.0, None, None),  # recovered in round 1
    ("b", 0, "candidate_failure", 1.0, 0.10, 2.0),
    ("b", 1, "candidate_failure", 1.0, 0.10, 2.0),
    ("b", 2, "passed", 1.0, None, None),  # recovered in round 2
    ("c", 0, "candidate_failure", 1.0, 0.10, 2.0),
    ("c", 1, "candidate_failure", 1.0, None, None),  # repeated failure
    ("d", 0, "passed", 1.0, None, None),  # accepted without correction
    ("e", 0, "candidate_failure", 1.0, 0.10, 2.0),
    ("e", 1, "infrastructure", 1.0, None, None),  # blocked later: not recovered, counted apart
]


@pytest.mark.parametrize("lazy", [False, True])
def test_recovery_counts_cases_and_charges_every_round_and_reviser_call(lazy: bool) -> None:
    frame = _rounds(ROWS)
    s = recovery_summary(frame.lazy() if lazy else frame)
    assert (s.cases, s.failed_first, s.recovered, s.passed_first, s.accepted, s.blocked) == (5, 4, 2, 1, 3, 1)
    assert s.recovered_case_ids == ("a", "b")
    assert s.rate == 0.5
    assert (s.rounds_run, s.rounds_per_accepted) == (10, 10 / 3)
    # 10 rounds x $0.01 + 5 reviser calls x $0.10 = $0.60 over 3 accepted; 10 s + 10 s over 3.
    assert s.usd_per_accepted == pytest.approx(0.60 / 3)
    assert s.seconds_per_accepted == pytest.approx(20.0 / 3)
    # Without correction: the 5 first rounds ($0.05, 5 s) over the 1 case that passed its first round.
    assert s.usd_per_accepted_without_correction == pytest.approx(0.05)
    assert s.seconds_per_accepted_without_correction == pytest.approx(5.0)


def test_recovery_interval_is_wilson_over_cases_not_trials() -> None:
    # Wilson (1927) for 2 of 4 cases: statsmodels proportion_confint(2, 4, method="wilson") gives
    # (0.15004, 0.84996); by hand: centre 0.5, half-width
    # z*sqrt(0.25/4 + z^2/64) / (1 + z^2/4) = 0.349961 with z = 1.959964 -> (0.150039, 0.849961).
    low, high = recovery_summary(_rounds(ROWS)).confidence_interval()
    assert (low, high) == pytest.approx((0.150039, 0.849961), abs=1e-6)
    frame = recovery_summary(_rounds(ROWS)).to_frame()
    assert frame.row(0) == pytest.approx(("recovery_rate", 2.0, 4.0, 0.5, low, high))  # type: ignore[arg-type]


def test_within_counts_only_recoveries_by_that_round() -> None:
    s = recovery_summary(_rounds(ROWS), within=1)
    assert (s.recovered, s.failed_first, s.recovered_case_ids) == (1, 4, ("a",))
    assert recovery_summary(_rounds(ROWS), within=0).recovered == 0


def test_no_first_round_failure_is_insufficient_evidence_not_zero() -> None:
    s = recovery_summary(_rounds([("d", 0, "passed", 1.0, None, None)]))
    assert s.rate is None
    assert s.rate_reason == "no case failed its first round: recovery rate undefined"
    with pytest.raises(InsufficientEvidenceError, match="recovery rate undefined"):
        s.confidence_interval()


def test_nothing_accepted_leaves_cost_per_accepted_undefined() -> None:
    s = recovery_summary(
        _rounds([("c", 0, "candidate_failure", 1.0, 0.1, 1.0), ("c", 1, "candidate_failure", 1.0, None, None)])
    )
    assert (s.usd_per_accepted, s.rounds_per_accepted) == (None, None)
    assert s.per_accepted_reason == "no accepted outcome in 1 cases: cost per accepted outcome undefined"


def test_bad_input_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match=r"within: expected an integer >= 0 or None \(got -1\)"):
        recovery_summary(_rounds(ROWS), within=-1)
    with pytest.raises(ValueError, match="rounds: missing column\\(s\\) verdict"):
        recovery_summary(_rounds(ROWS).drop("verdict"))
    with pytest.raises(ValueError, match=r"rounds: a \(case_id, round\) appears twice"):
        recovery_summary(pl.concat([_rounds(ROWS), _rounds(ROWS[:1])]))
