"""Blocking on silence: the preconditions a gate checks before any rule may decide.

Each failed check makes the verdict ``insufficient_evidence`` — never ``pass``: an empty or partial
record set, a run set whose manifest says it is incomplete (a crashed job), a system label or
digest other than the policy's, a pinned system part that differs or is missing (the wrong or an
unpinned model), records without verified checksums when the policy requires them, records of
several systems in one set, cases missing against the case set or
mismatched case versions, fewer cases than ``min_cases``, fewer valid trials than needed, an
infrastructure-error rate above the limit.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

import polars as pl

from gatestats.gate.policy import Policy, SystemRequirement
from gatestats.gate.recordset import RecordSet
from gatestats.gate.verdict import CheckResult

__all__ = ["Side", "case_keys", "silence_checks"]

Side = Literal["baseline", "candidate"]
_SHOWN = 8


def _ids(items: Sequence[str]) -> str:
    shown = ", ".join(items[:_SHOWN])
    return shown + (f" and {len(items) - _SHOWN} more" if len(items) > _SHOWN else "")


def _ok(name: str, side: Side | Literal["both"], detail: str) -> CheckResult:
    return CheckResult(name=name, side=side, status="ok", detail=detail)


def _block(name: str, side: Side | Literal["both", "policy"], detail: str) -> CheckResult:
    return CheckResult(name=name, side=side, status="insufficient_evidence", detail=detail)


def case_keys(records: pl.DataFrame) -> set[tuple[str, str | None]]:
    """The (case_id, case_version) pairs present in ``records``."""
    rows = records.select("case_id", "case_version").unique().iter_rows()
    return {(str(a), None if b is None else str(b)) for a, b in rows}


def _expected_cases(rs: RecordSet) -> set[tuple[str, str | None]] | None:
    if rs.manifest is None or not isinstance(rs.manifest.get("cases"), list):
        return None
    return {(str(c["case_id"]), c.get("case_version")) for c in rs.manifest["cases"]}


def _integrity(policy: Policy, rs: RecordSet, side: Side) -> CheckResult:
    """Whether the records carry verified checksums, and whether the policy accepts them if not."""
    if rs.checksums == "verified":
        return _ok("checksums", side, f"every record's checksum verified ({rs.origin})")
    unverified = [f.path for f in rs.files if f.checksums == "none"]
    detail = (
        f"{len(unverified)} record file(s) without checksums ({rs.origin}: {_ids(unverified)}): "
        "nothing shows these records were not edited after they were written"
    )
    if policy.require_checksums:
        return _block(
            "checksums",
            side,
            detail + "; the policy requires checksums (require_checksums = true): write the records with "
            "`gatestats run` or a `gatestats import`, or set require_checksums = false to accept unverified evidence",
        )
    return _ok("checksums", side, detail + "; accepted as unverified evidence (require_checksums = false)")


def _side_checks(policy: Policy, rs: RecordSet, side: Side, req: SystemRequirement) -> list[CheckResult]:
    out: list[CheckResult] = []
    records = rs.records
    if records.height == 0:
        return [_block("records_present", side, f"{rs.path}: the record set is empty: nothing was run")]
    out.append(_ok("records_present", side, f"{records.height} records"))
    out.append(_integrity(policy, rs, side))
    if rs.manifest is not None:
        if rs.manifest.get("complete") is True:
            out.append(_ok("run_complete", side, "the run set's manifest says complete"))
        else:
            error = rs.manifest.get("error")
            out.append(
                _block(
                    "run_complete",
                    side,
                    f"{rs.path}: the run set is incomplete (the job crashed or was interrupted)"
                    + (f": {error}" if error else "; resume it with `gatestats run --resume`"),
                )
            )
    systems = sorted(str(s) for s in records.get_column("system").unique().to_list())
    if len(systems) != 1:
        out.append(_block("one_system", side, f"records of several systems in one set: {', '.join(systems)}"))
    elif req.system is not None and systems[0] != req.system:
        out.append(_block("system_label", side, f"the policy expects system {req.system!r} (got {systems[0]!r})"))
    else:
        out.append(_ok("system_label", side, systems[0]))
    digests = records.get_column("system_digest").unique().to_list()
    if len(digests) > 1:
        out.append(_block("one_system_digest", side, f"{len(digests)} different system digests in one set"))
    elif req.system_digest is not None and digests != [req.system_digest]:
        out.append(_block("system_digest", side, f"the policy pins {req.system_digest} (got {digests[0]})"))
    for part, wanted in req.pins.items():
        values = records.get_column(part).unique().to_list()
        wrong = sorted(str(v) for v in values if v != wanted)
        if None in values:
            n = records.filter(pl.col(part).is_null()).height
            out.append(_block(f"pinned:{part}", side, f"{n} records do not name {part} (unpinned; policy: {wanted!r})"))
        elif wrong:
            out.append(_block(f"pinned:{part}", side, f"{part} is {_ids(wrong)}; the policy pins {wanted!r}"))
        else:
            out.append(_ok(f"pinned:{part}", side, f"{part} = {wanted}"))
    expected = _expected_cases(rs)
    if expected is not None:
        missing = sorted(c for c, _ in expected - case_keys(records))
        if missing:
            out.append(
                _block("cases_present", side, f"{len(missing)} cases of the case set have no record: {_ids(missing)}")
            )
    attempts = records.height
    infra = records.filter(pl.col("outcome") == "infra_error").height
    rate = infra / attempts
    detail = f"{infra}/{attempts} attempts were infra errors ({rate:.1%}; limit {policy.max_infra_error_rate:.1%})"
    out.append(
        _block("infra_error_rate", side, detail)
        if rate > policy.max_infra_error_rate
        else _ok("infra_error_rate", side, detail)
    )
    return out


def silence_checks(
    policy: Policy, baseline: RecordSet, candidate: RecordSet, summary: pl.DataFrame, needed_trials: int
) -> list[CheckResult]:
    """Every precondition of the gate, in a fixed order (see the module docstring).

    ``summary`` is the per-case summary of both sides (column ``side``); ``needed_trials`` the valid
    trials every case needs on each side (``max(min_trials, k of every rule)``).
    """
    checks = _side_checks(policy, baseline, "baseline", policy.baseline)
    checks += _side_checks(policy, candidate, "candidate", policy.candidate)
    if baseline.records.height == 0 or candidate.records.height == 0:
        return checks
    base_cases, cand_cases = case_keys(baseline.records), case_keys(candidate.records)
    base_versions = dict(base_cases)
    cand_versions = dict(cand_cases)
    mismatched = sorted(c for c in base_versions.keys() & cand_versions.keys() if base_versions[c] != cand_versions[c])
    only_base = sorted(base_versions.keys() - cand_versions.keys())
    only_cand = sorted(cand_versions.keys() - base_versions.keys())
    if mismatched:
        checks.append(
            _block("case_versions", "both", f"case versions differ between baseline and candidate: {_ids(mismatched)}")
        )
    if only_base or only_cand:
        parts = []
        if only_base:
            parts.append(f"missing from the candidate: {_ids(only_base)}")
        if only_cand:
            parts.append(f"missing from the baseline: {_ids(only_cand)}")
        checks.append(_block("same_cases", "both", "; ".join(parts)))
    if not mismatched and not only_base and not only_cand:
        checks.append(_ok("same_cases", "both", f"{len(cand_cases)} cases at the same versions on both sides"))
    sides: tuple[Side, Side] = ("baseline", "candidate")
    versions: dict[Side, list[str]] = {
        side: sorted({str(v) for v in rs.records.get_column("task_set_version").unique().to_list() if v is not None})
        for side, rs in zip(sides, (baseline, candidate), strict=True)
    }
    if policy.case_set_version is not None:
        for side, found in versions.items():
            if found != [policy.case_set_version]:
                shown = ", ".join(found) or "none"
                detail = f"the policy pins case set {policy.case_set_version} (got {shown})"
                checks.append(_block("case_set_version", side, detail))
    n_cases = len(cand_cases)
    if n_cases < policy.min_cases:
        checks.append(
            _block("min_cases", "candidate", f"{n_cases} cases; the policy needs at least {policy.min_cases}")
        )
    else:
        checks.append(_ok("min_cases", "candidate", f"{n_cases} cases (minimum {policy.min_cases})"))
    for side in sides:
        thin = summary.filter((pl.col("side") == side) & (pl.col("n") < needed_trials))
        if thin.height:
            thin_ids = [f"{r['case_id']} ({r['n']})" for r in thin.sort("case_id").iter_rows(named=True)]
            checks.append(
                _block(
                    "min_valid_trials",
                    side,
                    f"{thin.height} cases have fewer than {needed_trials} valid trials (infra errors do not count): "
                    + _ids(thin_ids),
                )
            )
        else:
            checks.append(_ok("min_valid_trials", side, f"every case has at least {needed_trials} valid trials"))
    return checks
