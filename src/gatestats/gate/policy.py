"""The gate policy: a versioned TOML file, read strictly, identified by the digest of its bytes.

A policy is written *before* the candidate runs and registered in its run set (see
:mod:`gatestats.gate.registration`); the digest is the SHA-256 of the file's bytes, so any edit —
a threshold, a comment, a space — makes it another policy. Reading is strict: an unknown key, a
wrong type or a missing required key is a :class:`PolicyError` that names the file, the key path
and its line. Every key is documented in the README ("Gate policy") and in
``data/golden_bugfix/policy.toml``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, cast

from gatestats._typing import JSONObject
from gatestats.gate._typed import TypedFieldError
from gatestats.gate.bindings import PolicyBinding, SystemBinding
from gatestats.io.digest import digest_bytes
from gatestats.io.limits import name_problem
from gatestats.io.toml_lines import (
    KeyPath,
    TomlError,
    TomlProblem,
    key_text,
    line_of,
    locate,
    parse_toml,
    read_toml_file,
)
from gatestats.records.contract import SYSTEM_PARTS
from gatestats.sequential.design import SequentialDesign, parse_sequential_table, sequential_problems
from gatestats.vocabulary import (
    ACTIONS,
    DIRECTIONS,
    GATE_CORRECTIONS,
    GATE_METRICS,
    INFRA_RETRIES,
    JUDGE_CRITERIA,
    METRICS_WITHOUT_K,
    RULE_TESTS,
    Action,
    Direction,
    GateCorrection,
    GateMetric,
    InfraRetries,
    JudgeCriterion,
    RuleTest,
)

__all__ = [
    "NUMERIC_RANGES",
    "POLICY_FORMAT",
    "CostPolicy",
    "GateMetric",
    "JudgeRequirement",
    "Policy",
    "PolicyError",
    "PolicyProblem",
    "Rule",
    "SystemRequirement",
    "load_policy",
    "parse_policy",
]

POLICY_FORMAT = "gatestats-policy/1"

#: ``pass_rate``: per-case share of valid trials that passed (pass^1); ``pass_hat_k`` (all k
#: trials pass) and ``pass_at_k`` (at least one of k passes), unbiased per case;
#: ``cost_per_accepted``: spend (+ human time) per accepted outcome.

_METRICS: tuple[GateMetric, ...] = GATE_METRICS
_MULTIPLICITY: tuple[GateCorrection, ...] = GATE_CORRECTIONS
_SYSTEM_PARTS = SYSTEM_PARTS


class PolicyProblem(TomlProblem):
    """One thing wrong with a policy file: where (file, key path, line) and what."""

    __slots__ = ()


class PolicyError(TomlError):
    """The policy file is not a valid gate policy; ``problems`` lists every finding."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SystemRequirement:
    """What one side's records must show: its system label, optionally its digest, pinned parts."""

    system: str | None
    system_digest: str | None = None
    pins: Mapping[str, str] = field(default_factory=dict)

    def binding(self, side: str) -> SystemBinding:
        """The requirement as the verdict binds it.

        Parameters
        ----------
        side
            ``baseline`` or ``candidate`` (named in the error).

        Returns
        -------
        SystemBinding
            The system's label, digest and pins.

        Raises
        ------
        TypedFieldError
            The policy names no system for this side (the verdict binds each side's label).
        """
        if self.system is None:
            raise TypedFieldError(f"policy.{side}.system", "a string", None)
        return SystemBinding(system=self.system, system_digest=self.system_digest, pins=dict(self.pins))


