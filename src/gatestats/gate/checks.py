"""Blocking on silence: the preconditions a gate checks before any rule may decide.

Each failed check makes the verdict ``insufficient_evidence`` — never ``pass``: an empty or partial
record set, a run set whose manifest says it is incomplete (a crashed job), a system label or
digest other than the policy's, a pinned system part that differs or is missing (the wrong or an
unpinned model), records without verified checksums when the policy requires them, records of
several systems in one set, records of several layers in one set or two sides of different layers
(``replay``, ``live``, ``shadow``: never compared), cases missing against the case set or
mismatched case versions, fewer cases than ``min_cases``, fewer valid trials than needed, an
infrastructure-error rate above the limit, cases whose records suggest groups while the policy does
not say how its cases are grouped (:mod:`gatestats.gate.grouping`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import cache, partial
from typing import Literal

import polars as pl

from gatestats._query import collect_small
from gatestats.gate.grouping import grouping_check
from gatestats.gate.lineage import ancestor_check
from gatestats.gate.policy import Policy, SystemRequirement
from gatestats.gate.recordset import RecordSet
from gatestats.gate.verdict import CheckResult
from gatestats.vocabulary import INFRA_ERROR

__all__ = ["Side", "case_keys", "record_layers", "silence_checks"]

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
    """The (case_id, case_version) pairs present in ``records``.

    Parameters
    ----------
    records
        Run records with the columns ``case_id`` and ``case_version``.

    Returns
    -------
    set[tuple[str, str | None]]
        Each case id with its version (``None`` where the records name none).
    """
    rows = collect_small(records.lazy().select("case_id", "case_version").unique(), records.height).iter_rows()
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


def _run_complete(rs: RecordSet, side: Side) -> list[CheckResult]:
    """Whether the run set's manifest (where there is one) says the run completed."""
    if rs.manifest is None:
        return []
    if rs.manifest.get("complete") is True:
        return [_ok("run_complete", side, "the run set's manifest says complete")]
    error = rs.manifest.get("error")
    detail = f"{rs.path}: the run set is incomplete (the job crashed or was interrupted)" + (
        f": {error}" if error else "; resume it with `gatestats run --resume`"
    )
    return [_block("run_complete", side, detail)]


def _values(column: pl.Series) -> list[object]:
    """``column.unique().to_list()``; a column of one value read without a query."""
    return [column[0]] if column.n_unique() == 1 else column.unique().to_list()


def _system_checks(records: pl.DataFrame, side: Side, req: SystemRequirement) -> list[CheckResult]:
    """One system label and one system digest in the set, the ones the policy names."""
    out: list[CheckResult] = []
    # A set of one system and one digest (the usual) is told by a count of distinct values, not a query.
    labels, digests = (_values(records.get_column(name)) for name in ("system", "system_digest"))
    systems = sorted(str(s) for s in labels)
    if not systems:
        out.append(_block("one_system", side, "no record in the set names a system (the set is empty)"))
    elif len(systems) != 1:
        out.append(_block("one_system", side, f"records of several systems in one set: {', '.join(systems)}"))
    elif req.system is not None and systems[0] != req.system:
        out.append(_block("system_label", side, f"the policy expects system {req.system!r} (got {systems[0]!r})"))
    else:
        out.append(_ok("system_label", side, systems[0]))
    if len(digests) > 1:
        out.append(_block("one_system_digest", side, f"{len(digests)} different system digests in one set"))
    elif req.system_digest is not None and digests != [req.system_digest]:
        got = digests[0] if digests else "no record"
        out.append(_block("system_digest", side, f"the policy pins {req.system_digest} (got {got})"))
    return out


def _pin_check(records: pl.DataFrame, side: Side, part: str, wanted: str) -> CheckResult:
    """Whether every record names the pinned system part ``part`` with the policy's value."""
    values = records.get_column(part).unique().to_list()
    wrong = sorted(str(v) for v in values if v != wanted)
    if None in values:
        n = records.filter(pl.col(part).is_null()).height
        return _block(f"pinned:{part}", side, f"{n} records do not name {part} (unpinned; policy: {wanted!r})")
    if wrong:
        return _block(f"pinned:{part}", side, f"{part} is {_ids(wrong)}; the policy pins {wanted!r}")
    return _ok(f"pinned:{part}", side, f"{part} = {wanted}")


