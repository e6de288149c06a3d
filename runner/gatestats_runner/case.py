"""Cases (golden-set entries) and their sandbox contracts, read from versioned directories.

A case is a directory::

    CASE_ID/
      case.json      format, request, allowed tools and turn limit, labels, the contract
      request.md     the request given to the system under test
      snapshot/      the starting repository snapshot
      verifier/      the verifier, mounted read-only at /verifier in the sandbox

The case version is the content digest of the whole directory (:func:`tree_digest`): changing any
byte of the request, the snapshot, the verifier or the contract makes a new version. A case set
is a directory of case directories; its version is the digest of the (case id, case version) list.

Defects in ``case.json`` are the golden-set author's and raise :class:`CaseError` before anything
runs. A missing snapshot or an absent verifier is an environment failure of the trial: the case
still loads (with ``problems``) and every trial of it is recorded as ``infra_error``.
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any, Literal, NoReturn, get_args

from gatestats_runner._util import JSONObject, read_json_file
from gatestats_runner.digests import digest_json, tree_digest

__all__ = [
    "CASE_FILE",
    "CASE_FORMAT",
    "OUTPUT_CHANNELS",
    "ArtifactRule",
    "Case",
    "CaseError",
    "CaseSet",
    "CheckKind",
    "Contract",
    "Limits",
    "load_case",
    "load_case_set",
]

CASE_FILE = "case.json"
CASE_FORMAT = "gatestats-case/1"
CheckKind = Literal["exists", "json", "junit", "tar"]
Network = Literal["denied"]
_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
#: Where the command's executable may live: the sandbox's read-only system or the verifier.
_COMMAND_ROOTS = ("/usr/", "/bin/", "/sbin/", "/verifier/")
SANDBOX_PATH = "/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin"


class CaseError(ValueError):
    """A case directory or ``case.json`` does not follow the case format (names file and field)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ArtifactRule:
    """A required artifact: it must exist as a regular file and be non-empty; ``check`` adds structure.

    ``json``: parses as JSON. ``junit``: a JUnit XML report with at least ``min_tests`` executed
    (not skipped) test cases and at most ``max_failures`` failed or errored ones. ``tar``: a tar
    archive (any compression) containing every name in ``members``.
    """

    path: str
    check: CheckKind = "exists"
    min_tests: int = 1
    max_failures: int = 0
    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Limits:
    """Resource bounds of one trial. ``processes`` counts tasks (threads too), excluding the sandbox's own two."""

    wall_clock_s: float = 600.0
    cpu_s: float = 600.0
    memory_mb: int = 2048
    processes: int = 256
    disk_mb: int = 1024
    output_mb: int = 64
    open_files: int = 1024

    @property
    def memory_bytes(self) -> int:
        return self.memory_mb * 1024 * 1024

    @property
    def disk_bytes(self) -> int:
        return self.disk_mb * 1024 * 1024

    @property
    def output_bytes(self) -> int:
        return self.output_mb * 1024 * 1024


