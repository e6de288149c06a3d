"""One trigger read on one stage's streams: which stream, which level, which monitor (docs/rollout.md).

The statistics are :mod:`gatestats.sequential.monitor`'s; this module only chooses the stream and
the level a trigger names and turns the monitor's path into a :class:`TriggerResult`.

- ``accepted_rate`` (direction *below*): ``fixed`` against the plan's level, ``vs_gate`` against
  the gate's lower end minus δ (:func:`gatestats.rollout.references.gate_reference`).
- ``escaped_defect_rate``, ``rework_rate`` (*above*): ``fixed`` against the plan's level;
  ``none_tolerated``: the first one fires.
- ``unauthorized_actions``: ``none_tolerated`` (the first attempt fires) or ``fixed`` (the share of
  observations with an attempt, above the level).
- ``review_minutes`` (*above*, values clipped to the plan's cap): ``fixed`` or ``vs_previous``
  (ratio × the previous release's upper bound).
- ``cost_per_accepted`` (*above*): with :math:`c_0` the plan's level (``fixed``) or ratio × the
  previous release's upper bound (``vs_previous``), the values :math:`x_i = \\text{cost}_i - c_0
  a_i \\in [-c_0, \\text{cap}]` (:math:`a_i` = 1 when accepted) have a positive mean exactly when
  the cost per accepted outcome, failed attempts included, is above :math:`c_0`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from gatestats.rollout.decision import PATH_POINTS, TriggerResult, TriggerStatus
from gatestats.rollout.plan import RolloutPlan, Trigger
from gatestats.rollout.references import Reference, mean_upper_bound, rate_lower_bound
from gatestats.rollout.streams import StageStreams
from gatestats.sequential.monitor import (
    TriggerDirection,
    TriggerPath,
    cost_per_accepted_values,
    count_trigger,
    mean_trigger,
    rate_trigger,
    vs_reference_level,
)

__all__ = ["References", "read_trigger"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class References:
    """What a trigger may compare with: the gate's reference, and the previous release's streams by stage."""

    gate: Reference
    previous: dict[str, StageStreams] | None
    previous_name: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class _Stream:
    """The values a trigger reads, the record of each, its level and how the level was found."""

    values: FloatArray
    ids: tuple[str, ...]
    level: float | None
    reference: str
    alpha: float | None
    alpha_total: float | None
    why_not: str | None = None


def _thin(path: TriggerPath) -> tuple[tuple[int, float | None, float], ...]:
    """At most PATH_POINTS points of the path, the crossing and the last one kept."""
    n = path.n
    if n == 0:
        return ()
    keep = set(np.linspace(0, n - 1, num=min(n, PATH_POINTS), dtype=np.int64).tolist())
    if path.first_crossing is not None:
        keep.add(path.first_crossing)
    logs = path.log_evalue
    return tuple((i + 1, None if logs is None else float(logs[i]), float(path.bound[i])) for i in sorted(keep))


def _accepted_stream(trigger: Trigger, streams: StageStreams, refs: References) -> _Stream:
    """The accepted-outcome stream and its level: the plan's, or the gate's lower end minus δ."""
    alpha = trigger.alpha
    values, ids = streams.accepted, streams.accepted_ids
    if trigger.kind != "vs_gate":
        return _Stream(
            values=values, ids=ids, level=trigger.level, reference="the plan's level", alpha=alpha, alpha_total=alpha
        )
    gate = refs.gate
    if gate.value is None:
        return _Stream(
            values=values,
            ids=ids,
            level=None,
            reference=gate.source,
            alpha=alpha,
            alpha_total=None,
            why_not=gate.reason,
        )
    level = vs_reference_level(gate.value, float(trigger.delta or 0.0))
    text = f"{gate.source} − δ {trigger.delta:g}"
    return _Stream(
        values=values, ids=ids, level=level, reference=text, alpha=alpha, alpha_total=alpha + gate.alpha_spent
    )


def _rate_stream(trigger: Trigger, streams: StageStreams, refs: References) -> _Stream:
    """The stream and level of a rate (or a count) trigger."""
    if trigger.metric == "accepted_rate":
        return _accepted_stream(trigger, streams, refs)
    if trigger.metric in ("escaped_defect_rate", "rework_rate"):
        values = streams.escaped if trigger.metric == "escaped_defect_rate" else streams.rework
        ids = streams.flagged_ids
    else:
        values, ids = streams.unauthorized, streams.unauthorized_ids
        if trigger.kind != "none_tolerated":
            values = (values > 0).astype(np.float64)  # the share of observations with an attempt
    if trigger.kind == "none_tolerated":  # a count: the level is the tolerated count, 0
        return _Stream(values=values, ids=ids, level=0.0, reference="none tolerated", alpha=None, alpha_total=None)
    alpha = trigger.alpha
    return _Stream(
        values=values, ids=ids, level=trigger.level, reference="the plan's level", alpha=alpha, alpha_total=alpha
    )


def _previous(refs: References, stage: str) -> StageStreams | None:
    return None if refs.previous is None else refs.previous.get(stage)


def _mean_stream(trigger: Trigger, streams: StageStreams, refs: References, plan: RolloutPlan) -> _Stream:
    """The stream and level of a bounded-mean trigger (review minutes, cost per accepted outcome)."""
    alpha = trigger.alpha
    monitor = alpha / 2 if trigger.kind == "vs_previous" else alpha
    previous = _previous(refs, streams.stage) if trigger.kind == "vs_previous" else None
    missing_previous = f"no observation of stage {streams.stage!r} in the previous release ({refs.previous_name})"
    if trigger.metric == "review_minutes":
        cap = float(trigger.review_cap_minutes or 0.0)
        values = np.clip(streams.review_minutes, 0.0, cap)
        level: float | None = trigger.level
        text = "the plan's level"
        if trigger.kind == "vs_previous":
            upper = None if previous is None else mean_upper_bound(previous.review_minutes, cap=cap, alpha=alpha / 2)
            level = None if upper is None else float(trigger.ratio or 0.0) * upper
            text = f"{trigger.ratio:g} × the previous release's review minutes (upper bound {upper})"
        return _Stream(
            values=values,
            ids=streams.review_ids,
            level=level,
            reference=text,
            alpha=monitor,
            alpha_total=alpha,
            why_not=missing_previous if level is None else None,
        )
    cap = float(trigger.cost_cap_usd or 0.0)
    c0: float | None = trigger.level
    text = "the plan's cost per accepted outcome"
    if trigger.kind == "vs_previous":
        c0, text = _previous_cpa(previous, cap=cap, alpha=alpha, ratio=float(trigger.ratio or 0.0))
    unknown = int(np.count_nonzero(np.isnan(streams.cost)))
    why_not = (missing_previous if previous is None else text) if c0 is None else None
    if why_not is None and unknown:
        why_not = f"{unknown} of {streams.cost.size} observations have no cost: the cost of every attempt is needed"
    if c0 is None or why_not is not None:
        return _Stream(
            values=streams.cost,
            ids=streams.accepted_ids,
            level=c0,
            reference=text,
            alpha=monitor,
            alpha_total=alpha,
            why_not=why_not,
        )
    above = int(np.count_nonzero(streams.cost > cap))
    if above:  # the plan's bound of one attempt: an attempt above it is counted at it (never a rollback the data lack)
        text += f"; {above} attempt(s) above the plan's cap ${cap:g} counted at the cap"
    reduced = cost_per_accepted_values(
        np.minimum(streams.cost, cap), streams.cost_accepted, reference_cpa=c0, cost_cap=cap
    )
    return _Stream(
        values=reduced.values, ids=streams.accepted_ids, level=c0, reference=text, alpha=monitor, alpha_total=alpha
    )


def _previous_cpa(previous: StageStreams | None, *, cap: float, alpha: float, ratio: float) -> tuple[float | None, str]:
    """ratio × an upper bound of the previous release's cost per accepted outcome (α/4 to each bound)."""
    if previous is None or previous.cost.size == 0:
        return None, "the previous release's cost per accepted outcome"
    if np.isnan(previous.cost).any():
        return None, "the previous release's cost per accepted outcome: some of its observations have no cost"
    cost = mean_upper_bound(previous.cost, cap=cap, alpha=alpha / 4)
    accepted = rate_lower_bound(previous.cost_accepted, alpha=alpha / 4)
    if cost is None or not accepted:
        return None, "the previous release's cost per accepted outcome: it accepted nothing"
    upper = cost / accepted
    return ratio * upper, f"{ratio:g} × the previous release's cost per accepted outcome (upper bound ${upper:.4f})"


