"""Label budgets: formulas, the pppower worked example, allocation, the stratified mean, hostile input."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from scipy import stats

from gatestats.judges.budget import (
    PilotMoments,
    allocate_labels,
    binary_judge_moments,
    labels_for_half_width,
    labels_for_power,
    pilot_moments,
    power,
    standard_error,
    stratified_mean,
    stratum_deviations,
)
from gatestats.judges.ppi_items import ppi_pass_rate

# Chen, Guo & Li (2026), R package pppower, vignette "Real Data: LLM-as-a-Judge (Binary Surrogates)"
# (articles/llm-judge-binary.md): p = 0.236, sens = 0.25, spec = 0.875, N = 5000, delta = 0.05.
#   power_eif_binary(delta = 0.05, N = 5000, m_cal = NULL, power = 0.80, ...)  -> 556
#   power at m_cal = 100, 250, 556                                             -> 0.2215246, 0.4686672, 0.8005491
#   with mu0 = 0.05, mu1 = 0.55, p_hat = 0.16 at m_cal = 556 -> 0.9832705, theta 0.13,
#   var_unlabeled 6.72e-06, var_cal 0.0001429856
# Their EIF estimator for a pass/fail judge is PPI with lambda = Cov(Y, f)/Var(f) (moments.slope).
PPPOWER = binary_judge_moments(prevalence=0.236, sensitivity=0.25, specificity=0.875)


def test_pppower_required_labels() -> None:
    n = labels_for_power(PPPOWER, delta=0.05, target_power=0.8, n_unlabelled=5000, lam=PPPOWER.slope)
    assert n == 556


@pytest.mark.parametrize(("m", "expected"), [(100, 0.2215246), (250, 0.4686672), (556, 0.8005491)])
def test_pppower_power_table(m: int, expected: float) -> None:
    got = power(PPPOWER, delta=0.05, n_labels=m, n_unlabelled=5000, lam=PPPOWER.slope)
    assert got == pytest.approx(expected, abs=5e-7)


def test_pppower_conditional_means_variance_pieces() -> None:
    """mu0 = E[Y | f = 0] = 0.05, mu1 = 0.55, P(f = 1) = 0.16: theta 0.13, the two variance pieces, power."""
    q, mu0, mu1 = 0.16, 0.05, 0.55
    theta = (1 - q) * mu0 + q * mu1
    moments = PilotMoments(
        mean_label=theta,
        var_label=theta * (1 - theta),
        var_prediction=q * (1 - q),
        covariance=q * mu1 - theta * q,
        n_pilot=None,
        note=None,
    )
    assert theta == pytest.approx(0.13)
    imputed = moments.slope**2 * moments.var_prediction / 5000
    assert imputed == pytest.approx(6.72e-06, rel=1e-9)
    se = standard_error(moments, n_labels=556, n_unlabelled=5000, lam=moments.slope)
    assert se**2 - imputed == pytest.approx(0.0001429856, rel=1e-7)
    assert power(moments, delta=0.05, n_labels=556, n_unlabelled=5000, lam=moments.slope) == pytest.approx(
        0.9832705, abs=5e-7
    )


def test_human_only_is_the_textbook_formula() -> None:
    """n = ceil((z sigma / h)^2): sigma^2 = 0.25, h = 0.05, z = 1.959964 -> 384.1 -> 385."""
    m = binary_judge_moments(prevalence=0.5, sensitivity=0.9, specificity=0.9)
    assert labels_for_half_width(m, half_width=0.05, method="human-only") == 385
    z = stats.norm.ppf(0.975)
    assert math.ceil((z * 0.5 / 0.05) ** 2) == 385


def test_ppi_needs_fewer_labels_and_matches_its_closed_form() -> None:
    m = binary_judge_moments(prevalence=0.5, sensitivity=0.9, specificity=0.9)
    human = labels_for_half_width(m, half_width=0.05, method="human-only")
    ppi = labels_for_half_width(m, half_width=0.05, method="ppi")
    plus = labels_for_half_width(m, half_width=0.05, method="ppi++")
    assert human is not None
    assert ppi is not None
    assert plus is not None
    assert plus <= ppi < human
    # classical PPI with N unlimited: n = (z sigma_{Y-f} / h)^2, sigma^2_{Y-f} = P(Y != f) = 0.1
    z = stats.norm.ppf(0.975)
    assert ppi == math.ceil(z * z * 0.1 / 0.05**2)
    # PPI++ with N unlimited: (z sigma_Y / h)^2 (1 - rho^2), rho = 0.8
    assert plus == math.ceil(z * z * 0.25 * (1 - 0.64) / 0.05**2)


def test_unreachable_with_few_unlabelled_items() -> None:
    """Classical PPI's imputed term lambda^2 var(f)/N does not shrink with labels."""
    m = binary_judge_moments(prevalence=0.5, sensitivity=0.9, specificity=0.9)
    assert labels_for_half_width(m, half_width=0.01, n_unlabelled=50, method="ppi") is None


def test_the_budget_reaches_its_width_in_simulation() -> None:
    """Labels chosen by the budget: the PPI++ interval's mean half-width is near the target (seed 4)."""
    rng = np.random.default_rng(4)
    n_big = 20000
    truth = rng.random(n_big) < 0.4
    verdict = np.where(rng.random(n_big) < 0.15, ~truth, truth)
    pilot = rng.choice(n_big, 60, replace=False)
    moments = pilot_moments(truth[pilot], verdict[pilot])
    n = labels_for_half_width(moments, half_width=0.04, n_unlabelled=n_big, method="ppi")
    assert n is not None
    halves = []
    for _ in range(30):
        pick = rng.choice(n_big, n, replace=False)
        judged = pl.DataFrame({"item": np.arange(n_big).astype(str), "verdict": verdict.tolist()})
        labels = pl.DataFrame({"item": pick.astype(str), "label": truth[pick].tolist()})
        r = ppi_pass_rate(judged, labels)
        assert r.ppi.ci_high is not None
        assert r.ppi.ci_low is not None
        halves.append((r.ppi.ci_high - r.ppi.ci_low) / 2)
    assert float(np.mean(halves)) == pytest.approx(0.04, rel=0.2)


