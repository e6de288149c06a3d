"""Coverage simulation of the case-mean interval methods; writes ``docs/coverage.md``.

The issue's requirement: every interval method, at nominal 95%, over 10 to 1000 cases and true
values 0.02 to 0.98; a method under 93% anywhere is fixed or not offered there. This script
draws evaluation results from known truths, runs the *production* interval engine of
:mod:`gatestats.estimators.intervals` on each draw (the same private function that
``case_mean_interval`` calls, vectorised over replications), and counts how often the interval
contains the true value.

Scenarios (see :data:`SCENARIOS`)
---------------------------------
Each case ``i`` has a success probability ``theta_i``; it gets ``trials`` Bernoulli trials, ``c_i``
passes, and contributes the unbiased per-case pass^k ``C(c,k)/C(n,k)`` or pass@k
``1 - C(n-c,k)/C(n,k)`` (:mod:`gatestats.estimators.passk`). The estimand is the population
value ``E[theta^k]`` (pass^k) or ``E[1 - (1 - theta)^k]`` (pass@k), set to the target ``p`` by
solving for the mean ``mu`` of ``theta`` numerically (``brentq``):

- ``proportion``: one trial per case, every ``theta_i = p`` (the plain binomial proportion);
- heterogeneous cases: ``theta_i ~ Beta(mu * kappa, (1 - mu) * kappa)`` with ``kappa = 2``
  (a U- or J-shaped spread of case difficulty, as in agent benchmarks), for pass^1 of 4 trials,
  pass^4 and pass@4 of 8 trials, and pass^1 of 20 trials (precisely measured cases, where the
  spread between cases dominates: the hard case for an estimated design effect);
- clustered cases: groups of 5 cases share a group effect ``theta_g ~ Beta(2 mu, 2 (1 - mu))``,
  and each case draws ``theta_i ~ Beta(4 theta_g, 4 (1 - theta_g))``; the intervals are given
  the group labels (cluster-robust; the unit is the group), for pass^1 of 4 and pass^4 of 8 trials.

pass^k with ``k = n`` (e.g. pass^4 with 4 trials) is the indicator "all trials passed": its case
values are i.i.d. Bernoulli(p) whatever the heterogeneity, so it is exactly the ``proportion``
scenario and is not repeated; pass^4 and pass@4 are simulated with 8 trials per case, where the
case values are fractional and skewed. ``max_effective_n`` is ``trials * N / k``, as
:func:`gatestats.estimators.analyze` passes it. Beyond the issue's grid, N = 2000, 5000 and 10000
are simulated for ``auto``, ``wilson`` and ``clt`` (the CLT needs that many units).

Counting
--------
Coverage is the fraction of *offered* replications (``status == "ok"``) whose interval contains
the true value; refusals (``insufficient_evidence``) are neither covering nor missing and are
reported as a rate. Below a method's minimum number of units the method is refused; the table
still shows, in parentheses, the coverage it would have had there (the engine's
``offer_everywhere`` switch), which is the evidence for the threshold.

Every cell has its own generator, ``numpy.random.default_rng(SeedSequence([seed, scenario, N,
p]))``-derived, so a cell's result does not depend on which other cells are run or on
``--jobs``.

Usage::

    .venv/bin/python benchmarks/coverage_simulation.py --diagnostics   # docs/coverage.md (2000 reps)
    .venv/bin/python benchmarks/coverage_simulation.py --reps 200 --out /tmp/coverage.md
    .venv/bin/python benchmarks/coverage_simulation.py --render-only  # re-render from the saved JSON

The full run (2000 replications, 2000 resamples, ``--diagnostics``) takes about an hour on two
cores; ``tests/estimators/test_coverage_simulation.py`` re-runs it smaller.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import math
import os
import platform
import sys
import time
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass, field
from fractions import Fraction
from pathlib import Path

import numpy as np
import numpy.typing as npt
from scipy import optimize

from gatestats.estimators import intervals
from gatestats.estimators.passk import pass_at_k_exact, pass_hat_k_exact
from gatestats.estimators.quantiles import two_sided_z
from gatestats.vocabulary import IntervalMethod, Metric

__all__ = [
    "CASE_COUNTS",
    "FLOOR",
    "METHODS",
    "NOMINAL",
    "SCENARIOS",
    "TRUE_VALUES",
    "CellResult",
    "Scenario",
    "minimum_units",
    "monte_carlo_allowance",
    "render_markdown",
    "simulate",
    "simulate_cell",
]

ROOT = Path(__file__).resolve().parents[1]
NOMINAL = 0.95
#: The issue's floor: a method under this coverage somewhere is fixed or not offered there.
FLOOR = 0.93
CASE_COUNTS: tuple[int, ...] = (10, 20, 30, 50, 100, 200, 500, 1000)
#: Beyond the issue's grid, for the CLT thresholds only (``auto``, ``wilson`` and ``clt``).
EXTENSION_CASE_COUNTS: tuple[int, ...] = (2000, 5000, 10000)
EXTENSION_METHODS: tuple[IntervalMethod, ...] = ("auto", "wilson", "clt")
_ALL_CASE_COUNTS = CASE_COUNTS + EXTENSION_CASE_COUNTS
TRUE_VALUES: tuple[float, ...] = (0.02, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.98)
METHODS: tuple[IntervalMethod, ...] = ("auto", "wilson", "bootstrap", "clt")
#: Variants simulated for comparison only (``--diagnostics``), never offered: the rules before
#: this simulation (uncorrected Wilson, percentile bootstrap) and Wilson with the estimated design
#: effect trusted at every N (the evidence for ``DESIGN_EFFECT_FROM_UNITS``).
DIAGNOSTICS = ("wilson (before)", "wilson (design effect at every N)", "bootstrap (percentile, before)")
_EDGE = 1e-12


def _rising(a: float, total: float, m: int) -> float:
    """``E[X^m]`` for ``X ~ Beta(a, total - a)``: ``prod_{j<m} (a + j) / (total + j)``."""
    return math.prod((a + j) / (total + j) for j in range(m))


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """How cases are drawn: metric, trials per case, heterogeneity and clustering."""

    name: str
    metric: Metric
    k: int
    trials: int
    #: ``kappa = a + b`` of the Beta distribution of case (or group) success probabilities;
    #: ``None`` means every case has ``theta = mu`` (homogeneous).
    concentration: float | None
    #: Cases per group (1: no groups).
    group_size: int = 1
    #: Concentration of a case's ``theta`` around its group's (clustered scenarios only).
    within_concentration: float | None = None
    description: str = ""

    def _moment(self, mu: float, m: int) -> float:
        """``E[theta^m]`` when the mean of ``theta`` is ``mu``."""
        if self.concentration is None:
            return mu**m
        kappa = self.concentration
        if self.within_concentration is None:
            return _rising(mu * kappa, kappa, m)
        # E[ E[theta_i^m | theta_g] ] = E[ prod_j (kc theta_g + j) / (kc + j) ], a polynomial in
        # theta_g whose moments are Beta moments.
        kc = self.within_concentration
        poly = np.polynomial.Polynomial([1.0])
        for j in range(m):
            poly = poly * np.polynomial.Polynomial([j / (kc + j), kc / (kc + j)])
        return float(sum(c * _rising(mu * kappa, kappa, r) for r, c in enumerate(poly.coef)))

    def true_value(self, mu: float) -> float:
        """The estimand when the mean case success probability is ``mu``."""
        if self.metric == "pass_hat_k":
            return self._moment(mu, self.k)
        # 1 - theta has the same structure with mean 1 - mu (Beta(a, b) -> Beta(b, a)).
        return 1.0 - self._moment(1.0 - mu, self.k)

    def solve_mean(self, target: float) -> float:
        """The mean ``mu`` of ``theta`` at which the estimand equals ``target``."""
        root = optimize.brentq(lambda mu: self.true_value(mu) - target, _EDGE, 1 - _EDGE, xtol=1e-15, rtol=1e-14)
        return float(root)

    def case_values(self) -> npt.NDArray[np.float64]:
        """Per-case value for ``c = 0..trials`` passes (exact, from :mod:`gatestats.estimators.passk`)."""
        exact = pass_hat_k_exact if self.metric == "pass_hat_k" else pass_at_k_exact
        return np.array([float(exact(self.trials, c, self.k)) for c in range(self.trials + 1)])

    def max_effective_n(self, n_cases: int) -> float:
        """The cap :func:`gatestats.estimators.analyze` passes: independent k-trial blocks."""
        return float(Fraction(self.trials * n_cases, self.k))

    def groups(self, n_cases: int) -> npt.NDArray[np.intp] | None:
        """Group code per case (consecutive blocks of ``group_size``), or ``None``."""
        if self.group_size == 1:
            return None
        if n_cases % self.group_size:
            msg = f"n_cases must be a multiple of the group size {self.group_size} (got {n_cases})"
            raise ValueError(msg)
        return np.repeat(np.arange(n_cases // self.group_size), self.group_size).astype(np.intp)

    def sample(self, rng: np.random.Generator, *, reps: int, n_cases: int, mu: float) -> npt.NDArray[np.float64]:
        """``reps`` samples of ``n_cases`` case values (reps x n_cases)."""
        if self.concentration is None:
            theta = np.full((reps, n_cases), mu)
        elif self.within_concentration is None:
            kappa = self.concentration
            theta = rng.beta(mu * kappa, (1 - mu) * kappa, size=(reps, n_cases))
        else:
            kappa, kc = self.concentration, self.within_concentration
            n_groups = n_cases // self.group_size
            group = np.clip(rng.beta(mu * kappa, (1 - mu) * kappa, size=(reps, n_groups)), _EDGE, 1 - _EDGE)
            group = np.repeat(group, self.group_size, axis=1)
            theta = rng.beta(kc * group, kc * (1 - group))
        passes = rng.binomial(self.trials, theta)
        return self.case_values()[passes]


SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        name="proportion",
        metric="pass_hat_k",
        k=1,
        trials=1,
        concentration=None,
        description="one trial per case, every case has the same success probability p "
        "(the plain binomial proportion; also pass^k with k = n)",
    ),
    Scenario(
        name="pass^1, 4 trials",
        metric="pass_hat_k",
        k=1,
        trials=4,
        concentration=2.0,
        description="heterogeneous cases, theta ~ Beta(2 mu, 2 (1 - mu)); per-case value c/4",
    ),
    Scenario(
        name="pass^4, 8 trials",
        metric="pass_hat_k",
        k=4,
        trials=8,
        concentration=2.0,
        description="heterogeneous cases, theta ~ Beta(2 mu, 2 (1 - mu)); per-case C(c,4)/C(8,4)",
    ),
    Scenario(
        name="pass@4, 8 trials",
        metric="pass_at_k",
        k=4,
        trials=8,
        concentration=2.0,
        description="heterogeneous cases, theta ~ Beta(2 mu, 2 (1 - mu)); per-case 1 - C(8-c,4)/C(8,4)",
    ),
    Scenario(
        name="pass^1, 20 trials",
        metric="pass_hat_k",
        k=1,
        trials=20,
        concentration=2.0,
        description="heterogeneous cases, theta ~ Beta(2 mu, 2 (1 - mu)), each measured precisely; per-case "
        "value c/20 (the spread between cases dominates the variance: the hard case for an estimated "
        "design effect)",
    ),
    Scenario(
        name="pass^1, 4 trials, groups of 5",
        metric="pass_hat_k",
        k=1,
        trials=4,
        concentration=2.0,
        group_size=5,
        within_concentration=4.0,
        description="groups of 5 cases: theta_g ~ Beta(2 mu, 2 (1 - mu)), "
        "theta_i ~ Beta(4 theta_g, 4 (1 - theta_g)); intervals clustered on the group",
    ),
    Scenario(
        name="pass^4, 8 trials, groups of 5",
        metric="pass_hat_k",
        k=4,
        trials=8,
        concentration=2.0,
        group_size=5,
        within_concentration=4.0,
        description="as above with pass^4 of 8 trials; intervals clustered on the group",
    ),
)


def minimum_units(method: str) -> int:
    """Fewest independent units at which ``method`` is offered (the module's thresholds)."""
    return {
        "bootstrap": intervals.MIN_CASES_BOOTSTRAP,
        "clt": intervals.MIN_CASES_CLT,
    }.get(method, intervals.MIN_UNITS)


def monte_carlo_allowance(offered: int, *, floor: float = FLOOR, sigmas: float = 3.0) -> float:
    """``sigmas`` binomial standard errors of a coverage estimate at ``floor`` from ``offered`` reps."""
    return sigmas * math.sqrt(floor * (1 - floor) / offered)


@dataclass(frozen=True, slots=True, kw_only=True)
class CellResult:
    """One method in one (scenario, N, p) cell."""

    scenario: str
    method: str
    n_cases: int
    n_units: int
    true_value: float
    reps: int
    #: Replications with ``status == "ok"`` (as the public function would answer).
    offered: int
    #: Offered replications whose interval contains the true value.
    covered: int
    #: Refusals by reason: fewer units than the method's minimum, constant values, degenerate
    #: bootstrap distribution, fewer than two units.
    refused_not_offered: int = 0
    refused_constant: int = 0
    refused_degenerate: int = 0
    refused_few_units: int = 0
    #: Where the method is not offered: the same counts with the minimum lifted.
    whatif_computed: int = 0
    whatif_covered: int = 0
    #: Mean interval width over offered replications (NaN when none).
    mean_width: float = math.nan
    #: Offered replications whose interval had zero width or excluded the estimate (must be 0).
    violations: int = 0
    #: Replications whose case values were all equal.
    constant: int = 0
    resolved: dict[str, int] = field(default_factory=dict)

    @property
    def coverage(self) -> float | None:
        """Coverage among offered replications, ``None`` when none was offered."""
        return self.covered / self.offered if self.offered else None

    @property
    def whatif_coverage(self) -> float | None:
        """Coverage had the method been offered here (``None`` when it is offered or never computable)."""
        return self.whatif_covered / self.whatif_computed if self.whatif_computed else None

    @property
    def refusal_rate(self) -> float:
        """Fraction of replications answered ``insufficient_evidence``."""
        return 1 - self.offered / self.reps


def _cell_rngs(seed: int, scenario: int, n_index: int, p_index: int) -> tuple[np.random.Generator, np.random.Generator]:
    data, boot = np.random.SeedSequence([seed, scenario, n_index, p_index]).spawn(2)
    return np.random.default_rng(data), np.random.default_rng(boot)


def _wilson_before(
    values: npt.NDArray[np.float64], inverse: npt.NDArray[np.intp] | None, cap: float
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.float64]]:
    """The Wilson rule before this simulation: uncorrected, ``n_eff = p(1-p)/SE^2`` capped, ``U`` at 0/1."""
    n_units = values.shape[1] if inverse is None else int(inverse.max()) + 1
    est = values.mean(axis=1)
    se = intervals._standard_errors(values, inverse)
    with np.errstate(divide="ignore", invalid="ignore"):
        n_eff = np.where(se > 0, np.minimum(est * (1 - est) / (se * se), cap), cap)
    n_eff = np.where((est == 0) | (est == 1), float(n_units), n_eff)
    low, high = intervals._wilson_bounds(est, n_eff, two_sided_z(NOMINAL), continuity_correction=False)
    return est, low, high


