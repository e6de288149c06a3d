"""The verdict: pass / warn / fail / insufficient_evidence, its rows, and the immutable verdict file.

Exit codes of ``gatestats gate`` (see :data:`EXIT_CODES`): ``pass`` 0, ``warn`` 10 (0 with
``--warn-exit-zero``), ``fail`` 11, ``insufficient_evidence`` 12; invalid record files 1; usage
errors, an invalid policy and a refused registration 2.

The verdict file binds the policy digest, both record sets' digests and the tool version; its own
``digest`` is ``sha256:`` of its canonical JSON without that field. It is written once (exclusive
create: an fsync'd temporary file hard-linked into place): writing over an existing verdict file is
refused.
"""

from __future__ import annotations

import json
import os
import re
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, ClassVar, Literal
from xml.etree import ElementTree as ET

from gatestats._typing import JSONObject, JSONValue
from gatestats.errors import GatestatsError, RecordFileError
from gatestats.gate._typed import TypedFieldError, build, to_json
from gatestats.gate.bindings import (
    CaseSets,
    CostSummary,
    CurvePoint,
    FailureClassCount,
    FlipCount,
    InfraSide,
    JudgeStatus,
    LabelsBinding,
    PolicyBinding,
    SequentialBinding,
    SevereFailure,
    SideBinding,
    SliceRate,
    UnresolvedBound,
)
from gatestats.gate.registration import Registration
from gatestats.gate.sequential_summary import guarantee_text, rule_stop, stop_text, trials_text
from gatestats.io.digest import digest_bytes, digest_json
from gatestats.io.files import write_once
from gatestats.io.jsonfile import parse_json_document, read_regular_file
from gatestats.io.text import LABEL_LIMIT, TEXT_LIMIT, shorten, visible
from gatestats.vocabulary import Action, Decision

__all__ = [
    "EXIT_CODES",
    "MAX_VERDICT_BYTES",
    "VERDICT_FORMAT",
    "CheckResult",
    "Decision",
    "RuleResult",
    "SevereSliceResult",
    "Verdict",
    "VerdictFile",
    "VerdictFileError",
    "read_verdict",
    "resolve_bound_path",
    "verdict_digest",
    "verdict_file_bytes",
    "write_verdict",
]

VERDICT_FORMAT = "gatestats-verdict/1"
EXIT_CODES: dict[str, int] = {"pass": 0, "warn": 10, "fail": 11, "insufficient_evidence": 12}
#: The largest verdict file read (a verdict of 100,000 cases is far below this).
MAX_VERDICT_BYTES = 256 << 20


class VerdictFileError(GatestatsError, ValueError):
    """A verdict file cannot be read as a ``gatestats-verdict/1`` verdict (file and field named)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """A precondition the gate checks before any rule may decide (blocking on silence)."""

    name: str
    side: Literal["baseline", "candidate", "both", "policy"]
    status: Literal["ok", "insufficient_evidence"]
    detail: str

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping.

        Returns
        -------
        JSONObject
            ``name``, ``side``, ``status`` and ``detail``.
        """
        return {"name": self.name, "side": self.side, "status": self.status, "detail": self.detail}


