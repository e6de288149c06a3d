"""A proposed case from a trace: the expected outcome as checkable properties, graders code first.

:func:`read_expect` reads a ``gatestats-expect/1`` file; :func:`case_files` turns a trace, the
expectation and the labels into the files of one runner case (docs/golden.md, "Expected outcome
and graders"). Nothing here writes: the store does, through the runner's ``write_case``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, get_args

from gatestats._typing import JSONObject, JSONValue
from gatestats.errors import GatestatsError, RecordFileError
from gatestats.golden.trace import Trace
from gatestats.io.jsonfile import read_json_file
from gatestats.io.limits import SMALL_JSON_MAX_BYTES
from gatestats.vocabulary import SEVERITIES, SPLITS, Severity, Split
from gatestats_runner.cases import CASE_FORMAT

__all__ = [
    "EXPECT_FORMAT",
    "GOLDEN_FILE",
    "SEVERITIES",
    "SPLITS",
    "TRANSCRIPT",
    "CodeProperty",
    "ExpectError",
    "Expectation",
    "GoldenSetError",
    "JudgeGrader",
    "PropertyKind",
    "Severity",
    "Split",
    "case_files",
    "check_case_id",
    "check_label",
    "check_name",
    "check_text",
    "read_expect",
]

EXPECT_FORMAT = "gatestats-expect/1"
GOLDEN_FILE = "golden.json"
TRANSCRIPT = "transcript.json"
PropertyKind = Literal["no_tool_call", "tool_call", "reply_figures", "reply_contains", "reply_lacks"]
_PROPERTY_KINDS: tuple[str, ...] = get_args(PropertyKind)
#: The runner's case-id rule (docs/runner.md): no path separators, markup, spaces or control characters.
_CASE_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,127}")
_NAME = re.compile(r"[a-z][a-z0-9_]{0,63}")
_CALIBRATION = re.compile(r"sha256:[0-9a-f]{64}")


class GoldenSetError(GatestatsError, ValueError):
    """A golden-set operation is refused (the message names the set or file, the case and the field)."""


class ExpectError(GoldenSetError):
    """An expectation file, a case id, a name or a label is invalid (the message names file and field)."""


def read_set_json(path: str | Path, *, what: str, limit: int = SMALL_JSON_MAX_BYTES) -> Any:
    """The JSON document of a golden-set file, read by the one strict JSON door (size and depth limits).

    ``path`` is ``golden.json``, ``case.json``, ``provenance/trace.json`` or ``verifier/judges.json``;
    ``what`` and ``limit`` are as in :func:`gatestats.io.jsonfile.read_json_file`, whose
    :class:`~gatestats.errors.RecordFileError` (missing, not a regular file, too large, not strict
    JSON: file and line named) is raised here as a :class:`GoldenSetError`.
    """
    try:
        return read_json_file(path, limit=limit, what=what)
    except RecordFileError as exc:
        raise GoldenSetError(str(exc)) from None


def check_case_id(case_id: str, *, where: str = "--case-id") -> str:
    """``case_id`` when it follows the runner's rule; else :class:`ExpectError` showing it escaped.

    Parameters
    ----------
    case_id, where
        The id given, and the option or field the message names.

    Returns
    -------
    str
        ``case_id``.

    Raises
    ------
    ExpectError
        It does not follow the rule.
    """
    if not isinstance(case_id, str) or not _CASE_ID.fullmatch(case_id):
        msg = f"{where}: expected a case id matching {_CASE_ID.pattern} (got {case_id!r:.200})"
        raise ExpectError(msg)
    return case_id


def check_label(value: str, choices: tuple[str, ...], *, where: str) -> str:
    """``value`` when it is one of ``choices``; else :class:`GoldenSetError` naming the option.

    Parameters
    ----------
    value
        The word given (a split, a severity).
    choices
        The accepted words, e.g. :data:`gatestats.vocabulary.SPLITS`.
    where
        The option the message names, e.g. ``--split``.

    Returns
    -------
    str
        ``value``.

    Raises
    ------
    GoldenSetError
        ``value`` is not one of ``choices``.
    """
    if value not in choices:
        msg = f"{where}: must be one of {', '.join(choices)} (got {value!r:.200})"
        raise GoldenSetError(msg)
    return value


def _free_text(value: str | None, where: str, *, what: str, limit: int, expected: str, bad: str) -> str:
    """``value`` stripped, unless blank, longer than ``limit`` or holding a character of ``bad`` or C0/C1."""
    if value is None or not value.strip():
        msg = f"{where}: {what} is required (got {value!r})"
        raise ExpectError(msg)
    if len(value) > limit or any((ord(c) < 32 and c not in "\n\t") or 0x7F <= ord(c) < 0xA0 or c in bad for c in value):
        msg = f"{where}: expected {expected} without control characters (got {value!r:.200})"
        raise ExpectError(msg)
    return value.strip()


def check_name(value: str | None, *, where: str) -> str:
    """A person's or owner's name: non-empty, at most 200 characters, no control characters.

    Parameters
    ----------
    value
        The name given.
    where
        The option or field the message names, e.g. ``--by``.

    Returns
    -------
    str
        The name without surrounding white space.

    Raises
    ------
    ExpectError
        It is missing, blank, too long or holds a control character (a newline or tab too).
    """
    return _free_text(
        value, where, what="a name", limit=200, expected="a name of at most 200 characters", bad="\n\t\u2028\u2029"
    )


def check_text(value: str | None, *, where: str, limit: int = 2000) -> str:
    """A reason: non-empty, at most ``limit`` characters, no control characters but newline and tab.

    Parameters
    ----------
    value, where
        The reason given, and as in :func:`check_name`.
    limit
        The most characters allowed.

    Returns
    -------
    str
        The reason without surrounding white space (newlines kept inside).

    Raises
    ------
    ExpectError
        As in :func:`check_name`, newlines and tabs allowed.
    """
    return _free_text(value, where, what="a reason", limit=limit, expected=f"at most {limit} characters", bad="")


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeProperty:
    """One expected property, checked by code in the case's verifier."""

    name: str
    kind: PropertyKind
    tool: str | None = None
    pattern: str | None = None
    allowed: tuple[float, ...] = ()
    text: str | None = None

    def to_dict(self) -> JSONObject:
        """The property as in ``expect.json`` (only the fields of its kind).

        Returns
        -------
        dict
            ``name``, ``kind`` and ``tool``, ``pattern`` and ``allowed``, or ``text``.
        """
        out: JSONObject = {"name": self.name, "kind": self.kind}
        if self.tool is not None:
            out["tool"] = self.tool
        if self.pattern is not None:
            out |= {"pattern": self.pattern, "allowed": list(self.allowed)}
        if self.text is not None:
            out["text"] = self.text
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class JudgeGrader:
    """A judge grader, for what code cannot check; it votes only with a calibration."""

    name: str
    rubric: str
    why_not_code: str
    calibration: str | None

    @property
    def can_vote(self) -> bool:
        return self.calibration is not None

    def to_dict(self) -> JSONObject:
        """The grader as in ``expect.json``.

        Returns
        -------
        dict
            ``name``, ``kind`` (``judge``), ``rubric``, ``why_not_code`` and ``calibration``.
        """
        return {
            "name": self.name,
            "kind": "judge",
            "rubric": self.rubric,
            "why_not_code": self.why_not_code,
            "calibration": self.calibration,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class Expectation:
    """The expected outcome of a case: code properties first, judges for the rest."""

    properties: tuple[CodeProperty, ...]
    judges: tuple[JudgeGrader, ...] = ()


def _field(path: Path, name: str, message: str) -> ExpectError:
    return ExpectError(f"{path}: field '{name}': {message}")


def _check_property_keys(path: Path, where: str, kind: str, raw: Mapping[str, object]) -> None:
    """No key a property of this kind does not take, and every key it needs."""
    allowed_keys = {"name", "kind"} | {
        "no_tool_call": {"tool"},
        "tool_call": {"tool"},
        "reply_figures": {"pattern", "allowed"},
        "reply_contains": {"text"},
        "reply_lacks": {"text"},
    }[kind]
    for key in raw:
        if key not in allowed_keys:
            raise _field(path, f"{where}.{key}", f"unknown field for kind {kind!r}")
    for key in sorted(allowed_keys - {"name", "kind"}):
        if key not in raw:
            raise _field(path, f"{where}.{key}", "required field is missing")


def _property(path: Path, index: int, raw: Any) -> CodeProperty:
    """One entry of ``properties``, strictly: known keys for its kind, each required one present and valid."""
    where = f"properties[{index}]"
    if not isinstance(raw, dict):
        raise _field(path, where, f"expected an object (got {raw!r:.80})")
    name, kind = raw.get("name"), raw.get("kind")
    if not isinstance(name, str) or not _NAME.fullmatch(name):
        raise _field(path, f"{where}.name", f"expected a name matching {_NAME.pattern} (got {name!r:.80})")
    if kind not in _PROPERTY_KINDS:
        raise _field(path, f"{where}.kind", f"must be one of {', '.join(_PROPERTY_KINDS)} (got {kind!r:.80})")
    _check_property_keys(path, where, kind, raw)
    if kind in {"no_tool_call", "tool_call"}:
        tool = raw["tool"]
        if not isinstance(tool, str) or not tool:
            raise _field(path, f"{where}.tool", f"expected a tool name (got {tool!r:.80})")
        return CodeProperty(name=name, kind=kind, tool=tool)
    if kind == "reply_figures":
        return _figures_property(path, where, name, raw["pattern"], raw["allowed"])
    text = raw["text"]
    if not isinstance(text, str) or not text:
        raise _field(path, f"{where}.text", f"expected a non-empty string (got {text!r:.80})")
    return CodeProperty(name=name, kind=kind, text=text)


def _figures_property(path: Path, where: str, name: str, pattern: Any, allowed: Any) -> CodeProperty:
    """A ``reply_figures`` property: a regular expression with one group, and the numbers it may capture."""
    try:
        groups = re.compile(pattern).groups if isinstance(pattern, str) else -1
    except re.error as exc:
        raise _field(path, f"{where}.pattern", f"not a regular expression ({exc})") from None
    if groups != 1:
        raise _field(path, f"{where}.pattern", f"expected a regular expression with one group (got {pattern!r:.80})")
    ok = (
        isinstance(allowed, list)
        and allowed
        and all(isinstance(a, int | float) and not isinstance(a, bool) for a in allowed)
    )
    if not ok:
        raise _field(path, f"{where}.allowed", f"expected a non-empty list of numbers (got {allowed!r:.80})")
    return CodeProperty(name=name, kind="reply_figures", pattern=pattern, allowed=tuple(float(a) for a in allowed))


def _judge(path: Path, index: int, raw: Any) -> JudgeGrader:
    where = f"judges[{index}]"
    keys = {"name", "rubric", "why_not_code", "calibration"}
    if not isinstance(raw, dict):
        raise _field(path, where, f"expected an object (got {raw!r:.80})")
    for key in raw:
        if key not in keys:
            raise _field(path, f"{where}.{key}", f"unknown field (expected one of {', '.join(sorted(keys))})")
    for key in ("name", "rubric", "why_not_code"):
        value = raw.get(key)
        if not isinstance(value, str) or not value.strip():
            raise _field(path, f"{where}.{key}", f"required: a non-empty string (got {value!r:.80})")
    if not _NAME.fullmatch(raw["name"]):
        raise _field(path, f"{where}.name", f"expected a name matching {_NAME.pattern} (got {raw['name']!r:.80})")
    calibration = raw.get("calibration")
    if calibration is not None and (not isinstance(calibration, str) or not _CALIBRATION.fullmatch(calibration)):
        raise _field(path, f"{where}.calibration", f"expected null or a sha256: digest (got {calibration!r:.80})")
    return JudgeGrader(
        name=raw["name"], rubric=raw["rubric"], why_not_code=raw["why_not_code"], calibration=calibration
    )


def read_expect(path: str | Path) -> Expectation:
    """Read a ``gatestats-expect/1`` file strictly.

    Parameters
    ----------
    path
        The ``expect.json`` file.

    Returns
    -------
    Expectation
        The code properties and judge graders.

    Raises
    ------
    ExpectError
        Not JSON, an unknown or missing field, no code property, or duplicate grader names.
    """
    path = Path(path)
    try:
        raw = read_json_file(path, limit=SMALL_JSON_MAX_BYTES, what="expectation")
    except RecordFileError as exc:
        raise ExpectError(str(exc)) from None
    if not isinstance(raw, dict):
        raise _field(path, "<top>", f"expected a JSON object (got {type(raw).__name__})")
    for key in raw:
        if key not in {"format", "properties", "judges"}:
            raise _field(path, key, "unknown field (expected format, properties, judges)")
    if raw.get("format") != EXPECT_FORMAT:
        raise _field(path, "format", f"must be {EXPECT_FORMAT!r} (got {raw.get('format')!r:.80})")
    props, judges = raw.get("properties"), raw.get("judges", [])
    if not isinstance(props, list) or not props:
        raise _field(path, "properties", "code first: at least one code property is required")
    if not isinstance(judges, list):
        raise _field(path, "judges", f"expected a list (got {judges!r:.80})")
    expectation = Expectation(
        properties=tuple(_property(path, i, p) for i, p in enumerate(props)),
        judges=tuple(_judge(path, i, j) for i, j in enumerate(judges)),
    )
    names = [p.name for p in expectation.properties] + [j.name for j in expectation.judges]
    duplicate = next((n for n in names if names.count(n) > 1), None)
    if duplicate is not None:
        raise _field(path, "properties", f"grader name {duplicate!r} is used twice")
    return expectation


def _json_bytes(value: Any) -> bytes:
    return (json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False) + "\n").encode("utf-8")


