"""PPI and PPI++ intervals cover at >= 1 - alpha - 2 SE over random labelled samples of real LLMBar judgments.

The simulation is ``benchmarks/ppi_coverage.py`` (design in its docstring; full size and results in
benchmarks/RESULTS.md and docs/judges.md); here at a reduced size: 150 replications per LLMBar
configuration (8) and size, seed 20261204, pooled over the configurations per size.
"""

from __future__ import annotations

import math
from types import ModuleType

import pytest

from tests.simulations import load_simulation, reps

#: Replications (unchanged in session 41; the script's default is 2,000).
LLMBAR_REPS = reps(suite=150, full=150)
SAMPLED_REPS = reps(suite=400, full=400)


def _benchmark() -> ModuleType:
    return load_simulation("ppi_coverage")


@pytest.mark.simulation
def test_ppi_intervals_cover_on_llmbar() -> None:
    bench = _benchmark()
    reps = LLMBAR_REPS
    cells = bench.simulate(reps=reps, sizes=(30, 100))
    methods = list(bench.METHODS)
    bar = 0.95 - 2 * math.sqrt(0.95 * 0.05 / (8 * reps))
    for n in (30, 100):
        part = [c for c in cells if c.n == n]
        pooled = {m: sum(c.cover[k] for c in part) / len(part) for k, m in enumerate(methods)}
        width = {m: sum(c.width[k] for c in part) / len(part) for k, m in enumerate(methods)}
        # what the item-level estimates use: PPI from 30 labels, PPI++ from 100 (MIN_LABELS_TUNED)
        assert pooled["PPI t"] >= bar, (n, pooled)
        if n >= 100:
            assert pooled["PPI++ t"] >= bar, (n, pooled)
            # the point of PPI++: narrower than the human labels alone
            assert width["PPI++ t"] < width["human"]
        assert sum(c.refused for c in part) == 0


@pytest.mark.slow
def test_weighted_design_covers_on_llmbar() -> None:
    """Labels drawn by the judge's verdict (Poisson sampling: 40% of its fails, 15% of its passes) from the
    466 items of LLMBar GPT-4 / Vanilla_NoRules; the estimand is their human pass rate (finite population).
    400 replications, seed 20261205: ppi_pass_rate(design="weighted") covers at >= 0.95 - 2 SE (measured:
    Horvitz-Thompson 0.95, PPI 0.99, PPI++ 0.99; mean widths 0.296, 0.182, 0.170 - the Poisson variance
    without finite-population correction is conservative)."""
    import numpy as np
    import polars as pl

    from gatestats.judges.ppi_items import ppi_pass_rate

    y, f = _benchmark().configurations()["GPT-4/Vanilla_NoRules"]
    rng = np.random.default_rng(20261205)
    pi = np.where(f == 1, 0.15, 0.40)
    ids = [str(i) for i in range(y.size)]
    judged = pl.DataFrame({"item": ids, "verdict": (f == 1).tolist(), "inclusion": pi.tolist()})
    reps, truth = SAMPLED_REPS, float(y.mean())
    hits = {"human-only": 0, "ppi": 0, "ppi++": 0}
    for _ in range(reps):
        chosen = np.flatnonzero(rng.random(y.size) < pi)
        labels = pl.DataFrame({"item": [ids[i] for i in chosen], "label": (y[chosen] == 1).tolist()})
        r = ppi_pass_rate(judged, labels, design="weighted")
        for e in (r.human_only, r.ppi, r.ppi_plus_plus):
            if e.ci_low is not None and e.ci_high is not None:
                hits[e.method] += e.ci_low <= truth <= e.ci_high
    bar = 0.95 - 2 * math.sqrt(0.95 * 0.05 / reps)
    assert hits["ppi"] / reps >= bar, hits
    assert hits["human-only"] / reps >= bar, hits
    # PPI++ answers only with 100 labels or more (about 117 expected here): a refusal counts as a miss
    assert hits["ppi++"] / reps >= bar, hits