def _diagnostic(
    method: str,
    values: npt.NDArray[np.float64],
    inverse: npt.NDArray[np.intp] | None,
    *,
    cap: float,
    n_resamples: int,
    rng: np.random.Generator,
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    """Bounds of a comparison variant, and which replications it could compute."""
    if method == "wilson (before)":
        _, low, high = _wilson_before(values, inverse, cap)
        return low, high, np.ones(values.shape[0], dtype=np.bool_)
    if method == "wilson (design effect at every N)":
        batch = intervals._interval_batch(
            values, inverse, method="wilson", confidence_level=NOMINAL, n_resamples=n_resamples, rng=rng,
            max_effective_n=cap, design_effect_from_units=0,
        )  # fmt: skip
    else:
        batch = intervals._interval_batch(
            values, inverse, method="bootstrap", confidence_level=NOMINAL, n_resamples=n_resamples, rng=rng,
            max_effective_n=cap, offer_everywhere=True, bootstrap_kind="percentile",
        )  # fmt: skip
    return batch.low, batch.high, batch.code == intervals.OK


def simulate_cell(
    scenario: Scenario,
    n_cases: int,
    target: float,
    *,
    reps: int,
    seed: int,
    n_resamples: int = 2000,
    methods: Sequence[str] = METHODS,
    whatif: bool = True,
) -> list[CellResult]:
    """Simulate ``reps`` evaluations of ``n_cases`` cases of ``scenario`` with true value ``target``.

    The cell's generators derive from ``seed`` and the positions of the scenario, ``n_cases``
    and ``target`` in :data:`SCENARIOS`, the case counts and :data:`TRUE_VALUES`, so one cell
    gives the same result whichever other cells are run. ``methods`` may include
    :data:`DIAGNOSTICS`. ``whatif=False`` skips the coverage a method would have had where it is
    not offered (the expensive part of the bootstrap at small N).
    """
    index = (SCENARIOS.index(scenario), _ALL_CASE_COUNTS.index(n_cases), TRUE_VALUES.index(target))
    data_rng, boot_rng = _cell_rngs(seed, *index)
    values = scenario.sample(data_rng, reps=reps, n_cases=n_cases, mu=scenario.solve_mean(target))
    inverse = scenario.groups(n_cases)
    cap = scenario.max_effective_n(n_cases)
    constant = int(np.all(values == values[:, :1], axis=1).sum())
    results: list[CellResult] = []
    for method in methods:
        common = {"scenario": scenario.name, "method": method, "n_cases": n_cases, "true_value": target, "reps": reps}
        if method in DIAGNOSTICS:
            low, high, computed = _diagnostic(method, values, inverse, cap=cap, n_resamples=n_resamples, rng=boot_rng)
            n_units = n_cases if inverse is None else int(inverse.max()) + 1
            results.append(
                CellResult(
                    **common,  # type: ignore[arg-type]
                    n_units=n_units,
                    offered=0,
                    covered=0,
                    whatif_computed=int(computed.sum()),
                    whatif_covered=int((computed & (low <= target) & (target <= high)).sum()),
                    constant=constant,
                )
            )
            continue
        # The production path: what case_mean_interval answers for each replication.
        batch = intervals._interval_batch(
            values, inverse, method=method, confidence_level=NOMINAL, n_resamples=n_resamples,  # type: ignore[arg-type]
            rng=boot_rng, max_effective_n=cap,
        )  # fmt: skip
        ok = batch.code == intervals.OK
        cover = ok & (batch.low <= target) & (target <= batch.high)
        width = batch.high[ok] - batch.low[ok]
        bad = ok & ~((batch.low < batch.high) & (batch.low <= batch.estimate) & (batch.estimate <= batch.high))
        whatif_computed = whatif_covered = 0
        not_offered = batch.code == intervals.REFUSED_NOT_OFFERED
        if whatif and not_offered.any():
            whatif = intervals._interval_batch(
                values, inverse, method=method, confidence_level=NOMINAL, n_resamples=n_resamples,  # type: ignore[arg-type]
                rng=boot_rng, max_effective_n=cap, offer_everywhere=True,
            )  # fmt: skip
            computed = whatif.code == intervals.OK
            whatif_computed = int(computed.sum())
            whatif_covered = int((computed & (whatif.low <= target) & (target <= whatif.high)).sum())
        resolved = {
            name: int((batch.method == i).sum())
            for i, name in enumerate(intervals._RESOLVED)
            if (batch.method == i).any()
        }
        results.append(
            CellResult(
                **common,  # type: ignore[arg-type]
                n_units=batch.n_units,
                offered=int(ok.sum()),
                covered=int(cover.sum()),
                refused_not_offered=int(not_offered.sum()),
                refused_constant=int((batch.code == intervals.REFUSED_CONSTANT).sum()),
                refused_degenerate=int((batch.code == intervals.REFUSED_DEGENERATE).sum()),
                refused_few_units=int((batch.code == intervals.REFUSED_FEW_UNITS).sum()),
                whatif_computed=whatif_computed,
                whatif_covered=whatif_covered,
                mean_width=float(width.mean()) if width.size else math.nan,
                violations=int(bad.sum()),
                constant=int(batch.constant.sum()),
                resolved=resolved,
            )
        )
    return results


def _run_cell(task: tuple[int, int, int, int, int, int, tuple[str, ...], bool]) -> list[CellResult]:
    s, n, p, reps, seed, n_resamples, methods, whatif = task
    return simulate_cell(
        SCENARIOS[s], _ALL_CASE_COUNTS[n], TRUE_VALUES[p], reps=reps, seed=seed, n_resamples=n_resamples,
        methods=methods, whatif=whatif,
    )  # fmt: skip


def simulate(
    *,
    reps: int,
    seed: int,
    n_resamples: int = 2000,
    scenarios: Iterable[Scenario] = SCENARIOS,
    case_counts: Iterable[int] = CASE_COUNTS,
    true_values: Iterable[float] = TRUE_VALUES,
    methods: Sequence[str] = METHODS,
    jobs: int = 1,
    whatif: bool = True,
) -> list[CellResult]:
    """Every (scenario, N, p) cell of the grid, in a fixed order, over ``jobs`` processes.

    Case counts of :data:`EXTENSION_CASE_COUNTS` run only the methods of
    :data:`EXTENSION_METHODS`.
    """
    tasks = []
    for s in scenarios:
        for n in case_counts:
            chosen = tuple(m for m in methods if n in CASE_COUNTS or m in EXTENSION_METHODS)
            for p in true_values:
                index = (SCENARIOS.index(s), _ALL_CASE_COUNTS.index(n), TRUE_VALUES.index(p))
                tasks.append((*index, reps, seed, n_resamples, chosen, whatif))
    if jobs <= 1:
        cells = [_run_cell(task) for task in tasks]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            cells = list(pool.map(_run_cell, tasks, chunksize=1))
    return [r for cell in cells for r in cell]


# --- report ------------------------------------------------------------------------------------


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}"


