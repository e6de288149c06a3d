"""Rogan-Gladen correction: epiR's examples, the Lang-Reiczigel interval, unusable judges."""

from __future__ import annotations

from dataclasses import dataclass
from math import sqrt

import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import norm

from gatestats.judges import (
    JudgeUnusableError,
    Proportion,
    corrected_pass_rate,
    corrected_pass_rate_known,
    proportion,
    rogan_gladen,
)


@dataclass(frozen=True)
class Calibration:
    false_pass_rate: Proportion
    false_fail_rate: Proportion


def calibration(x_se: int, n_se: int, x_sp: int, n_sp: int) -> Calibration:
    """A calibration whose judge passed ``x_se`` of ``n_se`` labelled passes and failed ``x_sp`` of ``n_sp`` fails."""
    return Calibration(
        false_pass_rate=proportion(n_sp - x_sp, n_sp, undefined_reason="no labelled fails"),
        false_fail_rate=proportion(n_se - x_se, n_se, undefined_reason="no labelled passes"),
    )


def test_rogan_gladen_matches_epir_brucellosis_example() -> None:
    # epiR::epi.prev documentation: 23 of 150 cows positive, Se 0.96, Sp 0.89: "The estimated true
    # prevalence of brucellosis in this herd is 5.1 cases per 100 cows (95% CI 0 -- 13 ...)". epiR
    # used Blaker's interval there; the Clopper-Pearson limits agree at the published precision.
    assert round(100 * rogan_gladen(23 / 150, sensitivity=0.96, specificity=0.89), 1) == 5.1
    r = corrected_pass_rate_known(23, 150, sensitivity=0.96, specificity=0.89)
    assert r.ci_low is not None
    assert r.ci_high is not None
    assert (round(100 * r.ci_low), round(100 * r.ci_high)) == (0, 13)


def test_known_accuracy_matches_epir_helicobacter_example() -> None:
    # epiR::epi.prev(pos = 6, tested = 151, se = 0.964, sp = 0.927, method = "c-p"): "0 cases per
    # 100 (95% 0 -- 1.3 cases per 100)" (Moujaber et al. 2008).
    r = corrected_pass_rate_known(6, 151, sensitivity=0.964, specificity=0.927)
    assert r.estimate == 0.0
    assert r.estimate_untruncated is not None
    assert r.estimate_untruncated < 0
    assert r.ci_low == 0.0
    assert r.ci_high is not None
    assert round(100 * r.ci_high, 1) == 1.3
    assert r.method == "known-accuracy"


def _lang_reiczigel_script(k: int, n: int, ksens: int, nsens: int, kspec: int, nspec: int) -> tuple[float, float]:
    """Transcription of Reiczigel's R function CI_Binom (CI4TruePrevalence_15_03_2013.r), line by line."""
    zcrit = norm.ppf((1 + 0.95) / 2)
    plus = 2
    nprev_, kprev_ = n + zcrit**2, k + zcrit**2 / 2
    nsens_, ksens_ = nsens + plus, ksens + plus / 2
    nspec_, kspec_ = nspec + plus, kspec + plus / 2
    obs_prev_, obs_sens_, obs_spec_ = kprev_ / nprev_, ksens_ / nsens_, kspec_ / nspec_
    est_prev_ = (obs_prev_ + obs_spec_ - 1) / (obs_sens_ + obs_spec_ - 1)
    youden_ = obs_sens_ + obs_spec_ - 1
    se_est_prev_ = sqrt(
        obs_prev_ * (1 - obs_prev_) / nprev_
        + obs_sens_ * (1 - obs_sens_) / nsens_ * est_prev_**2
        + obs_spec_ * (1 - obs_spec_) / nspec_ * (1 - est_prev_) ** 2
    ) / abs(youden_)
    dprev = (
        2
        * zcrit**2
        * (est_prev_ * obs_sens_ * (1 - obs_sens_) / nsens_ - (1 - est_prev_) * obs_spec_ * (1 - obs_spec_) / nspec_)
    )
    low = min(1, max(0, est_prev_ + dprev - zcrit * se_est_prev_))
    high = min(1, max(0, est_prev_ + dprev + zcrit * se_est_prev_))
    return low, high