@dataclass(frozen=True, slots=True, kw_only=True)
class Contract:
    """What the sandbox runs and what the verdict requires."""

    command: tuple[str, ...]
    expected_exit: int = 0
    artifacts: tuple[ArtifactRule, ...] = ()
    limits: Limits = field(default_factory=Limits)
    network: Network = "denied"
    env: tuple[tuple[str, str], ...] = ()
    #: Channels (``exit_status``, ``stdout``, ``stderr`` or an artifact path) whose diagnostics may
    #: reach a reviser (``contract.feedback.deployable``); every other channel is hidden.
    deployable: tuple[str, ...] = ()
    #: Exit statuses by which the verifier reports its own failure (``contract.feedback.evaluator_exit``).
    evaluator_exit: tuple[int, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class Case:
    """One golden-set case, loaded and versioned."""

    case_id: str
    root: Path
    version: str
    request: str | None
    snapshot: Path
    verifier: Path
    verifier_digest: str
    tools: tuple[str, ...]
    turn_limit: int | None
    contract: Contract
    slices: tuple[str, ...] | None = None
    severity: str | None = None
    split: Literal["development", "validation", "test", "holdout"] | None = None
    case_group: str | None = None
    #: Environment problems found while loading (snapshot missing, verifier absent): every trial
    #: of such a case is an ``infra_error``.
    problems: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseSet:
    """The cases of a golden set, sorted by id, with the set's version."""

    root: Path
    cases: tuple[Case, ...]
    version: str

    def get(self, case_id: str) -> Case:
        """The case with this id.

        Parameters
        ----------
        case_id
            The case's id.

        Returns
        -------
        Case
            The case.

        Raises
        ------
        KeyError
            No case of the set has this id.
        """
        for case in self.cases:
            if case.case_id == case_id:
                return case
        msg = f"{self.root}: no case {case_id!r}"
        raise KeyError(msg)


class _Reader:
    """Typed access to one JSON object, with errors that name the file and the dotted field."""

    def __init__(self, source: Path, data: Any, prefix: str = "") -> None:
        self.source = source
        self.prefix = prefix
        if not isinstance(data, dict):
            self.fail("", f"expected a JSON object (got {type(data).__name__})")
        self.data: JSONObject = data

    def fail(self, name: str, message: str) -> NoReturn:
        where = f"{self.prefix}{name}" if name else (self.prefix.rstrip(".") or "<top>")
        raise CaseError(f"{self.source}: field '{where}': {message}")

    def reject_unknown(self, allowed: set[str]) -> None:
        for key in self.data:
            if key not in allowed:
                self.fail(key, f"unknown field (expected one of {', '.join(sorted(allowed))})")

    def sub(self, name: str) -> _Reader:
        return _Reader(self.source, self.data.get(name, {}), f"{self.prefix}{name}.")

    def string(self, name: str, default: str | None = None, *, required: bool = False) -> str | None:
        if name not in self.data:
            if required:
                self.fail(name, "required field is missing")
            return default
        value = self.data[name]
        if value is None and not required:
            return None
        if not isinstance(value, str) or not value:
            self.fail(name, f"expected a non-empty string (got {value!r})")
        return value

    def number(self, name: str, default: float, *, integer: bool = False, minimum: float = 0.0) -> float:
        value = self.data.get(name, default)
        kind = "an integer" if integer else "a number"
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or not math.isfinite(value)
            or (integer and not float(value).is_integer())
            or value <= minimum
        ):
            self.fail(name, f"expected {kind} > {minimum:g} (got {value!r})")
        return float(value)

    def strings(self, name: str) -> tuple[str, ...] | None:
        value = self.data.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) and v for v in value):
            self.fail(name, f"expected a list of non-empty strings (got {value!r})")
        return tuple(value)


def _relative_path(reader: _Reader, name: str, value: str) -> str:
    pure = PurePosixPath(value)
    if pure.is_absolute() or ".." in pure.parts or value in {"", "."} or "\\" in value:
        reader.fail(name, f"expected a relative path inside the workspace without '..' (got {value!r})")
    return pure.as_posix()


def _artifact(reader: _Reader, index: int, raw: Any) -> ArtifactRule:
    if isinstance(raw, str):
        raw = {"path": raw}
    item = _Reader(reader.source, raw, f"{reader.prefix}artifacts[{index}].")
    item.reject_unknown({"path", "check", "min_tests", "max_failures", "members"})
    path = _relative_path(item, "path", item.string("path", required=True) or "")
    check = item.string("check", "exists") or "exists"
    if check not in get_args(CheckKind):
        item.fail("check", f"must be one of {', '.join(get_args(CheckKind))} (got {check!r})")
    min_tests = int(item.number("min_tests", 1, integer=True, minimum=-1))
    max_failures = int(item.number("max_failures", 0, integer=True, minimum=-1))
    members = item.strings("members") or ()
    if check == "tar" and not members:
        item.fail("members", "a tar check needs the list of required members")
    return ArtifactRule(
        path=path,
        check=check,  # type: ignore[arg-type]
        min_tests=min_tests,
        max_failures=max_failures,
        members=members,
    )


