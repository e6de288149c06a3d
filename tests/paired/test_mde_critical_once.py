"""``minimum_detectable_effect`` computes the critical values and binomial weights once per call.

Its root search evaluated :func:`~gatestats.paired.exact_power` at every step, which recomputed the critical
values of every ``m`` (independent of the difference searched: 83% of a call) and the ``Bin(n, psi)`` weights.
The oracle is the search as it was written before (issue 28, item 3): ``brentq`` over ``exact_power`` itself;
every field of the plan must be the same, bit for bit, for every alternative and test.
"""

from __future__ import annotations

from dataclasses import astuple

import pytest
from scipy import optimize

from gatestats.paired import exact_power, minimum_detectable_effect
from gatestats.paired.planning import _connor_mde, _z_alpha_beta

# (n_cases, discordance, alpha): small and larger samples, a sample too small to detect anything, other levels.
_INPUTS = [(40, 0.5, 0.01), (150, 0.15, 0.10), (5, 0.2, 0.05)]
_ALTERNATIVES = ["two-sided", "greater", "less"]
# Every alternative and test on _INPUTS, and the harness notebook's LLMBar size (466 cases, two-sided mid-p).
_CASES = [
    (*inputs, alternative, test) for inputs in _INPUTS for alternative in _ALTERNATIVES for test in ("midp", "exact")
]
_CASES.append((466, 0.2103, 0.05, "two-sided", "midp"))


def _searched_over_exact_power(n_cases: int, discordance: float, *, alpha: float, alternative: str, test: str) -> tuple:
    """The plan's status and effects as ``minimum_detectable_effect`` found them before: brentq over exact_power."""
    sign = -1.0 if alternative == "less" else 1.0
    power = 0.8

    def exact_gap(delta: float) -> float:
        return exact_power(n_cases, sign * delta, discordance, alpha=alpha, alternative=alternative, test=test) - power

    if exact_gap(discordance) < 0:
        return ("cannot_resolve",)
    za, zb = _z_alpha_beta(alpha, power, alternative)
    mde_exact = float(optimize.brentq(exact_gap, 1e-12, discordance, xtol=1e-7))
    return ("ok", _connor_mde(n_cases, discordance, za, zb), mde_exact)


@pytest.mark.parametrize(("n_cases", "discordance", "alpha", "alternative", "test"), _CASES)
def test_the_detectable_effect_is_the_root_of_exact_power_bit_for_bit(
    n_cases: int, discordance: float, alpha: float, alternative: str, test: str
) -> None:
    plan = minimum_detectable_effect(n_cases, discordance, alpha=alpha, alternative=alternative, test=test)  # type: ignore[arg-type]
    expected = _searched_over_exact_power(n_cases, discordance, alpha=alpha, alternative=alternative, test=test)
    assert ((plan.status,) if plan.status != "ok" else (plan.status, plan.mde_connor, plan.mde_exact)) == expected
    assert astuple(plan)[:6] == (n_cases, discordance, 0.8, alpha, alternative, test)