def _monitor(trigger: Trigger, stream: _Stream) -> TriggerPath:
    """The monitor's path for a stream whose level is known."""
    assert stream.level is not None
    if trigger.kind == "none_tolerated":
        return count_trigger(stream.values, tolerated=0)
    if trigger.metric in ("review_minutes", "cost_per_accepted"):
        cost = trigger.metric == "cost_per_accepted"
        lower = -stream.level if cost else 0.0
        upper = float((trigger.cost_cap_usd if cost else trigger.review_cap_minutes) or 0.0)
        level = 0.0 if cost else stream.level
        alpha = float(stream.alpha or trigger.alpha)
        return mean_trigger(stream.values, level=level, lower=lower, upper=upper, direction="above", alpha=alpha)
    direction: TriggerDirection = "below" if trigger.metric == "accepted_rate" else "above"
    return rate_trigger(stream.values, level=stream.level, direction=direction, alpha=float(stream.alpha or 0.0))


def read_trigger(trigger: Trigger, streams: StageStreams, refs: References, plan: RolloutPlan) -> TriggerResult:
    """Read one trigger on one stage.

    Parameters
    ----------
    trigger
        The plan's trigger.
    streams
        The stage's streams (late labels applied).
    refs
        The gate's and the previous release's references.
    plan
        The plan (its caps).

    Returns
    -------
    TriggerResult
        ``fired`` with the observation, record, batch and time of the crossing; ``quiet``; or
        ``insufficient_evidence`` with the reason (no observation yet, a reference that cannot be
        found, unknown costs).
    """
    mean = trigger.metric in ("review_minutes", "cost_per_accepted")
    stream = _mean_stream(trigger, streams, refs, plan) if mean else _rate_stream(trigger, streams, refs)
    if stream.why_not is not None or stream.level is None or stream.values.size == 0:
        return _result(trigger, streams, stream, None, reason=stream.why_not or "no observation yet")
    if trigger.metric == "accepted_rate" and stream.level <= 0:
        why = f"the level {stream.level:.4f} is not above 0: no accepted rate is below it, the trigger cannot fire"
        return _result(trigger, streams, stream, None, reason=why, status="quiet")
    path = _monitor(trigger, stream)
    crossing = path.first_crossing
    record = None if crossing is None else stream.ids[crossing]
    batch = None if record is None else streams.when(record)[0]
    reason = "quiet" if crossing is None else f"fired at observation {crossing + 1} ({record}, batch {batch})"
    return _result(trigger, streams, stream, path, reason=reason)