def _command(reader: _Reader) -> tuple[str, ...]:
    value = reader.data.get("command")
    if isinstance(value, str):
        reader.fail("command", f'expected a list of arguments, e.g. ["sh", "/verifier/run.sh"] (got {value!r})')
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        reader.fail("command", f"expected a non-empty list of non-empty strings (got {value!r})")
    program = value[0]
    if "/" in program and not program.startswith(_COMMAND_ROOTS):
        reader.fail(
            "command",
            "the program must be a name on the sandbox PATH or an absolute path under "
            f"{', '.join(r.rstrip('/') for r in _COMMAND_ROOTS)} — never a file the candidate controls "
            f"(got {program!r})",
        )
    return tuple(value)


def _contract(reader: _Reader) -> Contract:
    c = reader.sub("contract")
    c.reject_unknown({"command", "expected_exit", "artifacts", "limits", "network", "env", "feedback"})
    expected = c.data.get("expected_exit", 0)
    if not isinstance(expected, int) or isinstance(expected, bool) or not 0 <= expected <= 255:
        c.fail("expected_exit", f"expected an integer exit status 0..255 (got {expected!r})")
    raw_artifacts = c.data.get("artifacts", [])
    if not isinstance(raw_artifacts, list):
        c.fail("artifacts", f"expected a list (got {raw_artifacts!r})")
    artifacts = tuple(_artifact(c, i, a) for i, a in enumerate(raw_artifacts))
    if len({a.path for a in artifacts}) != len(artifacts):
        c.fail("artifacts", "an artifact path is listed twice")
    lim = c.sub("limits")
    defaults = Limits()
    lim.reject_unknown(set(Limits.__dataclass_fields__))
    limits = Limits(
        wall_clock_s=lim.number("wall_clock_s", defaults.wall_clock_s),
        cpu_s=lim.number("cpu_s", defaults.cpu_s),
        memory_mb=int(lim.number("memory_mb", defaults.memory_mb, integer=True, minimum=7)),
        processes=int(lim.number("processes", defaults.processes, integer=True)),
        disk_mb=int(lim.number("disk_mb", defaults.disk_mb, integer=True)),
        output_mb=int(lim.number("output_mb", defaults.output_mb, integer=True)),
        open_files=int(lim.number("open_files", defaults.open_files, integer=True, minimum=15)),
    )
    network = c.data.get("network", "denied")
    if network != "denied":
        c.fail("network", f"only 'denied' is supported: named endpoints are not implemented yet (got {network!r})")
    env_raw = c.data.get("env", {})
    if not isinstance(env_raw, dict):
        c.fail("env", f"expected an object of strings (got {env_raw!r})")
    for key, value in env_raw.items():
        if not _ENV_NAME.match(key) or not isinstance(value, str):
            c.fail(f"env.{key}", f"expected NAME: string (got {value!r})")
    deployable, evaluator_exit = _feedback(c, artifacts)
    return Contract(
        command=_command(c),
        expected_exit=expected,
        artifacts=artifacts,
        limits=limits,
        network="denied",
        env=tuple(sorted(env_raw.items())),
        deployable=deployable,
        evaluator_exit=evaluator_exit,
    )


#: Channels every case has besides its artifacts.
OUTPUT_CHANNELS = ("exit_status", "stdout", "stderr")


def _feedback(c: _Reader, artifacts: tuple[ArtifactRule, ...]) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """``contract.feedback``: the deployable channels (a reviser may see them) and the evaluator's own exit codes."""
    f = c.sub("feedback")
    f.reject_unknown({"deployable", "evaluator_exit"})
    deployable = f.strings("deployable") or ()
    known = set(OUTPUT_CHANNELS) | {a.path for a in artifacts}
    for name in deployable:
        if name not in known:
            f.fail(
                "deployable",
                f"channel {name!r} is neither {', '.join(OUTPUT_CHANNELS)} nor an artifact path of the contract",
            )
    codes = f.data.get("evaluator_exit", [])
    if not isinstance(codes, list) or not all(
        isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 255 for v in codes
    ):
        f.fail("evaluator_exit", f"expected a list of exit statuses 1..255 (got {codes!r})")
    if c.data.get("expected_exit", 0) in codes:
        f.fail("evaluator_exit", "the expected exit status cannot also mean an evaluator failure")
    return tuple(dict.fromkeys(deployable)), tuple(codes)


def _inside(reader: _Reader, root: Path, name: str, default: str) -> Path:
    rel = _relative_path(reader, name, reader.string(name, default) or default)
    return root / rel


