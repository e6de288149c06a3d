"""The baseline drift test: its counts, its decision, and its false-block rate with no drift (bounded simulation)."""

from __future__ import annotations

import numpy as np
import pytest

from gatestats.gate.drift import drift_counts, drift_decision


def test_drift_counts_compare_pass_fractions_and_leave_out_cases_without_valid_trials() -> None:
    stored = {"a": [True, True], "b": [True, False], "c": [False, False, True], "d": [True], "e": [False]}
    rerun = {"a": [True, False], "b": [True, True, False, False], "c": [True], "d": [], "f": [True]}
    compared, missing, fell, rose = drift_counts(stored, rerun)
    assert compared == ("a", "b", "c")
    assert missing == ("d", "e", "f")
    assert fell == ("a",)  # 1.0 -> 0.5
    assert rose == ("c",)  # 1/3 -> 1.0; b ties exactly (1/2 = 2/4)


def test_drift_decision_is_the_exact_two_sided_mcnemar_test() -> None:
    # Two-sided exact conditional p = min(1, 2 P(Bin(m, 1/2) <= min(b, c))):
    # b = 7, c = 0: 2 / 2**7 = 0.015625; b = 5, c = 1: 2 * 7 / 64 = 0.21875.
    status, p, needed = drift_decision(30, 7, 0, alpha=0.05)
    assert (status, needed) == ("moved", 6)
    assert p == pytest.approx(0.015625, abs=1e-12)
    status, p, _ = drift_decision(30, 5, 1, alpha=0.05)
    assert status == "stable"
    assert p == pytest.approx(0.21875, abs=1e-12)
    assert drift_decision(30, 0, 0) == ("stable", 1.0, 6)


def test_too_few_compared_cases_is_insufficient_evidence_not_stable() -> None:
    # 5 cases all moving one way give p = 2 / 32 = 0.0625 > 0.05: the test could never fire.
    assert drift_decision(5, 5, 0, alpha=0.05) == ("insufficient_evidence", None, 6)
    assert drift_decision(6, 6, 0, alpha=0.05)[0] == "moved"
    with pytest.raises(ValueError, match=r"alpha: expected a number in \(0, 1\) \(got 1.5\)"):
        drift_decision(10, 1, 1, alpha=1.5)


def _block_rate(rng: np.random.Generator, *, cases: int, trials: int, shift: float, reps: int) -> float:
    """How often the drift test blocks when the re-run's per-trial pass probability moves by ``shift``."""
    blocked = 0
    for _ in range(reps):
        p = rng.beta(2.0, 1.0, size=cases)  # heterogeneous cases, many near 1
        before = rng.random((cases, trials)) < p[:, None]
        after = rng.random((cases, trials)) < np.clip(p + shift, 0.0, 1.0)[:, None]
        ids = [f"c{i}" for i in range(cases)]
        stored = {c: before[i].tolist() for i, c in enumerate(ids)}
        rerun = {c: after[i].tolist() for i, c in enumerate(ids)}
        compared, _, fell, rose = drift_counts(stored, rerun)
        status, _, _ = drift_decision(len(compared), len(fell), len(rose), alpha=0.05)
        blocked += status == "moved"
    return blocked / reps


@pytest.mark.parametrize(("cases", "trials"), [(20, 1), (40, 3), (12, 5)])
def test_no_drift_blocks_at_most_alpha_of_the_time(cases: int, trials: int) -> None:
    # 1,000 replications per shape, seed 20261201. The exact conditional test's size is <= alpha by
    # construction; the allowance is the one-sided 99% binomial bound at 0.05 for 1,000 draws
    # (0.05 + 2.33 * sqrt(0.05 * 0.95 / 1000) = 0.066) so that the test checks the code, not luck.
    # Measured (this seed): 0.013 (20 x 1), 0.021 (40 x 3), 0.026 (12 x 5).
    rate = _block_rate(np.random.default_rng(20261201), cases=cases, trials=trials, shift=0.0, reps=1000)
    assert rate <= 0.066


def test_a_real_drift_is_found() -> None:
    # Every trial's pass probability drops by 0.3 (an evaluator that got stricter): 40 cases x 3
    # trials block in nearly every replication (measured 1.0 at this seed).
    rate = _block_rate(np.random.default_rng(7), cases=40, trials=3, shift=-0.3, reps=200)
    assert rate >= 0.95