def _shown_estimate(trigger: Trigger, streams: StageStreams, path: TriggerPath) -> float | None:
    """The estimate as the plan states the metric: the cost per accepted outcome, not the reduced mean."""
    if trigger.metric != "cost_per_accepted":
        return path.estimate
    accepted = float(streams.cost_accepted.sum())
    return float(np.nansum(streams.cost)) / accepted if accepted else None


def _result(
    trigger: Trigger,
    streams: StageStreams,
    stream: _Stream,
    path: TriggerPath | None,
    *,
    reason: str,
    status: TriggerStatus | None = None,
) -> TriggerResult:
    """The trigger's result: from its path, or without one (insufficient evidence unless ``status``) with the reason."""
    crossing = None if path is None else path.first_crossing
    record = None if crossing is None else stream.ids[crossing]
    batch, time = (None, None) if record is None else streams.when(record)
    if status is None:
        status = "insufficient_evidence" if path is None else "fired" if crossing is not None else "quiet"
    logs = None if path is None else path.log_evalue
    return TriggerResult(
        name=trigger.name,
        stage=streams.stage,
        metric=trigger.metric,
        kind=trigger.kind,
        direction="below" if trigger.metric == "accepted_rate" else "above",
        alpha=stream.alpha if path is None else path.alpha,
        alpha_total=stream.alpha_total,
        level=stream.level,
        reference=stream.reference,
        status=status,
        reason=reason,
        n=int(stream.values.size) if path is None else path.n,
        estimate=None if path is None else _shown_estimate(trigger, streams, path),
        log_evalue=None if logs is None else float(logs[-1]),
        threshold=None if path is None else path.threshold,
        bound=None if path is None else float(path.bound[-1]),
        fired_at_observation=crossing,
        fired_record=record,
        fired_batch=batch,
        fired_time=time,
        path=() if path is None else _thin(path),
    )
