"""Simulations behind ``docs/paired.md``: type-I error, interval coverage and power of the paired tests.

Run ``.venv/bin/python -m tests.paired.paired_simulation`` to print the markdown tables recorded in
``docs/paired.md``; ``tests/paired/test_simulation.py`` (slow-marked) asserts the same properties.

One trial per case, everything is computed *exactly* by enumerating the multinomial distribution of
the table (no Monte Carlo error): the size of the exact and mid-p McNemar tests, the size of the
Tango/Nam non-inferiority test at the margin, and the coverage of Tango's and Newcombe's intervals.
Several trials per case are simulated: cases of heterogeneous difficulty
(``theta_i ~ Beta(0.6, 0.5)``, as in ``benchmarks/make_synthetic.py``), per-system shifts on the
logit scale, k trials per case; A/A comparisons use the same flaky system twice.
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass
from unittest import mock

import numpy as np
import numpy.typing as npt
from scipy import special, stats

from gatestats.paired import (
    case_difference_interval,
    exact_power,
    mcnemar_pvalues,
    newcombe_interval,
    noninferiority_test,
    permutation_test,
    tango_interval,
    trials,
)

ALPHA = 0.05
SIZE_N = (10, 20, 30, 50, 75, 100, 200, 500, 1000)
#: A/A with one trial per case: the same flaky system twice has discordance 2 p (1 - p) <= 0.5.
AA_PSI = tuple(float(x) for x in np.round(np.arange(0.01, 0.501, 0.01), 2))
BEYOND_PSI = (0.6, 0.7, 0.8, 0.9, 1.0)


def exact_size_table() -> list[tuple[int, float, float, float, float, float]]:
    """Per N: max size over A/A discordance (exact, mid-p; two-sided, less) and mid-p beyond A/A."""

    def worst(n: int, alternative: str, test: str, psis: tuple[float, ...]) -> float:
        return max(exact_power(n, 0.0, psi, alpha=ALPHA, alternative=alternative, test=test) for psi in psis)  # type: ignore[arg-type]

    return [
        (
            n,
            worst(n, "two-sided", "exact", AA_PSI),
            worst(n, "two-sided", "midp", AA_PSI),
            worst(n, "less", "exact", AA_PSI),
            worst(n, "less", "midp", AA_PSI),
            worst(n, "two-sided", "midp", BEYOND_PSI),
        )
        for n in SIZE_N
    ]


def conditional_midp_size(m: int) -> float:
    """Size of the two-sided mid-p test at a fixed number m of discordant units."""
    c = np.arange(m + 1)
    _, midp = mcnemar_pvalues(m - c, c)
    return float(stats.binom.pmf(c, m, 0.5)[midp <= ALPHA].sum())


def _table_probabilities(
    n: int, p10: float, p01: float
) -> tuple[npt.NDArray[np.int64], npt.NDArray[np.int64], npt.NDArray[np.float64]]:
    """All (b, c) with b + c <= n and their multinomial probabilities (concordant cells merged)."""
    b, c = np.meshgrid(np.arange(n + 1), np.arange(n + 1), indexing="ij")
    keep = b + c <= n
    b, c = b[keep], c[keep]
    log_p = (
        special.gammaln(n + 1) - special.gammaln(b + 1) - special.gammaln(c + 1) - special.gammaln(n - b - c + 1)
        + special.xlogy(b, p10) + special.xlogy(c, p01) + special.xlogy(n - b - c, 1 - p10 - p01)
    )  # fmt: skip
    return b.astype(np.int64), c.astype(np.int64), np.exp(log_p)


def noninferiority_size(n: int, margin: float, psi: float) -> float:
    """Exact size of the asymptotic Tango/Nam test (one-sided 0.025) at the boundary delta = -margin.

    Issue 12: ``compare`` now uses the exact unconditional test (``docs/size_study.md``); this
    keeps the recorded table of the asymptotic test, which stays available as ``method="tango_score"``.
    """
    p10, p01 = (psi + margin) / 2, (psi - margin) / 2  # baseline-only p10, candidate-only p01
    b, c, prob = _table_probabilities(n, p10, p01)
    reject = np.array(
        [
            noninferiority_test(int(x), int(y), n, margin=margin, method="tango_score").pvalue <= 0.025
            for x, y in zip(b, c, strict=True)
        ]
    )
    return float(prob[reject].sum())


@dataclass(frozen=True)
class Scenario:
    """A paired 2x2 population: both pass, baseline only, candidate only (both fail is the rest)."""

    p11: float
    p10: float
    p01: float

    @property
    def delta(self) -> float:
        return self.p01 - self.p10


COVERAGE_SCENARIOS = (
    Scenario(0.45, 0.05, 0.05),
    Scenario(0.80, 0.05, 0.05),
    Scenario(0.90, 0.02, 0.02),
    Scenario(0.30, 0.20, 0.20),
    Scenario(0.40, 0.10, 0.20),
    Scenario(0.70, 0.05, 0.15),
    Scenario(0.85, 0.01, 0.09),
    Scenario(0.50, 0.15, 0.05),
    Scenario(0.20, 0.30, 0.30),
    Scenario(0.60, 0.02, 0.08),
)


def tango_coverage(n: int, scenario: Scenario, cache: dict[tuple[int, int, int], tuple[float, float]]) -> float:
    """Exact coverage of Tango's 95% interval (it depends on b, c and n only)."""
    b, c, prob = _table_probabilities(n, scenario.p10, scenario.p01)
    covered = 0.0
    for x, y, p in zip(b.tolist(), c.tolist(), prob.tolist(), strict=True):
        if p < 1e-14:
            continue
        key = (x, y, n)
        if key not in cache:
            cache[key] = tango_interval(x, y, n)
        low, high = cache[key]
        covered += p if low <= scenario.delta <= high else 0.0
    return covered


