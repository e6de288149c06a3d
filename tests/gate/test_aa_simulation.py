"""A/A simulation: the same system against itself under a policy with alpha = 0.05 fails at most 5% of the time.

Recorded figure (docs/gate.md): see ``test_aa_false_fail_rate_is_within_alpha``'s output.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from gatestats.gate import RecordSet, Registration, evaluate_gate, parse_policy
from gatestats.records.contract import POLARS_SCHEMA
from tests.gate.factory import policy_text

N_CASES, K = 80, 4
RULES = """
[[rules]]
name = "pass rate not worse"
metric = "pass_rate"
test = "paired"
margin = 0.0

[[rules]]
name = "pass^k non-inferior"
metric = "pass_hat_k"
test = "paired"
margin = 0.05

[[rules]]
name = "pass rate floor at the true mean"
metric = "pass_rate"
threshold = {threshold}
"""


def _records(system: str, p: np.ndarray, rng: np.random.Generator) -> pl.DataFrame:
    passed = rng.random((p.size, K)) < p[:, None]
    case = np.repeat([f"c{i:03d}" for i in range(p.size)], K)
    trial = np.tile(np.arange(K), p.size)
    n = p.size * K
    frame = pl.DataFrame(
        {
            "schema_version": [1] * n,
            "record_id": [f"{system}-{i}" for i in range(n)],
            "run_set_id": [f"rs-{system}"] * n,
            "system": [system] * n,
            "case_id": case,
            "case_version": ["v1"] * n,
            "trial": trial,
            "attempt": [0] * n,
            "outcome": np.where(passed.ravel(), "passed", "failed"),
            "model_id": ["model-new"] * n,
            "system_digest": ["sd"] * n,
        }
    )
    return frame.with_columns(
        [pl.lit(None, dtype=dtype).alias(name) for name, dtype in POLARS_SCHEMA.items() if name not in frame.columns]
    ).select(list(POLARS_SCHEMA))


def _set(system: str, records: pl.DataFrame) -> RecordSet:
    manifest = {"complete": True, "cases": [{"case_id": c, "case_version": "v1"} for c in records["case_id"].unique()]}
    return RecordSet(
        path=__import__("pathlib").Path(system),
        kind="run_set",
        manifest=manifest,
        records=records,
        files=(),
        digest=system,
    )


@pytest.mark.simulation
def test_aa_false_fail_rate_is_within_alpha() -> None:
    rng = np.random.default_rng(20261130)
    p = rng.beta(2.0, 1.0, N_CASES)  # heterogeneous cases, mean pass rate about 2/3
    # the record sets are built in memory, without checksums: the policy accepts unverified evidence
    text = policy_text(
        RULES.format(threshold=round(float(p.mean()), 4)),
        k=K,
        min_trials=K,
        min_cases=N_CASES,
        extra="require_checksums = false",
    )
    text = text.replace('pins = { model_id = "model-new" }', "").replace('system = "candidate"', 'system = "same"')
    text = text.replace('[baseline]\nsystem = "baseline"', '[baseline]\nsystem = "same"')
    policy = parse_policy(text.encode())
    reg = Registration(
        run_set="x", policy_digest=policy.digest, registered_at="t", first_record_at=None, origin="runner"
    )
    # Issue 28, item 3: 100 replications (was 300). Planted break, every rule at alpha = 0.5: a pass by
    # the 100th replication (pass 1, fail 2), so the first assert fails at 100 as at 300 (pass 2, fail 6);
    # at alpha = 0.15 neither size fails (fail 1 of 150, 1 of 300): almost every replication is
    # insufficient evidence at 80 cases (299 of 300), so more replications add no teeth.
    reps = 100
    verdicts: list[str] = []
    for _ in range(reps):
        base = _set("baseline", _records("same", p, rng))
        cand = _set("candidate", _records("same", p, rng))
        verdicts.append(evaluate_gate(policy, base, cand, registration=reg, now="t").verdict)
    counts = {v: verdicts.count(v) for v in sorted(set(verdicts))}
    fail_rate = counts.get("fail", 0) / reps
    print(f"A/A over {reps} replications: {counts}; fail rate {fail_rate:.3f}")
    assert counts.get("pass", 0) == 0  # margin 0 means "shown better": never true of the same system
    # an exact one-sided binomial bound: with a true rate of 5%, 100 replications exceed 11 fails < 1% of the time
    assert counts.get("fail", 0) <= 11, counts
