"""Typed parts of a verdict: what it binds (policy, registration, record sets) and what it summarises.

Every part is a frozen dataclass whose fields are the JSON keys of the verdict file, in file
order; :func:`gatestats.gate.verdict.read_verdict` builds them with
:func:`gatestats.gate._typed.build`, which checks every field against its annotation, and
``to_dict`` writes them back unchanged. The report reads these objects, never a raw mapping.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from gatestats._typing import JSONObject
from gatestats.gate._typed import to_json
from gatestats.vocabulary import Action, GateCorrection, InfraRetries, Metric, Outcome

if TYPE_CHECKING:
    from gatestats.sequential.decide import SequencePoint

__all__ = [
    "LAYERS",
    "CaseSetRate",
    "CaseSets",
    "CostSummary",
    "CurvePoint",
    "FailureClassCount",
    "FileBinding",
    "FlipCount",
    "InfraSide",
    "JudgeStatus",
    "LabelsBinding",
    "Layer",
    "PolicyBinding",
    "RecordsSeal",
    "SequencePointBinding",
    "SequentialBinding",
    "SequentialRulePath",
    "SevereFailure",
    "SideBinding",
    "SliceRate",
    "SystemBinding",
    "UnresolvedBound",
]


#: Where a record's result comes from: the ``replay`` suite, a ``live`` sample or ``shadow`` traffic.
Layer = Literal["replay", "live", "shadow"]
LAYERS: tuple[Layer, ...] = ("replay", "live", "shadow")


class _Json:
    """``to_dict``: the JSON object of the part, keys in field order."""

    __slots__ = ()

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping (keys in field order, tuples as lists).

        Returns
        -------
        dict
            The part as it stands in the verdict file.
        """
        out: dict[str, Any] = to_json(self)
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemBinding(_Json):
    """A side's system as the policy requires it: its label, digest and pinned parts."""

    system: str
    system_digest: str | None
    pins: Mapping[str, str]


@dataclass(frozen=True, slots=True, kw_only=True)
class PolicyBinding(_Json):
    """The registered policy as bound into the verdict (its digest decides; the rest is shown)."""

    path: str
    digest: str
    name: str
    version: str
    k: int
    min_cases: int
    min_trials: int
    max_infra_error_rate: float
    multiplicity: GateCorrection
    on_insufficient_evidence: Action
    confidence_level: float
    seed: int
    severe_slices: tuple[str, ...]
    max_cost_increase: float | None
    case_set_version: str | None
    require_checksums: bool
    #: The golden set whose approved graders the run must use (absent in verdicts before it existed).
    golden_set: str | None = None
    baseline: SystemBinding
    candidate: SystemBinding
    #: How the policy groups its cases (issue 30; absent in verdicts before it existed, and null when not stated).
    case_grouping: str | None = None
    #: Whether the policy refuses a registration made at import (absent in verdicts before it existed).
    require_preregistration: bool = False
    #: What the gate made of trials retried after an infrastructure error (absent in verdicts before it existed).
    infra_retries: InfraRetries = "counted"


@dataclass(frozen=True, slots=True, kw_only=True)
class FileBinding(_Json):
    """A record file the verdict was computed from: its path, digest, size and checksums."""

    path: str
    digest: str
    size: int
    checksums: Literal["verified", "none", "empty"]
    n_records: int


@dataclass(frozen=True, slots=True, kw_only=True)
class LabelsBinding(_Json):
    """A judge's human labels file the verdict decided on (``[judges.NAME] labels``): path, digest, labels read."""

    judge: str
    path: str
    digest: str
    n_labels: int


@dataclass(frozen=True, slots=True, kw_only=True)
class RecordsSeal(_Json):
    """The runner's seal of ``records.jsonl`` (digest, bytes, lines) as found in the manifest."""

    digest: str
    bytes: int
    lines: int