def _flag(x: float | None) -> str:
    return f"**{_pct(x)}**" if x is not None and x < FLOOR else _pct(x)


def _cell_text(r: CellResult) -> str:
    if r.offered == 0:
        return f"({_pct(r.whatif_coverage)})" if r.whatif_computed else "refused"
    text = _flag(r.coverage)
    refused = r.reps - r.offered
    if refused:
        text += f" ·r{max(1, round(100 * refused / r.reps))}"
    return text


def _offered_rule(method: str) -> str:
    if method == "auto":
        return (
            f"from {intervals.MIN_UNITS} units: `wilson` below {intervals.CLT_FROM_CASES} units or when all case "
            f"values are equal, `clt` from {intervals.CLT_FROM_CASES} units"
        )
    if method == "wilson":
        return f"from {intervals.MIN_UNITS} units"
    return f"from {minimum_units(method)} units, when the case values are not all equal"


_FORMULA = {
    "auto": "the two rows below",
    "wilson": "continuity-corrected Wilson score interval (Newcombe 1998, method 4) at n* = min(n_eff, "
    "max_effective_n) · (z/t_{U-1})², n_eff = N/deff (Kish; Korn & Graubard 1998), capped at the number of "
    f"units below {intervals.DESIGN_EFFECT_FROM_UNITS} units (Bhatia-Davis bound); n* = min(units, "
    "max_effective_n) when the case values do not vary",
    "bootstrap": "BCa bootstrap over units (Efron 1987), seeded",
    "clt": "p̂ ± z·SE, SE of Miller (2024) eq. 1, or eq. 4 with groups",
}


