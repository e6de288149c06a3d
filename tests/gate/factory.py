"""Build run-set directories (manifest + records) for gate tests, as the runner would write them:
checksummed lines (the runner's encoder) and the records sealed in the manifest."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from gatestats.gate import Policy
from gatestats_runner.store import encode_record, seal_records

T0 = "2026-11-01T10:00:00Z"
REGISTERED = "2026-11-01T09:00:00Z"

POLICY_HEAD = """
format = "gatestats-policy/1"
name = "test-policy"
version = "1"
k = {k}
min_cases = {min_cases}
min_trials = {min_trials}
max_infra_error_rate = 0.1
on_insufficient_evidence = "block"
multiplicity = "holm"
{extra}

[baseline]
system = "baseline"

[candidate]
system = "candidate"
pins = {{ model_id = "model-new" }}
"""


def policy_text(rules: str = "", *, k: int = 1, min_cases: int = 10, min_trials: int = 1, extra: str = "") -> str:
    """A policy file text with the standard head and the given [[rules]] tables."""
    return POLICY_HEAD.format(k=k, min_cases=min_cases, min_trials=min_trials, extra=extra) + "\n" + rules


def write_run_set(
    root: Path,
    *,
    system: str,
    outcomes: Mapping[str, Sequence[str]],
    policy: Policy | None = None,
    slices: Mapping[str, Sequence[str]] | None = None,
    model_id: str | None = "model-new",
    complete: bool = True,
    registered_at: str | None = REGISTERED,
    cost: float | Mapping[str, float] | None = 0.01,
    retries: Mapping[tuple[str, int], int] | None = None,
    retry_outcome: str = "infra_error",
    case_versions: Mapping[str, str] | None = None,
    extra_cases: Sequence[str] = (),
) -> Path:
    """A run set with one final record per (case, trial) and ``retries`` attempts (``retry_outcome``) before it.

    ``outcomes[case]`` lists the final outcome of each trial; ``cost`` is the spend of every attempt
    (per case when a mapping); ``extra_cases`` are in the manifest's case set but have no record.
    """
    root.mkdir(parents=True)
    versions = {c: (case_versions or {}).get(c, "v-" + hashlib.sha1(c.encode()).hexdigest()[:8]) for c in outcomes}
    for c in extra_cases:
        versions[c] = "v-" + hashlib.sha1(c.encode()).hexdigest()[:8]
    trials = max(len(v) for v in outcomes.values())
    records: list[dict[str, Any]] = []
    n = 0
    for case_id, finals in outcomes.items():
        for trial, outcome in enumerate(finals):
            n_retry = (retries or {}).get((case_id, trial), 0)
            for attempt in range(n_retry + 1):
                final = attempt == n_retry
                out = outcome if final else retry_outcome
                spend = cost.get(case_id, 0.01) if isinstance(cost, Mapping) else cost
                start = f"2026-11-01T10:{(n // 60) % 60:02d}:{n % 60:02d}Z"
                records.append(
                    {
                        "schema_version": 1,
                        "record_id": f"{system}-{case_id}-{trial}-{attempt}",
                        "run_set_id": f"rs-{system}",
                        "system": system,
                        "case_id": case_id,
                        "case_version": versions[case_id],
                        "trial": trial,
                        "attempt": attempt,
                        "outcome": out,
                        "bound": "wall_clock" if out == "resource_killed" else None,
                        "model_id": model_id,
                        "system_digest": f"sd-{system}-{model_id}",
                        "task_set_version": "cs-1",
                        "slices": list((slices or {}).get(case_id, [])) or None,
                        "cost_usd": spend,
                        "machine_seconds": 1.0,
                        "started_at": start,
                        "ended_at": start,
                    }
                )
                n += 1
    (root / "records.jsonl").write_bytes(b"".join(encode_record(r) for r in records))
    manifest = {
        "format": "gatestats-run-set/1",
        "run_set_id": f"rs-{system}",
        "complete": complete,
        "case_set_version": "cs-1",
        "cases": [{"case_id": c, "case_version": v} for c, v in versions.items()],
        "trials": trials,
        "system": system,
        "policy_digest": None if policy is None else policy.digest,
        "policy_registered_at": None if policy is None else registered_at,
        "records_seal": seal_records(root),
    }
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return root


def rewrite_records(root: Path, rows: Sequence[Mapping[str, Any]]) -> None:
    """Replace a factory run set's records as the runner would have written them (checksummed, sealed)."""
    (root / "records.jsonl").write_bytes(b"".join(encode_record(dict(r)) for r in rows))
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest["records_seal"] = seal_records(root)
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def prepared_never_ran(root: Path) -> None:
    """Turn a factory run set into one that was prepared (``run --prepare``) and never ran."""
    (root / "records.jsonl").unlink()
    manifest = json.loads((root / "manifest.json").read_text(encoding="utf-8"))
    manifest.update(complete=False, records_seal=None)
    (root / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def bernoulli_outcomes(
    probabilities: Sequence[float], trials: int, rng: np.random.Generator, prefix: str = "c"
) -> dict[str, list[str]]:
    """Outcomes per case drawn with the given per-case pass probabilities."""
    return {
        f"{prefix}{i:04d}": ["passed" if rng.random() < p else "failed" for _ in range(trials)]
        for i, p in enumerate(probabilities)
    }