@dataclass(frozen=True, slots=True, kw_only=True)
class SideBinding(_Json):
    """One side's record set: where it was read, its digests, its manifest facts and systems."""

    path: str
    kind: Literal["run_set", "records"]
    digest: str
    files: tuple[FileBinding, ...]
    n_records: int
    run_set_id: str | None
    complete: bool | None
    case_set_version: str | None
    trials: int | None
    policy_digest: str | None
    policy_registered_at: str | None
    origin: str | None
    checksums: Literal["verified", "none", "empty"]
    records_seal: RecordsSeal | None
    imported_from: str | None
    imported_source_digest: str | None
    imported_by: str | None
    imported_at: str | None
    system: str | None
    system_digest: tuple[str, ...]
    system_parts: Mapping[str, tuple[str, ...]]
    task_set_version: tuple[str, ...]
    #: The layers the side's records name (sorted; empty when none names one, as before records had it).
    layers: tuple[Layer, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SevereFailure(_Json):
    """A candidate trial of a severe slice that did not pass."""

    case_id: str
    trial: int
    outcome: Outcome
    bound: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class InfraSide(_Json):
    """A side's infrastructure account: attempts, infra errors, kills per bound."""

    attempts: int
    infra_errors: int
    resource_killed: int
    bounds: Mapping[str, int]
    infra_error_cases: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeStatus(_Json):
    """Whether a judge grader may vote, the calibrations it rests on, and why not."""

    can_vote: bool
    reasons: tuple[str, ...]
    calibration_versions: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CostSummary(_Json):
    """Cost per accepted outcome per side as the gate computed it (or why it could not).

    ``per_system`` is :meth:`gatestats.cost.CostPerAccepted.to_dict` (the cost module's own
    documented format); ``error`` the reason there is none.
    """

    per_system: Mapping[str, Any] | None = None
    error: str | None = None
    max_cost_increase: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CurvePoint(_Json):
    """pass^k or pass@k of one side at one k, with its case-level interval (every case counted)."""

    side: Literal["baseline", "candidate"]
    metric: Metric
    k: int
    status: Literal["ok", "insufficient_evidence"]
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    method: str | None
    reason: str | None
    numerator: str | None
    denominator: int | None
    n_cases: int
    confidence_level: float


@dataclass(frozen=True, slots=True, kw_only=True)
class SliceRate(_Json):
    """The pass rate of one side in one slice (``(none)`` for cases without a slice)."""

    slice: str
    side: Literal["baseline", "candidate"]
    severe: bool
    n_cases: int
    n_valid_trials: int | None
    n_passed: int | None
    status: Literal["ok", "insufficient_evidence"]
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    method: str | None
    reason: str | None
    confidence_level: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseSetRate(_Json):
    """One side's pass rate over one group of cases of an overlap period (the case as the unit).

    ``cases`` is ``shared`` (in both case sets at the same version: the comparison), ``added``
    (only in the candidate's set: the new set's baseline-to-be) or ``retired`` (only in the
    baseline's set).
    """

    cases: Literal["shared", "added", "retired"]
    side: Literal["baseline", "candidate"]
    n_cases: int
    n_valid_trials: int | None
    n_passed: int | None
    status: Literal["ok", "insufficient_evidence"]
    estimate: float | None
    ci_low: float | None
    ci_high: float | None
    method: str | None
    reason: str | None
    confidence_level: float


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseSets(_Json):
    """Two case-set versions side by side (an overlap period): what is compared, added and retired.

    Present in a verdict only when the baseline's and the candidate's case-set versions differ.
    ``n_shared`` cases are in both sets at the same version; ``changed`` are in both under
    different versions (not comparable); ``added`` only in the candidate's set; ``retired`` only
    in the baseline's. ``rates`` are the pass rates of each group (shared: both sides; added: the
    candidate; retired: the baseline); they decide nothing.
    """

    baseline_version: str
    candidate_version: str
    n_shared: int
    changed: tuple[str, ...]
    added: tuple[str, ...]
    retired: tuple[str, ...]
    rates: tuple[CaseSetRate, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class FailureClassCount(_Json):
    """One failure class among the candidate's failed cases: ``count`` of ``n`` cases, with a Wilson interval.

    A failed case has a final trial that ``failed`` or was ``resource_killed``; it counts once, under
    its records' ``failure_class`` (``(unclassified)`` when they carry none), however many trials failed.
    ``cases`` are ``case_id@case_version`` labels, as in the flips.
    """

    failure_class: str
    count: int
    n: int
    share: float
    ci_low: float
    ci_high: float
    confidence_level: float
    cases: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SequencePointBinding(_Json):
    """One rule's sequence after one batch: the running estimate, the confidence-sequence bounds, both
    e-values (capped at 1e300), bound as the sequential decision made it.

    The verdict's own type (its fields are the file's keys, in order); :meth:`of` converts the
    sequential core's :class:`gatestats.sequential.SequencePoint` at the boundary, so a change there
    cannot change the verdict format unnoticed.
    """

    n_cases: int
    estimate: float
    lower: float
    upper: float
    e_pass: float
    e_fail: float

    @classmethod
    def of(cls, point: SequencePoint) -> SequencePointBinding:
        """The binding of a sequence point.

        Parameters
        ----------
        point
            A point of a :class:`gatestats.sequential.SequentialDecision`'s path.

        Returns
        -------
        SequencePointBinding
            The same values under the verdict's keys.
        """
        return cls(
            n_cases=point.n_cases,
            estimate=point.estimate,
            lower=point.lower,
            upper=point.upper,
            e_pass=point.e_pass,
            e_fail=point.e_fail,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialRulePath(_Json):
    """One rule row of a sequential gate: its decision, where it was made, and its path over the batches.

    Every field but ``row`` is the :class:`gatestats.sequential.SequentialDecision`'s of the same name.
    ``status`` is the sequence's own (``undecided`` until a side crosses); the row's decision in
    ``rules`` adds the rule's action. ``boundary`` is the level the values are compared with (a
    threshold, or minus the margin for a paired difference); ``alpha_pass`` and ``alpha_fail`` are
    the rule's alpha split between the two stopping sides and across the rows.
    """

    row: str
    status: Literal["pass", "fail", "undecided"]
    decided_at: int | None
    boundary: float
    alpha_pass: float
    alpha_fail: float
    cases_needed: int | None
    path: tuple[SequencePointBinding, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialBinding(_Json):
    """A sequential gate's run: the design, the seeded case order, where it stopped, and the trials saved.

    ``order`` is the first ``max_cases`` case ids of the permutation drawn from the policy's seed
    (``gatestats.gate.sequential_rules.case_order``); ``checkpoints`` are the batch ends reached with
    every trial of every case on both sides; ``stopped_at`` is the last of them (0: no batch complete),
    where ``decided`` says whether the gate's decision was determined (a blocking row or severe slice
    failed, or every blocking row and severe slice passed with at least ``min_cases`` cases). ``trials_fixed`` is the
    fixed-size design's ``max_cases x trials x 2`` systems; ``trials_used`` the (case, trial) units
    with a record on either side; ``trials_saved`` their difference.
    """

    max_cases: int
    trials: int
    batch_cases: int
    method: str
    alpha_pass_share: float
    order: tuple[str, ...]
    checkpoints: tuple[int, ...]
    stopped_at: int
    decided: bool
    trials_used: int
    trials_fixed: int
    trials_saved: int
    rules: tuple[SequentialRulePath, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class UnresolvedBound(_Json):
    """A row decided on a bound because some attempts are unresolved (final attempt ``infra_error``).

    ``observed_if_failed`` is the row's estimate when every unresolved attempt of the candidate is
    counted as a failure and every one of the baseline as a pass (the end the ``pass`` decision
    must hold at); ``observed_if_passed`` the opposite end (the one the ``fail`` decision must hold
    at). ``summary`` says in words which end decided the row (docs/gate.md, "Unresolved attempts").
    ``to_decide`` is, for a row between the ends, the most of the candidate's unresolved attempts
    that may fail for the row to pass (the rest counted as passes, before the multiplicity
    correction; ``None`` when none can, or the row is decided).
    """

    candidate: int
    baseline: int
    observed_if_failed: float | None
    observed_if_passed: float | None
    summary: str = ""
    to_decide: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class FlipCount(_Json):
    """One flipped case's trials on both sides: ``passed`` of ``valid`` trials (``None``: the side has none).

    ``case`` is the ``case_id@case_version`` label of the flips; the counts are
    :func:`gatestats.estimators.case_summary`'s ``c`` and ``n`` of the records the gate decided on.
    """

    case: str
    direction: Literal["pass_to_fail", "fail_to_pass"]
    baseline_passed: int | None
    baseline_valid: int | None
    candidate_passed: int | None
    candidate_valid: int | None