@dataclass(frozen=True, slots=True, kw_only=True)
class RuleResult:
    """One row of the rules table: a rule's threshold or paired test (or the cost limit)."""

    rule: str
    row: str
    metric: str
    slice: str
    k: int
    kind: str
    action: Action
    observed: float | None
    baseline: float | None
    ci_low: float | None
    ci_high: float | None
    threshold: float | None
    margin: float | None
    test: str
    alpha: float
    pvalue_pass: float | None
    pvalue_fail: float | None
    pvalue_pass_adjusted: float | None
    pvalue_fail_adjusted: float | None
    n_cases: int
    decision: Decision
    reason: str | None
    cases_needed: int | None = None
    grader: str | None = None
    #: The multiplicity family the row was adjusted in (``blocking``, ``warn_only``) or
    #: ``removed_before_data`` (undecidable before any outcome was seen; gatestats.gate.families).
    #: ``None`` in verdicts written before families were declared, and for sequential rows.
    family: Literal["blocking", "warn_only", "removed_before_data"] | None = None
    #: The rows adjusted together with this one (0 when removed before the data).
    family_size: int | None = None
    #: The bound the row was decided on when some of its attempts are unresolved (absent: none were).
    unresolved: UnresolvedBound | None = None

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping.

        Returns
        -------
        JSONObject
            The row's fields in declaration order (``unresolved`` only when the row has unresolved attempts).
        """
        out = {name: getattr(self, name) for name in self.__slots__ if name != "unresolved"}
        if self.unresolved is not None:
            out["unresolved"] = self.unresolved.to_dict()
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class SevereSliceResult:
    """A severe slice scored on its own: every valid candidate trial of its cases must pass."""

    slice: str
    n_cases: int
    n_trials: int
    n_passed: int
    failures: tuple[SevereFailure, ...]
    baseline_failures: int | None
    decision: Decision
    reason: str | None
    threshold: float = 1.0
    #: The candidate's unresolved attempts (final attempt ``infra_error``) in the slice's cases (absent: none).
    unresolved: int = 0

    def to_dict(self) -> JSONObject:
        """JSON-ready mapping.

        Returns
        -------
        JSONObject
            The slice's counts, threshold, failures (each a mapping), decision and reason.
        """
        out: JSONObject = {
            "slice": self.slice,
            "n_cases": self.n_cases,
            "n_trials": self.n_trials,
            "n_passed": self.n_passed,
            "threshold": self.threshold,
            "failures": [f.to_dict() for f in self.failures],
            "baseline_failures": self.baseline_failures,
            "decision": self.decision,
            "reason": self.reason,
        }
        if self.unresolved:
            out["unresolved"] = self.unresolved
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Verdict:
    """The gate's decision and everything it rests on (see ``to_dict`` for the file format)."""

    verdict: Decision
    reasons: tuple[str, ...]
    checks: tuple[CheckResult, ...]
    rules: tuple[RuleResult, ...]
    severe_slices: tuple[SevereSliceResult, ...]
    flips_pass_to_fail: tuple[str, ...]
    flips_fail_to_pass: tuple[str, ...]
    cost: CostSummary | None
    judges: Mapping[str, JudgeStatus] | None
    policy: PolicyBinding
    registration: Registration
    baseline: SideBinding
    candidate: SideBinding
    infra: Mapping[str, InfraSide]
    tool_version: str
    created_at: str
    curves: tuple[CurvePoint, ...] = ()
    slice_rates: tuple[SliceRate, ...] = ()
    case_sets: CaseSets | None = None
    failure_classes: tuple[FailureClassCount, ...] = ()
    #: The run of a sequential gate (a policy with ``[sequential]``); None for a fixed-size gate.
    sequential: SequentialBinding | None = None
    #: Each flipped case's passed/valid trials on both sides (empty: nothing flipped, or an older verdict).
    flip_counts: tuple[FlipCount, ...] = ()
    #: The human labels files judge rules decided on (empty: none named, or an older verdict).
    judge_labels: tuple[LabelsBinding, ...] = ()

    @property
    def exit_code(self) -> int:
        """The documented process exit code of this verdict."""
        return EXIT_CODES[self.verdict]

    def to_dict(self) -> JSONObject:
        """The verdict file's content (``format`` ``gatestats-verdict/1``), with its ``digest``.

        Returns
        -------
        JSONObject
            The verdict body, keys in the file's order, ending with ``digest``.
        """
        body: JSONObject = {
            "format": VERDICT_FORMAT,
            "verdict": self.verdict,
            "exit_code": self.exit_code,
            "reasons": list(self.reasons),
            "policy": self.policy.to_dict(),
            "registration": self.registration.to_dict(),
            "baseline": self.baseline.to_dict(),
            "candidate": self.candidate.to_dict(),
            "tool_version": self.tool_version,
            "created_at": self.created_at,
            "checks": [c.to_dict() for c in self.checks],
            "rules": [r.to_dict() for r in self.rules],
            "multiplicity": self.policy.multiplicity,
            "severe_slices": [s.to_dict() for s in self.severe_slices],
            "flips": {"pass_to_fail": list(self.flips_pass_to_fail), "fail_to_pass": list(self.flips_fail_to_pass)},
            "cost": None if self.cost is None else self.cost.to_dict(),
            "judges": None if self.judges is None else to_json(self.judges),
            "infra": to_json(self.infra),
            "curves": [p.to_dict() for p in self.curves],
            "slice_rates": [r.to_dict() for r in self.slice_rates],
            "case_sets": None if self.case_sets is None else self.case_sets.to_dict(),
            "failure_classes": [c.to_dict() for c in self.failure_classes],
        }
        if self.sequential is not None:  # only a sequential gate's verdict has the key
            body["sequential"] = self.sequential.to_dict()
        if self.flip_counts:  # only when a case flipped: a verdict written before the field reads back unchanged
            body["flip_counts"] = [c.to_dict() for c in self.flip_counts]
        if self.judge_labels:  # only when a policy names human labels: `gatestats verify` re-checks their digests
            body["judge_labels"] = [b.to_dict() for b in self.judge_labels]
        body["digest"] = verdict_digest(body)
        return body

    @classmethod
    def from_dict(cls, body: Mapping[str, Any], *, check_digest: bool = True) -> Verdict:
        """The verdict a ``gatestats-verdict/1`` body describes, every field checked against its type.

        Parameters
        ----------
        body
            A parsed verdict file (see :meth:`to_dict`). ``curves``, ``slice_rates``,
            ``case_sets`` and ``failure_classes`` may be absent (verdicts written before they were
            bound): they read as empty (``case_sets`` as null); ``sequential`` is present only for a
            ``[sequential]`` policy (absent: null).
        check_digest
            Check the ``digest`` against the content and the derived fields (``exit_code``,
            ``multiplicity``) against the rest. ``gatestats verify`` turns this off to report each
            disagreement as a failed check instead of stopping at the first.

        Returns
        -------
        Verdict
            The typed verdict; ``to_dict()`` gives ``body`` back.

        Raises
        ------
        VerdictFileError
            Not a ``gatestats-verdict/1`` object, an unknown or missing field, a value of the
            wrong type (the dotted field is named), a derived field (``exit_code``,
            ``multiplicity``) that disagrees, or content that does not match its ``digest``.
        """
        return _verdict_from_dict(body, check_digest=check_digest)

    def to_markdown(self) -> str:
        """A GitHub-flavoured summary for a job summary or a pull-request comment.

        A sequential gate's summary has a "Sequential stop" section after the rules (read from
        :attr:`sequential` only: the stop, each row's e-values against their levels, the trials saved).

        Everything that comes from data (case ids, system labels, policy name and version, rule and
        slice names, reasons) is escaped: ``<``, ``>`` and ``&`` become entities (no raw HTML
        survives), Markdown punctuation is backslash-escaped (no emphasis, links, code spans, tables
        or headings can be opened from data), line breaks and other invisible characters are shown
        as ``\\n`` / ``\\xNN`` / ``\\uNNNN`` (a value never starts a new line), and each value is
        shortened to a bounded length (the verdict file keeps it whole); see :mod:`gatestats.io.text`.

        Returns
        -------
        str
            The Markdown summary.
        """
        icon = {"pass": "✅", "warn": "⚠️", "fail": "❌", "insufficient_evidence": "❔"}[self.verdict]
        lines = [
            f"## {icon} gatestats gate: `{self.verdict}`",
            "",
            f"Policy <strong>{_md(self.policy.name)}</strong> v{_md(self.policy.version)} "
            f"({_code(self.policy.digest)}); baseline {_code(self.baseline.system)} "
            f"vs candidate {_code(self.candidate.system)}.",
            "",
        ]
        notice = self.registration.notice_text
        if notice is not None:  # registered at import: not a pre-registration, said where it is read
            lines += [f"<strong>Registration:</strong> {_md(notice, limit=TEXT_LIMIT)}", ""]
        if self.reasons:
            lines += ["### Reasons", "", *[f"- {_md(r, limit=TEXT_LIMIT)}" for r in self.reasons], ""]
        lines += [
            "### Rules",
            "",
            "| rule | observed | baseline | threshold | test | adjusted p (pass / fail) | decision |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in self.rules:
            lines.append(
                f"| {_md(r.row)} | {_num(r.observed)} | {_num(r.baseline)} | {_num(r.threshold)} | {_md(r.test)} "
                f"| {_p(r.pvalue_pass_adjusted)} / {_p(r.pvalue_fail_adjusted)} | {_md(r.decision)} |"
            )
        bounded = [r for r in self.rules if r.unresolved is not None]
        if bounded:
            lines += ["", "### Unresolved attempts (decided on the bound)", ""]
            lines += [
                f"- <strong>{_md(r.row)}</strong>: {_md(r.unresolved.summary, limit=TEXT_LIMIT)}"
                for r in bounded
                if r.unresolved is not None
            ]
        if self.sequential is not None:
            lines += _sequential_md(self.sequential)
        if self.severe_slices:
            lines += ["", "### Severe slices (every trial must pass)", "", "| slice | cases | passed | decision |"]
            lines.append("|---|---|---|---|")
            for s in self.severe_slices:
                lines.append(f"| {_md(s.slice)} | {s.n_cases} | {s.n_passed}/{s.n_trials} | {_md(s.decision)} |")
        lines += ["", "### Flips per case", ""]
        lines.append(f"- pass → fail ({len(self.flips_pass_to_fail)}): {_ids(self.flips_pass_to_fail)}")
        lines.append(f"- fail → pass ({len(self.flips_fail_to_pass)}): {_ids(self.flips_fail_to_pass)}")
        failed = [c for c in self.checks if c.status != "ok"]
        if failed:
            lines += ["", "### Blocking on silence", ""]
            lines += [
                f"- <strong>{_md(c.name)}</strong> ({_md(c.side)}): {_md(c.detail, limit=TEXT_LIMIT)}" for c in failed
            ]
        lines += ["", f"<sub>{_md(self.tool_version)} · {_md(self.created_at)}</sub>", ""]
        return "\n".join(lines)

    def to_junit(self) -> str:
        """JUnit XML: one test case per rule row and per severe slice and failed check.

        Text from data is made safe for XML 1.0: characters it forbids (most C0 controls, lone
        surrogates, U+FFFE and U+FFFF) and other invisible ones are shown as ``\\xNN`` / ``\\uNNNN``, so
        the file always parses; ``<``, ``>``, ``&`` and quotes are escaped by the serializer.

        Returns
        -------
        str
            The JUnit XML document.
        """
        suite = ET.Element("testsuite", name="gatestats-gate", tests="0", failures="0", skipped="0", errors="0")
        counts = {"tests": 0, "failures": 0, "skipped": 0}

        def add(name: str, decision: str, message: str | None) -> None:
            case = ET.SubElement(suite, "testcase", classname="gatestats.gate", name=_xml(name, limit=TEXT_LIMIT))
            counts["tests"] += 1
            line = None if message is None else _xml(message, limit=TEXT_LIMIT)
            if decision == "fail":
                failure = ET.SubElement(case, "failure", message=line or "failed", type="fail")
                failure.text = None if message is None else _xml(message, keep="\n\t", limit=TEXT_LIMIT)
                counts["failures"] += 1
            elif decision == "insufficient_evidence":
                ET.SubElement(case, "failure", message=line or "insufficient evidence", type="insufficient_evidence")
                counts["failures"] += 1
            elif decision == "warn":
                ET.SubElement(case, "skipped", message=f"warn: {line or ''}")
                counts["skipped"] += 1

        for c in self.checks:
            add(f"check: {c.name} ({c.side})", "pass" if c.status == "ok" else "insufficient_evidence", c.detail)
        for r in self.rules:
            add(f"rule: {shorten(r.row)}", r.decision, r.reason)
        for s in self.severe_slices:
            add(f"severe slice: {shorten(s.slice)}", s.decision, s.reason)
        for key, value in counts.items():
            suite.set(key, str(value))
        ET.indent(suite)
        return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suite, encoding="unicode") + "\n"


