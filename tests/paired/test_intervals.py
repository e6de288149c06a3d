"""Tango and Newcombe intervals for the paired difference (``gatestats.paired.intervals``).

Sources of the expected values
------------------------------
- Cavo et al. (2012), n = [[59, 6], [16, 80]], delta = pi_1+ - pi_+1 = -0.0621: Tango asymptotic score CI
  (-0.1240, -0.0054); Newcombe square-and-add CI (-0.1186, -0.0046); McNemar asymptotic P = 0.033006,
  Z = -2.132 (Fagerland, Lydersen & Laake 2017, ch. 8, as asserted in contingencytables' test-ch8.R).
  Their n12 (first system only) is our candidate-only cell c, n21 our baseline-only cell b.
- Newcombe (1998, Stat Med 17:2635) worked examples, method 10, (e, f, g, h) -> interval:
  (36, 12, 2, 0) -> (0.0569, 0.3404); (20, 12, 2, 16) -> (0.0562, 0.3292); (27, 0, 0, 27) -> (-0.0351, 0.0351),
  as quoted (4 decimals) by third-party code that cites Newcombe's table; we could not consult the paper
  itself, so these are also reproduced by the independent square-and-add computation below.
- Agresti & Min (2005, Stat Med 24:729) example, (a, b, c, d) = (53, 16, 8, 9), b = first condition only:
  score (Tango) 95% CI (-0.020, 0.207), as asserted by the R package ratesci's tests ("paired methods
  examples from Agresti & Min 2005"); we could not consult the paper itself.
- Bentur et al. (2009), a = 1, b = 1, c = 7, d = 12: Tango 95% CI (-0.5172, -0.0260), checked against an
  independent inversion of the score test whose restricted MLE is found by numerical optimisation
  (scipy ``minimize_scalar``), not the closed form used by the code.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy import optimize, stats

from gatestats.paired import newcombe_interval, tango_interval, tango_statistic
from tests.hypothesis_counts import examples


def _restricted_mle(b: int, c: int, n: int, delta: float) -> float:
    """Baseline-only cell probability maximising the multinomial likelihood under p_c - p_b = delta."""
    low, high = max(0.0, -delta), (1.0 - delta) / 2  # keeps p_b, p_c = p_b + delta and the rest >= 0

    def negative_log_likelihood(p_b: float) -> float:
        p_c, rest = p_b + delta, 1 - 2 * p_b - delta
        total = 0.0
        for count, p in ((b, p_b), (c, p_c), (n - b - c, rest)):
            if count:
                if p <= 0:
                    return math.inf
                total -= count * math.log(p)
        return total

    eps = 1e-12
    if high - low < 4 * eps:
        return low
    result = optimize.minimize_scalar(
        negative_log_likelihood, bounds=(low + eps, high - eps), method="bounded", options={"xatol": 1e-13}
    )
    return float(result.x)


def _independent_tango(b: int, c: int, n: int, level: float = 0.95) -> tuple[float, float]:
    z = stats.norm.isf((1 - level) / 2)

    def score(delta: float) -> float:
        p_b = _restricted_mle(b, c, n, delta)
        variance = n * (2 * p_b + delta * (1 - delta))
        return 0.0 if variance <= 0 else (c - b - n * delta) / math.sqrt(variance)

    estimate = (c - b) / n
    low = -1.0 if estimate == -1 else optimize.brentq(lambda d: score(d) - z, -1 + 1e-9, estimate, xtol=1e-12)
    high = 1.0 if estimate == 1 else optimize.brentq(lambda d: score(d) + z, estimate, 1 - 1e-9, xtol=1e-12)
    return low, high


def _independent_newcombe(a: int, b: int, c: int, d: int) -> tuple[float, float]:
    """Square-and-add written from Newcombe's description with statsmodels' Wilson intervals."""
    from statsmodels.stats.proportion import proportion_confint

    n = a + b + c + d
    p1, p2 = (a + c) / n, (a + b) / n
    l1, u1 = proportion_confint(a + c, n, method="wilson")
    l2, u2 = proportion_confint(a + b, n, method="wilson")
    margins = [(a + b), (c + d), (a + c), (b + d)]
    ad_bc = a * d - b * c
    if 0 in margins:
        phi = 0.0
    else:
        corrected = ad_bc - n / 2 if ad_bc > n / 2 else (0.0 if ad_bc >= 0 else ad_bc)
        phi = corrected / math.sqrt(math.prod(margins))
    dl1, du1, dl2, du2 = p1 - l1, u1 - p1, p2 - l2, u2 - p2
    return (
        p1 - p2 - math.sqrt(dl1**2 - 2 * phi * dl1 * du2 + du2**2),
        p1 - p2 + math.sqrt(dl2**2 - 2 * phi * dl2 * du1 + du1**2),
    )


def test_tango_matches_fagerland_2017_cavo_example() -> None:
    low, high = tango_interval(16, 6, 161)
    assert (round(low, 4), round(high, 4)) == (-0.1240, -0.0054)


def test_tango_matches_agresti_min_2005_example() -> None:
    low, high = tango_interval(8, 16, 86)  # their b = 16 (first condition only) is our candidate-only c
    assert (round(low, 3), round(high, 3)) == (-0.020, 0.207)
    assert (low, high) == pytest.approx(_independent_tango(8, 16, 86), abs=1e-7)


def test_tango_statistic_at_zero_is_mcnemar_z_of_cavo_example() -> None:
    # contingencytables: "The McNemar asymptotic test: P = 0.033006, Z = -2.132".
    z = tango_statistic(16, 6, 161, 0.0)
    assert round(z, 3) == -2.132
    assert round(2 * stats.norm.sf(abs(z)), 6) == 0.033006
    assert z == pytest.approx((6 - 16) / math.sqrt(22), abs=1e-12)


def test_tango_bentur_example_matches_independent_inversion() -> None:
    low, high = tango_interval(7, 1, 21)  # Fagerland's orientation: b = 1 (first only) is our c
    assert (round(low, 4), round(high, 4)) == (-0.5172, -0.0260)
    ref = _independent_tango(7, 1, 21)
    assert (low, high) == pytest.approx(ref, abs=1e-7)


@settings(max_examples=examples(40))
@given(
    st.integers(5, 60)
    .flatmap(lambda n: st.tuples(st.just(n), st.integers(0, n)))
    .flatmap(lambda t: st.tuples(st.just(t[0]), st.integers(0, t[1]), st.just(t[1])))
)
def test_tango_matches_independent_inversion_on_random_tables(args: tuple[int, int, int]) -> None:
    n, b, m = args
    c = m - b
    ours = tango_interval(b, c, n)
    assert ours == pytest.approx(_independent_tango(b, c, n), abs=1e-6)


@given(st.integers(0, 40), st.integers(0, 40), st.integers(0, 40))
def test_tango_swap_symmetry_and_contains_estimate(b: int, c: int, concordant: int) -> None:
    n = b + c + concordant
    if n == 0:
        return
    low, high = tango_interval(b, c, n)
    s_low, s_high = tango_interval(c, b, n)
    assert (low, high) == pytest.approx((-s_high, -s_low), abs=1e-9)
    assert -1 <= low <= (c - b) / n <= high <= 1
    assert high - low > 0  # never zero-width, also when b = c = 0


def test_tango_with_no_discordant_pair_is_not_zero_width() -> None:
    low, high = tango_interval(0, 0, 50)
    assert low < 0 < high
    assert high == pytest.approx(-low)
    assert high < 0.1


def test_tango_one_sided_bounds() -> None:
    two = tango_interval(16, 6, 161, confidence_level=0.90)
    less = tango_interval(16, 6, 161, confidence_level=0.95, alternative="less")
    greater = tango_interval(16, 6, 161, confidence_level=0.95, alternative="greater")
    assert less[0] == -1.0
    assert greater[1] == 1.0
    assert less[1] == pytest.approx(two[1], abs=1e-10)  # one-sided 95% bound = two-sided 90% bound
    assert greater[0] == pytest.approx(two[0], abs=1e-10)


def test_newcombe_matches_fagerland_2017_cavo_example() -> None:
    low, high = newcombe_interval(59, 16, 6, 80)
    assert (round(low, 4), round(high, 4)) == (-0.1186, -0.0046)


@pytest.mark.parametrize(
    ("efgh", "expected"),
    [
        ((36, 12, 2, 0), (0.0569, 0.3404)),
        ((20, 12, 2, 16), (0.0562, 0.3292)),
        ((27, 0, 0, 27), (-0.0351, 0.0351)),
    ],
)
def test_newcombe_matches_newcombe_1998_examples(
    efgh: tuple[int, int, int, int], expected: tuple[float, float]
) -> None:
    e, f, g, h = efgh  # Newcombe's theta = (f - g) / n: f plays our candidate-only cell c
    low, high = newcombe_interval(e, g, f, h)
    assert (round(low, 4), round(high, 4)) == expected
    assert (low, high) == pytest.approx(_independent_newcombe(e, g, f, h), abs=1e-9)


@given(st.integers(0, 30), st.integers(0, 30), st.integers(0, 30), st.integers(0, 30))
def test_newcombe_matches_independent_square_and_add_and_swap(a: int, b: int, c: int, d: int) -> None:
    if a + b + c + d == 0:
        return
    ours = newcombe_interval(a, b, c, d)
    assert ours == pytest.approx(_independent_newcombe(a, b, c, d), abs=1e-9)
    swapped = newcombe_interval(a, c, b, d)
    assert ours == pytest.approx((-swapped[1], -swapped[0]), abs=1e-9)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tango_interval(3, 4, 5), r"need 0 <= b \+ c <= n and n >= 1 \(got b=3, c=4, n=5\)"),
        (
            lambda: tango_interval(1, 1, 5, confidence_level=1.0),
            r"confidence_level must lie strictly between 0 and 1 \(got 1.0\)",
        ),
        (lambda: newcombe_interval(0, 0, 0, 0), r"the table is empty \(got a = b = c = d = 0\)"),
        (lambda: newcombe_interval(-1, 0, 0, 0), r"a must be a non-negative integer \(got -1\)"),
        (lambda: tango_statistic(1, 1, 5, 1.5), r"delta0 must lie in \[-1, 1\] \(got 1.5\)"),
    ],
)
def test_bad_input_is_refused(call: object, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        call()  # type: ignore[operator]