def case_files(
    *,
    trace: Trace,
    expectation: Expectation,
    failure_class: str,
    severity: str,
    split: str,
    provenance: Mapping[str, JSONValue],
    twins: Sequence[Mapping[str, JSONValue]],
) -> dict[str, bytes]:
    """The files of the proposed case directory (relative path -> bytes).

    Parameters
    ----------
    trace
        The trace the case is made from.
    expectation
        The expected outcome (the verifier checks its code properties).
    failure_class, severity, split
        The case's labels.
    provenance
        Where the trace came from and who promoted it (kept in the case's ``golden.json``).
    twins
        The near-duplicates found (as :meth:`Twin.to_dict <gatestats.golden.neardup.Twin.to_dict>`).

    Returns
    -------
    dict
        Relative path to bytes.
    """
    runner_split = split if split in {"development", "holdout"} else None
    case_json = {
        "format": CASE_FORMAT,
        "description": f"Promoted from {trace.source_format} trace; failure class {failure_class}.",
        "request": "request.md",
        "tools": sorted({c.name for c in trace.tool_calls}),
        "labels": {"slices": [failure_class], "severity": severity, "split": runner_split},
        "contract": {
            "command": ["python3", "/verifier/grade.py"],
            "expected_exit": 0,
            "artifacts": [{"path": "grades.json", "check": "json"}],
            "limits": {
                "wall_clock_s": 30,
                "cpu_s": 20,
                "memory_mb": 256,
                "processes": 32,
                "disk_mb": 32,
                "output_mb": 4,
            },
            "network": "denied",
            "env": {"PYTHONDONTWRITEBYTECODE": "1"},
        },
    }
    golden = {
        "format": "gatestats-golden-case/1",
        "failure_class": failure_class,
        "severity": severity,
        "split": split,
        "provenance": dict(provenance),
        "twins": twins,
    }
    files = {
        "case.json": _json_bytes(case_json),
        "request.md": trace.request.encode("utf-8"),
        GOLDEN_FILE: _json_bytes(golden),
        "provenance/trace.json": _json_bytes(trace.to_dict()),
        "verifier/grade.py": GRADER_SOURCE.encode("utf-8"),
        "verifier/expected.json": _json_bytes({"properties": [p.to_dict() for p in expectation.properties]}),
        "verifier/judges.json": _json_bytes({"judges": [j.to_dict() for j in expectation.judges]}),
    }
    for name, content in trace.snapshot.items():
        files[f"snapshot/{name}"] = content
    if not trace.snapshot:
        files["snapshot/.keep"] = b""  # the runner needs the snapshot directory, even an empty one
    return files