@pytest.mark.parametrize(
    ("k", "n", "x_se", "n_se", "x_sp", "n_sp"),
    [
        (420, 1000, 90, 100, 90, 100),
        # The example datasets of the authors' script (after Reiczigel et al. 2010, Table 2):
        (27, 650, 50, 100, 199, 200),  # Vila Pouca, Se 0.5 on 100, Sp 0.995 on 200
        (12, 260, 50, 100, 199, 200),  # Mogadouro
        (30, 50, 20, 25, 22, 25),  # a 50-item calibration set
        (180, 200, 24, 25, 25, 25),  # no false passes observed
    ],
)
def test_lang_reiczigel_matches_the_authors_script(k: int, n: int, x_se: int, n_se: int, x_sp: int, n_sp: int) -> None:
    r = corrected_pass_rate(k, n, calibration=calibration(x_se, n_se, x_sp, n_sp))
    low, high = _lang_reiczigel_script(k, n, x_se, n_se, x_sp, n_sp)
    assert r.status == "ok"
    assert r.estimate is not None
    assert r.ci_low == pytest.approx(min(low, r.estimate), abs=1e-12)
    assert r.ci_high == pytest.approx(max(high, r.estimate), abs=1e-12)
    assert r.estimate == pytest.approx(min(1, max(0, (k / n + x_sp / n_sp - 1) / (x_se / n_se + x_sp / n_sp - 1))))
    assert (r.n_sensitivity, r.n_specificity, r.method) == (n_se, n_sp, "lang-reiczigel")


def test_interval_carries_calibration_uncertainty() -> None:
    # Same judge accuracy and production sample; a 20x smaller calibration set must widen the interval.
    small = corrected_pass_rate(500, 1000, calibration=calibration(45, 50, 45, 50))
    large = corrected_pass_rate(500, 1000, calibration=calibration(900, 1000, 900, 1000))
    known = corrected_pass_rate_known(500, 1000, sensitivity=0.9, specificity=0.9, interval="wilson")
    widths = [r.ci_high - r.ci_low for r in (small, large, known) if r.ci_high is not None and r.ci_low is not None]
    assert len(widths) == 3
    assert widths[0] > widths[1] > widths[2]


@pytest.mark.parametrize(("x_se", "x_sp"), [(50, 50), (40, 60), (30, 40)])
def test_youden_not_positive_is_an_error_not_a_number(x_se: int, x_sp: int) -> None:
    with pytest.raises(JudgeUnusableError, match=r"^the judge cannot be used for correction: Youden index"):
        corrected_pass_rate(40, 100, calibration=calibration(x_se, 100, x_sp, 100))
    with pytest.raises(JudgeUnusableError, match=r"\(expected > 0\)"):
        rogan_gladen(0.4, sensitivity=x_se / 100, specificity=x_sp / 100)


def test_missing_error_rate_gives_insufficient_evidence() -> None:
    r = corrected_pass_rate(40, 100, calibration=calibration(45, 50, 0, 0))
    assert (r.status, r.estimate, r.ci_low, r.ci_high) == ("insufficient_evidence", None, None, None)
    assert r.reason == "the calibration cannot correct: no labelled fails"


def test_apparent_rate_far_below_the_false_pass_rate_gives_insufficient_evidence() -> None:
    # The judge passes 30% of true fails, yet passed none of 5000 production items.
    r = corrected_pass_rate(0, 5000, calibration=calibration(900, 1000, 700, 1000))
    assert r.status == "insufficient_evidence"
    assert r.reason is not None
    assert r.reason.startswith("no interval of positive width: the apparent pass rate 0/5000")


def test_empty_production_sample() -> None:
    r = corrected_pass_rate(0, 0, calibration=calibration(45, 50, 45, 50))
    assert (r.status, r.reason) == ("insufficient_evidence", "the production sample is empty (n = 0)")
    assert r.apparent.status == "insufficient_evidence"


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match=r"^expected 0 <= n_pass <= n \(got n_pass=5, n=4\)$"):
        corrected_pass_rate(5, 4, calibration=calibration(45, 50, 45, 50))
    with pytest.raises(ValueError, match=r"^method must be one of lang-reiczigel \(got 'bootstrap'\)$"):
        corrected_pass_rate(1, 4, calibration=calibration(45, 50, 45, 50), method="bootstrap")  # type: ignore[arg-type]


@given(
    st.integers(1, 500).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
    st.integers(1, 60).flatmap(lambda n: st.tuples(st.integers(0, n), st.just(n))),
)
def test_result_is_a_number_with_a_proper_interval_or_a_stated_reason(
    production: tuple[int, int], se: tuple[int, int], sp: tuple[int, int]
) -> None:
    cal = calibration(se[0], se[1], sp[0], sp[1])
    if se[0] / se[1] + sp[0] / sp[1] - 1 <= 0:
        with pytest.raises(JudgeUnusableError):
            corrected_pass_rate(*production, calibration=cal)
        return
    r = corrected_pass_rate(*production, calibration=cal)
    if r.status == "ok":
        assert r.estimate is not None
        assert r.ci_low is not None
        assert r.ci_high is not None
        assert 0 <= r.ci_low <= r.estimate <= r.ci_high <= 1
        assert r.ci_low < r.ci_high
    else:
        assert (r.estimate, r.ci_low, r.ci_high) == (None, None, None)
        assert r.reason