def worst_cells(results: Sequence[CellResult]) -> dict[str, CellResult]:
    """The offered cell with the lowest coverage, per method."""
    worst: dict[str, CellResult] = {}
    for r in results:
        if r.coverage is None:
            continue
        if r.method not in worst or r.coverage < (worst[r.method].coverage or 1.0):
            worst[r.method] = r
    return worst


def _lowest(results: Sequence[CellResult], method: str, keep: Callable[[CellResult], bool]) -> str:
    """Lowest offered coverage of ``method`` over the kept cells, or the lowest what-if in parentheses."""
    cells = [r for r in results if r.method == method and keep(r)]
    offered = [r.coverage for r in cells if r.coverage is not None]
    if offered:
        return _flag(min(offered))
    whatif = [r.whatif_coverage for r in cells if r.whatif_coverage is not None]
    return f"({_pct(min(whatif))})" if whatif else "–"


def _coverage(r: CellResult) -> float | None:
    """Offered coverage, else the what-if coverage."""
    return r.coverage if r.coverage is not None else r.whatif_coverage


def _min_cell(results: Sequence[CellResult], method: str, keep: Callable[[CellResult], bool]) -> CellResult | None:
    cells = [r for r in results if r.method == method and keep(r) and _coverage(r) is not None]
    return min(cells, key=lambda r: _coverage(r) or 0.0) if cells else None