#: The case's code grader: standard library only, run by the runner in the sandbox.
GRADER_SOURCE = '''"""Code grader of a promoted case: checks the expected properties against transcript.json.

Reads /verifier/expected.json and the workspace's transcript.json ({"tool_calls": [...], "output": "..."}),
writes grades.json (one result per property) and exits 0 when every property holds, 1 otherwise.
"""

import json
import re
import sys
from pathlib import Path


def check(prop, transcript):
    calls = [c.get("name") for c in transcript.get("tool_calls", []) if isinstance(c, dict)]
    reply = transcript.get("output", "")
    kind = prop["kind"]
    if kind == "no_tool_call":
        return prop["tool"] not in calls, f"{calls.count(prop['tool'])} call(s) of {prop['tool']}"
    if kind == "tool_call":
        return prop["tool"] in calls, f"{calls.count(prop['tool'])} call(s) of {prop['tool']}"
    if kind == "reply_figures":
        found = [float(m) for m in re.findall(prop["pattern"], reply, flags=re.IGNORECASE)]
        bad = [f for f in found if f not in prop["allowed"]]
        return not bad, f"figures {found}, allowed {prop['allowed']}"
    present = prop["text"].lower() in reply.lower()
    return present == (kind == "reply_contains"), f"text present: {present}"


def main():
    expected = json.loads((Path(__file__).parent / "expected.json").read_text(encoding="utf-8"))
    try:
        transcript = json.loads(Path("transcript.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        print(f"transcript.json: {exc}", file=sys.stderr)
        return 1
    results = []
    for prop in expected["properties"]:
        ok, detail = check(prop, transcript)
        results.append({"name": prop["name"], "kind": "code", "verdict": "pass" if ok else "fail", "detail": detail})
        print(f"{prop['name']}: {'pass' if ok else 'FAIL'} ({detail})")
    Path("grades.json").write_text(json.dumps({"graders": results}, indent=2), encoding="utf-8")
    return 0 if all(r["verdict"] == "pass" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
'''
