"""The tables of a release report's ``data/``: the typed verdict, restated as tables.

Every number is the verdict's own (rules, checks, severe slices, flips, curves, per-slice pass
rates, cost, judges, infrastructure, each flipped case's trial counts): the report computes no
statistic and reads no record. Every table has a fixed schema (also when empty) and is sorted by its key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl

import gatestats
from gatestats._typing import JSONObject
from gatestats.gate import RecordSet, Verdict, VerdictFile
from gatestats.gate.bindings import FlipCount
from gatestats.report._release_data import DATA_FORMAT, SIDES
from gatestats.report._release_format import natural_key
from gatestats.vocabulary import NO_SLICE

__all__ = ["NO_SLICE", "compute_tables"]


_RULE_SCHEMA: Final[dict[str, pl.DataType]] = {
    "position": pl.Int64(),
    "rule": pl.String(),
    "row": pl.String(),
    "metric": pl.String(),
    "slice": pl.String(),
    "k": pl.Int64(),
    "kind": pl.String(),
    "action": pl.String(),
    "observed": pl.Float64(),
    "baseline": pl.Float64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "threshold": pl.Float64(),
    "margin": pl.Float64(),
    "test": pl.String(),
    "alpha": pl.Float64(),
    "pvalue_pass": pl.Float64(),
    "pvalue_fail": pl.Float64(),
    "pvalue_pass_adjusted": pl.Float64(),
    "pvalue_fail_adjusted": pl.Float64(),
    "n_cases": pl.Int64(),
    "decision": pl.String(),
    "reason": pl.String(),
    "cases_needed": pl.Int64(),
    "grader": pl.String(),
}
_ESTIMATE: Final[dict[str, pl.DataType]] = {
    "status": pl.String(),
    "estimate": pl.Float64(),
    "ci_low": pl.Float64(),
    "ci_high": pl.Float64(),
    "method": pl.String(),
    "reason": pl.String(),
}
_COST_SCHEMA: Final[dict[str, pl.DataType]] = {
    "side": pl.String(),
    "system": pl.String(),
    **_ESTIMATE,
    "interval_status": pl.String(),
    "interval_reason": pl.String(),
    "confidence_level": pl.Float64(),
    "accepted": pl.Int64(),
    "trials": pl.Int64(),
    "attempts": pl.Int64(),
    "attempts_infra_error": pl.Int64(),
    "n_cases": pl.Int64(),
    "total_spend_usd": pl.Float64(),
    "review_usd": pl.Float64(),
    "human_hours": pl.Float64(),
    "machine_hours": pl.Float64(),
    "calendar_hours": pl.Float64(),
    "source": pl.String(),
}


def _frame(rows: Sequence[Mapping[str, Any]], schema: Mapping[str, pl.DataType], sort: Sequence[str]) -> pl.DataFrame:
    frame = pl.DataFrame([{name: row.get(name) for name in schema} for row in rows], schema=dict(schema), orient="row")
    return frame.sort(list(sort), nulls_last=True, maintain_order=True) if frame.height else frame


def _rules(v: Verdict) -> pl.DataFrame:
    rows = [{**r.to_dict(), "position": i} for i, r in enumerate(v.rules)]
    return _frame(rows, _RULE_SCHEMA, ["position"])


def _checks(v: Verdict) -> pl.DataFrame:
    schema = {"position": pl.Int64(), "name": pl.String(), "side": pl.String(), "status": pl.String()}
    rows = [{**c.to_dict(), "position": i} for i, c in enumerate(v.checks)]
    return _frame(rows, {**schema, "detail": pl.String()}, ["position"])


def _severe(v: Verdict) -> tuple[pl.DataFrame, pl.DataFrame]:
    schema = {
        "slice": pl.String(),
        "n_cases": pl.Int64(),
        "n_trials": pl.Int64(),
        "n_passed": pl.Int64(),
        "threshold": pl.Float64(),
        "baseline_failures": pl.Int64(),
        "decision": pl.String(),
        "reason": pl.String(),
    }
    fail_schema = {
        "slice": pl.String(),
        "case_id": pl.String(),
        "trial": pl.Int64(),
        "outcome": pl.String(),
        "bound": pl.String(),
    }
    failures = [{**f.to_dict(), "slice": s.slice} for s in v.severe_slices for f in s.failures]
    return (
        _frame([s.to_dict() for s in v.severe_slices], schema, ["slice"]),
        _frame(failures, fail_schema, ["slice", "case_id", "trial"]),
    )


def _flips(v: Verdict) -> pl.DataFrame:
    """The flipped cases with each side's passed/valid trials, as the verdict binds them (``flip_counts``).

    A verdict written before it bound the counts shows its flips without them (null, shown as ``—``).
    Sorted by direction, then case id in natural order (``case-2`` before ``case-11``).
    """
    schema = {
        "direction": pl.String(),
        "case": pl.String(),
        **{name: pl.Int64() for name in FlipCount.__dataclass_fields__ if name.startswith(SIDES)},
    }
    counts: dict[tuple[str, str], JSONObject] = {(c.direction, c.case): c.to_dict() for c in v.flip_counts}
    rows = [
        counts.get((direction, case), {"direction": direction, "case": case})
        for direction, cases in (("pass_to_fail", v.flips_pass_to_fail), ("fail_to_pass", v.flips_fail_to_pass))
        for case in sorted(cases, key=natural_key)
    ]
    return pl.DataFrame([{name: row.get(name) for name in schema} for row in rows], schema=schema, orient="row")


def _curves(v: Verdict) -> pl.DataFrame:
    schema = {
        "metric": pl.String(),
        "side": pl.String(),
        "k": pl.Int64(),
        **_ESTIMATE,
        "numerator": pl.String(),
        "denominator": pl.Int64(),
        "n_cases": pl.Int64(),
        "confidence_level": pl.Float64(),
    }
    return _frame([p.to_dict() for p in v.curves], schema, ["metric", "side", "k"])


def _slices(v: Verdict) -> pl.DataFrame:
    schema = {
        "slice": pl.String(),
        "side": pl.String(),
        "severe": pl.Boolean(),
        "n_cases": pl.Int64(),
        "n_valid_trials": pl.Int64(),
        "n_passed": pl.Int64(),
        **_ESTIMATE,
        "confidence_level": pl.Float64(),
    }
    return _frame([r.to_dict() for r in v.slice_rates], schema, ["slice", "side"])


def _cost(v: Verdict) -> pl.DataFrame:
    """Cost per side: the verdict's own cost summary (the report computes none)."""
    per_system = v.cost.per_system if v.cost is not None else None
    error = v.cost.error if v.cost is not None else "the verdict binds no cost summary (made before it did)"
    groups = {g["group"].get("system"): g for g in (per_system or {}).get("groups", [])}
    rows = []
    for side in SIDES:
        g = groups.get(side)
        base = {"side": side, "system": getattr(v, side).system, "source": "verdict"}
        if g is None:
            reason = error or f"no cost summary for the {side}"
            rows.append({**base, "status": "insufficient_evidence", "reason": reason})
            continue
        cpa = g["cost_per_accepted"]
        rows.append(
            {
                **base,
                **{k: g.get(k) for k in ("status", "reason", "accepted", "trials", "attempts", "attempts_infra_error")},
                **{k: g.get(k) for k in ("n_cases", "total_spend_usd", "human_hours", "machine_hours")},
                "calendar_hours": g.get("calendar_hours"),
                "review_usd": (g.get("spend_usd") or {}).get("review"),
                **{k: cpa.get(k) for k in ("estimate", "ci_low", "ci_high", "interval_status", "interval_reason")},
                "method": cpa.get("method"),
                "confidence_level": cpa.get("confidence_level"),
            }
        )
    return _frame(rows, _COST_SCHEMA, ["side"])


