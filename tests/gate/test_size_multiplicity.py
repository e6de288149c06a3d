"""One multiplicity answer (issues 12 and 30): rows undecidable for a reason seen in the data count with p = 1,
rows undecidable before the data are in no family; unequal alphas use weighted Holm."""

from __future__ import annotations

import numpy as np
import pytest

from gatestats.gate import Registration, evaluate_gate, parse_policy
from gatestats.paired.multiplicity import adjust_pvalues_weighted
from tests.gate.factory import policy_text
from tests.gate.test_size_gate import _records, _set

RULES = """
[[rules]]
name = "floor"
metric = "pass_rate"
threshold = 0.3
alpha = {alpha_a}

[[rules]]
name = "too fine"
metric = "pass_rate"
test = "paired"
margin = {margin}
alpha = {alpha_b}
"""


def _verdict(*, margin: float, alpha_a: float, alpha_b: float):  # type: ignore[no-untyped-def]
    rng = np.random.default_rng(3)
    text = policy_text(RULES.format(margin=margin, alpha_a=alpha_a, alpha_b=alpha_b), k=1, min_trials=1,
                       min_cases=200).replace('pins = { model_id = "model-new" }', "")  # fmt: skip
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    p = np.full(200, 0.4)
    return evaluate_gate(
        policy,
        _set("baseline", _records("baseline", p, 1, rng, None)),
        _set("candidate", _records("candidate", np.full(200, 0.45), 1, rng, None)),
        registration=reg,
        now="t",
    )


def test_a_row_undecidable_before_the_data_is_in_no_family() -> None:
    # margin 0.001 < 1/200: known from N alone (issue 30): the row is removed before the data and
    # the floor is adjusted alone (before issue 30 it counted with p = 1: 2 x the raw p).
    v = _verdict(margin=0.001, alpha_a=0.05, alpha_b=0.05)
    floor, fine = v.rules
    assert fine.decision == "insufficient_evidence"
    assert fine.pvalue_pass_adjusted is None
    assert fine.family == "removed_before_data"
    assert fine.family_size == 0
    assert fine.reason is not None
    assert "left out of the multiplicity family before the data" in fine.reason
    assert floor.pvalue_pass is not None
    assert floor.family == "blocking"
    assert floor.family_size == 1
    assert floor.pvalue_pass_adjusted == pytest.approx(floor.pvalue_pass)


def test_unequal_alphas_use_weighted_holm() -> None:
    v = _verdict(margin=0.2, alpha_a=0.05, alpha_b=0.01)
    floor, paired = v.rules
    assert paired.pvalue_pass is not None
    assert floor.pvalue_pass is not None
    expected = adjust_pvalues_weighted([floor.pvalue_pass, paired.pvalue_pass], [0.05, 0.01])
    assert [floor.pvalue_pass_adjusted, paired.pvalue_pass_adjusted] == pytest.approx(expected.tolist())
    assert paired.test == "exact unconditional test (Tango-ordered)"