def load_case(root: str | os.PathLike[str]) -> Case:
    """Read and version one case directory.

    Parameters
    ----------
    root
        The case directory (it holds ``case.json``).

    Returns
    -------
    Case
        The case, with its version (the digest of its files) and any problems that make its trials
        ``infra_error`` (a missing snapshot or verifier).

    Raises
    ------
    CaseError
        ``case.json`` is missing, is not JSON, or breaks the format (the message names the field).
    """
    root = Path(root).resolve()
    source = root / CASE_FILE
    raw = read_json_file(source, CaseError, missing="case file is missing")
    reader = _Reader(source, raw)
    reader.reject_unknown(
        {"format", "id", "description", "request", "snapshot", "verifier", "tools", "turn_limit", "labels", "contract"}
    )
    fmt = reader.string("format", required=True)
    if fmt != CASE_FORMAT:
        reader.fail("format", f"must be {CASE_FORMAT!r} (got {fmt!r})")
    case_id = reader.string("id", root.name) or root.name
    if case_id != root.name or not _ID.match(case_id):
        reader.fail("id", f"must equal the directory name and match {_ID.pattern} (got {case_id!r} in {root.name!r})")
    request_path = _inside(reader, root, "request", "request.md")
    try:
        request: str | None = request_path.read_text(encoding="utf-8")
    except OSError:
        request = None
    turn_limit = reader.data.get("turn_limit")
    if turn_limit is not None and (not isinstance(turn_limit, int) or isinstance(turn_limit, bool) or turn_limit < 1):
        reader.fail("turn_limit", f"expected a positive integer or null (got {turn_limit!r})")
    labels = reader.sub("labels")
    labels.reject_unknown({"slices", "severity", "split", "case_group"})
    split = labels.string("split")
    if split not in {None, "development", "validation", "test", "holdout"}:
        labels.fail("split", f"must be 'development', 'validation', 'test', 'holdout' or null (got {split!r})")
    snapshot = _inside(reader, root, "snapshot", "snapshot")
    verifier = _inside(reader, root, "verifier", "verifier")
    contract = _contract(reader)
    problems: list[str] = []
    if snapshot.is_symlink() or not snapshot.is_dir():
        problems.append(f"snapshot missing: {snapshot} is not a directory")
    if verifier.is_symlink() or not verifier.is_dir() or not any(verifier.iterdir()):
        problems.append(f"verifier absent: {verifier} is not a non-empty directory")
    return Case(
        case_id=case_id,
        root=root,
        version=tree_digest(root),
        request=request,
        snapshot=snapshot,
        verifier=verifier,
        verifier_digest=tree_digest(verifier),
        tools=reader.strings("tools") or (),
        turn_limit=turn_limit,
        contract=contract,
        slices=labels.strings("slices"),
        severity=labels.string("severity"),
        split=split,  # type: ignore[arg-type]
        case_group=labels.string("case_group"),
        problems=tuple(problems),
    )


def load_case_set(root: str | os.PathLike[str]) -> CaseSet:
    """Load every case under ``root`` (or ``root`` itself when it holds ``case.json``), sorted by id.

    Parameters
    ----------
    root
        A directory of case directories, or one case directory.

    Returns
    -------
    CaseSet
        The cases sorted by id, and the set's version.

    Raises
    ------
    CaseError
        The directory does not exist, holds no case, or a case is malformed.
    """
    root = Path(root).resolve()
    if not root.is_dir():
        msg = f"{root}: cases directory does not exist"
        raise CaseError(msg)
    if (root / CASE_FILE).is_file():
        dirs = [root]
    else:
        dirs = sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))
        if not any((d / CASE_FILE).is_file() for d in dirs):
            msg = f"{root}: no case found (expected subdirectories with {CASE_FILE})"
            raise CaseError(msg)
        stray = [d.name for d in dirs if not (d / CASE_FILE).is_file()]
        if stray:
            msg = f"{root}: directories without {CASE_FILE}: {', '.join(stray)}"
            raise CaseError(msg)
    cases = tuple(load_case(d) for d in dirs)
    version = digest_json([[c.case_id, c.version] for c in cases])
    return CaseSet(root=root, cases=cases, version=version)
