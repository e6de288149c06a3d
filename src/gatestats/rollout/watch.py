"""``gatestats watch status``: one reading of a rollout — per stage continue, advance or roll back.

It composes and computes nothing itself (docs/rollout.md, "Owners and boundaries"): the plan
registered before the first observation (:mod:`gatestats.rollout.plan`, refused when edited), the
observations through the records' one door and the late labels (:mod:`gatestats.rollout.log`,
:mod:`gatestats.rollout.labels`), the verdict the rollout follows (:func:`gatestats.gate.read_verdict`,
its digest checked against the one registered), each trigger read by
:mod:`gatestats.rollout.triggers` with the anytime-valid monitors of
:mod:`gatestats.sequential.monitor`, and the layer comparison of
:func:`gatestats.sequential.compare_layers.layer_comparison`.

A stage's action:

- ``roll_back`` when any of its triggers fired (at any observation so far: an e-process that crossed
  its level stays crossed; the decision file names the observation, its batch and its time);
- ``advance`` when it is the current stage (the latest with observations), it holds at least
  ``min_observations`` observations and ``min_days`` days have passed since its first one, and no
  trigger fired or is unreadable; the last stage (production) never advances: it *continues*;
- ``continue`` otherwise (with the reason: too few observations, too little time, a trigger that
  cannot be read yet);
- ``advanced`` for an earlier stage the rollout has left (its triggers are still read: a late label
  can roll it back), ``not_started`` for a later one.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

import polars as pl

import gatestats
from gatestats.estimators import case_summary
from gatestats.gate import VerdictFile, load_record_set, read_verdict
from gatestats.gate.verdict import resolve_bound_path
from gatestats.io.digest import digest_file
from gatestats.rollout.decision import (
    EXIT_CODES,
    BatchRef,
    LayerRow,
    StageAction,
    StageDecision,
    TriggerResult,
    WatchDecision,
)
from gatestats.rollout.labels import LABELS, read_labels
from gatestats.rollout.log import ObservationLog, WatchError, check_plan, read_log
from gatestats.rollout.plan import RolloutPlan, StagePlan
from gatestats.rollout.references import gate_reference
from gatestats.rollout.streams import StageStreams, stage_streams
from gatestats.rollout.triggers import References, read_trigger
from gatestats.sequential.compare_layers import layer_comparison

__all__ = ["watch"]

Overall = Literal["continue", "advance", "roll_back"]


def _now(now: datetime | None) -> datetime:
    return (now or datetime.now(UTC)).astimezone(UTC)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _parse(stamp: str | None) -> datetime | None:
    return None if stamp is None else datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(UTC)


def _label_maps(watch_dir: Path) -> tuple[dict[str, frozenset[str]], dict[str, str], str | None, int]:
    """The late labels: record ids per flag, the last acceptance label per record, the file's digest and count."""
    labels = read_labels(watch_dir)
    flags: dict[str, set[str]] = {"escaped_defect": set(), "rework": set()}
    settled: dict[str, str] = {}
    for label in labels:
        if label.label in flags:
            flags[label.label].add(label.record_id)
        else:
            settled[label.record_id] = label.label
    path = watch_dir / LABELS
    digest = digest_file(path) if labels else None
    return {k: frozenset(v) for k, v in flags.items()}, settled, digest, len(labels)


def _streams(
    log: ObservationLog, plan: RolloutPlan, flags: dict[str, frozenset[str]], settled: dict[str, str]
) -> dict[str, StageStreams]:
    return {s.name: stage_streams(log.records, s.name, flags=flags, settled=settled) for s in plan.stages}


def _previous(previous: str | os.PathLike[str] | None) -> dict[str, StageStreams] | None:
    """The previous release's streams by stage (its own labels applied), or None without one."""
    if previous is None:
        return None
    log = read_log(previous)
    flags, settled, _, _ = _label_maps(Path(previous))
    stages = sorted(set(log.records.get_column("stage").drop_nulls().to_list()))
    return {name: stage_streams(log.records, name, flags=flags, settled=settled) for name in stages}


