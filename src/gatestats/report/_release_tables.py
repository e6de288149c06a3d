"""The tables of a release report's ``data/``, computed from the checked verdict and its records.

Tables that restate the verdict (rules, checks, severe slices, flips, judges, infra) keep its numbers
exactly; curves (pass^k and pass@k over k) and per-slice pass rates are computed from the records
with :func:`gatestats.estimators.analyze` at the policy's confidence level and seed; the cost table
is the verdict's own cost summary when it has one (else :func:`gatestats.cost.cost_per_accepted`
without rates). Every table has a fixed schema (also when empty) and is sorted by its key.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final

import polars as pl

import gatestats
from gatestats.cost import cost_per_accepted
from gatestats.errors import GatestatsError
from gatestats.estimators import analyze, case_summary
from gatestats.gate import RecordSet
from gatestats.report._release_data import DATA_FORMAT, SIDES, VerdictInput

__all__ = ["NO_SLICE", "compute_tables"]

#: The slice of cases whose records carry no slice.
NO_SLICE: Final = "(none)"

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


def _both(sides: Mapping[str, RecordSet]) -> pl.DataFrame:
    """Both sides' records with ``system`` relabelled ``baseline`` / ``candidate`` (as the gate does)."""
    frames = [sides[s].records.with_columns(pl.lit(s).alias("system")) for s in SIDES]
    return pl.concat(frames, how="vertical_relaxed")


def _rules(body: Mapping[str, Any]) -> pl.DataFrame:
    rows = [{**r, "position": i} for i, r in enumerate(body["rules"])]
    return _frame(rows, _RULE_SCHEMA, ["position"])


def _checks(body: Mapping[str, Any]) -> pl.DataFrame:
    schema = {"position": pl.Int64(), "name": pl.String(), "side": pl.String(), "status": pl.String()}
    rows = [{**c, "position": i} for i, c in enumerate(body["checks"])]
    return _frame(rows, {**schema, "detail": pl.String()}, ["position"])


