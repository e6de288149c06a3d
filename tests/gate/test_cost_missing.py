"""Cost rules when some attempts carry no cost (issue 26, item 7): bounds, or insufficient evidence on request."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import load_policy, parse_policy
from gatestats.gate.policy import PolicyError
from tests.gate.factory import policy_text, write_run_set

THRESHOLD = """
[[rules]]
name = "cheap"
metric = "cost_per_accepted"
threshold = {threshold}
"""


def _outcomes(n: int) -> dict[str, list[str]]:
    return {f"c{i:03d}": ["failed" if i % 5 == 0 else "passed"] for i in range(n)}


def _gate(
    tmp_path: Path, *, rules: str = "", extra: str = "", cand_cost: Any = 0.01, base_cost: Any = 0.01, n: int = 200
) -> dict[str, Any]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(policy_text(rules, extra=extra))
    policy = load_policy(policy_path)
    outcomes = _outcomes(n)
    base = write_run_set(tmp_path / "base", system="baseline", outcomes=outcomes, cost=base_cost)
    cand = write_run_set(tmp_path / "cand", system="candidate", outcomes=outcomes, policy=policy, cost=cand_cost)
    args = ["gate", "--policy", str(policy_path), "--baseline", str(base), "--candidate", str(cand), "--json"]
    result = CliRunner().invoke(app, args)
    body = json.loads(result.stdout)
    assert isinstance(body, dict), result.output
    return body


def _lost(cases: range, cost: float = 0.01) -> dict[str, float | None]:
    """Per case spend: ``cost``, except the cases in ``cases``, whose cost was lost."""
    return {f"c{i:03d}": (None if i in cases else cost) for i in range(200)}


def _row(body: dict[str, Any], kind: str) -> dict[str, Any]:
    return next(r for r in body["rules"] if r["kind"] == kind)


def test_a_threshold_far_above_both_bounds_passes_and_names_the_missing_count(tmp_path: Path) -> None:
    body = _gate(
        tmp_path,
        rules=THRESHOLD.format(threshold=0.05),
        extra="[cost]\nmax_cost_per_attempt_usd = 0.02",
        cand_cost=_lost(range(1, 6)),
    )
    row = _row(body, "cost_threshold")
    assert row["decision"] == "pass"
    assert "5 of 200 candidate attempt(s) carry no cost" in row["row"]
    assert "cannot" not in row["row"]
    assert "missing costs bounded" in row["test"]
    # bounds: known 195 x 0.01 over 160 accepted, up to 195 x 0.01 + 5 x 0.02 (the policy's cap)
    assert row["observed"] == pytest.approx((195 * 0.01 + 5 * 0.02) / 160)
    assert row["ci_high"] >= row["observed"]


def test_without_a_stated_cap_a_threshold_row_with_missing_costs_never_passes(tmp_path: Path) -> None:
    # The same data as above without [cost] max_cost_per_attempt_usd: the largest observed cost is
    # only an assumption about the lost ones, so the row cannot pass, however far the threshold is.
    body = _gate(tmp_path, rules=THRESHOLD.format(threshold=50.0), cand_cost=_lost(range(1, 6)))
    row = _row(body, "cost_threshold")
    assert row["decision"] == "insufficient_evidence"
    assert body["verdict"] != "pass"
    assert row["pvalue_pass"] == 1.0
    assert "no [cost] max_cost_per_attempt_usd: cannot pass" in row["row"]


def test_the_lost_bills_of_runaway_trials_do_not_pass_a_cost_threshold(tmp_path: Path) -> None:
    # Costs are not lost at random: here the ten runaway attempts ($1 each) are the ones whose bill
    # went missing. The true cost per accepted outcome is (190 x 0.01 + 10 x 1) / 160 = 0.074, above
    # the $0.05 threshold. With the largest observed cost ($0.01) as the cap, the bounds said at most
    # 0.0125 and the row passed; without a stated cap it cannot.
    lost = {f"c{i:03d}": (None if i % 20 == 1 else 0.01) for i in range(200)}
    body = _gate(tmp_path, rules=THRESHOLD.format(threshold=0.05), extra="max_cost_increase = 0.15", cand_cost=lost)
    assert {r["kind"]: r["decision"] for r in body["rules"]}["cost_threshold"] != "pass"
    assert _row(body, "cost_increase")["decision"] != "pass"
    assert body["verdict"] != "pass"


def test_require_complete_costs_makes_a_missing_cost_insufficient_evidence_never_pass(tmp_path: Path) -> None:
    body = _gate(
        tmp_path,
        rules=THRESHOLD.format(threshold=0.05),
        extra="[cost]\nrequire_complete_costs = true",
        cand_cost=_lost(range(1, 6)),
    )
    row = _row(body, "cost_threshold")
    assert row["decision"] == "insufficient_evidence"
    assert body["verdict"] == "insufficient_evidence"
    assert "5 of 200 candidate attempt(s) carry no cost" in row["row"]
    assert "require_complete_costs" in json.dumps(body)


def test_a_threshold_between_the_known_part_and_the_cap_does_not_pass(tmp_path: Path) -> None:
    # 20 lost costs that may each be $1 (the policy's cap): the known part is far below $0.05,
    # the upper bound far above it, so the rule cannot pass (nor fail: the known part alone is cheap).
    body = _gate(
        tmp_path,
        rules=THRESHOLD.format(threshold=0.05),
        extra="[cost]\nmax_cost_per_attempt_usd = 1.0",
        cand_cost=_lost(range(1, 21)),
    )
    row = _row(body, "cost_threshold")
    assert row["decision"] not in ("pass", "fail")
    assert row["ci_low"] < 0.05 < row["ci_high"]
    assert row["observed"] == pytest.approx((180 * 0.01 + 20 * 1.0) / 160)


def test_a_threshold_below_even_the_known_part_fails(tmp_path: Path) -> None:
    body = _gate(tmp_path, rules=THRESHOLD.format(threshold=0.005), cand_cost=_lost(range(1, 6)))
    assert _row(body, "cost_threshold")["decision"] == "fail"


def test_missing_costs_in_one_system_of_the_ratio_are_bounded_on_the_conservative_side(tmp_path: Path) -> None:
    # equal spend per attempt; 20 of the candidate's costs lost. With a cap of $0.01 (what each
    # attempt costs) the ratio stays at 1 and passes a 15% limit; with a $1 cap the worst case is
    # ~11x: no pass; with no cap stated it cannot pass.
    lost = _lost(range(1, 21))
    body = _gate(
        tmp_path / "a", extra="max_cost_increase = 0.15\n[cost]\nmax_cost_per_attempt_usd = 0.01", cand_cost=lost
    )
    row = _row(body, "cost_increase")
    assert row["decision"] == "pass"
    assert "20 of 200 candidate attempt(s) carry no cost" in row["row"]
    body = _gate(tmp_path / "c", extra="max_cost_increase = 0.15", cand_cost=lost)
    row = _row(body, "cost_increase")
    assert row["decision"] == "insufficient_evidence"
    assert "cannot pass" in row["row"]
    body = _gate(
        tmp_path / "b", extra="max_cost_increase = 0.15\n[cost]\nmax_cost_per_attempt_usd = 1.0", cand_cost=lost
    )
    row = _row(body, "cost_increase")
    assert row["decision"] != "pass"
    assert row["observed"] == pytest.approx((180 * 0.01 + 20) / 160 / (200 * 0.01 / 160))


def test_missing_baseline_costs_count_at_zero_for_the_pass_side(tmp_path: Path) -> None:
    # the baseline's lost costs are counted at 0 when testing "within": that makes the baseline look
    # cheaper, the conservative side for the candidate.
    body = _gate(tmp_path, extra="max_cost_increase = 0.15", base_cost=_lost(range(1, 41)))
    row = _row(body, "cost_increase")
    assert "40 of 200 baseline attempt(s) carry no cost" in row["row"]
    assert row["observed"] == pytest.approx((200 * 0.01 / 160) / (160 * 0.01 / 160))
    assert row["decision"] != "pass"
    # without a cap the baseline's lost costs could be anything: the row cannot be shown violated
    # either (the pass side, at 0, does not need the cap)
    assert "no [cost] max_cost_per_attempt_usd: cannot be shown violated" in row["row"]
    assert row["pvalue_fail"] == 1.0


def test_every_cost_missing_is_insufficient_evidence(tmp_path: Path) -> None:
    body = _gate(tmp_path, rules=THRESHOLD.format(threshold=0.05), cand_cost=_lost(range(200)))
    row = _row(body, "cost_threshold")
    assert row["decision"] == "insufficient_evidence"
    assert "200 of 200 candidate attempt(s) carry no cost" in row["row"]


def test_complete_data_rows_do_not_mention_missing_costs(tmp_path: Path) -> None:
    body = _gate(tmp_path, rules=THRESHOLD.format(threshold=0.05), extra="max_cost_increase = 0.15")
    for kind in ("cost_threshold", "cost_increase"):
        row = _row(body, kind)
        assert "carry no cost" not in row["row"]
        assert "bounded" not in row["test"]
    assert "missing_costs" not in json.dumps(body["cost"])


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("require_complete_costs = 1", "require_complete_costs"),
        ('require_complete_costs = "yes"', "require_complete_costs"),
        ("max_cost_per_attempt_usd = -1.0", "max_cost_per_attempt_usd"),
        ("max_cost_per_attempt_usd = nan", "max_cost_per_attempt_usd"),
        ("max_cost_per_attempt_usd = 1e300", "max_cost_per_attempt_usd"),
        ('max_cost_per_attempt_usd = "0.5"', "max_cost_per_attempt_usd"),
        ("require_complete = true", "require_complete"),
    ],
)
def test_bad_missing_cost_keys_are_refused_with_their_line(line: str, expected: str) -> None:
    text = policy_text(extra="max_cost_increase = 0.1\n[cost]\n" + line)
    with pytest.raises(PolicyError) as info:
        parse_policy(text.encode())
    assert expected in str(info.value)
    assert re.search(r"<policy>:\d+: key 'cost\.", str(info.value))


def test_missing_cost_keys_are_read() -> None:
    text = policy_text(
        extra="max_cost_increase = 0.1\n[cost]\nrequire_complete_costs = true\nmax_cost_per_attempt_usd = 2"
    )
    policy = parse_policy(text.encode())
    assert (policy.cost.require_complete_costs, policy.cost.max_cost_per_attempt_usd) == (True, 2.0)
    assert "require_complete_costs" not in json.dumps(policy.to_dict())