def newcombe_coverage(n: int, scenario: Scenario) -> float:
    """Exact coverage of Newcombe's 95% interval by enumerating all (a, b, c, d)."""
    p00 = 1 - scenario.p11 - scenario.p10 - scenario.p01
    covered = 0.0
    log_n = special.gammaln(n + 1)
    logs = np.log(np.maximum([scenario.p11, scenario.p10, scenario.p01, p00], 1e-300))
    for a in range(n + 1):
        for b in range(n + 1 - a):
            for c in range(n + 1 - a - b):
                d = n - a - b - c
                log_p = (log_n - special.gammaln(a + 1) - special.gammaln(b + 1) - special.gammaln(c + 1)
                         - special.gammaln(d + 1) + a * logs[0] + b * logs[1] + c * logs[2] + d * logs[3])  # fmt: skip
                p = math.exp(log_p)
                if p < 1e-12:
                    continue
                low, high = newcombe_interval(a, b, c, d)
                if low <= scenario.delta <= high:
                    covered += p
    return covered


# ----------------------------------------------------------------------------- several trials


def _population(n: int, rng: np.random.Generator) -> npt.NDArray[np.float64]:
    theta = np.clip(rng.beta(0.6, 0.5, size=n), 1e-6, 1 - 1e-6)
    return np.asarray(special.logit(theta), dtype=np.float64)


def true_difference(shift_b: float, shift_c: float) -> float:
    """E[p_c - p_b] over the case population (10^6 fixed draws)."""
    logits = _population(1_000_000, np.random.default_rng(12345))
    return float((special.expit(logits + shift_c) - special.expit(logits + shift_b)).mean())


