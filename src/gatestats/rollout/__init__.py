"""After the gate: the rollout plan, the observation log, late labels and the watch (docs/rollout.md).

- :mod:`gatestats.rollout.plan` — :func:`~gatestats.rollout.plan.load_plan`: the ``[rollout]`` plan
  (stages, owners, cohort limits, rollback triggers), checked, with its digest.
- :mod:`gatestats.rollout.log` — the observation log ``WATCH/``: ``init_log``, ``add_batch``,
  ``read_log``.
- :mod:`gatestats.rollout.labels` — late labels ``WATCH/labels.jsonl``: ``add_labels``, ``read_labels``.

The package reads and writes evidence; it computes no statistic (``gatestats.sequential.monitor``
does) and the runner writes every batch's files.
"""

from gatestats.rollout.labels import LABEL_COLUMNS, Label, add_labels, apply_labels, read_labels
from gatestats.rollout.log import (
    BatchInfo,
    ObservationLog,
    WatchError,
    WatchManifest,
    add_batch,
    check_plan,
    init_log,
    read_log,
    read_watch_manifest,
)
from gatestats.rollout.plan import (
    KIND_METRICS,
    PLAN_FORMAT,
    PlanError,
    PlanProblem,
    RolloutPlan,
    StagePlan,
    Trigger,
    load_plan,
    parse_plan,
)

__all__ = [
    "KIND_METRICS",
    "LABEL_COLUMNS",
    "PLAN_FORMAT",
    "BatchInfo",
    "Label",
    "ObservationLog",
    "PlanError",
    "PlanProblem",
    "RolloutPlan",
    "StagePlan",
    "Trigger",
    "WatchError",
    "WatchManifest",
    "add_batch",
    "add_labels",
    "apply_labels",
    "check_plan",
    "init_log",
    "load_plan",
    "parse_plan",
    "read_labels",
    "read_log",
    "read_watch_manifest",
]
