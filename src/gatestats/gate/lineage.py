"""The gate refuses evidence from an ancestor: a revised candidate earns its verdict under its own identity.

The correction loop (``gatestats correct``) records on every trial the candidate digest, the
parent's digest and the round. A candidate record set that holds, for one case, both a candidate
and one of its ancestors (a digest that another record names as its parent, directly or through
earlier rounds) mixes the evidence of two candidates: the ancestor's passes or failures are not
the revision's. The gate then blocks (insufficient evidence) and names the cases; the revision must
run the whole required sequence (k trials of every case) under its new digest.
"""

from __future__ import annotations

import polars as pl

from gatestats.gate.verdict import CheckResult

__all__ = ["ancestor_check"]

_SHOWN = 8


def _ancestors(parents: dict[tuple[str, str], str], case_id: str, digest: str) -> set[str]:
    found: set[str] = set()
    current = parents.get((case_id, digest))
    while current is not None and current not in found:
        found.add(current)
        current = parents.get((case_id, current))
    return found


def ancestor_check(records: pl.DataFrame) -> CheckResult | None:
    """``lineage``: blocks when a case's candidate records include an ancestor of another candidate digest.

    Parameters
    ----------
    records
        The candidate side's records (contract columns; ``parent_candidate_digest`` may be absent
        in records written before the correction loop existed).

    Returns
    -------
    CheckResult or None
        None when no record carries correction lineage (nothing to check: the verdict's checks are
        unchanged); else ``ok``, or ``insufficient_evidence`` naming the cases that mix a candidate
        and its ancestor.
    """
    if (
        "parent_candidate_digest" not in records.columns
        or records.get_column("parent_candidate_digest").is_null().all()
    ):
        return None
    pairs = (
        records.select("case_id", "candidate_digest", "parent_candidate_digest")
        .unique()
        .filter(pl.col("candidate_digest").is_not_null())
    )
    parents = {(str(c), str(d)): str(p) for c, d, p in pairs.iter_rows() if p is not None}
    digests: dict[str, set[str]] = {}
    for case_id, digest, _ in pairs.iter_rows():
        digests.setdefault(str(case_id), set()).add(str(digest))
    mixed = sorted(
        case_id
        for case_id, present in digests.items()
        if any(_ancestors(parents, case_id, d) & present for d in present)
    )
    if not mixed:
        return CheckResult(
            name="lineage", side="candidate", status="ok", detail="no record is evidence of an ancestor candidate"
        )
    shown = ", ".join(mixed[:_SHOWN]) + (f" and {len(mixed) - _SHOWN} more" if len(mixed) > _SHOWN else "")
    return CheckResult(
        name="lineage",
        side="candidate",
        status="insufficient_evidence",
        detail=f"evidence from an ancestor: the records of {len(mixed)} case(s) mix a revised candidate with the "
        f"candidate it was revised from ({shown}); run the revision's whole required sequence under its own digest",
    )