def _cases_present(rs: RecordSet, side: Side, keys: Callable[[], set[tuple[str, str | None]]]) -> list[CheckResult]:
    """The cases of the manifest's case set (where it lists them) that have no record (``keys``: the records')."""
    expected = _expected_cases(rs)
    if expected is None:
        return []
    missing = sorted(c for c, _ in expected - keys())
    if not missing:
        return []
    return [_block("cases_present", side, f"{len(missing)} cases of the case set have no record: {_ids(missing)}")]


def _infra_error_rate(policy: Policy, records: pl.DataFrame, side: Side) -> CheckResult:
    """Whether the share of infrastructure errors stays within the policy's limit."""
    attempts = records.height
    infra = int(records.get_column("outcome").eq(INFRA_ERROR).sum())  # not a copy of the records it counts
    rate = infra / attempts
    detail = f"{infra}/{attempts} attempts were infra errors ({rate:.1%}; limit {policy.max_infra_error_rate:.1%})"
    if rate > policy.max_infra_error_rate:
        return _block("infra_error_rate", side, detail)
    return _ok("infra_error_rate", side, detail)


def _side_checks(
    policy: Policy,
    rs: RecordSet,
    side: Side,
    req: SystemRequirement,
    keys: Callable[[], set[tuple[str, str | None]]],
) -> list[CheckResult]:
    """The checks of one side's record set, in a fixed order (``keys``: its records' :func:`case_keys`)."""
    records = rs.records
    if records.height == 0:
        return [_block("records_present", side, f"{rs.path}: the record set is empty: nothing was run")]
    out = [_ok("records_present", side, f"{records.height} records"), _integrity(policy, rs, side)]
    out += _run_complete(rs, side)
    out += _system_checks(records, side, req)
    out += [_pin_check(records, side, part, wanted) for part, wanted in req.pins.items()]
    out += _cases_present(rs, side, keys)
    out.append(_infra_error_rate(policy, records, side))
    return out


def _same_cases(base_cases: set[tuple[str, str | None]], cand_cases: set[tuple[str, str | None]]) -> list[CheckResult]:
    """Whether both sides ran the same cases at the same versions.

    A case's versions are compared as sets: a case one side ran at two versions and the other at one
    of them differs (``dict`` of the pairs kept whichever version a set's hash order gave last, so the
    check depended on the interpreter's string hashes).
    """
    base_versions = _versions_by_case(base_cases)
    cand_versions = _versions_by_case(cand_cases)
    mismatched = sorted(c for c in base_versions.keys() & cand_versions.keys() if base_versions[c] != cand_versions[c])
    only_base = sorted(base_versions.keys() - cand_versions.keys())
    only_cand = sorted(cand_versions.keys() - base_versions.keys())
    out: list[CheckResult] = []
    if mismatched:
        detail = f"case versions differ between baseline and candidate: {_ids(mismatched)}"
        out.append(_block("case_versions", "both", detail))
    parts = [f"missing from the candidate: {_ids(only_base)}"] if only_base else []
    parts += [f"missing from the baseline: {_ids(only_cand)}"] if only_cand else []
    if parts:
        out.append(_block("same_cases", "both", "; ".join(parts)))
    if not mismatched and not parts:
        out.append(_ok("same_cases", "both", f"{len(cand_cases)} cases at the same versions on both sides"))
    return out


def _versions_by_case(cases: set[tuple[str, str | None]]) -> dict[str, frozenset[str | None]]:
    versions: dict[str, set[str | None]] = {}
    for case_id, version in cases:
        versions.setdefault(case_id, set()).add(version)
    return {case_id: frozenset(found) for case_id, found in versions.items()}


def _case_set_version(policy: Policy, sides: dict[Side, RecordSet]) -> list[CheckResult]:
    """Whether each side ran the case set version the policy pins (if it pins one)."""
    if policy.case_set_version is None:
        return []
    out: list[CheckResult] = []
    for side, rs in sides.items():
        column = rs.records.get_column("task_set_version").unique().to_list()
        found = sorted({str(v) for v in column if v is not None})
        if found != [policy.case_set_version]:
            shown = ", ".join(found) or "none"
            detail = f"the policy pins case set {policy.case_set_version} (got {shown})"
            out.append(_block("case_set_version", side, detail))
    return out


def record_layers(records: pl.DataFrame) -> tuple[str, ...]:
    """The layers (``replay``, ``live``, ``shadow``) the records name, sorted; empty when none does.

    Parameters
    ----------
    records
        Run records (a frame without a ``layer`` column names none).

    Returns
    -------
    tuple[str, ...]
        The distinct non-null layers.
    """
    if "layer" not in records.columns or records.height == 0:
        return ()
    found = collect_small(records.lazy().select(pl.col("layer").drop_nulls().unique()), records.height)
    return tuple(sorted(str(v) for v in found.get_column("layer").to_list()))