@dataclass(frozen=True, slots=True, kw_only=True)
class Rule:
    """One gate rule.

    ``threshold`` is an absolute level the candidate's metric must be shown to clear (above it for
    ``direction = "higher"``, below it for ``"lower"``); ``test = "paired"`` compares the
    candidate with the baseline on the same cases and must show the candidate is not worse by
    more than ``margin`` (``margin = 0``: shown better). Both may be given; each is a row of the
    verdict. ``action = "warn"`` turns this rule's failure or inconclusiveness into a warning.
    """

    name: str
    metric: GateMetric
    slice: str
    direction: Direction
    threshold: float | None
    test: RuleTest
    margin: float | None
    alpha: float
    action: Action
    k: int
    grader: str | None
    line: int | None = field(default=None, compare=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class CostPolicy:
    """Rates and resampling of the cost-per-accepted-outcome evaluation."""

    review_rate_usd_per_hour: float | None = None
    machine_rate_usd_per_hour: float | None = None
    alpha: float = 0.05
    n_resamples: int = 2000
    action: Action = "block"
    #: A cost row with an attempt lacking a cost is insufficient evidence (never decided on bounds).
    require_complete_costs: bool = False
    #: Upper cost of one attempt for the bounds of missing costs; ``None``: the largest observed.
    max_cost_per_attempt_usd: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeRequirement:
    """The calibration a judge grader needs before its verdicts may count (see ``gatestats.judges``)."""

    name: str
    calibrations: tuple[Path, ...]
    judge_model: str
    rubric_digest: str
    max_false_pass_rate: float
    max_false_fail_rate: float | None
    max_flip_rate: float | None
    criterion: JudgeCriterion
    #: Calibrations of the same judge on newer labelled samples (``recalibrations``), and the largest
    #: change of a rate tolerated when it is significant (``max_calibration_change``;
    #: :mod:`gatestats.judges.recalibration`).
    recalibrations: tuple[Path, ...] = ()
    max_calibration_change: float | None = None
    #: Human labels of cases (``labels``; case_id, label 0/1): its ``pass_rate`` threshold rules decide
    #: on the prediction-powered estimate over cases (:mod:`gatestats.gate.judge_labels`, docs/gate.md).
    labels: Path | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class Policy:
    """A parsed gate policy; ``digest`` is ``sha256:`` of the file's bytes."""

    path: Path
    digest: str
    name: str
    version: str
    description: str | None
    baseline: SystemRequirement
    candidate: SystemRequirement
    k: int
    min_cases: int
    min_trials: int
    max_infra_error_rate: float
    multiplicity: GateCorrection
    on_insufficient_evidence: Literal["block"]
    confidence_level: float
    seed: int
    severe_slices: tuple[str, ...]
    max_cost_increase: float | None
    case_set_version: str | None
    cost: CostPolicy
    rules: tuple[Rule, ...]
    judges: Mapping[str, JudgeRequirement]
    #: Accept only records whose lines carry a verified checksum (runner or gatestats import).
    require_checksums: bool = True
    #: The protected golden set whose approved graders the candidate's run must use (``golden_set``,
    #: relative to the policy file); ``None``: graders are not checked against a set.
    golden_set: Path | None = None
    #: The ``[sequential]`` design (issue 18): rules decided by confidence sequences after every
    #: batch (see docs/sequential.md); ``None``: a fixed-size gate.
    sequential: SequentialDesign | None = None
    #: Refuse a candidate whose policy was registered at import, after its outcomes existed
    #: (``require_preregistration``; see :mod:`gatestats.gate.registration`).
    require_preregistration: bool = False
    #: How the cases are grouped (issue 30): ``independent``, ``case_group``, ``slice`` or
    #: ``id_prefix:<sep>`` (gatestats.gate.grouping); ``None``: not stated (the gate blocks where the
    #: records suggest groups).
    case_grouping: str | None = None
    #: A trial retried after an infrastructure error: ``bounded`` (unresolved whatever the retry gave)
    #: or ``counted`` (the final attempt's outcome; gatestats.gate.bounds, docs/gate.md).
    infra_retries: InfraRetries = "bounded"

    def to_dict(self) -> JSONObject:
        """JSON-ready summary (as bound into the verdict).

        Returns
        -------
        JSONObject
            The policy's identity, limits and both systems' requirements, as the verdict binds them.
        """
        return {
            "path": str(self.path),
            "digest": self.digest,
            "name": self.name,
            "version": self.version,
            "k": self.k,
            "min_cases": self.min_cases,
            "min_trials": self.min_trials,
            "max_infra_error_rate": self.max_infra_error_rate,
            "multiplicity": self.multiplicity,
            "on_insufficient_evidence": self.on_insufficient_evidence,
            "confidence_level": self.confidence_level,
            "seed": self.seed,
            "severe_slices": list(self.severe_slices),
            "max_cost_increase": self.max_cost_increase,
            "case_set_version": self.case_set_version,
            "require_checksums": self.require_checksums,
            "golden_set": None if self.golden_set is None else str(self.golden_set),
            "baseline": {
                "system": self.baseline.system,
                "system_digest": self.baseline.system_digest,
                "pins": dict(self.baseline.pins),
            },
            "candidate": {
                "system": self.candidate.system,
                "system_digest": self.candidate.system_digest,
                "pins": dict(self.candidate.pins),
            },
            "case_grouping": self.case_grouping,
            "require_preregistration": self.require_preregistration,
            "infra_retries": self.infra_retries,
        }

    def binding(self) -> PolicyBinding:
        """The policy as the verdict binds it (what :meth:`to_dict` shows, typed; each side must name its system).

        Returns
        -------
        PolicyBinding
            The policy's identity, limits and both systems' requirements.
        """
        return PolicyBinding(
            path=str(self.path),
            digest=self.digest,
            name=self.name,
            version=self.version,
            k=self.k,
            min_cases=self.min_cases,
            min_trials=self.min_trials,
            max_infra_error_rate=float(self.max_infra_error_rate),
            multiplicity=self.multiplicity,
            on_insufficient_evidence=self.on_insufficient_evidence,
            confidence_level=float(self.confidence_level),
            seed=self.seed,
            severe_slices=self.severe_slices,
            max_cost_increase=None if self.max_cost_increase is None else float(self.max_cost_increase),
            case_set_version=self.case_set_version,
            require_checksums=self.require_checksums,
            golden_set=None if self.golden_set is None else str(self.golden_set),
            baseline=self.baseline.binding("baseline"),
            candidate=self.candidate.binding("candidate"),
            case_grouping=self.case_grouping,
            require_preregistration=self.require_preregistration,
            infra_retries=self.infra_retries,
        )


#: The range of every numeric key of a policy, both ends included (``max_infra_error_rate``: 1 excluded).
#: A value outside its range is a :class:`PolicyError` naming the key and its line. The upper bounds
#: keep a typo from becoming a gate that runs out of memory or time (``n_resamples = 100000000``).
NUMERIC_RANGES: Mapping[str, tuple[float, float]] = {
    "k": (1, 1000),
    "min_cases": (1, 10_000_000),
    "min_trials": (1, 10_000),
    "max_infra_error_rate": (0.0, 1.0),
    "confidence_level": (0.5, 0.999),
    "seed": (0, 2**63 - 1),
    "max_cost_increase": (0.0, 100.0),
    "cost.review_rate_usd_per_hour": (0.0, 1e6),
    "cost.machine_rate_usd_per_hour": (0.0, 1e6),
    "cost.alpha": (1e-6, 0.5),
    "cost.n_resamples": (200, 100_000),
    "cost.max_cost_per_attempt_usd": (0.0, 1e6),
    "rules.threshold": (0.0, 1.0),
    "rules.threshold (cost_per_accepted)": (0.0, 1e6),
    "rules.margin": (0.0, 1.0),
    "rules.margin (cost_per_accepted)": (0.0, 100.0),
    "rules.alpha": (1e-6, 0.5),
    "rules.k": (1, 1000),
    "judges.max_false_pass_rate": (0.0, 1.0),
    "judges.max_false_fail_rate": (0.0, 1.0),
    "judges.max_flip_rate": (0.0, 1.0),
    "judges.max_calibration_change": (0.0, 1.0),
}


def _range(key: str) -> tuple[Any, Any]:
    return NUMERIC_RANGES[key]


class _Reader:
    """Typed access to the TOML mapping that records problems with their line instead of raising."""

    def __init__(self, file: str, text: str) -> None:
        self.file = file
        self.lines = locate(text)
        self.problems: list[PolicyProblem] = []

    def problem(self, path: KeyPath, message: str) -> None:
        key = key_text(path)
        self.problems.append(PolicyProblem(file=self.file, key=key, line=line_of(self.lines, path), message=message))

    def known(self, table: Mapping[str, Any], path: KeyPath, allowed: tuple[str, ...]) -> None:
        for key in table:
            if key not in allowed:
                self.problem((*path, key), f"unknown key (expected one of: {', '.join(allowed)})")

    def get(
        self,
        table: Mapping[str, Any],
        path: KeyPath,
        key: str,
        kind: type | tuple[type, ...],
        *,
        required: bool = False,
        default: Any = None,
    ) -> Any:
        if key not in table:
            if required:
                self.problem((*path, key) if path else (key,), "required key is missing")
            return default
        value = table[key]
        kinds = kind if isinstance(kind, tuple) else (kind,)
        ok = isinstance(value, kinds) and not (isinstance(value, bool) and bool not in kinds)
        if float in kinds and isinstance(value, int) and not isinstance(value, bool):
            ok = True
            value = float(value) if abs(value) < 2**1023 else (math.inf if value > 0 else -math.inf)
        if not ok:
            names = " or ".join(_type_name(k) for k in kinds)
            self.problem((*path, key), f"expected {names} (got {_type_name(type(value))} {value!r})")
            return default
        return value

    def number(
        self, table: Mapping[str, Any], path: KeyPath, key: str, low: float, high: float, *, default: Any = None
    ) -> Any:
        value = self.get(table, path, key, float, default=default)
        if value is not None and value is not default and not (low <= value <= high and math.isfinite(value)):
            self.problem((*path, key), f"expected a number in [{low:g}, {high:g}] (got {value!r})")
            return default
        return value

    def integer(
        self, table: Mapping[str, Any], path: KeyPath, key: str, low: int, high: int, *, required: bool = False
    ) -> Any:
        value = self.get(table, path, key, int, required=required)
        if value is not None and not low <= value <= high:
            shown = value if abs(value) < 10**30 else f"an integer of {len(str(abs(value)))} digits"
            self.problem((*path, key), f"expected an integer in [{low}, {high}] (got {shown})")
            return None
        return value

    def choice(
        self, table: Mapping[str, Any], path: KeyPath, key: str, choices: tuple[str, ...], *, default: Any = None
    ) -> Any:
        value = self.get(table, path, key, str, default=default)
        if value is not None and value not in choices:
            self.problem((*path, key), f"expected one of {', '.join(repr(c) for c in choices)} (got {value!r})")
            return default
        return value

    def strings(self, table: Mapping[str, Any], path: KeyPath, key: str) -> tuple[str, ...]:
        value = self.get(table, path, key, list, default=[])
        if not all(isinstance(v, str) and v for v in value):
            self.problem((*path, key), f"expected a list of non-empty strings (got {value!r})")
            return ()
        for i, item in enumerate(value):
            if (why := name_problem(item)) is not None:
                self.problem((*path, key, i), why)
                return ()
        return tuple(value)

    def name(
        self, table: Mapping[str, Any], path: KeyPath, key: str, *, required: bool = False, default: Any = None
    ) -> Any:
        """A string that names something (policy, rule, slice, system): no control characters, bounded length."""
        value = self.get(table, path, key, str, required=required, default=default)
        if isinstance(value, str) and (why := name_problem(value)) is not None:
            self.problem((*path, key), why)
            return default
        return value


def _type_name(kind: type) -> str:
    return {str: "a string", int: "an integer", float: "a number", bool: "a boolean", list: "an array"}.get(
        kind, "a table" if issubclass(kind, dict) else kind.__name__
    )


_TOP = (
    "format",
    "require_checksums",
    "name",
    "version",
    "description",
    "baseline",
    "candidate",
    "k",
    "min_cases",
    "min_trials",
    "max_infra_error_rate",
    "multiplicity",
    "on_insufficient_evidence",
    "confidence_level",
    "seed",
    "severe_slices",
    "max_cost_increase",
    "case_set_version",
    "golden_set",
    "cost",
    "rules",
    "judges",
    "sequential",
    "require_preregistration",
    "case_grouping",
    "infra_retries",
)
_RULE = ("name", "metric", "slice", "direction", "threshold", "test", "margin", "alpha", "action", "k", "grader")
_SYSTEM = ("system", "system_digest", "pins")
_COST = (
    "review_rate_usd_per_hour",
    "machine_rate_usd_per_hour",
    "alpha",
    "n_resamples",
    "action",
    "require_complete_costs",
    "max_cost_per_attempt_usd",
)
_JUDGE = (
    "calibrations",
    "judge_model",
    "rubric_digest",
    "max_false_pass_rate",
    "max_false_fail_rate",
    "max_flip_rate",
    "criterion",
    "recalibrations",
    "max_calibration_change",
    "labels",
)


def load_policy(path: str | os.PathLike[str]) -> Policy:
    """Read and check a gate policy file.

    Parameters
    ----------
    path
        The policy file (TOML, ``format = "gatestats-policy/1"``); see docs/gate.md.

    Returns
    -------
    Policy
        The checked policy.

    Raises
    ------
    PolicyError
        The file is missing, is not TOML, or breaks the policy format (every problem is listed with
        its key and line).
    """
    path = Path(path)
    data = read_toml_file(path, what="policy", problem=PolicyProblem, error=PolicyError)
    return parse_policy(data, path=path)


def parse_policy(data: bytes, *, path: str | os.PathLike[str] = "<policy>") -> Policy:
    """Parse the bytes of a policy file (see :func:`load_policy`).

    Parameters
    ----------
    data
        The file's bytes (UTF-8 TOML).
    path
        The file's name, for messages and to resolve the judges' calibration paths.

    Returns
    -------
    Policy
        The checked policy; its ``digest`` is the SHA-256 of ``data``.

    Raises
    ------
    PolicyError
        ``data`` is not UTF-8 TOML or breaks the policy format (every problem with key and line).

    Examples
    --------
    >>> p = parse_policy(b'''
    ... format = "gatestats-policy/1"
    ... name = "demo"
    ... version = "1"
    ... k = 2
    ... min_cases = 10
    ... min_trials = 2
    ... max_infra_error_rate = 0.05
    ... on_insufficient_evidence = "block"
    ... [baseline]
    ... system = "main"
    ... [[rules]]
    ... name = "not worse"
    ... metric = "pass_rate"
    ... test = "paired"
    ... margin = 0.1
    ... ''')
    >>> p.rules[0].direction, p.rules[0].alpha, p.multiplicity, p.digest[:7]
    ('higher', 0.05, 'holm', 'sha256:')
    >>> parse_policy(b'format = "gatestats-policy/1"\\nmetric = 3\\n')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    gatestats.gate.policy.PolicyError: <policy>:2: key 'metric': unknown key (expected one of: ...
    """
    path = Path(path)
    text, raw = parse_toml(data, file=str(path), what="a policy", problem=PolicyProblem, error=PolicyError)
    return _read_policy(_Reader(str(path), text), raw, path, digest_bytes(data))


class _Top(TypedDict, total=False):
    """The top-level values of a policy by :class:`Policy` field (typed, so the constructor call is checked)."""

    name: str
    version: str
    description: str | None
    k: int
    min_cases: int
    min_trials: int
    max_infra_error_rate: float
    on_insufficient_evidence: Literal["block"]
    multiplicity: GateCorrection
    confidence_level: float
    seed: int
    severe_slices: tuple[str, ...]
    max_cost_increase: float | None
    case_set_version: str | None
    require_checksums: bool
    golden_set: Path | None
    require_preregistration: bool
    case_grouping: str | None
    infra_retries: InfraRetries


def _top_values(r: _Reader, raw: Mapping[str, Any], path: Path) -> _Top:
    """The top-level values of the parsed TOML ``raw`` by :class:`Policy` field (problems recorded in key order)."""
    fmt = r.get(raw, (), "format", str, required=True)
    if fmt is not None and fmt != POLICY_FORMAT:
        r.problem(("format",), f"expected {POLICY_FORMAT!r} (got {fmt!r})")
    top: _Top = {"name": r.name(raw, (), "name", required=True), "version": r.name(raw, (), "version", required=True)}
    top["description"] = r.get(raw, (), "description", str)
    top["k"] = r.integer(raw, (), "k", *_range("k"), required=True)
    top["min_cases"] = r.integer(raw, (), "min_cases", *_range("min_cases"), required=True)
    top["min_trials"] = r.integer(raw, (), "min_trials", *_range("min_trials"), required=True)
    max_infra = top["max_infra_error_rate"] = r.get(raw, (), "max_infra_error_rate", float, required=True)
    if max_infra is not None and not 0 <= max_infra < 1:
        r.problem(("max_infra_error_rate",), f"expected a number in [0, 1) (got {max_infra!r})")
    on_ie = r.get(raw, (), "on_insufficient_evidence", str, required=True)
    if on_ie is not None and on_ie != "block":
        r.problem(
            ("on_insufficient_evidence",),
            f"expected 'block' (got {on_ie!r}): insufficient evidence never passes a gate",
        )
    top["on_insufficient_evidence"] = "block"
    top["multiplicity"] = r.choice(raw, (), "multiplicity", _MULTIPLICITY, default="holm")
    top["confidence_level"] = r.number(raw, (), "confidence_level", *_range("confidence_level"), default=0.95)
    top["seed"] = r.integer(raw, (), "seed", *_range("seed")) if "seed" in raw else 0
    top["severe_slices"] = r.strings(raw, (), "severe_slices")
    top["max_cost_increase"] = r.number(raw, (), "max_cost_increase", *_range("max_cost_increase"))
    top["case_set_version"] = r.get(raw, (), "case_set_version", str)
    top["require_checksums"] = r.get(raw, (), "require_checksums", bool, default=True)
    top["golden_set"] = _golden_set(r, raw, path)
    top["require_preregistration"] = r.get(raw, (), "require_preregistration", bool, default=False)
    top["case_grouping"] = _case_grouping(r, raw)
    top["infra_retries"] = r.choice(raw, (), "infra_retries", INFRA_RETRIES, default="bounded")
    return top


#: The values of ``case_grouping`` (``id_prefix:`` followed by a separator of 1-8 visible characters).
CASE_GROUPINGS = ("independent", "case_group", "slice", "id_prefix:<sep>")


def _case_grouping(r: _Reader, raw: Mapping[str, Any]) -> str | None:
    """``case_grouping``: how the cases are grouped, or that they are independent (gatestats.gate.grouping)."""
    value: str | None = r.get(raw, (), "case_grouping", str)
    if value is None or value in CASE_GROUPINGS[:3]:
        return value
    sep = value.removeprefix("id_prefix:")
    if value.startswith("id_prefix:") and 0 < len(sep) <= 8 and all(c.isprintable() and not c.isspace() for c in sep):
        return value
    r.problem(("case_grouping",), f"expected one of {', '.join(repr(v) for v in CASE_GROUPINGS)} (got {value!r})")
    return None


def _read_policy(r: _Reader, raw: Mapping[str, Any], path: Path, digest: str) -> Policy:
    """The policy the parsed TOML ``raw`` describes (every problem found is raised at once)."""
    r.known(raw, (), _TOP)
    top = _top_values(r, raw, path)
    k, min_cases, min_trials, severe = top["k"], top["min_cases"], top["min_trials"], top["severe_slices"]
    baseline = _system(r, raw, "baseline", required=True)
    candidate = _system(r, raw, "candidate", required=False)
    cost = _cost(r, raw)
    judges = _judges(r, raw, path)
    rules = tuple(_rules(r, raw, k, severe, judges))
    sequential = _sequential(r, raw, min_cases=min_cases, min_trials=min_trials)
    _labels_problems(r, rules, judges, raw)
    if min_trials is not None and k is not None and min_trials < k:
        r.problem(("min_trials",), f"must be at least k = {k} (got {min_trials}): pass^k needs k valid trials")
    if not raw.get("rules") and not severe and top["max_cost_increase"] is None:
        r.problem(("rules",), "the policy decides nothing: give at least one rule, severe slice or max_cost_increase")
    if r.problems:
        raise PolicyError(r.problems)
    return Policy(
        path=path,
        digest=digest,
        name=top["name"],
        version=top["version"],
        description=top["description"],
        baseline=baseline,
        candidate=candidate,
        k=k,
        min_cases=min_cases,
        min_trials=min_trials,
        max_infra_error_rate=top["max_infra_error_rate"],
        multiplicity=top["multiplicity"],
        on_insufficient_evidence=top["on_insufficient_evidence"],
        confidence_level=top["confidence_level"],
        seed=top["seed"],
        severe_slices=severe,
        max_cost_increase=top["max_cost_increase"],
        case_set_version=top["case_set_version"],
        cost=cost,
        rules=rules,
        judges=judges,
        require_checksums=top["require_checksums"],
        golden_set=top["golden_set"],
        sequential=sequential,
        require_preregistration=top["require_preregistration"],
        case_grouping=top["case_grouping"],
        infra_retries=top["infra_retries"],
    )


def _sequential(
    r: _Reader, raw: Mapping[str, Any], *, min_cases: int | None, min_trials: int | None
) -> SequentialDesign | None:
    """The ``[sequential]`` design, if any (every problem reported with its key and line).

    A sequential policy may hold only rules with a sequential decision: a cost rule (a
    ``cost_per_accepted`` rule or ``max_cost_increase``) would be decided by a fixed-size test after
    data-dependent stopping, so it is a problem here, not a rule quietly read at the end.
    """
    if "sequential" not in raw:
        return None
    table = r.get(raw, (), "sequential", dict)
    if table is None:
        return None
    found = sequential_problems(table)
    for key, message in found:
        r.problem(("sequential", key), message)
    if raw.get("max_cost_increase") is not None:
        r.problem(("max_cost_increase",), "a [sequential] policy cannot hold a cost rule (no sequential decision)")
    entries = raw.get("rules")
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if isinstance(entry, dict) and entry.get("metric") == "cost_per_accepted":
            r.problem(("rules", i, "metric"), "a [sequential] policy cannot hold a cost rule (no sequential decision)")
    if found:
        return None
    design = parse_sequential_table(table)
    if min_trials is not None and design.trials < min_trials:
        r.problem(("sequential", "trials"), f"must be at least min_trials = {min_trials} (got {design.trials})")
    if min_cases is not None and design.max_cases < min_cases:
        r.problem(("sequential", "max_cases"), f"must be at least min_cases = {min_cases} (got {design.max_cases})")
    return design


def _golden_set(r: _Reader, raw: Mapping[str, Any], policy_path: Path) -> Path | None:
    """``golden_set = "PATH"``: the protected set's directory, relative to the policy file."""
    value: str | None = r.get(raw, (), "golden_set", str)
    if value is None:
        return None
    if not value.strip() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
        r.problem(
            ("golden_set",),
            f"expected the golden set's directory, relative to the policy file (got {value!r})",
        )
        return None
    return policy_path.parent / value


def _system(r: _Reader, raw: Mapping[str, Any], key: str, *, required: bool) -> SystemRequirement:
    table = r.get(raw, (), key, dict, required=required, default={})
    r.known(table, (key,), _SYSTEM)
    system = r.name(table, (key,), "system", required=required and key in raw)
    digest = r.get(table, (key,), "system_digest", str)
    pins_raw = r.get(table, (key,), "pins", dict, default={})
    pins: dict[str, str] = {}
    for part, value in pins_raw.items():
        if part not in _SYSTEM_PARTS:
            r.problem((key, "pins", part), f"unknown system part (expected one of: {', '.join(_SYSTEM_PARTS)})")
        elif not isinstance(value, str) or not value:
            r.problem((key, "pins", part), f"expected a non-empty string (got {value!r})")
        else:
            pins[part] = value
    return SystemRequirement(system=system, system_digest=digest, pins=pins)


def _cost(r: _Reader, raw: Mapping[str, Any]) -> CostPolicy:
    table = r.get(raw, (), "cost", dict, default={})
    r.known(table, ("cost",), _COST)
    return CostPolicy(
        review_rate_usd_per_hour=r.number(
            table, ("cost",), "review_rate_usd_per_hour", *_range("cost.review_rate_usd_per_hour")
        ),
        machine_rate_usd_per_hour=r.number(
            table, ("cost",), "machine_rate_usd_per_hour", *_range("cost.machine_rate_usd_per_hour")
        ),
        alpha=r.number(table, ("cost",), "alpha", *_range("cost.alpha"), default=0.05),
        n_resamples=r.integer(table, ("cost",), "n_resamples", *_range("cost.n_resamples")) or 2000,
        action=r.choice(table, ("cost",), "action", ACTIONS, default="block"),
        require_complete_costs=r.get(table, ("cost",), "require_complete_costs", bool, default=False),
        max_cost_per_attempt_usd=r.number(
            table, ("cost",), "max_cost_per_attempt_usd", *_range("cost.max_cost_per_attempt_usd")
        ),
    )


def _judges(r: _Reader, raw: Mapping[str, Any], policy_path: Path) -> dict[str, JudgeRequirement]:
    table = r.get(raw, (), "judges", dict, default={})
    judges: dict[str, JudgeRequirement] = {}
    for name, entry in table.items():
        path: KeyPath = ("judges", name)
        if (why := name_problem(name)) is not None:
            r.problem(path, f"the judge's name: {why}")
            continue
        if not isinstance(entry, dict):
            r.problem(path, f"expected a table (got {entry!r})")
            continue
        r.known(entry, path, _JUDGE)
        calibrations = r.strings(entry, path, "calibrations")
        if not calibrations:
            r.problem((*path, "calibrations"), "list at least one calibration artifact (judge-cal-*.json)")
        model = r.name(entry, path, "judge_model", required=True)
        rubric = r.get(entry, path, "rubric_digest", str, required=True)
        fp = r.number(entry, path, "max_false_pass_rate", *_range("judges.max_false_pass_rate"))
        if fp is None:
            r.problem((*path, "max_false_pass_rate"), "required key is missing (a judge's false-pass rate is limited)")
        judges[name] = JudgeRequirement(
            name=name,
            calibrations=tuple((policy_path.parent / c) for c in calibrations),
            judge_model=model or "",
            rubric_digest=rubric or "",
            max_false_pass_rate=fp if fp is not None else 0.0,
            max_false_fail_rate=r.number(entry, path, "max_false_fail_rate", *_range("judges.max_false_fail_rate")),
            max_flip_rate=r.number(entry, path, "max_flip_rate", *_range("judges.max_flip_rate")),
            criterion=r.choice(entry, path, "criterion", JUDGE_CRITERIA, default="upper_bound"),
            **_recalibration(r, entry, path, policy_path),
            labels=None if (labels := r.get(entry, path, "labels", str)) is None else policy_path.parent / labels,
        )
    return judges


def _labels_problems(
    r: _Reader, rules: tuple[Rule, ...], judges: Mapping[str, JudgeRequirement], raw: Mapping[str, Any]
) -> None:
    """Refuse ``[judges.NAME] labels`` where the prediction-powered decision is not built (docs/gate.md)."""
    for name, req in judges.items():
        if req.labels is None:
            continue
        key: KeyPath = ("judges", name, "labels")
        for rule in (x for x in rules if x.grader == name):
            if rule.metric != "pass_rate" or rule.test == "paired" or rule.threshold is None:
                r.problem(
                    key,
                    f"rule {rule.name!r}: human labels decide only a pass_rate threshold rule, not paired or pass^k",
                )
        if "sequential" in raw:
            r.problem(
                key, "human labels with [sequential]: the labelled sample is fixed, the looks are not (not built)"
            )
        if raw.get("case_grouping") not in (None, "independent"):
            r.problem(key, "human labels with case_grouping: the PPI interval treats cases as independent")


def _recalibration(r: _Reader, entry: Mapping[str, Any], path: KeyPath, policy_path: Path) -> dict[str, Any]:
    """``recalibrations`` (files) and ``max_calibration_change`` of a judge: both or neither."""
    files = r.strings(entry, path, "recalibrations") if "recalibrations" in entry else []
    limit = r.number(entry, path, "max_calibration_change", *_range("judges.max_calibration_change"))
    if bool(files) != (limit is not None):
        r.problem((*path, "max_calibration_change"), "give recalibrations and max_calibration_change together")
    return {"recalibrations": tuple(policy_path.parent / f for f in files), "max_calibration_change": limit}


def _rules(
    r: _Reader, raw: Mapping[str, Any], k: int | None, severe: tuple[str, ...], judges: Mapping[str, JudgeRequirement]
) -> list[Rule]:
    """The ``[[rules]]`` tables as rules (a rule with a problem is reported and left out)."""
    entries = r.get(raw, (), "rules", list, default=[])
    rules: list[Rule] = []
    names: set[str] = set()
    for i, entry in enumerate(entries):
        path: KeyPath = ("rules", i)
        if not isinstance(entry, dict):
            r.problem(path, f"expected a table ([[rules]]) (got {entry!r})")
            continue
        before = len(r.problems)
        r.known(entry, path, _RULE)
        name = r.name(entry, path, "name", required=True)
        if name is not None and name in names:
            r.problem((*path, "name"), f"duplicate rule name {name!r}")
        names.add(name or "")
        metric, direction = _rule_metric(r, entry, path)
        slice_name = r.name(entry, path, "slice", default="all")
        if slice_name in severe:
            r.problem((*path, "slice"), f"{slice_name!r} is a severe slice: it is scored on its own (threshold 1.00)")
        test, threshold, margin = _rule_test(r, entry, path, metric)
        alpha = r.number(entry, path, "alpha", *_range("rules.alpha"), default=0.05)
        action = r.choice(entry, path, "action", ACTIONS, default="block")
        rule_k = _rule_k(r, entry, path, metric, k)
        grader = r.get(entry, path, "grader", str)
        if grader is not None and grader not in judges:
            r.problem((*path, "grader"), f"no [judges.{grader}] table names its calibration")
        if len(r.problems) > before:
            continue
        rules.append(
            Rule(
                name=name,
                metric=cast("GateMetric", metric),
                slice=slice_name,
                direction=direction,
                threshold=threshold,
                test=test,
                margin=margin,
                alpha=alpha,
                action=action,
                k=rule_k,
                grader=grader,
                line=line_of(r.lines, path),
            )
        )
    return rules


def _rule_metric(r: _Reader, entry: Mapping[str, Any], path: KeyPath) -> tuple[str | None, Direction]:
    """A rule's metric and direction (which must be the metric's own: cost lower, rates higher)."""
    metric = r.choice(entry, path, "metric", _METRICS)
    if "metric" not in entry:
        r.problem((*path, "metric"), "required key is missing")
    default_direction = "lower" if metric == "cost_per_accepted" else "higher"
    direction = r.choice(entry, path, "direction", DIRECTIONS, default=default_direction)
    if metric is not None and direction != default_direction:
        r.problem((*path, "direction"), f"{metric} is better when {default_direction} (got {direction!r})")
    return metric, direction


def _rule_test(
    r: _Reader, entry: Mapping[str, Any], path: KeyPath, metric: str | None
) -> tuple[RuleTest, float | None, float | None]:
    """A rule's test, threshold and margin (a paired test without a margin has margin 0)."""
    test = r.choice(entry, path, "test", RULE_TESTS, default="none")
    cost_rule = " (cost_per_accepted)" if metric == "cost_per_accepted" else ""
    threshold = r.number(entry, path, "threshold", *_range("rules.threshold" + cost_rule))
    margin = r.number(entry, path, "margin", *_range("rules.margin" + cost_rule))
    if margin is not None and test != "paired":
        r.problem((*path, "margin"), "a margin needs test = 'paired'")
    if test == "paired" and margin is None:
        margin = 0.0
    if threshold is None and test != "paired":
        r.problem(path, "a rule needs a threshold, test = 'paired', or both")
    return test, threshold, margin


def _rule_k(r: _Reader, entry: Mapping[str, Any], path: KeyPath, metric: str | None, k: int | None) -> int:
    """A rule's k: its own, else the policy's; 1 for metrics without a k (which must not name one)."""
    rule_k = r.integer(entry, path, "k", *_range("rules.k")) if "k" in entry else k
    if metric in METRICS_WITHOUT_K and "k" in entry:
        r.problem((*path, "k"), f"{metric} has no k; k applies to pass_hat_k and pass_at_k")
    return 1 if metric in METRICS_WITHOUT_K else int(rule_k or 1)
