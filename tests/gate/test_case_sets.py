"""Two case-set versions in one gate (an overlap period), and the candidate's failures by failure class."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from gatestats.gate import Verdict, evaluate_gate, load_policy, load_record_set, verdict_digest
from gatestats.gate.verdict import VerdictFileError
from tests.gate.factory import policy_text, rewrite_records, write_run_set

RULE = """
[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.5
"""
NOW = "2026-12-01T10:00:00Z"
OLD = [f"c{i:03d}" for i in range(30)]  # the baseline's set cs-1
NEW = [f"n{i:03d}" for i in range(10)]  # added in cs-2
RETIRED = OLD[:5]  # retired in cs-2
CHANGED = "c029"  # in both, at a new version in cs-2
CLASSES = {"c005": "policy_misread", "c006": "tool_misuse"} | dict.fromkeys(NEW[:4], "policy_misread")


def _relabel(run: Path, version: str, classes: dict[str, str] | None = None) -> None:
    """Give a factory run set another case-set version (manifest and records) and failure classes."""
    rows = [json.loads(line) for line in (run / "records.jsonl").read_text(encoding="utf-8").splitlines()]
    for row in rows:
        row.pop("checksum", None)
        row["task_set_version"] = version
        row["failure_class"] = (classes or {}).get(row["case_id"])
    rewrite_records(run, rows)
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    manifest["case_set_version"] = version
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def overlap_verdict(tmp_path: Path) -> Verdict:
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(policy_text(RULE, min_trials=1, min_cases=10), encoding="utf-8")
    policy = load_policy(policy_path)
    base = write_run_set(tmp_path / "base", system="baseline", outcomes={c: ["passed"] for c in OLD})
    _relabel(base, "cs-1")
    # candidate: two shared cases fail (3 trials each: still one case each); 5 of the 10 new cases fail
    cand_out = {c: ["failed"] * 3 if c in ("c005", "c006") else ["passed"] * 3 for c in OLD[5:]}
    cand_out |= {n: ["failed"] * 3 if i < 5 else ["passed"] * 3 for i, n in enumerate(NEW)}
    cand = write_run_set(
        tmp_path / "cand",
        system="candidate",
        outcomes=cand_out,
        policy=policy,
        case_versions={CHANGED: "v-changed"},
    )
    _relabel(cand, "cs-2", CLASSES)
    return evaluate_gate(policy, load_record_set(base), load_record_set(cand), now=NOW)


def test_two_case_set_versions_bind_the_shared_comparison_the_new_cases_and_the_retired(tmp_path: Path) -> None:
    verdict = overlap_verdict(tmp_path)
    sets = verdict.case_sets
    assert sets is not None
    assert (sets.baseline_version, sets.candidate_version) == ("cs-1", "cs-2")
    assert sets.n_shared == 24  # c005..c028
    assert (sets.changed, sets.added, sets.retired) == ((CHANGED,), tuple(NEW), tuple(RETIRED))
    rates = {(r.cases, r.side): r for r in verdict.case_sets.rates}  # type: ignore[union-attr]
    assert sorted(rates) == [
        ("added", "candidate"),
        ("retired", "baseline"),
        ("shared", "baseline"),
        ("shared", "candidate"),
    ]
    shared_b, shared_c = rates[("shared", "baseline")], rates[("shared", "candidate")]
    assert (shared_b.n_cases, shared_b.n_passed, shared_b.n_valid_trials, shared_b.estimate) == (24, 24, 24, 1.0)
    assert (shared_c.n_cases, shared_c.n_passed, shared_c.n_valid_trials) == (24, 66, 72)
    assert shared_c.estimate == pytest.approx(22 / 24)
    added = rates[("added", "candidate")]
    assert (added.n_cases, added.n_passed, added.estimate) == (10, 15, 0.5)
    assert rates[("retired", "baseline")].n_cases == 5
    # the decision still needs the same cases on both sides: an overlap is shown, not decided
    (same,) = [c for c in verdict.checks if c.name == "same_cases"]
    assert same.status == "insufficient_evidence"
    assert verdict.verdict == "insufficient_evidence"


def test_one_case_set_version_binds_no_case_sets(tmp_path: Path) -> None:
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(policy_text(RULE, min_trials=1, min_cases=10), encoding="utf-8")
    policy = load_policy(policy_path)
    base = write_run_set(tmp_path / "base", system="baseline", outcomes={c: ["passed"] for c in OLD})
    cand = write_run_set(tmp_path / "cand", system="candidate", outcomes={c: ["passed"] for c in OLD}, policy=policy)
    verdict = evaluate_gate(policy, load_record_set(base), load_record_set(cand), now=NOW)
    assert verdict.case_sets is None
    assert verdict.failure_classes == ()  # no failed case: no share of 0 is invented


def test_failed_cases_are_counted_once_by_failure_class_with_wilson_intervals(tmp_path: Path) -> None:
    verdict = overlap_verdict(tmp_path)
    got = [(c.failure_class, c.count, c.n, tuple(x.split("@")[0] for x in c.cases)) for c in verdict.failure_classes]
    assert got == [
        ("policy_misread", 5, 7, ("c005", "n000", "n001", "n002", "n003")),
        ("(unclassified)", 1, 7, ("n004",)),
        ("tool_misuse", 1, 7, ("c006",)),
    ]
    first = verdict.failure_classes[0]
    assert first.cases[0] == "c005@v-" + hashlib.sha1(b"c005").hexdigest()[:8]  # the factory's case version
    # Wilson score interval for 5/7 at 95%: statsmodels proportion_confint(5, 7, method="wilson")
    # gives (0.35893, 0.91778); by hand (z = 1.959964): centre (5/7 + z²/14) / (1 + z²/7)
    # = 0.6384, half-width z·sqrt(p(1-p)/7 + z²/196) / (1 + z²/7) = 0.2794
    assert (round(first.ci_low, 4), round(first.ci_high, 4)) == (0.3589, 0.9178)
    assert first.share == pytest.approx(5 / 7)


def test_a_verdict_without_the_new_fields_reads_with_their_defaults(tmp_path: Path) -> None:
    body: dict[str, Any] = overlap_verdict(tmp_path).to_dict()
    assert Verdict.from_dict(body).to_dict() == body  # round trip with the fields
    for key in ("case_sets", "failure_classes"):
        body.pop(key)
    body["policy"].pop("golden_set")
    body.pop("digest")
    body["digest"] = verdict_digest(body)
    old = Verdict.from_dict(body)
    assert (old.case_sets, old.failure_classes, old.policy.golden_set) == (None, (), None)
    body["case_sets"] = {"baseline_version": "cs-1"}
    body["digest"] = verdict_digest({k: v for k, v in body.items() if k != "digest"})
    with pytest.raises(VerdictFileError, match=r"field 'case_sets.candidate_version': required field is missing"):
        Verdict.from_dict(body)