_IDS_LIMIT = 50
"""Most case ids listed per flip direction in Markdown (the verdict file lists them all)."""
_MD_ESCAPED = frozenset("\\`*_[]|~#$!")
"""Markdown punctuation that is backslash-escaped wherever it appears (``$`` opens GitHub math)."""
_MD_ENTITIES = {"&": "&amp;", "<": "&lt;", ">": "&gt;"}
_MD_BLOCK_START = re.compile(r"([-+=]|\d{1,9}[.)])")
"""A value's start that would open a list or a setext underline where it begins a line's text."""


def _md(text: object, *, limit: int = LABEL_LIMIT) -> str:
    """Data as inert Markdown text: one line, no raw HTML, no Markdown syntax (see ``Verdict.to_markdown``)."""
    if text is None:
        return ""
    if str(text) == "":
        return "(empty)"  # an empty name would leave "****" or an empty list item
    out = "".join(_MD_ENTITIES.get(ch) or (f"\\{ch}" if ch in _MD_ESCAPED else ch) for ch in visible(text, limit=limit))
    if out.startswith(" "):
        out = "&#32;" + out[1:]  # leading spaces would indent a list item's text into a code block
    start = _MD_BLOCK_START.match(out)
    if start is not None:
        out = f"{out[: start.end() - 1]}\\{out[start.end() - 1 :]}"
    return out


