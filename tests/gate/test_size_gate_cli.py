"""The size study's two hardest shapes through the `gatestats gate` command line (issue 12).

The false-pass rates are measured in-process (``tests/gate/test_size_gate.py`` through
:func:`evaluate_gate`, the engine the command runs; full size ``benchmarks/gate_rate_simulation.py``).
Here the same data are written as real, checksummed and sealed run sets and gated by the command:
the row's test and decision must be the engine's, and at the margin the command never says ``pass``.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import evaluate_gate, load_policy, load_record_set
from gatestats_runner.store import encode_record, seal_records
from tests.gate.factory import REGISTERED, policy_text

RULE = """
[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = {margin}
alpha = 0.05
"""


def _write(root: Path, system: str, passed: np.ndarray, groups: np.ndarray | None, policy_digest: str | None) -> Path:
    root.mkdir()
    n_cases, trials = passed.shape
    rows = [
        {
            "schema_version": 1,
            "record_id": f"{system}-{c}-{t}",
            "run_set_id": f"rs-{system}",
            "system": system,
            "case_id": f"c{c:04d}",
            "case_version": "v1",
            "case_group": None if groups is None else f"g{groups[c]:03d}",
            "trial": t,
            "attempt": 0,
            "outcome": "passed" if passed[c, t] else "failed",
            "model_id": "model-new",
            "system_digest": f"sd-{system}",
            "started_at": "2026-11-01T10:00:00Z",
        }
        for c in range(n_cases)
        for t in range(trials)
    ]
    (root / "records.jsonl").write_bytes(b"".join(encode_record(r) for r in rows))
    manifest = {
        "format": "gatestats-run-set/1",
        "run_set_id": f"rs-{system}",
        "complete": True,
        "cases": [{"case_id": f"c{c:04d}", "case_version": "v1"} for c in range(n_cases)],
        "trials": trials,
        "system": system,
        "policy_digest": policy_digest,
        "policy_registered_at": REGISTERED if policy_digest else None,
        "records_seal": seal_records(root),
    }
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


@pytest.mark.parametrize(
    ("n_cases", "trials", "margin", "broken_share", "group_size", "seed"),
    [
        (100, 20, 0.05, 0.05, 1, 7),  # regression concentrated in about five cases
        (200, 4, 0.2, 0.2, 5, 8),  # forty groups of five cases, a fifth of them broken
    ],
    ids=["concentrated", "few-groups"],
)
def test_the_command_decides_like_the_engine_and_does_not_pass_at_the_margin(
    tmp_path: Path, n_cases: int, trials: int, margin: float, broken_share: float, group_size: int, seed: int
) -> None:
    rng = np.random.default_rng(seed)
    n_groups = n_cases // group_size
    broken = np.repeat(rng.random(n_groups) < broken_share, group_size)
    p_base = np.where(broken, 1.0, rng.beta(2.0, 1.0, n_cases))
    p_cand = np.where(broken, 1.0 - margin / broken_share, p_base)
    groups = np.repeat(np.arange(n_groups), group_size) if group_size > 1 else None
    text = policy_text(RULE.format(margin=margin), k=1, min_trials=trials, min_cases=n_cases)
    (tmp_path / "policy.toml").write_text(text, encoding="utf-8")
    policy = load_policy(tmp_path / "policy.toml")
    base = _write(tmp_path / "base", "baseline", rng.random((n_cases, trials)) < p_base[:, None], groups, None)
    cand = _write(
        tmp_path / "cand", "candidate", rng.random((n_cases, trials)) < p_cand[:, None], groups, policy.digest
    )
    result = CliRunner().invoke(
        app, ["gate", "--policy", str(policy.path), "--baseline", str(base), "--candidate", str(cand), "--json"]
    )
    body = json.loads(result.stdout)
    (row,) = body["rules"]
    engine = evaluate_gate(policy, load_record_set(base), load_record_set(cand)).rules[0]
    assert (row["test"], row["decision"]) == (engine.test, engine.decision)
    assert row["test"] == "bounded-mean betting test"
    assert body["candidate"]["checksums"] == "verified"
    assert body["verdict"] != "pass"
    assert result.exit_code in {11, 12}
