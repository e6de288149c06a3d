"""Slow simulations: type-I error in A/A comparisons, coverage of the difference intervals, power.

The numbers are recorded in ``docs/paired.md`` (printed by ``python -m tests.paired.paired_simulation``).
One trial per case everything is exact (enumeration of the multinomial table, no Monte Carlo error);
several trials per case it is Monte Carlo with fixed seeds (so the assertions are deterministic), with
allowances stated next to each threshold.
"""

from __future__ import annotations

import numpy as np
import pytest

from gatestats.paired import compare, exact_power
from tests.paired import paired_simulation as sim
from tests.paired.conftest import trial_records
from tests.simulations import reps

pytestmark = pytest.mark.simulation

AA_N = (10, 20, 30, 50, 75, 100, 200, 500)
#: Issue 28, item 3: 400 replications per CLT cell (was 1,000): min 0.945/0.940, mean 0.959 at the
#: two shifts; planted break, every interval 15% narrower: min 0.882/0.892, mean 0.915 (fails). The
#: bootstrap cells keep 1,000: at 400 the unbroken percentile bootstrap reads 0.932 (too close to 0.935).
CLT_REPS = reps(suite=400, full=1000)
#: Unchanged in session 41: the bootstrap cells (see above), the A/A rejection rates and the full-pipeline A/A.
BOOTSTRAP_REPS = reps(suite=1000, full=1000)
AA_REPS = reps(suite=3000, full=3000)
PIPELINE_REPS = reps(suite=300, full=300)


@pytest.mark.parametrize("alternative", ["two-sided", "less"])
@pytest.mark.parametrize("test", ["exact", "midp"])
def test_mcnemar_size_in_aa_comparisons_is_at_most_alpha(alternative: str, test: str) -> None:
    worst = max(
        exact_power(n, 0.0, psi, alpha=0.05, alternative=alternative, test=test)  # type: ignore[arg-type]
        for n in AA_N
        for psi in sim.AA_PSI
    )
    if test == "midp" and alternative == "less":
        # Why one-sided mid-p is not offered: it exceeds the level, if barely (0.050122).
        assert 0.05 < worst <= 0.0502
    else:
        assert 0.04 < worst <= 0.05


def test_midp_size_at_a_fixed_number_of_discordant_units_exceeds_alpha() -> None:
    # Why mid-p is refused with several trials per case: there nearly every unit is discordant.
    worst = max(sim.conditional_midp_size(m) for m in range(1, 201))
    assert worst == pytest.approx(0.0768, abs=5e-5)
    assert sim.conditional_midp_size(16) == worst


def test_noninferiority_size_at_the_margin_stays_near_its_level() -> None:
    # Issue 28, item 3: N = 50 and 100 (N = 200 cost 6.4 of 8.5 CPU-s and its size, 0.0247, is the
    # smallest of the three; the maximum, 0.0265, is at N = 50). ``python -m tests.paired.paired_simulation``
    # prints the full table.
    sizes = [sim.noninferiority_size(n, margin, psi) for n in (50, 100) for margin in (0.05, 0.1) for psi in (0.2, 0.4)]
    # Asymptotic score test (not an A/A null): at most 0.0265 at one-sided 0.025 in this grid -- a grid
    # too narrow to show its excess (issue 12: 0.069 at one-sided 0.05, docs/size_study.md); kept as a
    # regression check of method="tango_score", which compare no longer uses by default.
    assert max(sizes) <= 0.027
    assert np.mean(sizes) <= 0.025


def test_tango_and_newcombe_coverage_is_at_least_94_percent() -> None:
    for n in (20, 50, 100):
        cache: dict[tuple[int, int, int], tuple[float, float]] = {}
        tango = [sim.tango_coverage(n, s, cache) for s in sim.COVERAGE_SCENARIOS]
        assert min(tango) >= 0.94, (n, tango)
        assert np.mean(tango) >= 0.95
    # Issue 28, item 3: Newcombe at N = 20 only (N = 50 cost 5.7 CPU-s; its minimum, 0.947, is above
    # N = 20's 0.945). Planted break, the interval 15% narrower: N = 20 falls below 0.94.
    for n in (20,):
        newcombe = [sim.newcombe_coverage(n, s) for s in sim.COVERAGE_SCENARIOS]
        assert min(newcombe) >= 0.94, (n, newcombe)


@pytest.mark.parametrize(("n", "k", "cluster"), [(20, 3, 1), (50, 5, 1), (200, 5, 1), (200, 4, 4)])
def test_case_level_tests_keep_alpha_in_aa_comparisons(n: int, k: int, cluster: int) -> None:
    rates = sim.aa_rejection_rates(n, k, AA_REPS, seed=n * 10 + k + cluster, cluster=cluster)
    allowance = 2 * np.sqrt(0.05 * 0.95 / AA_REPS)  # two Monte Carlo standard errors (0.008)
    for name in ("sign exact", "permutation", "sign exact, less"):
        assert rates[name] <= 0.05 + allowance, (name, rates)


def test_full_pipeline_aa_comparison_keeps_alpha() -> None:
    rng = np.random.default_rng(2024)
    rejections = 0
    reps = PIPELINE_REPS
    for _ in range(reps):
        p = rng.beta(0.6, 0.5, size=40)
        outcomes = {s: [[int(x) for x in rng.random(3) < q] for q in p] for s in ("A", "B")}
        result = compare(trial_records(outcomes), baseline="A", candidate="B")
        rejections += int(result.pvalue is not None and result.pvalue <= 0.05)
    assert rejections / reps <= 0.05 + 2 * np.sqrt(0.05 * 0.95 / reps)


@pytest.mark.parametrize("shift", [0.0, 0.5])
def test_clt_interval_coverage_is_at_least_94_percent(shift: float) -> None:
    truth = sim.true_difference(0.0, shift)
    coverage = [
        sim.interval_coverage(n, k, shift, CLT_REPS, seed=n + k, method="clt", truth=truth)[0]
        for n in (10, 20, 50, 200)
        for k in (1, 3, 5)
    ]
    assert min(coverage) >= 0.935, coverage  # half a Monte Carlo SE (0.011 at 400) below 0.94 at most
    assert np.mean(coverage) >= 0.945


def test_bootstrap_interval_coverage_from_200_cases() -> None:
    truth = sim.true_difference(0.0, 0.5)
    coverage = [
        sim.interval_coverage(n, k, 0.5, BOOTSTRAP_REPS, seed=n + k + 1, method="bootstrap", truth=truth)[0]
        for n in (200,)
        for k in (1, 3, 5)
    ]
    assert min(coverage) >= 0.935, coverage
    assert np.mean(coverage) >= 0.94


def test_power_curve_recorded_in_docs_rises_with_cases() -> None:
    rows = sim.power_rows((100, 400, 1600), (0.02, 0.05), 0.2)
    assert rows[0][1] < rows[1][1] < rows[2][1]
    assert round(rows[1][1], 3) == 0.609  # docs/paired.md, N = 400, delta = 0.05