def _code(text: object) -> str:
    """Data in code font: ``<code>`` around escaped text (a Markdown code span could not escape ``<``)."""
    return f"<code>{_md(text)}</code>"


def _xml(text: str, *, keep: str = "", limit: int = LABEL_LIMIT) -> str:
    """Data made safe for XML 1.0 (forbidden and invisible characters escaped, see ``Verdict.to_junit``)."""
    return visible(text, keep=keep, limit=limit)


def _num(value: float | None) -> str:
    return "—" if value is None else f"{value:.4g}"


def _p(value: float | None) -> str:
    return "—" if value is None else f"{value:.3g}"


def _sequential_md(binding: SequentialBinding) -> list[str]:
    """The "Sequential stop" section: where the run stopped, each row's e-values and levels, the trials saved."""
    stop = stop_text(binding, escape=_code)
    lines = ["", "### Sequential stop", "", f"{stop[:1].upper()}{stop[1:]}.", ""]
    lines += [f"Trials: {trials_text(binding)}.", ""]
    if binding.rules:
        lines += ["| rule | at the stop | e-value pass (level) | e-value fail (level) |", "|---|---|---|---|"]
        for rule in binding.rules:
            s = rule_stop(rule)
            lines.append(f"| {_md(s.row)} | {s.status} | {s.e_pass} | {s.e_fail} |")
        lines.append("")
    lines.append(guarantee_text(binding))
    return lines


