"""A release-report scenario shaped like the demo's, as a release manager first saw it.

Twelve cases with one trial per case on each side (so the curves have only k = 1), case versions
that are full ``sha256:`` digests, a cost per attempt of $0.0000145 and one machine second per
trial (spend and hours far below a cent and an hour), twelve cases — too few for the cost
interval (30 case groups) and for the gate's cost-ratio p-values (50 units) — and a slice
``dates`` of one case (insufficient evidence). The gate's verdict is made by the real gate.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from gatestats.gate import evaluate_gate, load_policy, load_record_set, write_verdict
from tests.gate.factory import policy_text, write_run_set

NOW = "2026-11-02T12:00:00Z"
COST_PER_ATTEMPT = 1.453e-05
CASES = [f"case-{i:02d}" for i in range(12)]
PAIRED_RULE = """
[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = 0.05
"""
RULES = (
    PAIRED_RULE
    + """
[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.5
"""
)
EXTRA = "max_cost_increase = 0.15\n\n[cost]\nreview_rate_usd_per_hour = 60.0\n"


def version(case: str) -> str:
    """The case's version: a full sha256 digest, as the runner writes it."""
    return "sha256:" + hashlib.sha256(case.encode()).hexdigest()


def make_one_trial_verdict(root: Path) -> Path:
    """Run the real gate on the one-trial scenario and write ``root/verdict.json``."""
    root.mkdir(parents=True, exist_ok=True)
    policy_path = root / "policy.toml"
    policy_path.write_text(policy_text(RULES, k=1, min_cases=10, min_trials=1, extra=EXTRA), encoding="utf-8")
    policy = load_policy(policy_path)
    base = {c: ["passed" if i % 2 == 0 else "failed"] for i, c in enumerate(CASES)}
    cand = {c: ["passed" if i % 3 else "failed"] for i, c in enumerate(CASES)}
    slices = {c: ["dates"] if c == "case-00" else ["parsing" if i % 2 else "numeric"] for i, c in enumerate(CASES)}
    versions = {c: version(c) for c in CASES}
    common = {"slices": slices, "cost": COST_PER_ATTEMPT, "case_versions": versions}
    b = write_run_set(root / "base", system="baseline", outcomes=base, **common)  # type: ignore[arg-type]
    c = write_run_set(root / "cand", system="candidate", outcomes=cand, policy=policy, **common)  # type: ignore[arg-type]
    verdict = evaluate_gate(policy, load_record_set(b), load_record_set(c), now=NOW)
    return write_verdict(verdict, root / "verdict.json")


#: Issue 29's scenario: the demo's shape (4 trials, a failing severe slice, system labels that are the
#: side names, unclassified failures, a cost rule) with case ids whose text order is not their natural order.
DEMO_CASES = ["case-1", "case-5", "case-11", "case-29", "case-30", "case-31", "case-40", "case-41", "case-50"]
SEVERE_CASES = ["sec-1", "sec-2", "sec-3"]
DEMO_RULES = (
    PAIRED_RULE
    + """
[[rules]]
name = "reliability floor"
metric = "pass_hat_k"
threshold = 0.5

[[rules]]
name = "capability"
metric = "pass_at_k"
threshold = 0.7
action = "warn"
"""
)
DEMO_EXTRA = 'case_grouping = "independent"\nsevere_slices = ["security"]\nmax_cost_increase = 0.15\n\n[cost]\nreview_rate_usd_per_hour = 60.0\n'


def make_demo_like_verdict(root: Path) -> Path:
    """Run the real gate on issue 29's demo-shaped scenario and write ``root/verdict.json``.

    Baseline: case-1, case-5, case-11, case-29 fail every trial, the rest pass. Candidate: those four
    pass, case-40 fails every trial, and the severe case sec-3 fails its first trial (the slice fails).
    """
    root.mkdir(parents=True, exist_ok=True)
    policy_path = root / "policy.toml"
    text = policy_text(DEMO_RULES, k=4, min_cases=9, min_trials=4, extra=DEMO_EXTRA)
    policy_path.write_text(text, encoding="utf-8")
    policy = load_policy(policy_path)
    cases = DEMO_CASES + SEVERE_CASES
    flipped = {"case-1", "case-5", "case-11", "case-29"}
    base = {c: ["failed" if c in flipped else "passed"] * 4 for c in cases}
    cand = {c: ["failed" if c == "case-40" else "passed"] * 4 for c in cases}
    cand["sec-3"] = ["failed", "passed", "passed", "passed"]
    slices = {
        c: ["security"] if c in SEVERE_CASES else ["parsing" if i % 2 else "numeric"] for i, c in enumerate(cases)
    }
    common = {"slices": slices, "cost": COST_PER_ATTEMPT, "case_versions": {c: version(c) for c in cases}}
    b = write_run_set(root / "base", system="baseline", outcomes=base, **common)  # type: ignore[arg-type]
    c = write_run_set(root / "cand", system="candidate", outcomes=cand, policy=policy, **common)  # type: ignore[arg-type]
    verdict = evaluate_gate(policy, load_record_set(b), load_record_set(c), now=NOW)
    return write_verdict(verdict, root / "verdict.json")
