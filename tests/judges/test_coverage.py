"""Coverage of the corrected-pass-rate interval (Lang-Reiczigel), simulated; table in docs/judges.md.

Each cell: a judge with sensitivity ``se`` and specificity ``sp``, a calibration set with ``n_se``
labelled passes and ``n_sp`` labelled fails, a production sample of ``n`` items whose true pass
rate is ``pi``. Every replicate draws the three binomial counts and computes the interval with the
engine of :func:`gatestats.judges.corrected_pass_rate`. Coverage is counted over the replicates
that return an interval; replicates whose calibration shows a Youden index <= 0 (an error) or that
return "insufficient evidence" are reported as the refusal share.

``python -m tests.judges.test_coverage`` prints the tables of ``docs/judges.md``, including the
comparison with a plug-in parametric bootstrap (not offered, for the reason shown there).
"""

from __future__ import annotations

import itertools
import time

import numpy as np
import polars as pl
import pytest
from scipy import stats

from gatestats.judges.correction import OK, lang_reiczigel_batch
from tests.simulations import reps

CALIBRATION_SETS = {
    "50 items (25 pass / 25 fail)": (25, 25),
    "50 items (35 pass / 15 fail)": (35, 15),
    "50 items (40 pass / 10 fail)": (40, 10),
    "500 items (250 pass / 250 fail)": (250, 250),
    "2000 items (1000 pass / 1000 fail)": (1000, 1000),
}
SENSITIVITY = (0.8, 0.9, 0.98)
SPECIFICITY = (0.7, 0.85, 0.95)
TRUE_PASS_RATE = (0.05, 0.2, 0.5, 0.8, 0.95)
PRODUCTION_N = (100, 1000)
#: Unchanged in session 41 (the test's own simulation; ~2 CPU-s).
REPLICATES = reps(suite=20_000, full=20_000)
SEED = 20240607


def simulate(replicates: int = REPLICATES, seed: int = SEED, confidence_level: float = 0.95) -> pl.DataFrame:
    """One row per cell: coverage among returned intervals, refusal share, mean width."""
    rng = np.random.default_rng(seed)
    rows = []
    for (label, (n_se, n_sp)), se, sp, pi, n in itertools.product(
        CALIBRATION_SETS.items(), SENSITIVITY, SPECIFICITY, TRUE_PASS_RATE, PRODUCTION_N
    ):
        apparent = se * pi + (1 - sp) * (1 - pi)
        k = rng.binomial(n, apparent, replicates)
        x_se = rng.binomial(n_se, se, replicates)
        x_sp = rng.binomial(n_sp, sp, replicates)
        _, low, high, code = lang_reiczigel_batch(k, n, x_se, n_se, x_sp, n_sp, confidence_level=confidence_level)
        ok = code == OK
        covered = (low <= pi) & (pi <= high) & ok
        rows.append(
            {
                "calibration": label, "n_se": n_se, "n_sp": n_sp, "se": se, "sp": sp, "pi": pi, "n": n,
                "coverage": covered.sum() / max(ok.sum(), 1), "coverage_refusals_as_misses": covered.mean(),
                "refused": 1 - ok.mean(), "mean_width": float(np.mean((high - low)[ok])) if ok.any() else None,
            }
        )  # fmt: skip
    return pl.DataFrame(rows)


def summary(cells: pl.DataFrame) -> pl.DataFrame:
    """Per calibration-set size and production n: min and mean coverage, refusal share, width."""
    return (
        cells.group_by("calibration", "n", maintain_order=True)
        .agg(
            cells=pl.len(),
            min_coverage=pl.col("coverage").min(),
            mean_coverage=pl.col("coverage").mean(),
            min_coverage_refusals_as_misses=pl.col("coverage_refusals_as_misses").min(),
            max_refused=pl.col("refused").max(),
            median_width=pl.col("mean_width").median(),
        )
        .sort("n", maintain_order=True)
    )


def plug_in_bootstrap(replicates: int = 1000, resamples: int = 1000, seed: int = SEED) -> pl.DataFrame:
    """Coverage of the plug-in parametric percentile bootstrap over the three samples (not offered)."""
    rng = np.random.default_rng(seed)
    rows = []
    for (label, (n_se, n_sp)), se, sp, pi, n in itertools.product(
        list(CALIBRATION_SETS.items())[:1] + list(CALIBRATION_SETS.items())[3:4], (0.8, 0.95), (0.7, 0.98),
        (0.05, 0.5, 0.95), (100, 1000),
    ):  # fmt: skip
        apparent = se * pi + (1 - sp) * (1 - pi)
        k = rng.binomial(n, apparent, replicates)
        x_se, x_sp = rng.binomial(n_se, se, replicates), rng.binomial(n_sp, sp, replicates)
        usable = x_se / n_se + x_sp / n_sp - 1 > 0
        q = rng.binomial(n, (k / n)[:, None], (replicates, resamples)) / n
        s_e = rng.binomial(n_se, (x_se / n_se)[:, None], (replicates, resamples)) / n_se
        s_p = rng.binomial(n_sp, (x_sp / n_sp)[:, None], (replicates, resamples)) / n_sp
        youden = s_e + s_p - 1
        with np.errstate(divide="ignore", invalid="ignore"):
            draws = np.clip((q + s_p - 1) / youden, 0, 1)
        low = np.quantile(np.where(youden > 0, draws, 0.0), 0.025, axis=1)
        high = np.quantile(np.where(youden > 0, draws, 1.0), 0.975, axis=1)
        covered = ((low <= pi) & (pi <= high))[usable]
        rows.append({"calibration": label, "se": se, "sp": sp, "pi": pi, "n": n, "coverage": covered.mean()})
    return pl.DataFrame(rows)


@pytest.mark.simulation
def test_lang_reiczigel_interval_covers_at_least_94_percent() -> None:
    start = time.process_time()
    cells = simulate()
    assert cells.height == len(CALIBRATION_SETS) * 3 * 3 * 5 * 2
    small = cells.filter(pl.col("n_se") + pl.col("n_sp") == 50)
    large = cells.filter(pl.col("n_se") + pl.col("n_sp") >= 500)
    assert small.height
    assert large.height
    # Nominal 95%: at least 94% in every cell, small and large calibration sets alike.
    assert cells["coverage"].min() >= 0.94, cells.sort("coverage").head(5)
    assert small["coverage"].mean() >= 0.95
    # Refusals ("insufficient evidence", or a calibration whose Youden index is <= 0) stay rare.
    assert cells["refused"].max() < 0.02, cells.sort("refused", descending=True).head(5)
    assert time.process_time() - start < 120


if __name__ == "__main__":  # pragma: no cover - prints the tables of docs/judges.md
    pl.Config.set_tbl_rows(100)
    pl.Config.set_tbl_cols(20)
    pl.Config.set_tbl_width_chars(200)
    t0 = time.process_time()
    result = simulate()
    print(summary(result))
    print(result.sort("coverage").head(8))
    print(f"CPU {time.process_time() - t0:.1f}s")
    t0 = time.process_time()
    boot = plug_in_bootstrap()
    print(boot.group_by("calibration").agg(min=pl.col("coverage").min(), mean=pl.col("coverage").mean()))
    print(boot.sort("coverage").head(5))
    print(f"CPU {time.process_time() - t0:.1f}s", f"z={stats.norm.ppf(0.975):.3f}")