def _where(r: CellResult | None) -> str:
    if r is None:
        return "–"
    units = "" if r.n_units == r.n_cases else f" ({r.n_units} groups)"
    return f"{_pct(_coverage(r))}% ({r.scenario}, N={r.n_cases}{units}, p={r.true_value:g})"


def _threshold_text(results: Sequence[CellResult], method: str, threshold: int) -> str:
    """'falls to X at the largest unit count below the threshold, Y anywhere below; Z from it'."""
    below_units = [r.n_units for r in results if r.method == method and r.n_units < threshold]
    if not below_units:
        return f"has its lowest cell at {_where(_min_cell(results, method, lambda r: True))}"
    last = max(below_units)
    at_last = _min_cell(results, method, lambda r: r.n_units == last)
    anywhere = _min_cell(results, method, lambda r: r.n_units < threshold)
    above = _min_cell(results, method, lambda r: r.n_units >= threshold)
    close = ""
    if at_last is not None and (coverage := _coverage(at_last)) is not None and coverage >= FLOOR:
        count = at_last.offered or at_last.whatif_computed
        sigmas = (coverage - FLOOR) / math.sqrt(FLOOR * (1 - FLOOR) / count)
        close = f", {sigmas:.1f} Monte-Carlo standard errors above the floor: too close to rely on"
    return (
        f"falls to {_where(at_last)} at {last} units{close} (to {_where(anywhere)} below {threshold} units) "
        f"and its lowest cell from {threshold} units is {_where(above)}"
    )


