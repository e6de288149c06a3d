"""Decision p-values of the paired cost ratio (issue 12): calibrated, and refused with few effective units."""

from __future__ import annotations

import math
import re

import pytest

from gatestats.cost import cost_ratio
from gatestats.cost.ratio import DECISION_PVALUE_FACTOR, MIN_EFFECTIVE_UNITS
from gatestats.errors import InsufficientEvidenceError
from tests.cost.conftest import frame, many_cases


def test_decision_pvalues_triple_the_percentile_pvalues() -> None:
    base = many_cases(300, system="base", seed=1)
    cand = many_cases(300, system="cand", seed=2, scale=1.3)
    r = cost_ratio(frame(base + cand), baseline="base", candidate="cand", n_resamples=999)
    assert r.effective_units is not None
    assert r.effective_units >= MIN_EFFECTIVE_UNITS
    raw = r.pvalues(1.2)
    assert r.decision_pvalues(1.2) == (
        min(1.0, DECISION_PVALUE_FACTOR * raw[0]),
        min(1.0, DECISION_PVALUE_FACTOR * raw[1]),
    )
    assert r.to_dict()["effective_units"] == r.effective_units


def test_kish_effective_units_of_equal_spend_are_the_number_of_cases() -> None:
    rows = [{"system": s, "case_id": f"c{i}", "cost_usd": 1.0} for s in ("base", "cand") for i in range(60)]
    r = cost_ratio(frame(rows), baseline="base", candidate="cand")
    assert r.effective_units == pytest.approx(60.0)


def test_a_few_dear_cases_make_the_decision_insufficient_with_cases_needed() -> None:
    # 200 cases: 196 cost 1 cent, 4 cost 10 dollars: Kish's effective units are about 4.
    rows = []
    for s in ("base", "cand"):
        for i in range(200):
            rows.append({"system": s, "case_id": f"c{i}", "cost_usd": 10.0 if i < 4 else 0.01})
    r = cost_ratio(frame(rows), baseline="base", candidate="cand")
    eff = r.effective_units
    assert eff is not None
    expected = (4 * 10 + 196 * 0.01) ** 2 / (4 * 100 + 196 * 0.0001)
    assert eff == pytest.approx(expected)
    needed = math.ceil(MIN_EFFECTIVE_UNITS * 200 / eff)
    message = (
        f"cost ratio 'cand'/'base': a decision needs at least {MIN_EFFECTIVE_UNITS} effective paired units "
        f"(Kish, from the spread of spend per case; got {eff:.1f} of 200 units: a few dear cases carry the sums "
        f"and the bootstrap test is liberal there, docs/size_study.md); about {needed} paired cases are needed"
    )
    with pytest.raises(InsufficientEvidenceError, match=re.escape(message)):
        r.decision_pvalues(1.1)
    r.pvalues(1.1)  # the raw percentile p-values stay available for reports