def _verdict(log: ObservationLog) -> VerdictFile:
    """The verdict the rollout follows, its digest checked against the one registered at ``watch init``."""
    found = read_verdict(log.manifest.verdict_path)
    if found.digest != log.manifest.verdict_digest:
        msg = (
            f"{log.manifest.verdict_path}: the verdict's digest {found.digest} is not the one registered when the "
            f"rollout began ({log.manifest.verdict_digest}): the rollout follows the verdict it was registered with"
        )
        raise WatchError(msg)
    return found


def _golden_rates(verdict: VerdictFile) -> tuple[list[float], list[int]] | None:
    """The candidate's per-case pass rates and valid trials in the gate's records (their digest checked)."""
    side = verdict.verdict.candidate
    records = load_record_set(resolve_bound_path(side.path, verdict.path.parent))
    if records.digest != side.digest:
        msg = (
            f"{side.path}: the candidate's records changed since the gate read them ({records.digest} != {side.digest})"
        )
        raise WatchError(msg)
    frame = records.records
    if side.system is not None:
        frame = frame.filter(pl.col("system") == side.system)
    cases = case_summary(frame).filter(pl.col("n") > 0)
    if cases.height == 0:
        return None
    n = cases.get_column("n").to_list()
    c = cases.get_column("c").to_list()
    return [ci / ni for ci, ni in zip(c, n, strict=True)], n


def _layers(verdict: VerdictFile, streams: dict[str, StageStreams], alpha: float) -> tuple[LayerRow, ...]:
    """Each observed stage's accepted-outcome rate beside the gate's candidate pass rate."""
    golden = _golden_rates(verdict)
    rows: list[LayerRow] = []
    for name, stream in streams.items():
        if stream.accepted.size == 0 or golden is None:
            continue
        comparison = layer_comparison(golden[0], stream.accepted, alpha=alpha, trials_per_case=golden[1])
        rows.append(LayerRow(stage=name, comparison=comparison.to_dict()))
    return tuple(rows)


def _days(first: datetime | None, now: datetime) -> float | None:
    return None if first is None else (now - first).total_seconds() / 86400


def _action(
    stage: StagePlan,
    stream: StageStreams,
    triggers: Sequence[TriggerResult],
    position: str,
    last: bool,
    days: float | None,
) -> tuple[StageAction, str]:
    """A stage's action and its reason (see the module's docstring)."""
    fired = [t for t in triggers if t.status == "fired"]
    if fired:
        return "roll_back", "; ".join(f"{t.name} ({t.metric.replace('_', ' ')}) {t.reason}" for t in fired)
    if position == "later":
        return "not_started", "the rollout has not reached this stage"
    if position == "earlier":
        return "advanced", "the rollout has moved past this stage; its triggers are still read"
    unread = [t for t in triggers if t.status == "insufficient_evidence"]
    missing: list[str] = []
    if stream.n_observations < stage.min_observations:
        missing.append(f"{stream.n_observations} of the {stage.min_observations} observations needed")
    if stage.min_days > 0 and days is None:
        missing.append(
            f"no observation carries a time (ended_at, started_at): the {stage.min_days:g} days cannot be counted"
        )
    elif days is not None and days < stage.min_days:
        missing.append(f"{days:.1f} of the {stage.min_days:g} days needed")
    missing += [f"{t.name} cannot be read yet: {t.reason}" for t in unread]
    if missing:
        return "continue", "; ".join(missing)
    if last:
        return "continue", "the last stage: production observation continues, every trigger still read"
    return "advance", "the minimum observation is met and no trigger fired"


