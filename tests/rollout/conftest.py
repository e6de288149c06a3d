"""Fixtures of the rollout tests: a passing verdict for the release 'candidate', a plan, observations."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.gate import evaluate_gate, load_policy, load_record_set, write_verdict
from gatestats.records import POLARS_SCHEMA
from tests.gate.factory import policy_text, write_run_set

RULE = """
[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.6
"""

PLAN = """\
[rollout]
release = "candidate"
cost_cap_usd = 5.0

[[rollout.stages]]
name = "shadow"
owner = "ml-platform@example.com"
cohorts = ["internal", "beta"]
min_observations = 20

[[rollout.stages]]
name = "pilot"
owner = "support-leads@example.com"
share = 0.05
min_observations = 50
min_days = 1

[[rollout.triggers]]
stage = "*"
metric = "unauthorized_actions"
kind = "none_tolerated"

[[rollout.triggers]]
stage = "pilot"
metric = "accepted_rate"
kind = "vs_gate"
delta = 0.1
"""


@pytest.fixture(scope="session")
def verdict_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A passing gate verdict whose candidate (the release) is the system 'candidate'."""
    root = tmp_path_factory.mktemp("gate")
    policy_path = root / "policy.toml"
    policy_path.write_text(policy_text(RULE), encoding="utf-8")
    policy = load_policy(policy_path)
    outcomes = {f"c{i:03d}": ["passed"] for i in range(40)}
    base = write_run_set(root / "base", system="baseline", outcomes=outcomes)
    cand = write_run_set(root / "cand", system="candidate", outcomes=outcomes, policy=policy)
    verdict = evaluate_gate(policy, load_record_set(base), load_record_set(cand), now="2026-11-02T00:00:00Z")
    assert verdict.verdict == "pass"
    return write_verdict(verdict, root / "verdict.json")


@pytest.fixture
def plan_path(tmp_path: Path) -> Path:
    path = tmp_path / "rollout.toml"
    path.write_text(PLAN, encoding="utf-8")
    return path


def observations(n: int, *, start: int = 0, **fields: Any) -> pl.DataFrame:
    """``n`` contract records of production observations of the release 'candidate'."""
    rows = [
        {
            "schema_version": 1,
            "record_id": f"obs-{i}",
            "run_set_id": "prod",
            "system": "candidate",
            "case_id": f"ticket-{i}",
            "trial": 0,
            "attempt": 0,
            "outcome": "passed",
            "accepted": i % 3 != 0,
            "review_minutes": 2.5,
            "unauthorized_actions": 0,
            "cohort": "internal",
            "cost_usd": 0.02,
            **fields,
        }
        for i in range(start, start + n)
    ]
    if not rows:
        return pl.DataFrame(schema=POLARS_SCHEMA)
    frame = pl.DataFrame(rows, infer_schema_length=None)
    return frame.select(
        pl.col(name).cast(dtype) if name in frame.columns else pl.lit(None, dtype=dtype).alias(name)
        for name, dtype in POLARS_SCHEMA.items()
    )