def _ids(ids: tuple[str, ...]) -> str:
    """Case ids without their ``@version`` (kept, shortened, when one id has two versions in the list)."""
    if not ids:
        return "none"
    short = [i.split("@", 1)[0] for i in ids]
    twice = {s for s, n in Counter(short).items() if n > 1}  # one pass: a list.count per id was quadratic
    shown = ", ".join(
        _code(s if s not in twice else i[: len(s) + 20])
        for s, i in zip(short[:_IDS_LIMIT], ids[:_IDS_LIMIT], strict=True)
    )
    more = len(ids) - _IDS_LIMIT
    return shown if more <= 0 else f"{shown}, … and {more} more (the verdict file lists them all)"


def verdict_digest(body: Mapping[str, JSONValue]) -> str:
    """``sha256:`` of the canonical JSON of a verdict body without its ``digest`` field.

    Parameters
    ----------
    body
        A verdict body (with or without ``digest``).

    Returns
    -------
    str
        ``sha256:<hex>``.
    """
    return digest_json({k: v for k, v in body.items() if k != "digest"})


def verdict_file_bytes(body: Mapping[str, JSONValue]) -> bytes:
    """The bytes of a verdict file: indented JSON of ``body`` (no NaN), UTF-8, one final newline.

    Parameters
    ----------
    body
        The verdict body (:meth:`Verdict.to_dict`); a NaN or an infinity in it raises ``ValueError``.

    Returns
    -------
    bytes
        The file's bytes.
    """
    return (json.dumps(body, indent=2, sort_keys=False, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")


def write_verdict(verdict: Verdict, path: str | os.PathLike[str]) -> Path:
    """Write a verdict file once (``verdict.to_dict()`` as :func:`verdict_file_bytes`); refuse to replace a file.

    Parameters
    ----------
    verdict
        The verdict to write.
    path
        The new file's path.

    Returns
    -------
    Path
        The path written.

    Raises
    ------
    FileExistsError
        ``path`` exists (a verdict is immutable: write a new file).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        write_once(target, verdict_file_bytes(verdict.to_dict()))
    except FileExistsError:
        msg = f"{target}: a verdict file already exists there; verdicts are immutable (choose a new path)"
        raise FileExistsError(msg) from None
    return target


# --- reading a verdict back -----------------------------------------------------------------------

_TOP_FIELDS = (
    "format",
    "verdict",
    "exit_code",
    "reasons",
    "policy",
    "registration",
    "baseline",
    "candidate",
    "tool_version",
    "created_at",
    "checks",
    "rules",
    "multiplicity",
    "severe_slices",
    "flips",
    "cost",
    "judges",
    "infra",
    "curves",
    "slice_rates",
    "case_sets",
    "failure_classes",
    "sequential",
    "flip_counts",
    "judge_labels",
    "digest",
)
_OPTIONAL_TOP = frozenset(
    {"curves", "slice_rates", "case_sets", "failure_classes", "sequential", "flip_counts", "judge_labels"}
)


@dataclass(frozen=True, slots=True, kw_only=True)
class _Flips:
    pass_to_fail: tuple[str, ...]
    fail_to_pass: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Body:
    """The verdict file's top level, typed (``format``, ``exit_code``, ``multiplicity``, ``digest`` are derived)."""

    JSON_NAME: ClassVar[str] = "verdict"

    format: Literal["gatestats-verdict/1"]
    verdict: Decision
    exit_code: Literal[0, 10, 11, 12]
    reasons: tuple[str, ...]
    policy: PolicyBinding
    registration: Registration
    baseline: SideBinding
    candidate: SideBinding
    tool_version: str
    created_at: str
    checks: tuple[CheckResult, ...]
    rules: tuple[RuleResult, ...]
    multiplicity: str
    severe_slices: tuple[SevereSliceResult, ...]
    flips: _Flips
    cost: CostSummary | None
    judges: Mapping[str, JudgeStatus] | None
    infra: Mapping[str, InfraSide]
    digest: str
    curves: tuple[CurvePoint, ...] = ()
    slice_rates: tuple[SliceRate, ...] = ()
    case_sets: CaseSets | None = None
    failure_classes: tuple[FailureClassCount, ...] = ()
    sequential: SequentialBinding | None = None
    flip_counts: tuple[FlipCount, ...] = ()
    judge_labels: tuple[LabelsBinding, ...] = ()


def _verdict_from_dict(body: Mapping[str, Any], *, check_digest: bool) -> Verdict:
    if not isinstance(body, Mapping):
        msg = f"expected a verdict object (got {type(body).__name__})"
        raise VerdictFileError(msg)
    if body.get("format") != VERDICT_FORMAT:
        msg = f"field 'format': expected {VERDICT_FORMAT!r} (got {body.get('format')!r})"
        raise VerdictFileError(msg)
    missing = [key for key in _TOP_FIELDS if key not in body and key not in _OPTIONAL_TOP]
    if missing:
        msg = "; ".join(f"field {key!r}: required field is missing" for key in missing)
        raise VerdictFileError(msg)
    actual = verdict_digest(dict(body))
    if check_digest and body["digest"] != actual:
        msg = (
            f"field 'digest': the verdict's content does not match its digest: expected {body['digest']} "
            f"(stored in the file), got {actual} (recomputed); the verdict was edited after it was written"
        )
        raise VerdictFileError(msg)
    try:
        typed = build(_Body, body)
    except TypedFieldError as exc:
        raise VerdictFileError(str(exc)) from None
    if check_digest and typed.exit_code != EXIT_CODES[typed.verdict]:
        msg = f"field 'exit_code': expected {EXIT_CODES[typed.verdict]} for {typed.verdict!r} (got {typed.exit_code})"
        raise VerdictFileError(msg)
    if check_digest and typed.multiplicity != typed.policy.multiplicity:
        msg = f"field 'multiplicity': expected {typed.policy.multiplicity!r}, the policy's (got {typed.multiplicity!r})"
        raise VerdictFileError(msg)
    for side in ("baseline", "candidate"):
        if not getattr(typed, side).files:
            msg = f"field '{side}.files': expected a non-empty array of record files (got [])"
            raise VerdictFileError(msg)
    # Every other field of the verdict is the body's field of the same name (a field added to both
    # is read without a change here; one missing from the body fails loudly on getattr).
    return Verdict(
        flips_pass_to_fail=typed.flips.pass_to_fail,
        flips_fail_to_pass=typed.flips.fail_to_pass,
        **{f.name: getattr(typed, f.name) for f in fields(Verdict) if not f.name.startswith("flips_")},
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class VerdictFile:
    """A verdict file as read: where it is, its exact bytes and their digest, and the typed verdict."""

    path: Path
    raw: bytes = field(repr=False)
    file_digest: str
    body: Mapping[str, Any] = field(repr=False)
    verdict: Verdict = field(repr=False)

    @property
    def digest(self) -> str:
        """The verdict's own ``digest`` as stored in the file.

        Returns
        -------
        str
            ``sha256:`` of the canonical JSON without the ``digest`` field (checked unless the file
            was read with ``check_digest=False``).
        """
        return str(self.body["digest"])


def resolve_bound_path(recorded: str, verdict_dir: Path) -> Path:
    """A path a verdict recorded: as is when absolute; else relative to the working directory, else to the verdict.

    Parameters
    ----------
    recorded
        The path as the verdict binds it (a side's run set, a record file).
    verdict_dir
        The directory of the verdict file.

    Returns
    -------
    Path
        Where to read it; the caller checks the digest (a file found elsewhere must still have the
        bytes the verdict bound).
    """
    path = Path(recorded)
    if path.is_absolute():
        return path
    return path if path.exists() else (verdict_dir / path if (verdict_dir / path).exists() else path)


def read_verdict(path: str | os.PathLike[str], *, check_digest: bool = True) -> VerdictFile:
    """Read a verdict file strictly: exact bytes, strict JSON, every field typed, its digest checked.

    The one reader of verdict files (the report and ``gatestats verify`` use it).

    Parameters
    ----------
    path
        A file written by ``gatestats gate -o`` (:func:`write_verdict`).
    check_digest
        See :meth:`Verdict.from_dict`.

    Returns
    -------
    VerdictFile
        The typed verdict with the file's bytes and their digest.

    Raises
    ------
    VerdictFileError
        Missing, not a regular file, too large, not strict JSON (duplicate keys, NaN, bad UTF-8:
        the line is named), or any :meth:`Verdict.from_dict` error; the message starts with the
        file's path.
    """
    where = Path(path)
    try:
        raw = read_regular_file(where, limit=MAX_VERDICT_BYTES, what="verdict (written by `gatestats gate -o`)")
        body = parse_json_document(raw, source=where)
    except RecordFileError as exc:
        raise VerdictFileError(str(exc)) from None
    try:
        verdict = Verdict.from_dict(body, check_digest=check_digest)
    except VerdictFileError as exc:
        msg = f"{where}: {exc}"
        raise VerdictFileError(msg) from None
    return VerdictFile(path=where, raw=raw, file_digest=digest_bytes(raw), body=body, verdict=verdict)