def _rule_breaks(results: Sequence[CellResult]) -> int:
    """Cells whose refusals differ from the rules (must be 0)."""
    breaks = 0
    for r in results:
        if r.method in ("auto", "wilson"):
            breaks += r.offered != r.reps
        elif r.method in ("bootstrap", "clt"):
            if r.n_units < minimum_units(r.method):
                breaks += (r.offered, r.refused_not_offered) != (0, r.reps)
            else:
                breaks += (r.refused_not_offered, r.refused_constant, r.offered) != (0, r.constant, r.reps - r.constant)
    return breaks


def _span(results: Sequence[CellResult], keep: Callable[[CellResult], bool]) -> str:
    """'lo-hi%' of the offered coverage over the kept cells."""
    values = [r.coverage for r in results if keep(r) and r.coverage is not None]
    return f"{_pct(min(values))}-{_pct(max(values))}%" if values else "–"


def _mean_width(results: Sequence[CellResult], scenario: str, n_cases: int) -> float | None:
    """Mean width of ``auto`` over the true values of one scenario and N."""
    widths = [r.mean_width for r in results if r.method == "auto" and r.scenario == scenario and r.n_cases == n_cases]
    return float(np.mean(widths)) if widths else None


def _findings(results: Sequence[CellResult]) -> list[str]:
    """The numbers behind each rule, read from the results."""
    methods = {r.method for r in results}
    lines = []
    if "wilson (before)" in methods:
        lines.append(
            "- **Wilson, before**: the uncorrected score interval at n_eff = p̂(1-p̂)/SE² fell to "
            f"{_where(_min_cell(results, 'wilson (before)', lambda r: True))}: Wilson's own dips for small N "
            "(exact binomial coverage 91.4% at N=10, p=0.05), an n_eff of N-1 for 0/1 cases, and an estimated "
            "design effect that few units cannot support. Fixed by the continuity correction (Newcombe 1998), "
            "Korn & Graubard's degrees-of-freedom factor and the cap at the number of units."
        )
    u_d = intervals.DESIGN_EFFECT_FROM_UNITS
    if "wilson (design effect at every N)" in methods:
        lines.append(
            "- **Estimated design effect**: trusted at every N, the new Wilson interval "
            + _threshold_text(results, "wilson (design effect at every N)", u_d)
            + f": `DESIGN_EFFECT_FROM_UNITS = {u_d}`."
        )
    for method, minimum in (("bootstrap", intervals.MIN_CASES_BOOTSTRAP), ("clt", intervals.MIN_CASES_CLT)):
        name = "BCa bootstrap" if method == "bootstrap" else "CLT (Miller 2024)"
        constant = "MIN_CASES_BOOTSTRAP" if method == "bootstrap" else "MIN_CASES_CLT"
        lines.append(
            f"- **{name}**, had it been offered everywhere, "
            + _threshold_text(results, method, minimum)
            + f": `{constant} = {minimum}`."
        )
    if "bootstrap (percentile, before)" in methods:
        lines.append(
            "- **Percentile bootstrap, before**: as low as "
            f"{_where(_min_cell(results, 'bootstrap (percentile, before)', lambda r: True))}; "
            "BCa replaces it (it corrects the skew of pass^k near 0 and 1), and it is still not offered below "
            f"{intervals.MIN_CASES_BOOTSTRAP} units."
        )
    auto = _min_cell(results, "auto", lambda r: r.n_cases in CASE_COUNTS)
    beyond = _min_cell(results, "auto", lambda r: r.n_cases not in CASE_COUNTS)
    small = _min_cell(results, "auto", lambda r: r.n_cases == min(CASE_COUNTS))
    lines.append(
        f"- **auto**: lowest cell of the issue's grid {_where(auto)}"
        + (f", beyond it {_where(beyond)}" if beyond else "")
        + f"; at N={min(CASE_COUNTS)}, {_where(small)}. No cell is out of reach for every method: with few "
        "units the interval is wide (see the widths below) but offered from 2 units on. "
        f"`CLT_FROM_CASES = {intervals.CLT_FROM_CASES}` keeps `auto` on the score interval until the CLT is "
        "past its own threshold with a margin."
    )
    example = ""
    below_d = max((n for n in CASE_COUNTS if n < u_d), default=None)
    narrow = _mean_width(results, "pass^1, 4 trials", u_d)
    wide = _mean_width(results, "pass^1, 4 trials", below_d) if below_d is not None else None
    if narrow is not None and wide is not None:
        example = f" (pass^1 of 4 trials: mean width {wide:.3f} at N={below_d}, {narrow:.3f} at N={u_d})"
    lines.append(
        f"- **The price**: below {u_d} units the Wilson interval lets no unit count for more than one "
        "Bernoulli observation, so for cases with several trials and little spread it is wider than the "
        f"estimated design effect would make it, and it narrows sharply when the sample reaches {u_d} units"
        f"{example}; `auto` covers {_span(results, lambda r: r.method == 'auto' and r.n_units < u_d)} below "
        f"{u_d} units. A smoother transition would need its own evidence."
    )
    return lines


