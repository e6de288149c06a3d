"""The two sides of a gate: their labels and what the verdict records about each.

The engine relabels the baseline's and the candidate's records :data:`BASELINE` and
:data:`CANDIDATE`; this module summarises each side for the verdict (provenance, infrastructure
errors, the case sets both ran, the flipped cases) and decides nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields

import polars as pl

from gatestats.errors import GatestatsError
from gatestats.gate._typed import TypedFieldError, build
from gatestats.gate.bindings import LAYERS, CaseSets, FileBinding, InfraSide, Layer, RecordsSeal, SideBinding
from gatestats.gate.policy import Policy
from gatestats.gate.recordset import RecordSet
from gatestats.gate.summaries import case_set_summary
from gatestats.paired import ComparisonOptions, PairedCases, compare, compare_pair
from gatestats.paired.pairing import case_table, pair_table
from gatestats.records.contract import SYSTEM_PARTS
from gatestats.vocabulary import INFRA_ERROR, RESOURCE_KILLED

__all__ = ["BASELINE", "CANDIDATE", "case_sets", "flips", "infra_sides", "side_provenance"]

#: Internal system labels of the two sides (the records' own labels are kept in the verdict).
BASELINE, CANDIDATE = "baseline", "candidate"


#: :func:`gatestats.paired.compare`'s default options (those :func:`flips` compares with; compare's keyword
#: defaults are these fields' defaults: tests/paired/test_pairing_compare.py).
_FLIP_OPTIONS = ComparisonOptions()


def flips(
    both: pl.DataFrame, summary: pl.DataFrame | None = None, pairing: Callable[[], PairedCases] | None = None
) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """The cases that flipped from pass to fail and from fail to pass (pass^1 per case; none when undefined).

    Parameters
    ----------
    both
        Both sides' records, ``system`` relabelled :data:`BASELINE` / :data:`CANDIDATE`.
    summary
        ``case_summary(both, allow_several_versions=True)`` when the caller has it (the records
        are then not reduced again): the same cases paired, the same flips.
    pairing
        With ``summary``: ``pair_table(case_table(summary), ...)`` of the two sides when the caller
        has it (a gate's paired rule at pass^1 on every case pairs the same table).

    Returns
    -------
    tuple[tuple[str, ...], tuple[str, ...]]
        The case ids that went pass → fail, and fail → pass.
    """
    try:
        if summary is None:
            cmp = compare(both, baseline=BASELINE, candidate=CANDIDATE, metric="pass_hat_k", k=1)
        else:  # as compare() pairs the records and compares them, with its default options
            paired = (
                pair_table(case_table(summary), baseline=BASELINE, candidate=CANDIDATE)
                if pairing is None
                else pairing()
            )
            cmp = compare_pair(paired, _FLIP_OPTIONS)
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
    is_infra, is_killed = pl.col("outcome") == INFRA_ERROR, pl.col("outcome") == RESOURCE_KILLED
    counts = both.group_by("system").agg(  # one query for both sides (a query per count was most of this)
        pl.len().alias("attempts"),
        is_infra.sum().alias("infra_errors"),
        is_killed.sum().alias("resource_killed"),
        pl.col("case_id").filter(is_infra).unique().alias("cases"),
    )
    found = {str(row["system"]): row for row in counts.iter_rows(named=True)}
    out: dict[str, InfraSide] = {}
    for side in (BASELINE, CANDIDATE):
        row = found.get(side, {"attempts": 0, "infra_errors": 0, "resource_killed": 0, "cases": []})
        bounds: dict[str, int] = {}
        if row["resource_killed"]:
            killed = both.filter((pl.col("system") == side) & is_killed)
            bounds = {str(b): int(n) for b, n in killed.group_by("bound").len().sort("bound").iter_rows()}
        out[side] = InfraSide(
            attempts=int(row["attempts"]),
            infra_errors=int(row["infra_errors"]),
            resource_killed=int(row["resource_killed"]),
            bounds=bounds,
            infra_error_cases=tuple(sorted(set(row["cases"]))),
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


@dataclass(frozen=True, slots=True, kw_only=True)
class _ManifestFacts:
    """What a side binds from its run set's manifest (read from a JSON file: :func:`build` checks each field)."""

    run_set_id: str | None
    complete: bool | None
    case_set_version: str | None
    trials: int | None
    policy_digest: str | None
    policy_registered_at: str | None
    origin: str | None
    records_seal: RecordsSeal | None
    imported_from: str | None
    imported_source_digest: str | None
    imported_by: str | None
    imported_at: str | None


_MANIFEST_FACTS = frozenset(f.name for f in fields(_ManifestFacts))


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

    Raises
    ------
    TypedFieldError
        A manifest fact or a record's layer of the wrong type (the field ``provenance.<name>`` named).
    """
    facts = build(_ManifestFacts, {k: v for k, v in rs.to_dict().items() if k in _MANIFEST_FACTS}, "provenance")
    records = rs.records
    systems = sorted({str(s) for s in records.get_column("system").unique().to_list()}) if records.height else []
    layered = "layer" in records.columns  # record_layers' values, read in the same query
    found = _distinct(records, ("system_digest", *SYSTEM_PARTS, "task_set_version", *(["layer"] if layered else [])))

    def distinct(column: str) -> tuple[str, ...]:
        return found[column]

    return SideBinding(
        path=str(rs.path),
        kind=rs.kind,
        digest=rs.digest,
        files=tuple(
            FileBinding(path=f.path, digest=f.digest, size=f.size, checksums=f.checksums, n_records=f.n_records)
            for f in rs.files
        ),
        n_records=rs.n_records,
        run_set_id=facts.run_set_id,
        complete=facts.complete,
        case_set_version=facts.case_set_version,
        trials=facts.trials,
        policy_digest=facts.policy_digest,
        policy_registered_at=facts.policy_registered_at,
        origin=facts.origin,
        checksums=rs.checksums,
        records_seal=facts.records_seal,
        imported_from=facts.imported_from,
        imported_source_digest=facts.imported_source_digest,
        imported_by=facts.imported_by,
        imported_at=facts.imported_at,
        system=systems[0] if len(systems) == 1 else (", ".join(systems) or None),
        system_digest=distinct("system_digest") if records.height else (),
        system_parts={p: distinct(p) if records.height else () for p in SYSTEM_PARTS},
        task_set_version=distinct("task_set_version") if records.height else (),
        layers=tuple(_layer(value, i) for i, value in enumerate(found["layer"] if layered else ())),
    )


def _distinct(records: pl.DataFrame, columns: tuple[str, ...]) -> dict[str, tuple[str, ...]]:
    """Each column's distinct non-null values as sorted strings, read in one query (empty without records).

    One query for all of them: a query per column was most of a small gate call's provenance.
    """
    if records.height == 0:
        return dict.fromkeys(columns, ())
    row = records.select(pl.col(c).drop_nulls().unique().implode() for c in columns).row(0, named=True)
    return {c: tuple(sorted({str(v) for v in row[c]})) for c in columns}


def _layer(value: str, index: int) -> Layer:
    """A record's layer as the binding's type (the records' contract allows no other; checked, not assumed)."""
    for layer in LAYERS:
        if value == layer:
            return layer
    raise TypedFieldError(f"provenance.layers[{index}]", f"one of {', '.join(repr(v) for v in LAYERS)}", value)
