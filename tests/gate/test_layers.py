"""The gate never compares across layers (replay suite, live sample, shadow traffic)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import polars as pl
import pytest

from gatestats.gate import Verdict, evaluate_gate, load_policy, load_record_set
from gatestats.gate.checks import _layers, record_layers
from tests.gate.factory import policy_text, rewrite_records, write_run_set

RULE = """
[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.5
"""


def _side(*layers: str | None) -> SimpleNamespace:
    return SimpleNamespace(records=pl.DataFrame({"layer": list(layers)}, schema={"layer": pl.String}))


def _found(base: SimpleNamespace, cand: SimpleNamespace) -> list[tuple[str, str, str, str]]:
    return [(c.name, c.side, c.status, c.detail) for c in _layers({"baseline": base, "candidate": cand})]  # type: ignore[dict-item]


def test_records_without_a_layer_name_none_and_give_no_check() -> None:
    assert record_layers(pl.DataFrame({"case_id": ["a"]})) == ()
    assert _found(_side(None, None), _side(None)) == []


def test_two_sides_of_one_layer_are_compared() -> None:
    assert _found(_side("replay", "replay"), _side("replay")) == [
        ("same_layer", "both", "ok", "both sides are layer replay")
    ]


@pytest.mark.parametrize(
    ("base", "cand", "shown"),
    [
        (("replay",), ("live",), "baseline layer replay, candidate layer live"),
        ((None,), ("shadow",), "baseline layer none named, candidate layer shadow"),
    ],
)
def test_a_comparison_across_layers_is_refused_naming_both(
    base: tuple[str | None, ...], cand: tuple[str | None, ...], shown: str
) -> None:
    (check,) = _found(_side(*base), _side(*cand))
    assert check == (
        "same_layer",
        "both",
        "insufficient_evidence",
        f"{shown}: the gate does not compare across layers (replay suite, live sample, shadow traffic)",
    )


def test_a_side_of_several_layers_blocks() -> None:
    found = _found(_side("live", "replay", None), _side("live"))
    assert found[0] == (
        "one_layer",
        "baseline",
        "insufficient_evidence",
        "records of several layers in one set: live, replay and 1 records that name none",
    )
    assert found[1][0:3] == ("same_layer", "both", "insufficient_evidence")


def _layered_run_sets(tmp_path: Path, base_layer: str | None, cand_layer: str | None) -> Verdict:
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(policy_text(RULE, min_cases=10), encoding="utf-8")
    policy = load_policy(policy_path)
    outcomes = {f"c{i:03d}": ["passed"] for i in range(12)}
    runs = {}
    for side, layer, pol in (("baseline", base_layer, None), ("candidate", cand_layer, policy)):
        run = write_run_set(tmp_path / side, system=side, outcomes=outcomes, policy=pol)
        rows = [json.loads(line) for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines()]
        for row in rows:
            row.pop("checksum", None)
            row["layer"] = layer
        rewrite_records(run, rows)
        runs[side] = load_record_set(run)
    return evaluate_gate(policy, runs["baseline"], runs["candidate"], now="2026-12-01T10:00:00Z")


def test_a_replay_baseline_and_a_live_candidate_are_refused_and_each_sides_layer_is_bound(tmp_path: Path) -> None:
    verdict = _layered_run_sets(tmp_path, "replay", "live")
    (check,) = [c for c in verdict.checks if c.name == "same_layer"]
    assert (check.status, check.detail) == (
        "insufficient_evidence",
        "baseline layer replay, candidate layer live: the gate does not compare across layers "
        "(replay suite, live sample, shadow traffic)",
    )
    assert (verdict.baseline.layers, verdict.candidate.layers, verdict.exit_code) == (("replay",), ("live",), 12)
    back = Verdict.from_dict(verdict.to_dict())
    assert (back.baseline.layers, back.candidate.layers) == (("replay",), ("live",))


def test_two_replay_sides_are_compared(tmp_path: Path) -> None:
    verdict = _layered_run_sets(tmp_path, "replay", "replay")
    (check,) = [c for c in verdict.checks if c.name == "same_layer"]
    assert (check.status, check.detail) == ("ok", "both sides are layer replay")


def test_a_record_with_an_unknown_layer_is_refused_by_the_contract(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match=r"field 'layer': must be one of 'replay', 'live', 'shadow' \(got 'canary'\)"):
        _layered_run_sets(tmp_path, "replay", "canary")