def _judges(v: Verdict) -> pl.DataFrame:
    schema = {"grader": pl.String(), "can_vote": pl.Boolean(), "calibration_versions": pl.String()}
    rows = [
        {
            "grader": name,
            "can_vote": status.can_vote,
            "calibration_versions": ", ".join(status.calibration_versions) or None,
            "reasons": "; ".join(status.reasons) or None,
        }
        for name, status in sorted((v.judges or {}).items())
    ]
    return _frame(rows, {**schema, "reasons": pl.String()}, ["grader"])


def _infra(v: Verdict) -> tuple[pl.DataFrame, pl.DataFrame]:
    schema = {
        "side": pl.String(),
        "system": pl.String(),
        "attempts": pl.Int64(),
        "infra_errors": pl.Int64(),
        "infra_error_rate": pl.Float64(),
        "max_infra_error_rate": pl.Float64(),
        "resource_killed": pl.Int64(),
        "infra_error_cases": pl.String(),
    }
    rows: list[dict[str, object]] = []
    bounds: list[dict[str, object]] = []
    for side in SIDES:
        item = v.infra.get(side)
        row: dict[str, object] = {
            "side": side,
            "system": getattr(v, side).system,
            "max_infra_error_rate": v.policy.max_infra_error_rate,
        }
        if item is not None:
            row |= {
                "attempts": item.attempts,
                "infra_errors": item.infra_errors,
                "infra_error_rate": item.infra_errors / item.attempts if item.attempts else None,
                "resource_killed": item.resource_killed,
                "infra_error_cases": ", ".join(item.infra_error_cases) or None,
            }
            bounds += [{"side": side, "bound": b, "count": n} for b, n in item.bounds.items()]
        rows.append(row)
    bound_schema = {"side": pl.String(), "bound": pl.String(), "count": pl.Int64()}
    return _frame(rows, schema, ["side"]), _frame(bounds, bound_schema, ["side", "bound"])