def _severe(body: Mapping[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
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
    failures = [{**f, "slice": s["slice"]} for s in body["severe_slices"] for f in s.get("failures", [])]
    return (
        _frame(body["severe_slices"], schema, ["slice"]),
        _frame(failures, fail_schema, ["slice", "case_id", "trial"]),
    )


def _case_labels(records: pl.DataFrame) -> pl.DataFrame:
    """Per case of one side: the flip label (``case_id@version``), valid trials and passes."""
    schema = {"case": pl.String(), "passed": pl.Int64(), "valid": pl.Int64()}
    if records.height == 0:
        return pl.DataFrame(schema=schema)
    summary = case_summary(records, allow_several_versions=True)
    label = (
        pl.when(pl.col("case_version").is_null())
        .then(pl.col("case_id"))
        .otherwise(pl.concat_str([pl.col("case_id"), pl.lit("@"), pl.col("case_version")]))
    )
    return summary.select(
        label.alias("case"), pl.col("c").cast(pl.Int64).alias("passed"), pl.col("n").cast(pl.Int64).alias("valid")
    )


def _flips(body: Mapping[str, Any], sides: Mapping[str, RecordSet]) -> pl.DataFrame:
    rows = [
        {"direction": direction, "case": case}
        for direction in ("pass_to_fail", "fail_to_pass")
        for case in body["flips"].get(direction, [])
    ]
    flips = pl.DataFrame(rows, schema={"direction": pl.String(), "case": pl.String()}, orient="row")
    for side in SIDES:
        counts = _case_labels(sides[side].records).rename({"passed": f"{side}_passed", "valid": f"{side}_valid"})
        flips = flips.join(counts, on="case", how="left")
    return flips.sort("direction", "case")


def _estimate_row(side: str, e: Any) -> dict[str, Any]:
    return {
        "side": side,
        "status": e.status,
        "estimate": e.estimate,
        "ci_low": e.ci_low,
        "ci_high": e.ci_high,
        "method": e.method,
        "reason": e.reason,
        "numerator": e.numerator,
        "denominator": e.denominator,
        "n_cases": e.n_cases,
    }


def _curves(both: pl.DataFrame, body: Mapping[str, Any], max_k: int) -> pl.DataFrame:
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
    if both.height == 0:
        return _frame([], schema, [])
    policy = body["policy"]
    result = analyze(
        both, ks=range(1, max_k + 1), confidence_level=policy["confidence_level"], seed=int(policy["seed"])
    )
    rows = [
        {**_estimate_row(s.system, e), "metric": e.metric, "k": e.k, "confidence_level": e.confidence_level}
        for s in result.systems
        for e in s.estimates
    ]
    return _frame(rows, schema, ["metric", "side", "k"])


def _slices(both: pl.DataFrame, body: Mapping[str, Any]) -> pl.DataFrame:
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
    policy = body["policy"]
    severe = set(policy.get("severe_slices") or [])
    # a case without slices (null or empty list) is in the slice NO_SLICE
    unsliced = pl.col("slices").list.len().fill_null(0) == 0
    listed = pl.when(unsliced).then(pl.lit([NO_SLICE], dtype=pl.List(pl.String))).otherwise(pl.col("slices"))
    per_case = both.select("case_id", listed.alias("slices")).explode("slices").unique()
    rows: list[dict[str, Any]] = []
    for name in sorted(per_case.get_column("slices").unique().to_list()):
        cases = per_case.filter(pl.col("slices") == name).get_column("case_id").unique()
        frame = both.filter(pl.col("case_id").is_in(cases.implode()))
        result = analyze(frame, ks=[1], confidence_level=policy["confidence_level"], seed=int(policy["seed"]))
        found = {s.system: s for s in result.systems}
        for side in SIDES:
            base = {"slice": name, "side": side, "severe": name in severe}
            if side not in found:
                reason = f"the {side} has no record in slice {name!r}"
                rows.append({**base, "n_cases": 0, "status": "insufficient_evidence", "reason": reason})
                continue
            s = found[side]
            e = s.get("pass_hat_k", 1)
            rows.append(
                {
                    **base,
                    **_estimate_row(side, e),
                    "n_cases": s.n_cases,
                    "n_valid_trials": s.n_valid_trials,
                    "n_passed": s.n_passed,
                    "confidence_level": e.confidence_level,
                }
            )
    return _frame(rows, schema, ["slice", "side"])


def _cost(body: Mapping[str, Any], both: pl.DataFrame) -> pl.DataFrame:
    """Cost per side: the verdict's own cost summary when it has one, else computed without rates."""
    cost = body.get("cost")
    per_system = cost.get("per_system") if isinstance(cost, dict) else None
    source = "verdict"
    error = cost.get("error") if isinstance(cost, dict) else None
    if per_system is None and error is None:
        policy = body["policy"]
        source = "computed"
        try:
            per_system = cost_per_accepted(
                both, confidence_level=policy["confidence_level"], seed=int(policy["seed"])
            ).to_dict()
        except (GatestatsError, ValueError) as exc:
            error = str(exc)
    groups = {g["group"].get("system"): g for g in (per_system or {}).get("groups", [])}
    rows = []
    for side in SIDES:
        g = groups.get(side)
        base = {"side": side, "system": body[side].get("system"), "source": source}
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


def _judges(body: Mapping[str, Any]) -> pl.DataFrame:
    schema = {"grader": pl.String(), "can_vote": pl.Boolean(), "calibration_versions": pl.String()}
    rows = [
        {
            "grader": name,
            "can_vote": bool(status.get("can_vote")),
            "calibration_versions": ", ".join(status.get("calibration_versions") or []) or None,
            "reasons": "; ".join(status.get("reasons") or []) or None,
        }
        for name, status in sorted((body.get("judges") or {}).items())
    ]
    return _frame(rows, {**schema, "reasons": pl.String()}, ["grader"])


def _infra(body: Mapping[str, Any]) -> tuple[pl.DataFrame, pl.DataFrame]:
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
    infra = body.get("infra") or {}
    limit = body["policy"].get("max_infra_error_rate")
    rows, bounds = [], []
    for side in SIDES:
        item = infra.get(side) or {}
        attempts = item.get("attempts")
        errors = item.get("infra_errors")
        rows.append(
            {
                "side": side,
                "system": body[side].get("system"),
                "attempts": attempts,
                "infra_errors": errors,
                "infra_error_rate": errors / attempts if attempts and errors is not None else None,
                "max_infra_error_rate": limit,
                "resource_killed": item.get("resource_killed"),
                "infra_error_cases": ", ".join(item.get("infra_error_cases") or []) or None,
            }
        )
        bounds += [{"side": side, "bound": b, "count": n} for b, n in (item.get("bounds") or {}).items()]
    bound_schema = {"side": pl.String(), "bound": pl.String(), "count": pl.Int64()}
    return _frame(rows, schema, ["side"]), _frame(bounds, bound_schema, ["side", "bound"])


def _provenance(verdict: VerdictInput) -> dict[str, Any]:
    body = verdict.body
    policy, registration = body["policy"], body["registration"]
    sides = {}
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


def compute_tables(verdict: VerdictInput, sides: Mapping[str, RecordSet]) -> tuple[dict[str, pl.DataFrame], Any]:
    """Every table of ``data/`` and the provenance document.

    Curves run over k = 1..K where K is the largest number of trials of any case on either side
    (at least the policy's k); a k above a case's valid trials is ``insufficient_evidence`` with
    the reason. Curves and slices use every case, severe ones included (the rules table keeps the
    gate's own numbers, which leave severe cases out).
    """
    body = verdict.body
    both = _both(sides)
    max_k = int(body["policy"].get("k") or 1)
    if both.height:
        trials = both.group_by("system", "case_id", "case_version").agg(pl.col("trial").n_unique())
        max_k = max(max_k, int(trials.get_column("trial").max()))  # type: ignore[arg-type]
    severe, failures = _severe(body)
    infra, bounds = _infra(body)
    tables = {
        "rules": _rules(body),
        "checks": _checks(body),
        "severe_slices": severe,
        "severe_failures": failures,
        "flips": _flips(body, sides),
        "curves": _curves(both, body, max_k),
        "slices": _slices(both, body),
        "cost": _cost(body, both),
        "judges": _judges(body),
        "infra": infra,
        "bounds": bounds,
    }
    return tables, _provenance(verdict)