def simulate_differences(
    n: int, k: int, shift_b: float, shift_c: float, reps: int, rng: np.random.Generator, *, cluster: int = 1
) -> npt.NDArray[np.float64]:
    """(reps, n) per-case differences of pass rates; with ``cluster > 1`` cases share difficulty in groups."""
    out = np.empty((reps, n))
    for r in range(reps):
        logits = np.repeat(_population(n // cluster + 1, rng), cluster)[:n] + rng.normal(0, 0.3, n) * (cluster > 1)
        xb = rng.binomial(k, special.expit(logits + shift_b))
        xc = rng.binomial(k, special.expit(logits + shift_c))
        out[r] = (xc - xb) / k
    return out


def aa_rejection_rates(n: int, k: int, reps: int, seed: int, *, cluster: int = 1) -> dict[str, float]:
    """A/A (same flaky system twice): rejection rates at 0.05 of the case-level tests."""
    rng = np.random.default_rng(seed)
    diffs = simulate_differences(n, k, 0.0, 0.0, reps, rng, cluster=cluster)
    if cluster > 1:
        groups = np.arange(n) // cluster
        units = np.stack([np.bincount(groups, weights=row) for row in diffs])
    else:
        units = diffs
    worse, better = (units < -1e-12).sum(axis=1), (units > 1e-12).sum(axis=1)
    exact, midp = mcnemar_pvalues(worse, better)
    perm = np.array([permutation_test(row, n_permutations=199, seed=i)[0] for i, row in enumerate(units)])
    less_exact, less_midp = mcnemar_pvalues(worse, better, alternative="less")
    return {
        "sign exact": float((exact <= ALPHA).mean()),
        "sign mid-p": float((midp <= ALPHA).mean()),
        "permutation": float((perm <= ALPHA).mean()),
        "sign exact, less": float((less_exact <= ALPHA).mean()),
        "sign mid-p, less": float((less_midp <= ALPHA).mean()),
    }


def interval_coverage(
    n: int, k: int, shift_c: float, reps: int, seed: int, method: str, truth: float, *, everywhere: bool = False
) -> tuple[float, int]:
    """Coverage of the case-level interval (``bootstrap`` or ``clt``) and how many were refused.

    ``everywhere`` lifts the minimum numbers of units (to show where a method is not offered).
    """
    rng = np.random.default_rng(seed)
    diffs = simulate_differences(n, k, 0.0, shift_c, reps, rng)
    hits = refused = 0
    lifted = (
        mock.patch.multiple(trials, MIN_UNITS_BOOTSTRAP=2, MIN_UNITS_CLT=2) if everywhere else contextlib.nullcontext()
    )
    with lifted:
        results = [
            case_difference_interval(row, method=method, n_resamples=999, seed=i)  # type: ignore[arg-type]
            for i, row in enumerate(diffs)
        ]
    for r in results:
        if r.status != "ok" or r.ci_low is None or r.ci_high is None:
            refused += 1
            continue
        hits += int(r.ci_low <= truth <= r.ci_high)
    done = reps - refused
    return (hits / done if done else float("nan")), refused


def power_rows(n_cases: tuple[int, ...], deltas: tuple[float, ...], psi: float) -> list[list[float]]:
    """Exact power of the two-sided mid-p test, one row per N."""
    return [[exact_power(n, d, psi, alpha=ALPHA, test="midp") for d in deltas] for n in n_cases]


# ----------------------------------------------------------------------------- report


def main() -> None:  # pragma: no cover - prints the tables of docs/paired.md
    print("### Size of the McNemar tests, one trial per case (exact)\n")
    print("Maximum over the A/A discordance ψ = 0.01, 0.02, ..., 0.50; last column: beyond A/A (ψ = 0.6-1.0).\n")
    print("| N | exact, two-sided | mid-p, two-sided | exact, less | mid-p, less | mid-p, two-sided, ψ > 0.5 |")
    print("|---:|---:|---:|---:|---:|---:|")
    for n, *sizes in exact_size_table():
        print(f"| {n} | " + " | ".join(f"{x:.4f}" for x in sizes) + " |")
    print("\n### Size of the two-sided mid-p test at a fixed number m of discordant units\n")
    print("| m | " + " | ".join(str(m) for m in (5, 10, 16, 20, 30, 50, 100, 200)) + " |")
    print("|---|" + "---:|" * 8)
    print("| size | " + " | ".join(f"{conditional_midp_size(m):.4f}" for m in (5, 10, 16, 20, 30, 50, 100, 200)) + " |")
    print("\n### Size of the Tango/Nam non-inferiority test at the margin (exact; one-sided 0.025)\n")
    print("| N | margin | ψ = 0.1 | ψ = 0.2 | ψ = 0.4 |")
    print("|---:|---:|---:|---:|---:|")
    for n in (50, 100, 200):
        for margin in (0.05, 0.1):
            sizes = [noninferiority_size(n, margin, psi) for psi in (0.1, 0.2, 0.4)]
            print(f"| {n} | {margin} | " + " | ".join(f"{s:.4f}" for s in sizes) + " |")
    print("\n### Coverage of the 95% intervals, one trial per case (exact)\n")
    print("| N | Tango mean | Tango min | Newcombe mean | Newcombe min |")
    print("|---:|---:|---:|---:|---:|")
    for n in (20, 50, 100):
        cache: dict[tuple[int, int, int], tuple[float, float]] = {}
        tango = [tango_coverage(n, s, cache) for s in COVERAGE_SCENARIOS]
        newcombe = [newcombe_coverage(n, s) for s in COVERAGE_SCENARIOS] if n <= 50 else []
        nc = f"{np.mean(newcombe):.4f} | {np.min(newcombe):.4f}" if newcombe else "— | —"
        print(f"| {n} | {np.mean(tango):.4f} | {np.min(tango):.4f} | {nc} |")
    print("\n### A/A rejection rates, several trials per case (2000 replications)\n")
    print("| N | k | clustered | sign exact | sign mid-p | permutation | sign exact, less | sign mid-p, less |")
    print("|---:|---:|:---:|---:|---:|---:|---:|---:|")
    for n, k, cluster in ((20, 3, 1), (50, 3, 1), (50, 5, 1), (200, 5, 1), (200, 4, 4)):
        rates = aa_rejection_rates(n, k, 2000, seed=n * 10 + k, cluster=cluster)
        print(
            f"| {n} | {k} | {'yes' if cluster > 1 else 'no'} | " + " | ".join(f"{v:.4f}" for v in rates.values()) + " |"
        )
    print("\n### Coverage of the case-level 95% intervals, several trials per case (1000 replications)\n")
    print("Minimum numbers of units lifted; * = not offered there (below its minimum).\n")
    print("| N | k | δ | bootstrap (BCa) | t with Miller SE (clt) |")
    print("|---:|---:|---:|---:|---:|")
    for shift in (0.0, 0.5):
        truth = true_difference(0.0, shift)
        for n in (5, 10, 20, 50, 100, 200, 500):
            for k in (1, 3, 5):
                boot, _ = interval_coverage(
                    n, k, shift, 1000, seed=n + k, method="bootstrap", truth=truth, everywhere=True
                )
                clt, _ = interval_coverage(n, k, shift, 1000, seed=n + k, method="clt", truth=truth, everywhere=True)
                mark_b = "*" if n < trials.MIN_UNITS_BOOTSTRAP else ""
                mark_c = "*" if n < trials.MIN_UNITS_CLT else ""
                print(f"| {n} | {k} | {truth:.4f} | {boot:.3f}{mark_b} | {clt:.3f}{mark_c} |")
    deltas = (0.01, 0.02, 0.03, 0.05, 0.1)
    ns = (50, 100, 200, 400, 800, 1600, 3200)
    print("\n### Power of the two-sided mid-p McNemar test (exact), discordance ψ = 0.2\n")
    print("| N | " + " | ".join(f"δ = {d}" for d in deltas) + " |")
    print("|---:|" + "---:|" * len(deltas))
    for n, row in zip(ns, power_rows(ns, deltas, 0.2), strict=True):
        print(f"| {n} | " + " | ".join(f"{p:.3f}" for p in row) + " |")


if __name__ == "__main__":  # pragma: no cover
    main()