def _provenance(verdict: VerdictFile) -> JSONObject:
    body = verdict.body
    policy, registration = body["policy"], body["registration"]
    sides: JSONObject = {}
    for side in SIDES:
        item = body[side]
        sides[side] = {
            key: item.get(key)
            for key in (
                "system",
                "system_digest",
                "system_parts",
                "case_set_version",
                "task_set_version",
                "run_set_id",
                "kind",
                "path",
                "digest",
                "files",
                "n_records",
                "complete",
                "origin",
                "checksums",
                "imported_from",
                "imported_source_digest",
                "imported_by",
                "imported_at",
            )
        }
    return {
        "verdict": {
            "path": str(verdict.path),
            "digest": verdict.digest,
            "format": body["format"],
            "verdict": body["verdict"],
            "exit_code": body.get("exit_code"),
            "created_at": body["created_at"],
            "tool_version": body["tool_version"],
        },
        "policy": {
            key: policy.get(key)
            for key in ("name", "version", "digest", "path", "k", "confidence_level", "seed", "multiplicity")
        },
        "registration": {
            key: registration.get(key) for key in ("registered_at", "first_record_at", "run_set", "origin")
        },
        "sides": sides,
        "report": {"format": DATA_FORMAT, "gatestats_version": gatestats.__version__},
    }


def compute_tables(verdict: VerdictFile, sides: Mapping[str, RecordSet]) -> tuple[dict[str, pl.DataFrame], JSONObject]:
    """Every table of ``data/`` and the provenance document.

    Parameters
    ----------
    verdict
        The verdict as read by :func:`gatestats.gate.read_verdict` (typed, digest checked).
    sides
        Both record sets, already checked against the digests the verdict binds; no table is read
        from them (every number is the verdict's).

    Returns
    -------
    tuple
        ``{table name: DataFrame}`` (see ``TABLES``) and the provenance mapping.
    """
    v = verdict.verdict
    severe, failures = _severe(v)
    infra, bounds = _infra(v)
    tables = {
        "rules": _rules(v),
        "checks": _checks(v),
        "severe_slices": severe,
        "severe_failures": failures,
        "flips": _flips(v),
        "curves": _curves(v),
        "slices": _slices(v),
        "cost": _cost(v),
        "judges": _judges(v),
        "infra": infra,
        "bounds": bounds,
    }
    return tables, _provenance(verdict)
