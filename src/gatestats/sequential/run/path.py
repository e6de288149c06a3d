"""``OUT/sequential.json``: the path of a sequential run, one entry per batch, rewritten whole after each batch.

The path is a view of the two run sets, never a source of truth: it is computed from the gate's
evaluation of the records (:func:`gatestats.gate.evaluate_gate` on a ``[sequential]`` policy, whose
verdict binds every rule's sequence) and rewritten from them after every batch and on every resume,
so a path file lost or left behind by a killed run is simply written again. The gate recomputes
everything it decides on from the records and the policy's seed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path

from gatestats._typing import JSONObject, JSONValue
from gatestats.gate import Verdict
from gatestats.gate.bindings import SequentialBinding
from gatestats.gate.sequential_rules import batch_first_side
from gatestats.io.files import write_atomic

__all__ = ["PATH_FILE", "PATH_FORMAT", "path_document", "write_path"]

PATH_FORMAT = "gatestats-sequential-path/1"
PATH_FILE = "sequential.json"


def _point(binding: SequentialBinding, batch: int, n_cases: int) -> list[JSONObject]:
    """Each rule row at the end of batch ``batch``: its sequence's point, or the decision it made before."""
    out: list[JSONObject] = []
    for rule in binding.rules:
        entry: JSONObject = {"row": rule.row}
        if batch < len(rule.path):
            point = rule.path[batch]
            entry |= point.to_dict()
            entry["status"] = rule.status if rule.decided_at == n_cases else "undecided"
        else:  # decided at an earlier batch: stopping is final
            entry["status"] = rule.status
            entry["decided_at"] = rule.decided_at
        out.append(entry)
    return out


def path_document(verdict: Verdict, *, policy_digest: str, seed: int, state: str) -> JSONObject:
    """The path file's content for the run sets as the gate evaluated them.

    Parameters
    ----------
    verdict
        The gate's evaluation of both run sets under the sequential policy (its ``sequential`` part).
    policy_digest
        The registered policy's digest.
    seed
        The policy's seed (the case order and each batch's first system are drawn from it).
    state
        ``running`` (more batches may follow), ``decided`` or ``max_cases`` (the budget is spent).

    Returns
    -------
    JSONObject
        ``format``, the design, the order, one entry per complete batch (its cases, which system ran
        first, each rule's estimate, bounds and e-values), and the stop (cases, trials used, fixed and
        saved, the verdict so far).

    Raises
    ------
    ValueError
        The verdict is not a sequential gate's.
    """
    binding = verdict.sequential
    if binding is None:
        msg = "path_document: the verdict has no sequential part (the policy has no [sequential] table)"
        raise ValueError(msg)
    batches: list[JSONObject] = []
    start = 0
    for j, end in enumerate(binding.checkpoints):
        batches.append(
            {
                "batch": j + 1,
                "cases": list(binding.order[start:end]),
                "first": batch_first_side(seed, j),
                "n_cases": end,
                "rules": _point(binding, j, end),
            }
        )
        start = end
    return {
        "format": PATH_FORMAT,
        "policy_digest": policy_digest,
        "design": {
            "max_cases": binding.max_cases,
            "trials": binding.trials,
            "batch_cases": binding.batch_cases,
            "method": binding.method,
            "alpha_pass_share": binding.alpha_pass_share,
        },
        "seed": seed,
        "order": list(binding.order),
        "batches": batches,
        "stop": {
            "state": state,
            "n_cases": binding.stopped_at,
            "decided": binding.decided,
            "verdict": verdict.verdict,
            "trials_used": binding.trials_used,
            "trials_fixed": binding.trials_fixed,
            "trials_saved": binding.trials_saved,
        },
    }


def write_path(out: Path, document: Mapping[str, JSONValue]) -> Path:
    """Write ``OUT/sequential.json`` atomically (a reader sees the old file or the new one, whole).

    Parameters
    ----------
    out
        The output directory of the sequential run.
    document
        :func:`path_document`'s result.

    Returns
    -------
    Path
        The file written.
    """
    target = out / PATH_FILE
    write_atomic(target, (json.dumps(document, indent=2, ensure_ascii=False) + "\n").encode("utf-8"))
    return target