def _unlayered(records: pl.DataFrame) -> int:
    """How many records name no layer."""
    return records.height if "layer" not in records.columns else records.get_column("layer").null_count()


def _layers(sides: dict[Side, RecordSet]) -> list[CheckResult]:
    """The gate never compares across layers: each side one layer, both sides the same one.

    Records that name no layer on either side (written before records had one) give no check.
    """
    named = {side: record_layers(rs.records) for side, rs in sides.items()}
    if not any(named.values()):
        return []
    out: list[CheckResult] = []
    shown: dict[Side, str] = {}
    for side, rs in sides.items():
        blank = _unlayered(rs.records)
        shown[side] = ", ".join(named[side]) or "none named"
        if len(named[side]) > 1 or (named[side] and blank):
            extra = f" and {blank} records that name none" if blank else ""
            detail = f"records of several layers in one set: {', '.join(named[side])}{extra}"
            out.append(_block("one_layer", side, detail))
    base, cand = shown["baseline"], shown["candidate"]
    if base != cand:
        detail = (
            f"baseline layer {base}, candidate layer {cand}: the gate does not compare across layers "
            "(replay suite, live sample, shadow traffic)"
        )
        out.append(_block("same_layer", "both", detail))
    elif not out:
        out.append(_ok("same_layer", "both", f"both sides are layer {cand}"))
    return out


def _min_cases(policy: Policy, n_cases: int) -> CheckResult:
    """Whether the candidate ran at least the policy's ``min_cases``."""
    if n_cases < policy.min_cases:
        return _block("min_cases", "candidate", f"{n_cases} cases; the policy needs at least {policy.min_cases}")
    return _ok("min_cases", "candidate", f"{n_cases} cases (minimum {policy.min_cases})")


def _min_valid_trials(summary: pl.DataFrame, side: Side, needed_trials: int) -> CheckResult:
    """Whether every case of ``side`` has at least ``needed_trials`` valid trials."""
    # The columns compared as they are (no query) when every case has enough trials, the usual answer.
    short = (summary.get_column("side") == side) & (summary.get_column("n") < needed_trials)
    if not short.any():
        return _ok("min_valid_trials", side, f"every case has at least {needed_trials} valid trials")
    thin = summary.filter(short)
    thin_ids = [f"{r['case_id']} ({r['n']})" for r in thin.sort("case_id").iter_rows(named=True)]
    detail = f"{thin.height} cases have fewer than {needed_trials} valid trials (infra errors do not count): " + _ids(
        thin_ids
    )
    return _block("min_valid_trials", side, detail)


def silence_checks(
    policy: Policy, baseline: RecordSet, candidate: RecordSet, summary: pl.DataFrame, needed_trials: int
) -> list[CheckResult]:
    """Every precondition of the gate, in a fixed order (see the module docstring).

    Parameters
    ----------
    policy
        The gate policy (limits, pins and the system each side must be).
    baseline
        The baseline's record set.
    candidate
        The candidate's record set.
    summary
        The per-case summary of both sides (column ``side``; ``n`` the valid trials of a case).
    needed_trials
        The valid trials every case needs on each side (``max(min_trials, k of every rule)``).

    Returns
    -------
    list[CheckResult]
        One result per check; any with status ``insufficient_evidence`` blocks the gate.
    """
    # each side's case keys read once, on first use (the case set's check and the same cases' check)
    base_keys, cand_keys = cache(partial(case_keys, baseline.records)), cache(partial(case_keys, candidate.records))
    checks = _side_checks(policy, baseline, "baseline", policy.baseline, base_keys)
    checks += _side_checks(policy, candidate, "candidate", policy.candidate, cand_keys)
    lineage = ancestor_check(candidate.records)  # only when the records carry correction lineage
    if lineage is not None:
        checks.append(lineage)
    if baseline.records.height == 0 or candidate.records.height == 0:
        return checks
    cand_cases = cand_keys()
    checks += _same_cases(base_keys(), cand_cases)
    checks += _case_set_version(policy, {"baseline": baseline, "candidate": candidate})
    checks += _layers({"baseline": baseline, "candidate": candidate})
    checks.append(_min_cases(policy, len(cand_cases)))
    checks += [_min_valid_trials(summary, side, needed_trials) for side in ("baseline", "candidate")]
    checks.append(grouping_check(policy, pl.concat([baseline.records, candidate.records], how="vertical_relaxed")))
    return checks