def test_neyman_allocation_and_matching_estimator() -> None:
    """Strata by verdict: Neyman puts labels where the labels vary; the stratified mean covers the truth."""
    rng = np.random.default_rng(9)
    n_big = 5000
    verdict = rng.random(n_big) < 0.7
    truth = np.where(verdict, rng.random(n_big) < 0.95, rng.random(n_big) < 0.5)  # passes are reliable
    pilot = rng.choice(n_big, 80, replace=False)
    sd = stratum_deviations(["pass" if v else "fail" for v in verdict[pilot]], truth[pilot])
    sizes = {"pass": int(verdict.sum()), "fail": int((~verdict).sum())}
    ney = allocate_labels(sizes, sd, n_labels=300, scheme="neyman")
    prop = allocate_labels(sizes, sd, n_labels=300, scheme="proportional")
    assert sum(ney.labels) == sum(prop.labels) == 300
    assert (
        dict(zip(ney.strata, ney.labels, strict=True))["fail"]
        > dict(zip(prop.strata, prop.labels, strict=True))["fail"]
    )
    assert ney.half_width < prop.half_width
    assert ney.inclusion == tuple(n / b for n, b in zip(ney.labels, ney.sizes, strict=True))
    # draw as allocated and estimate with the matching estimator, and with IPW-weighted PPI
    drawn = {
        h: rng.choice(np.flatnonzero(verdict == (h == "pass")), n, replace=False)
        for h, n in zip(ney.strata, ney.labels, strict=True)
    }
    est = stratified_mean(sizes, {h: truth[idx] for h, idx in drawn.items()})
    assert est.ci_low is not None
    assert est.ci_high is not None
    assert est.ci_low < truth.mean() < est.ci_high
    pi = np.where(verdict, ney.inclusion[ney.strata.index("pass")], ney.inclusion[ney.strata.index("fail")])
    judged = pl.DataFrame({"item": np.arange(n_big).astype(str), "verdict": verdict.tolist(), "inclusion": pi})
    chosen = np.concatenate(list(drawn.values()))
    labels = pl.DataFrame({"item": chosen.astype(str), "label": truth[chosen].tolist()})
    r = ppi_pass_rate(judged, labels, design="weighted")
    assert r.ppi.estimate == pytest.approx(est.estimate, abs=1e-12)  # same point estimate
    assert r.ppi.ci_low is not None
    assert r.ppi.ci_high is not None
    assert r.ppi.ci_high - r.ppi.ci_low >= est.ci_high - est.ci_low  # the IPW variance is the conservative one


def test_floors_for_degenerate_pilots() -> None:
    sd = stratum_deviations(["pass", "pass", "fail"], [1, 1, 0])
    assert sd["pass"] > 0
    assert sd["fail"] > 0
    m = pilot_moments([1, 1, 1], [1, 0, 1])
    assert m.var_label > 0
    assert m.note is not None
    est = stratified_mean({"a": 10, "b": 5}, {"a": [1] * 10, "b": [0] * 5})
    assert est.ci_high is not None
    assert est.ci_low is not None
    assert est.ci_high - est.ci_low > 0
    assert est.note is not None


@pytest.mark.parametrize(
    ("call", "match"),
    [
        (lambda: pilot_moments([1, float("nan")], [1, 0]), "not a finite number"),
        (lambda: pilot_moments([1, 2], [1, 0]), "not 0 or 1"),
        (lambda: pilot_moments([1], [1]), "at least 2"),
        (lambda: binary_judge_moments(prevalence=1.2, sensitivity=0.9, specificity=0.9), "prevalence"),
        (lambda: allocate_labels({"a": 0, "b": 10}, {"a": 0.5, "b": 0.5}, n_labels=5), "empty strata"),
        (lambda: allocate_labels({"a": 10}, {"b": 0.5}, n_labels=5), "standard deviation"),
        (lambda: allocate_labels({"a": 10}, {"a": float("nan")}, n_labels=5), "standard deviation"),
        (lambda: allocate_labels({"a": 10}, {"a": 0.5}, n_labels=11), "n_labels"),
        (lambda: allocate_labels({}, {}, n_labels=11), "no strata"),
        (lambda: stratified_mean({"a": 10}, {"b": [1, 0]}), "same strata"),
        (lambda: stratified_mean({"a": 1}, {"a": [1, 0]}), "need 2 to 1"),
        (lambda: stratum_deviations(["a"], [1, 0]), "differ in length"),
        (lambda: labels_for_half_width(PPPOWER, half_width=0.0), "half_width"),
        (lambda: labels_for_half_width(PPPOWER, half_width=float("nan")), "half_width"),
        (lambda: labels_for_power(PPPOWER, delta=0.05, target_power=1.0), "target_power"),
        (lambda: standard_error(PPPOWER, n_labels=0), "n_labels"),
    ],
)
def test_hostile(call: object, match: str) -> None:
    with pytest.raises(ValueError, match=match):
        call()  # type: ignore[operator]


def test_allocation_caps_a_small_stratum() -> None:
    a = allocate_labels({"fail": 5, "pass": 1000}, {"fail": 0.5, "pass": 0.01}, n_labels=100, scheme="neyman")
    assert dict(zip(a.strata, a.labels, strict=True)) == {"fail": 5, "pass": 95}
    assert a.inclusion[0] == 1.0