def render_markdown(
    results: Sequence[CellResult],
    *,
    reps: int,
    seed: int,
    n_resamples: int,
    elapsed: float,
    command: str,
    date: str,
) -> str:
    """``docs/coverage.md``: the rules, the worst cells, the minima per N, and every cell."""
    methods = list(dict.fromkeys(r.method for r in results))
    offered_methods = [m for m in methods if m not in DIAGNOSTICS]
    scenarios = [s for s in SCENARIOS if any(r.scenario == s.name for r in results)]
    ns = sorted({r.n_cases for r in results})
    units = sorted({r.n_units for r in results})
    ps = sorted({r.true_value for r in results})
    se_at_floor = math.sqrt(FLOOR * (1 - FLOOR) / reps)
    grid = [n for n in ns if n in CASE_COUNTS]
    extension = [n for n in ns if n not in CASE_COUNTS]
    lines = [
        "# Coverage of the case-mean interval methods",
        "",
        "<!-- generated by benchmarks/coverage_simulation.py; edit the script, not this file -->",
        "",
        "Every interval method of `gatestats.estimators.case_mean_interval`, at nominal 95%, on simulated "
        "evaluations with a known true value. The issue's rule: a method under 93% anywhere is fixed or not "
        "offered there. This file records the evidence for the rules in "
        "`src/gatestats/estimators/intervals.py`.",
        "",
        f"- **Generated** {date} by `{command}` in {elapsed / 60:.0f} min "
        f"(Python {platform.python_version()}, numpy {np.__version__}).",
        f"- **Seed** {seed}; every cell has its own generator, derived from the seed and the cell's position.",
        f"- **Replications** {reps} per cell; the Monte-Carlo standard error of a coverage near 93% is "
        f"{100 * se_at_floor:.2f} points. Bootstrap resamples: {n_resamples}.",
        f"- **Grid**: N = {', '.join(map(str, grid))} cases"
        + (f" (and {', '.join(map(str, extension))} for `auto`, `wilson`, `clt`)" if extension else "")
        + f" × true value p = {', '.join(f'{p:g}' for p in ps)}, in {len(scenarios)} scenarios (below).",
        '- **Counting**: coverage is the share of *offered* replications (`status == "ok"`) whose '
        "interval contains the true value. Refusals (`insufficient_evidence`) count neither way; `·rNN` "
        "is the percentage of replications refused (case values all equal, for `clt` and `bootstrap`). "
        "`(xx.x)`: not offered at this N, and the coverage the method would have had (the evidence for "
        "its threshold). **Bold**: under 93%.",
        "- **Units**: thresholds count independent units U, i.e. cases, or groups for clustered data "
        "(N/5 in the clustered scenarios).",
        "",
        "## Rules",
        "",
        "| method | offered | interval |",
        "|---|---|---|",
    ]
    lines += [f"| `{m}` | {_offered_rule(m)} | {_FORMULA.get(m, '')} |" for m in offered_methods]
    lines += [
        "",
        "Every method also refuses fewer than 2 units. No offered interval has zero width (checked for every "
        "replication, see the end).",
        "",
        "## Findings",
        "",
        *_findings(results),
        "",
        "## Worst offered cell per method",
        "",
        "| method | coverage | scenario | N | units | p |",
        "|---|---|---|---|---|---|",
    ]
    for m, r in worst_cells(results).items():
        lines.append(f"| `{m}` | {_pct(r.coverage)} | {r.scenario} | {r.n_cases} | {r.n_units} | {r.true_value:g} |")
    lines += [
        "",
        "## Lowest coverage per number of independent units",
        "",
        "Over every scenario and true value with that many units (cases, or groups). Parentheses: the method "
        "is not offered there, and the lowest coverage it would have had. *Comparison* rows are never "
        "offered: the rules in force before this simulation (`wilson (before)`: uncorrected Wilson at "
        "n_eff = p̂(1-p̂)/SE²; `bootstrap (percentile, before)`), and the new Wilson without the cap at the "
        "number of units (`wilson (design effect at every N)`), the evidence for `DESIGN_EFFECT_FROM_UNITS`.",
        "",
        "| method | " + " | ".join(f"U={u}" for u in units) + " |",
        "|---|" + "---|" * len(units),
    ]
    for m in methods:
        label = f"`{m}`" if m not in DIAGNOSTICS else f"{m} *(comparison)*"
        row = [_lowest(results, m, lambda r, u=u: r.n_units == u) for u in units]
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    widths = [r for r in results if r.method == "auto" and r.offered]
    lines += [
        "",
        "## Mean width of the `auto` interval",
        "",
        "Averaged over the true values (the price of the rules: wide where few units are known).",
        "",
        "| scenario | " + " | ".join(f"N={n}" for n in ns) + " |",
        "|---|" + "---|" * len(ns),
    ]
    for s in scenarios:
        row = []
        for n in ns:
            cells = [r.mean_width for r in widths if r.scenario == s.name and r.n_cases == n]
            row.append(f"{np.mean(cells):.3f}" if cells else "–")
        lines.append(f"| {s.name} | " + " | ".join(row) + " |")
    lines += ["", "## Scenarios", ""]
    lines += [f"- **{s.name}**: {s.description}." for s in scenarios]
    lines += [
        "",
        "The true value is E[θ^k] (pass^k) or E[1 - (1 - θ)^k] (pass@k), set to p by solving for the mean "
        "of θ. pass^k with k equal to the number of trials (e.g. pass^4 of 4 trials) is the indicator that "
        "all trials passed: its case values are i.i.d. Bernoulli(p) whatever the heterogeneity, i.e. the "
        "`proportion` scenario. `max_effective_n` is trials × N / k, as `analyze` passes it.",
        "",
        "## Coverage per cell (%)",
    ]
    header = "| method | N | " + " | ".join(f"p={p:g}" for p in ps) + " |"
    rule = "|---|---|" + "---|" * len(ps)
    for s in scenarios:
        lines += ["", f"### {s.name}", "", header, rule]
        for m in offered_methods:
            for n in ns:
                cells = {r.true_value: r for r in results if r.scenario == s.name and r.method == m and r.n_cases == n}
                if not cells:
                    continue
                n_units = next(iter(cells.values())).n_units
                n_label = f"{n}" if n_units == n else f"{n} ({n_units} groups)"
                lines.append(f"| `{m}` | {n_label} | " + " | ".join(_cell_text(cells[p]) for p in ps) + " |")
    offered_total = sum(r.offered for r in results)
    lines += [
        "",
        "## Checks",
        "",
        f"- Offered intervals: {offered_total:,}; with zero width or not containing their estimate: "
        f"{sum(r.violations for r in results)}.",
        f"- Bootstrap refusals for a degenerate bootstrap distribution: {sum(r.refused_degenerate for r in results)}.",
        "- Refusals by rule: `clt` and `bootstrap` refuse every replication below their minimum number of "
        "units and, from there on, exactly the replications whose case values are all equal; `auto` and "
        f"`wilson` never refuse. Cells where this does not hold: {_rule_breaks(results)} "
        "(`tests/estimators/test_coverage_simulation.py` asserts the same on a smaller re-run).",
        "",
    ]
    return "\n".join(lines)


