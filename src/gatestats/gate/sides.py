"""The two sides of a gate: their labels and what the verdict records about each.

The engine relabels the baseline's and the candidate's records :data:`BASELINE` and
:data:`CANDIDATE`; this module summarises each side for the verdict (provenance, infrastructure
errors, the case sets both ran, the flipped cases) and decides nothing.
"""

from __future__ import annotations

from collections.abc import Mapping

import polars as pl

from gatestats.errors import GatestatsError
from gatestats.gate._typed import build
from gatestats.gate.bindings import CaseSets, InfraSide, SideBinding
from gatestats.gate.checks import record_layers
from gatestats.gate.policy import Policy
from gatestats.gate.recordset import RecordSet
from gatestats.gate.summaries import case_set_summary
from gatestats.paired import compare
from gatestats.records.contract import SYSTEM_PARTS
from gatestats.vocabulary import INFRA_ERROR, RESOURCE_KILLED

__all__ = ["BASELINE", "CANDIDATE", "case_sets", "flips", "infra_sides", "side_provenance"]

#: Internal system labels of the two sides (the records' own labels are kept in the verdict).
BASELINE, CANDIDATE = "baseline", "candidate"


def flips(both: pl.DataFrame) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The cases that flipped from pass to fail and from fail to pass (pass^1 per case; none when undefined).

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled :data:`BASELINE` / :data:`CANDIDATE`.

    Returns
    -------
    tuple[tuple[str, ...], tuple[str, ...]]
        The case ids that went pass → fail, and fail → pass.
    """
    try:
        cmp = compare(both, baseline=BASELINE, candidate=CANDIDATE, metric="pass_hat_k", k=1)
    except (GatestatsError, ValueError):
        return (), ()
    return cmp.flips_pass_to_fail, cmp.flips_fail_to_pass


def infra_sides(both: pl.DataFrame) -> dict[str, InfraSide]:
    """Each side's attempts, infrastructure errors and resource kills (with the bound that killed them).

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled.

    Returns
    -------
    dict[str, InfraSide]
        :data:`BASELINE` and :data:`CANDIDATE` → their counts.
    """
    out: dict[str, InfraSide] = {}
    for side in (BASELINE, CANDIDATE):
        rows = both.filter(pl.col("system") == side)
        bounds = rows.filter(pl.col("outcome") == RESOURCE_KILLED).group_by("bound").len().sort("bound")
        out[side] = InfraSide(
            attempts=rows.height,
            infra_errors=rows.filter(pl.col("outcome") == INFRA_ERROR).height,
            resource_killed=rows.filter(pl.col("outcome") == RESOURCE_KILLED).height,
            bounds={str(b): int(n) for b, n in bounds.iter_rows()},
            infra_error_cases=tuple(
                sorted(set(rows.filter(pl.col("outcome") == INFRA_ERROR).get_column("case_id").to_list()))
            ),
        )
    return out


def _case_set_version(side: SideBinding) -> str | None:
    """A side's case-set version: its run set's manifest's, else the one its records name (several: joined)."""
    if side.case_set_version is not None:
        return side.case_set_version
    return ", ".join(side.task_set_version) or None


def case_sets(both: pl.DataFrame, provenance: Mapping[str, SideBinding], policy: Policy) -> CaseSets | None:
    """The overlap summary when the two sides ran different case-set versions (else ``None``).

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled.
    provenance
        Each side's binding (:func:`side_provenance`).
    policy
        The gate policy.

    Returns
    -------
    CaseSets | None
        The shared, new and retired cases, or ``None`` when both ran one version.
    """
    return case_set_summary(
        both, _case_set_version(provenance[BASELINE]), _case_set_version(provenance[CANDIDATE]), policy
    )


def side_provenance(rs: RecordSet) -> SideBinding:
    """A side's provenance as the verdict binds it: its run set, systems, digests, parts, case-set versions, layers.

    Parameters
    ----------
    rs
        The side's record set.

    Returns
    -------
    SideBinding
        The binding.
    """
    out = rs.to_dict()
    records = rs.records
    systems = sorted({str(s) for s in records.get_column("system").unique().to_list()}) if records.height else []
    out["system"] = systems[0] if len(systems) == 1 else (", ".join(systems) or None)
    out["system_digest"] = (
        records.get_column("system_digest").drop_nulls().unique().sort().to_list() if records.height else []
    )
    out["system_parts"] = {
        p: sorted({str(v) for v in records.get_column(p).drop_nulls().unique().to_list()}) if records.height else []
        for p in SYSTEM_PARTS
    }
    out["task_set_version"] = (
        sorted({str(v) for v in records.get_column("task_set_version").drop_nulls().unique().to_list()})
        if records.height
        else []
    )
    out["layers"] = list(record_layers(records))
    return build(SideBinding, out, "provenance")
