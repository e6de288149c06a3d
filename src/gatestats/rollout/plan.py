"""The rollout plan: stages, owners, cohort limits and rollback triggers, registered before the rollout.

A plan is the ``[rollout]`` table of a TOML file (docs/rollout.md, "The plan"). It is read strictly,
through the project's TOML limits (:data:`~gatestats.io.limits.POLICY_MAX_BYTES`, the nesting scan
:func:`~gatestats.io.toml_lines.too_deep` before :mod:`tomllib`, names through
:func:`~gatestats.io.limits.name_problem`): an unknown key, a wrong type, a value out of range, a
stage out of order or a trigger that cannot be tested is a :class:`PlanError` listing every problem
with the file, the line and the key. The plan's :attr:`RolloutPlan.digest` is the digest of the
canonical JSON of what was read (:meth:`RolloutPlan.to_dict`): a comment or a space does not change
it, any value does. ``gatestats watch init`` registers it before the first observation; a plan whose
digest differs from the registered one is refused (:mod:`gatestats.rollout.log`).

The plan decides nothing: the monitor (:mod:`gatestats.rollout.watch`) reads it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from gatestats._typing import JSONObject
from gatestats.io.digest import digest_json
from gatestats.io.toml_lines import KeyPath, parse_toml, read_toml_file
from gatestats.rollout._plan_toml import PlanError, PlanProblem, Reader, shown
from gatestats.vocabulary import (
    EVERY_STAGE,
    ROLLOUT_METRICS,
    STAGES,
    TRIGGER_KINDS,
    RolloutMetric,
    Stage,
    TriggerKind,
)

__all__ = [
    "KIND_METRICS",
    "PLAN_FORMAT",
    "PlanError",
    "PlanProblem",
    "RolloutPlan",
    "StagePlan",
    "Trigger",
    "load_plan",
    "parse_plan",
]

#: The optional ``format`` key of ``[rollout]``.
PLAN_FORMAT = "gatestats-rollout/1"

#: The metrics each kind of trigger can test (docs/rollout.md, "The plan"): none tolerated is a
#: count of events; the gate estimates the pass rate of a release, so only the accepted-outcome rate
#: is compared with it; a ratio to the previous release is a ratio of two positive means.
KIND_METRICS: Mapping[TriggerKind, tuple[RolloutMetric, ...]] = {
    "none_tolerated": ("unauthorized_actions", "escaped_defect_rate"),
    "fixed": ROLLOUT_METRICS,
    "vs_gate": ("accepted_rate",),
    "vs_previous": ("cost_per_accepted", "review_minutes"),
}
_RATES: tuple[RolloutMetric, ...] = ("accepted_rate", "escaped_defect_rate", "rework_rate", "unauthorized_actions")
_CAPS: Mapping[RolloutMetric, str] = {"cost_per_accepted": "cost_cap_usd", "review_minutes": "review_cap_minutes"}

_TOP = ("format", "release", "alpha", "cost_cap_usd", "review_cap_minutes", "stages", "triggers")
_STAGE = ("name", "owner", "cohorts", "share", "min_observations", "min_days")
_TRIGGER = ("name", "stage", "metric", "kind", "level", "delta", "ratio", "alpha", "cost_cap_usd", "review_cap_minutes")
_ALPHA = (1e-6, 0.5)
_MAX_OBSERVATIONS = 100_000_000
_MAX_DAYS = 3650.0
_MAX_CAP = 1e6


@dataclass(frozen=True, slots=True, kw_only=True)
class StagePlan:
    """One stage of the rollout: who owns it, which traffic it gets, the least it must observe.

    ``cohorts`` (named cohorts) and ``share`` (a share of traffic in (0, 1]) are exclusive: exactly one
    is set. The stage may advance once it holds ``min_observations`` observations *and*
    ``min_days`` days have passed since its first observation.
    """

    name: Stage
    owner: str
    cohorts: tuple[str, ...] | None
    share: float | None
    min_observations: int
    min_days: float


@dataclass(frozen=True, slots=True, kw_only=True)
class Trigger:
    """One rollback trigger: in which stage(s), on which metric, compared how, at which error level.

    ``stage`` is a stage name or ``"*"`` (:data:`~gatestats.vocabulary.EVERY_STAGE`). Per ``kind``:
    ``fixed`` sets ``level`` (the metric's worst acceptable value), ``vs_gate`` sets ``delta`` (the
    accepted-outcome rate may be at most ``delta`` below the gate's estimate), ``vs_previous`` sets
    ``ratio`` (at most ``ratio`` times the previous release's value), ``none_tolerated`` sets none of
    them (one event fires). ``cost_cap_usd`` (the most one attempt may cost) is set exactly when the
    metric is ``cost_per_accepted``, ``review_cap_minutes`` exactly when it is ``review_minutes``:
    the bounds the betting tests need. ``alpha`` is the trigger's own or the plan's.
    """

    name: str
    stage: str
    metric: RolloutMetric
    kind: TriggerKind
    alpha: float
    level: float | None = None
    delta: float | None = None
    ratio: float | None = None
    cost_cap_usd: float | None = None
    review_cap_minutes: float | None = None

    def applies_to(self, stage: str) -> bool:
        """Whether the trigger watches ``stage`` (its own stage, or every stage).

        Parameters
        ----------
        stage
            A stage name.

        Returns
        -------
        bool
            True for the trigger's own stage, and for every stage when it is ``"*"``.
        """
        return self.stage in (EVERY_STAGE, stage)


@dataclass(frozen=True, slots=True, kw_only=True)
class RolloutPlan:
    """A checked rollout plan (see :func:`load_plan`).

    ``digest`` is ``digest_json(plan.to_dict())``; ``path`` is the file it was read from (not part of
    the digest: a plan moved or copied is the same plan).
    """

    path: str
    release: str
    alpha: float
    stages: tuple[StagePlan, ...]
    triggers: tuple[Trigger, ...]
    digest: str

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The plan's stages, in rollout order."""
        return tuple(s.name for s in self.stages)

    def stage(self, name: str) -> StagePlan:
        """The stage called ``name``.

        Parameters
        ----------
        name
            A stage name.

        Returns
        -------
        StagePlan
            Its plan.

        Raises
        ------
        KeyError
            The plan has no such stage.
        """
        for stage in self.stages:
            if stage.name == name:
                return stage
        msg = f"the plan has no stage {name!r} (its stages: {', '.join(self.stage_names)})"
        raise KeyError(msg)

    def triggers_for(self, stage: str) -> tuple[Trigger, ...]:
        """The triggers watching ``stage``, in the plan's order.

        Parameters
        ----------
        stage
            A stage name.

        Returns
        -------
        tuple of Trigger
            Its own triggers and those of every stage (``"*"``).
        """
        return tuple(t for t in self.triggers if t.applies_to(stage))

    def to_dict(self) -> JSONObject:
        """The plan as JSON (what its digest covers): release, alpha, stages and triggers."""
        return _plan_dict(self.release, self.alpha, self.stages, self.triggers)


def _plan_dict(release: str, alpha: float, stages: tuple[StagePlan, ...], triggers: tuple[Trigger, ...]) -> JSONObject:
    return {
        "format": PLAN_FORMAT,
        "release": release,
        "alpha": alpha,
        "stages": [
            {
                "name": s.name,
                "owner": s.owner,
                "cohorts": None if s.cohorts is None else list(s.cohorts),
                "share": s.share,
                "min_observations": s.min_observations,
                "min_days": s.min_days,
            }
            for s in stages
        ],
        "triggers": [{key: getattr(t, key) for key in _TRIGGER} for t in triggers],
    }


def load_plan(path: str | os.PathLike[str]) -> RolloutPlan:
    """Read and check a rollout plan file (the ``[rollout]`` table of docs/rollout.md).

    Parameters
    ----------
    path
        The plan file (TOML).

    Returns
    -------
    RolloutPlan
        The checked plan, with its digest.

    Raises
    ------
    PlanError
        The file is missing, not a regular file, too large, too deeply nested, not UTF-8 TOML, or
        breaks the plan's format: every problem with the file, line and key.
    """
    file = Path(path)
    data = read_toml_file(file, what="rollout plan", problem=PlanProblem, error=PlanError)
    return parse_plan(data, path=file)


def parse_plan(data: bytes, *, path: str | os.PathLike[str] = "<plan>") -> RolloutPlan:
    """Parse the bytes of a rollout plan (see :func:`load_plan`).

    Parameters
    ----------
    data
        The file's bytes (UTF-8 TOML).
    path
        The file's name, for messages.

    Returns
    -------
    RolloutPlan
        The checked plan.

    Raises
    ------
    PlanError
        Every problem found, each with the file, line and key.

    Examples
    --------
    >>> plan = parse_plan(b'''
    ... [rollout]
    ... release = "r1"
    ... [[rollout.stages]]
    ... name = "shadow"
    ... owner = "ml-platform"
    ... share = 0.05
    ... min_observations = 100
    ... [[rollout.triggers]]
    ... stage = "*"
    ... metric = "unauthorized_actions"
    ... kind = "none_tolerated"
    ... ''')
    >>> plan.stage_names, plan.triggers[0].name, plan.digest[:7]
    (('shadow',), '*.unauthorized_actions.none_tolerated', 'sha256:')
    >>> try:
    ...     parse_plan(b'[rollout]\\nrelease = "r1"\\nstages = []\\nstage = 3\\n')
    ... except PlanError as exc:
    ...     print(exc)  # doctest: +ELLIPSIS
    <plan>:4: key 'rollout.stage': unknown key (expected one of: format, release, alpha, ...)
    <plan>:3: key 'rollout.stages': expected at least one stage
    """
    file = str(path)
    text, raw = parse_toml(data, file=file, what="a rollout plan", problem=PlanProblem, error=PlanError)
    reader = Reader(file, text)
    plan = _read_plan(reader, raw)
    if reader.problems or plan is None:
        raise PlanError(reader.problems)
    return plan


def _read_plan(r: Reader, raw: Mapping[str, Any]) -> RolloutPlan | None:
    r.table(raw, (), ("rollout",))
    if "rollout" not in raw:
        r.problem(("rollout",), "required table is missing")
        return None
    top = r.table(raw["rollout"], ("rollout",), _TOP)
    path: KeyPath = ("rollout",)
    if "format" in top and top["format"] != PLAN_FORMAT:
        r.problem((*path, "format"), f"expected {PLAN_FORMAT!r} (got {shown(top['format'])})")
    release = r.text(top, path, "release")
    alpha = r.number(top, path, "alpha", *_ALPHA)
    defaults = {cap: r.number(top, path, cap, 0.0, _MAX_CAP, open_low=True) for cap in _CAPS.values()}
    stages = _stages(r, top)
    triggers = _triggers(r, top, stages, 0.05 if alpha is None else alpha, defaults)
    if r.problems or release is None:
        return None
    alpha = 0.05 if alpha is None else alpha
    return RolloutPlan(
        path=r.file,
        release=release,
        alpha=alpha,
        stages=stages,
        triggers=triggers,
        digest=digest_json(_plan_dict(release, alpha, stages, triggers)),
    )


def _stages(r: Reader, top: Mapping[str, Any]) -> tuple[StagePlan, ...]:
    entries = r.array(top, ("rollout",), "stages")
    if entries is None:
        if "stages" not in top:
            r.problem(("rollout", "stages"), "required key is missing (at least one [[rollout.stages]])")
        return ()
    if not entries:
        r.problem(("rollout", "stages"), "expected at least one stage")
    stages: list[StagePlan] = []
    for i, entry in enumerate(entries):
        stage = _stage(r, r.table(entry, ("rollout", "stages", i), _STAGE), ("rollout", "stages", i))
        if stage is None:
            continue
        if stages and STAGES.index(stage.name) <= STAGES.index(stages[-1].name):
            order = " -> ".join(STAGES)
            r.problem(("rollout", "stages", i, "name"), f"stage {stage.name!r} out of order (stages run {order})")
            continue
        stages.append(stage)
    return tuple(stages)


def _stage(r: Reader, entry: Mapping[str, Any], path: KeyPath) -> StagePlan | None:
    name = r.choice(entry, path, "name", STAGES)
    owner = r.text(entry, path, "owner")
    share = r.number(entry, path, "share", 0.0, 1.0, open_low=True)
    cohorts = _cohorts(r, entry, path)
    if ("share" in entry) == ("cohorts" in entry):
        r.problem(path, "set exactly one of 'cohorts' (named cohorts) and 'share' (a share of traffic)")
    least = r.integer(entry, path, "min_observations", 1, _MAX_OBSERVATIONS)
    days = r.number(entry, path, "min_days", 0.0, _MAX_DAYS)
    if name is None or owner is None or least is None or (share is None and cohorts is None):
        return None
    return StagePlan(
        name=cast("Stage", name),
        owner=owner,
        cohorts=cohorts,
        share=share,
        min_observations=least,
        min_days=0.0 if days is None else days,
    )


def _cohorts(r: Reader, entry: Mapping[str, Any], path: KeyPath) -> tuple[str, ...] | None:
    values = r.array(entry, path, "cohorts")
    if values is None:
        return None
    if not values:
        r.problem((*path, "cohorts"), "expected at least one cohort")
        return None
    names = [r.name_value(v, (*path, "cohorts", i)) for i, v in enumerate(values)]
    if any(n is None for n in names):
        return None
    if len(set(names)) != len(names):
        r.problem((*path, "cohorts"), "a cohort is named twice")
        return None
    return tuple(cast("list[str]", names))


def _triggers(
    r: Reader,
    top: Mapping[str, Any],
    stages: tuple[StagePlan, ...],
    alpha: float,
    defaults: Mapping[str, float | None],
) -> tuple[Trigger, ...]:
    entries = r.array(top, ("rollout",), "triggers") or []
    found: list[Trigger] = []
    for i, entry in enumerate(entries):
        path: KeyPath = ("rollout", "triggers", i)
        trigger = _trigger(r, r.table(entry, path, _TRIGGER), path, alpha, defaults)
        if trigger is None:
            continue
        names = {s.name for s in stages}
        if trigger.stage != EVERY_STAGE and stages and trigger.stage not in names:
            stated = ", ".join(repr(s.name) for s in stages)
            r.problem((*path, "stage"), f"no stage {trigger.stage!r} in this plan (its stages: {stated}, or '*')")
        elif trigger.name in {t.name for t in found}:
            r.problem((*path, "name"), f"trigger name {trigger.name!r} is used twice (give one a 'name')")
        else:
            found.append(trigger)
    return tuple(found)


def _trigger(
    r: Reader, entry: Mapping[str, Any], path: KeyPath, alpha: float, defaults: Mapping[str, float | None]
) -> Trigger | None:
    stage = r.choice(entry, path, "stage", (EVERY_STAGE, *STAGES))
    metric = cast("RolloutMetric | None", r.choice(entry, path, "metric", ROLLOUT_METRICS))
    kind = cast("TriggerKind | None", r.choice(entry, path, "kind", TRIGGER_KINDS))
    name = r.text(entry, path, "name", required=False)
    own_alpha = r.number(entry, path, "alpha", *_ALPHA)
    if stage is None or metric is None or kind is None:
        return None
    if metric not in KIND_METRICS[kind]:
        allowed = ", ".join(repr(m) for m in KIND_METRICS[kind])
        r.problem((*path, "metric"), f"a {kind!r} trigger watches one of {allowed} (got {metric!r})")
        return None
    values = _comparison(r, entry, path, metric, kind)
    caps = _caps(r, entry, path, metric, defaults)
    if values is None or caps is None:
        return None
    level = values.get("level")
    cap = caps.get(_CAPS.get(metric, ""))
    if level is not None and cap is not None and level > cap:
        r.problem((*path, "level"), f"level {level:g} is above the cap {cap:g} of one observation")
        return None
    return Trigger(
        name=name or f"{stage}.{metric}.{kind}",
        stage=stage,
        metric=metric,
        kind=kind,
        alpha=alpha if own_alpha is None else own_alpha,
        **values,
        **caps,
    )


def _comparison(
    r: Reader, entry: Mapping[str, Any], path: KeyPath, metric: RolloutMetric, kind: TriggerKind
) -> dict[str, float] | None:
    """The one value a kind of trigger compares with (level, delta or ratio); any other one is a problem."""
    wanted = {"none_tolerated": None, "fixed": "level", "vs_gate": "delta", "vs_previous": "ratio"}[kind]
    problems = len(r.problems)
    for key in ("level", "delta", "ratio"):
        if key in entry and key != wanted:
            r.problem((*path, key), f"a {kind!r} trigger takes no {key!r}")
    if wanted is None:
        return None if len(r.problems) > problems else {}
    if wanted not in entry:
        r.problem((*path, wanted), f"required key is missing (a {kind!r} trigger compares with a {wanted})")
        return None
    if wanted == "level":
        rate = metric in _RATES
        value = r.number(entry, path, "level", 0.0, 1.0 if rate else _MAX_CAP, open_low=True)
        if rate and value == 1.0:
            r.problem((*path, "level"), "expected a rate in (0, 1) (got 1.0: a rate cannot be worse)")
            value = None
    elif wanted == "delta":
        value = r.number(entry, path, "delta", 0.0, 1.0)
    else:
        value = r.number(entry, path, "ratio", 1.0, 100.0)
    return None if value is None or len(r.problems) > problems else {wanted: value}


def _caps(
    r: Reader, entry: Mapping[str, Any], path: KeyPath, metric: RolloutMetric, defaults: Mapping[str, float | None]
) -> dict[str, float] | None:
    """The cap of one observation the metric needs (the trigger's own, else the plan's); no other cap."""
    problems = len(r.problems)
    caps: dict[str, float] = {}
    for key in _CAPS.values():
        own = r.number(entry, path, key, 0.0, _MAX_CAP, open_low=True)
        if key == _CAPS.get(metric):
            value = own if own is not None else defaults.get(key)
            if value is None and key not in entry:
                r.problem(
                    (*path, key),
                    f"required key is missing (a {metric!r} trigger needs the most one observation counts)",
                )
            elif value is not None:
                caps[key] = value
        elif key in entry:
            r.problem((*path, key), f"a {metric!r} trigger takes no {key!r}")
    return None if len(r.problems) > problems else caps