def save_results(results: Sequence[CellResult], path: Path, **meta: object) -> None:
    """Write the cell results and the run's metadata as JSON (to re-render without re-simulating)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"meta": meta, "cells": [asdict(r) for r in results]}), encoding="utf-8")


def load_results(path: Path) -> tuple[list[CellResult], dict[str, object]]:
    """Read what :func:`save_results` wrote: the cells and the metadata."""
    data = json.loads(path.read_text(encoding="utf-8"))
    return [CellResult(**row) for row in data["cells"]], data["meta"]


def main(argv: Sequence[str] | None = None) -> int:
    """Simulate (or re-render with ``--render-only``) and write the markdown report."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--reps", type=int, default=2000, help="replications per cell (default 2000)")
    parser.add_argument("--seed", type=int, default=20241130, help="seed of the whole simulation")
    parser.add_argument("--resamples", type=int, default=2000, help="bootstrap resamples (default 2000)")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="worker processes")
    parser.add_argument("--out", type=Path, default=ROOT / "docs" / "coverage.md", help="markdown report")
    parser.add_argument("--diagnostics", action="store_true", help="also simulate the comparison variants")
    parser.add_argument("--no-extension", action="store_true", help="only the issue's grid (N <= 1000)")
    parser.add_argument(
        "--results", type=Path, default=ROOT / "benchmarks" / "_data" / "coverage_results.json",
        help="raw cell results (JSON, git-ignored directory)",
    )  # fmt: skip
    parser.add_argument("--render-only", action="store_true", help="re-render --out from --results")
    args = parser.parse_args(argv)
    if args.render_only:
        results, meta = load_results(args.results)
    else:
        methods: tuple[str, ...] = METHODS + (DIAGNOSTICS if args.diagnostics else ())
        counts = CASE_COUNTS if args.no_extension else _ALL_CASE_COUNTS
        start = time.perf_counter()
        results = simulate(
            reps=args.reps, seed=args.seed, n_resamples=args.resamples, methods=methods, jobs=args.jobs,
            case_counts=counts,
        )  # fmt: skip
        flags = [f"--reps {args.reps}", f"--seed {args.seed}", f"--resamples {args.resamples}"]
        flags += ["--diagnostics"] * args.diagnostics + ["--no-extension"] * args.no_extension
        meta = {
            "reps": args.reps,
            "seed": args.seed,
            "n_resamples": args.resamples,
            "elapsed": time.perf_counter() - start,
            "command": "python benchmarks/coverage_simulation.py " + " ".join(flags),
            "date": dt.date.today().isoformat(),
        }
        save_results(results, args.results, **meta)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(render_markdown(results, **meta), encoding="utf-8")  # type: ignore[arg-type]
    for m, r in worst_cells(results).items():
        print(f"{m:10s} worst {_pct(r.coverage)}% at {r.scenario}, N={r.n_cases}, p={r.true_value:g}")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
