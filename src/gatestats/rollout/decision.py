"""What ``gatestats watch status`` decides, as typed, frozen objects and the JSON it writes once per reading.

A reading is written to ``WATCH/decisions/NNNN.json`` (``gatestats-watch-decision/1``), never
overwritten: the release record's path after the gate, one file per look. Its ``digest`` covers
every other field (canonical JSON), as a verdict's does; the report reads the latest one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, TypeAlias

from gatestats._typing import JSONObject, JSONValue

__all__ = [
    "DECISION_FORMAT",
    "EXIT_CODES",
    "BatchRef",
    "LayerRow",
    "StageAction",
    "StageDecision",
    "TriggerResult",
    "TriggerStatus",
    "WatchDecision",
]

DECISION_FORMAT = "gatestats-watch-decision/1"

StageAction: TypeAlias = Literal["continue", "advance", "roll_back", "not_started", "advanced"]
TriggerStatus: TypeAlias = Literal["fired", "quiet", "insufficient_evidence"]

#: The exit code of a reading: 0 every stage may continue, 20 the current stage may advance, 21 roll back.
EXIT_CODES: dict[str, int] = {"continue": 0, "advance": 20, "roll_back": 21}

#: At most this many points of a trigger's path are kept in the decision file (evenly spaced, the
#: last and the crossing always kept): the chart needs its shape, not a value per observation.
PATH_POINTS = 400


@dataclass(frozen=True, slots=True, kw_only=True)
class TriggerResult:
    """One trigger in one stage: the level it tested, its evidence now, and when it fired.

    ``level`` is the level the monitor tested (the plan's, or the reference's, see ``reference``);
    ``log_evalue`` and ``threshold`` (log 1/α) the evidence now and where it fires; ``bound`` the
    confidence-sequence bound on the side that matters now; ``path`` the thinned path
    (observation index, log e-value, bound). A count trigger has no e-value: it fires on the first
    event. ``insufficient_evidence`` says the trigger could not be read (no observation, an unknown
    reference, unknown costs): the stage cannot advance while it is.
    """

    name: str
    stage: str
    metric: str
    kind: str
    direction: str
    alpha: float | None
    alpha_total: float | None
    level: float | None
    reference: str
    status: TriggerStatus
    reason: str
    n: int
    estimate: float | None
    log_evalue: float | None
    threshold: float | None
    bound: float | None
    fired_at_observation: int | None
    fired_record: str | None
    fired_batch: int | None
    fired_time: str | None
    path: tuple[tuple[int, float | None, float], ...]

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (the path as ``[index, log_evalue, bound]`` triples)."""
        out: JSONObject = {name: getattr(self, name) for name in _TRIGGER_FIELDS}
        out["path"] = [list(point) for point in self.path]
        return out


_TRIGGER_FIELDS = tuple(f for f in TriggerResult.__dataclass_fields__ if f != "path")


@dataclass(frozen=True, slots=True, kw_only=True)
class LayerRow:
    """Does this stage look like the golden set? The layer comparison of its accepted-outcome rate."""

    stage: str
    comparison: JSONObject

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping."""
        return {"stage": self.stage, "comparison": self.comparison}


@dataclass(frozen=True, slots=True, kw_only=True)
class StageDecision:
    """One stage: who owns it, what it observed, its triggers and what it may do now."""

    stage: str
    owner: str
    cohorts: tuple[str, ...] | None
    share: float | None
    n_observations: int
    pending: int
    first_observed_at: str | None
    last_observed_at: str | None
    days_observed: float | None
    min_observations: int
    min_days: float
    triggers: tuple[TriggerResult, ...]
    action: StageAction
    reason: str

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping."""
        out: JSONObject = {name: getattr(self, name) for name in _STAGE_FIELDS}
        out["cohorts"] = None if self.cohorts is None else list(self.cohorts)
        out["triggers"] = [t.to_dict() for t in self.triggers]
        return out


_STAGE_FIELDS = tuple(f for f in StageDecision.__dataclass_fields__ if f not in ("triggers", "cohorts"))


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchRef:
    """A batch the reading saw: its number, stage, digest, size and when it was written."""

    number: int
    stage: str
    digest: str
    n_records: int
    written_at: str

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping."""
        return {
            "number": self.number,
            "stage": self.stage,
            "digest": self.digest,
            "n_records": self.n_records,
            "written_at": self.written_at,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchDecision:
    """One reading of a rollout: every stage's decision, what it read, and the exit code.

    ``action`` is ``roll_back`` when any stage's trigger fired, ``advance`` when the current stage
    met its minimum observation with no trigger fired and none unreadable, else ``continue``.
    ``number`` is the reading's sequence number in the log (its file ``decisions/NNNN.json``).
    """

    number: int
    release: str
    created_at: str
    tool_version: str
    verdict_digest: str
    plan_digest: str
    previous: str | None
    batches: tuple[BatchRef, ...]
    labels_digest: str | None
    n_labels: int
    stages: tuple[StageDecision, ...]
    current_stage: str | None
    action: Literal["continue", "advance", "roll_back"]
    exit_code: int
    reasons: tuple[str, ...]
    layers: tuple[LayerRow, ...]
    escaped_defects: tuple[str, ...]

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (without the ``digest``, which the writer adds)."""
        out: dict[str, JSONValue] = {"format": DECISION_FORMAT}
        for name in WatchDecision.__dataclass_fields__:
            value = getattr(self, name)
            if isinstance(value, tuple):
                out[name] = [v.to_dict() if hasattr(v, "to_dict") else v for v in value]
            else:
                out[name] = value
        return out