def _stage_decisions(
    plan: RolloutPlan, streams: dict[str, StageStreams], refs: References, now: datetime
) -> tuple[tuple[StageDecision, ...], str | None]:
    observed = [s.name for s in plan.stages if streams[s.name].n_observations > 0]
    current = observed[-1] if observed else None
    index = {s.name: i for i, s in enumerate(plan.stages)}
    decisions: list[StageDecision] = []
    for stage in plan.stages:
        stream = streams[stage.name]
        triggers = tuple(read_trigger(t, stream, refs, plan) for t in plan.triggers_for(stage.name))
        at = index[current] if current is not None else 0
        position = "current" if index[stage.name] == at else "earlier" if index[stage.name] < at else "later"
        ended = [e for e in stream.ended_at if e is not None]
        first, last_seen = (min(ended), max(ended)) if ended else (None, None)
        days = _days(_parse(first), now)
        action, reason = _action(stage, stream, triggers, position, stage is plan.stages[-1], days)
        decisions.append(
            StageDecision(
                stage=stage.name,
                owner=stage.owner,
                cohorts=stage.cohorts,
                share=stage.share,
                n_observations=stream.n_observations,
                pending=stream.pending,
                first_observed_at=first,
                last_observed_at=last_seen,
                days_observed=days,
                min_observations=stage.min_observations,
                min_days=stage.min_days,
                triggers=triggers,
                action=action,
                reason=reason,
            )
        )
    return tuple(decisions), current


def _overall(stages: Sequence[StageDecision], current: str | None) -> tuple[Overall, tuple[str, ...]]:
    back = [s for s in stages if s.action == "roll_back"]
    if back:
        return "roll_back", tuple(f"roll back: stage {s.stage}: {s.reason}" for s in back)
    now = next((s for s in stages if s.stage == current), stages[0])
    return ("advance" if now.action == "advance" else "continue"), (f"{now.stage}: {now.action}: {now.reason}",)


def _decision_number(watch_dir: Path) -> int:
    folder = watch_dir / "decisions"
    numbers = [int(p.stem) for p in folder.glob("*.json") if p.stem.isdigit()] if folder.is_dir() else []
    return max(numbers, default=0) + 1


def watch(
    watch_dir: str | os.PathLike[str],
    *,
    plan_path: str | os.PathLike[str],
    previous: str | os.PathLike[str] | None = None,
    now: datetime | None = None,
) -> WatchDecision:
    """Read a rollout once: every stage's triggers on the observations and labels so far.

    Parameters
    ----------
    watch_dir
        The observation log (``gatestats watch init``).
    plan_path
        The plan; refused unless its digest is the one registered at ``watch init``.
    previous
        The previous release's observation log, for ``vs_previous`` triggers.
    now
        The time of the reading (default: now, UTC); ``min_days`` counts to it.

    Returns
    -------
    WatchDecision
        Not yet written: :func:`gatestats.rollout.record.write_decision` writes it.

    Raises
    ------
    WatchError, PlanError, RecordFileError, VerdictFileError
        An edited plan, batch, label file or verdict; a log that is not one.
    """
    root = Path(watch_dir)
    plan = check_plan(root, plan_path)
    log = read_log(root)
    verdict = _verdict(log)
    flags, settled, labels_digest, n_labels = _label_maps(root)
    streams = _streams(log, plan, flags, settled)
    refs = References(
        gate=gate_reference(verdict.verdict),
        previous=_previous(previous),
        previous_name=None if previous is None else str(previous),
    )
    moment = _now(now)
    stages, current = _stage_decisions(plan, streams, refs, moment)
    action, reasons = _overall(stages, current)
    return WatchDecision(
        number=_decision_number(root),
        release=log.manifest.release,
        created_at=_stamp(moment),
        tool_version=gatestats.__version__,
        verdict_digest=log.manifest.verdict_digest,
        plan_digest=plan.digest,
        previous=None if previous is None else str(previous),
        batches=tuple(
            BatchRef(number=b.number, stage=b.stage, digest=b.digest, n_records=b.n_records, written_at=b.written_at)
            for b in log.batches
        ),
        labels_digest=labels_digest,
        n_labels=n_labels,
        stages=stages,
        current_stage=current,
        action=action,
        exit_code=EXIT_CODES[action],
        reasons=reasons,
        layers=_layers(verdict, streams, plan.alpha),
        escaped_defects=tuple(sorted(flags.get("escaped_defect", frozenset()))),
    )
