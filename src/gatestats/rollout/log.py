"""The observation log ``WATCH/``: a manifest registered before the first observation, then sealed batches.

Layout (docs/rollout.md, "Observations")::

    WATCH/watch.json           written once by :func:`init_log`: the release, the verdict's digest, the
                               plan's digest, when; its own digest (an edit is refused). Not called
                               manifest.json: that name is a run set's (each batch has one)
    WATCH/batches/0001/        one imported run set per batch (:func:`add_batch`), written whole by the
    WATCH/batches/0002/ ...    runner (``gatestats_runner.runsets.write_imported_run_set``): checksummed
                               lines, the seal, the plan's digest as the batch's registered policy
    WATCH/labels.jsonl         late labels (:mod:`gatestats.rollout.labels`)
    WATCH/.lock                held while a batch or a label is written (two writers take turns)

Nothing in ``WATCH/`` is rewritten: a batch is a new directory, a label a new line. Every batch is read
back through the one door of the records (:func:`gatestats.records.read_run_set`): a batch edited after
it was written is a :class:`~gatestats.errors.RecordFileError` (exit 1), never a silent change.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import polars as pl

from gatestats.errors import GatestatsError, RecordFileError, RecordProblem
from gatestats.gate import read_verdict
from gatestats.io.digest import canonical_json, digest_json
from gatestats.io.files import new_build_directory
from gatestats.io.jsonfile import read_json_file
from gatestats.io.limits import SMALL_JSON_MAX_BYTES, name_problem
from gatestats.records import POLARS_SCHEMA, read_run_set, validate_records, write_imported_run_set
from gatestats.rollout.plan import RolloutPlan, load_plan
from gatestats_runner.fsops import rename_once

__all__ = [
    "BATCHES",
    "LOCK",
    "WATCH_FORMAT",
    "WATCH_MANIFEST",
    "BatchInfo",
    "ObservationLog",
    "WatchError",
    "WatchManifest",
    "add_batch",
    "check_plan",
    "init_log",
    "read_log",
    "read_watch_manifest",
    "watch_lock",
]

WATCH_FORMAT = "gatestats-watch/1"
WATCH_MANIFEST = "watch.json"
BATCHES = "batches"
LOCK = ".lock"
#: The layer an observation of each stage comes from, when its record names none.
_STAGE_LAYER = {"shadow": "shadow", "pilot": "live", "production": "live"}
_BATCH_NAME = re.compile(r"[0-9]{4,9}")
_ID_FIELDS = ("record_id", "case_id", "cohort")


class WatchError(GatestatsError, ValueError):
    """A usage or input error of the observation log: nothing was written (exit 2 in the CLI)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class WatchManifest:
    """``WATCH/watch.json``: what was registered before the first observation."""

    release: str
    verdict_path: str
    verdict_digest: str
    verdict_file_digest: str
    plan_path: str
    plan_digest: str
    created_at: str

    def to_dict(self) -> dict[str, Any]:
        """The manifest as written (with ``format``; its ``digest`` is added by the writer)."""
        return {
            "format": WATCH_FORMAT,
            "release": self.release,
            "verdict_path": self.verdict_path,
            "verdict_digest": self.verdict_digest,
            "verdict_file_digest": self.verdict_file_digest,
            "plan_path": self.plan_path,
            "plan_digest": self.plan_digest,
            "created_at": self.created_at,
        }


@dataclass(frozen=True, slots=True, kw_only=True)
class BatchInfo:
    """One batch of the log: its number, directory, stage, when the runner wrote it, its records' digest."""

    number: int
    path: Path
    stage: str
    written_at: str
    n_records: int
    digest: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ObservationLog:
    """The log as read: the manifest, the batches in order, and every record in one frame.

    ``records`` has the contract's columns plus ``batch`` (Int64, the batch number) and
    ``written_at`` (String, RFC 3339: when the runner wrote the batch), in batch order and, within a
    batch, in the order the records were written.
    """

    root: Path
    manifest: WatchManifest
    batches: tuple[BatchInfo, ...]
    records: pl.DataFrame = field(repr=False)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def init_log(
    watch_dir: str | os.PathLike[str], *, plan_path: str | os.PathLike[str], verdict_path: str | os.PathLike[str]
) -> WatchManifest:
    """Create the observation log ``watch_dir`` and register the release, the verdict and the plan.

    The verdict is read through the gate's one reader (:func:`gatestats.gate.read_verdict`, its digest
    checked); the release is the verdict's candidate system label, and the plan must name it. The
    directory is built beside ``watch_dir`` and renamed into place: it exists whole or not at all.

    Parameters
    ----------
    watch_dir
        The log's directory (must not exist).
    plan_path
        The rollout plan (:func:`gatestats.rollout.plan.load_plan`).
    verdict_path
        The gate's verdict for the release (``gatestats gate -o``): ``pass`` or ``warn``.

    Returns
    -------
    WatchManifest
        What was registered.

    Raises
    ------
    WatchError
        ``watch_dir`` exists, the verdict did not let the release ship, or the plan names another release.
    PlanError
        The plan is not a valid rollout plan.
    VerdictFileError
        The verdict cannot be read.
    """
    target = Path(watch_dir)
    if os.path.lexists(target):
        msg = f"{target}: exists; a watch is created once (choose a new directory)"
        raise WatchError(msg)
    plan = load_plan(plan_path)
    verdict = read_verdict(verdict_path)
    release = verdict.verdict.candidate.system
    if verdict.verdict.verdict not in ("pass", "warn"):
        msg = f"{verdict_path}: the gate's verdict is {verdict.verdict.verdict!r}: a release is watched after it passed"
        raise WatchError(msg)
    if plan.release != release:
        msg = (
            f"{plan_path}: key 'rollout.release': the plan names release {plan.release!r}, the verdict "
            f"{verdict_path} the release {release!r} (its candidate's system label)"
        )
        raise WatchError(msg)
    manifest = WatchManifest(
        release=plan.release,
        verdict_path=str(Path(verdict_path).resolve()),  # a scheduler reads from any working directory
        verdict_digest=verdict.digest,
        verdict_file_digest=verdict.file_digest,
        plan_path=str(Path(plan_path).resolve()),
        plan_digest=plan.digest,
        created_at=_now(),
    )
    body = manifest.to_dict()
    body["digest"] = digest_json(body)
    target.parent.mkdir(parents=True, exist_ok=True)
    build = new_build_directory(target.parent, f".{target.name}.watch-")
    try:
        (build.path / WATCH_MANIFEST).write_bytes((canonical_json(body) + "\n").encode("utf-8"))
        (build.path / BATCHES).mkdir()
        build.path.chmod(0o755)
        rename_once(build.path, target)
    except FileExistsError:
        build.discard()
        msg = f"{target}: exists; a watch is created once (choose a new directory)"
        raise WatchError(msg) from None
    except BaseException:
        build.discard()
        raise
    build.release()
    return manifest


def read_watch_manifest(watch_dir: str | os.PathLike[str]) -> WatchManifest:
    """Read ``WATCH/watch.json`` strictly: its format, every field a string, its own digest.

    Parameters
    ----------
    watch_dir
        The log's directory.

    Returns
    -------
    WatchManifest
        The registered release, verdict and plan.

    Raises
    ------
    WatchError
        Not a watch directory (no manifest), or a manifest that is malformed or was edited.
    """
    path = Path(watch_dir) / WATCH_MANIFEST
    try:
        body = read_json_file(path, limit=SMALL_JSON_MAX_BYTES, what="watch manifest (written by `watch init`)")
    except GatestatsError as exc:
        raise WatchError(f"{Path(watch_dir)}: not a watch directory: {exc}") from None
    names = ("release", "verdict_path", "verdict_digest", "verdict_file_digest", "plan_path", "plan_digest")
    wanted = {"format", "digest", "created_at", *names}
    if not isinstance(body, dict) or set(body) != wanted or not all(isinstance(body[k], str) for k in wanted):
        raise WatchError(f"{path}: not a {WATCH_FORMAT} manifest (expected the string fields {sorted(wanted)})")
    if body["format"] != WATCH_FORMAT:
        raise WatchError(f"{path}: field 'format': expected {WATCH_FORMAT!r} (got {body['format']!r})")
    stored = body.pop("digest")
    if digest_json(body) != stored:
        raise WatchError(f"{path}: field 'digest': the manifest was edited after `watch init` wrote it")
    return WatchManifest(created_at=body["created_at"], **{k: body[k] for k in names})


def check_plan(watch_dir: str | os.PathLike[str], plan_path: str | os.PathLike[str]) -> RolloutPlan:
    """Load the plan and check that it is the one registered in ``WATCH/watch.json``.

    Parameters
    ----------
    watch_dir
        The log's directory.
    plan_path
        The rollout plan file.

    Returns
    -------
    RolloutPlan
        The plan, its digest equal to the registered one.

    Raises
    ------
    WatchError
        The plan's digest differs from the registered one (edited after registration), naming both.
    PlanError
        The plan is not a valid rollout plan.
    """
    manifest = read_watch_manifest(watch_dir)
    plan = load_plan(plan_path)
    if plan.digest != manifest.plan_digest:
        msg = (
            f"{plan_path}: the plan's digest {plan.digest} differs from the one registered in "
            f"{Path(watch_dir) / WATCH_MANIFEST} ({manifest.plan_digest}): a plan is not edited after its "
            "registration (start a new watch for a new plan)"
        )
        raise WatchError(msg)
    return plan


@contextlib.contextmanager
def watch_lock(watch_dir: str | os.PathLike[str]) -> Iterator[None]:
    """Hold ``WATCH/.lock`` (``flock``, exclusive, waiting for another writer; released by a crash).

    Parameters
    ----------
    watch_dir
        The log's directory (it must exist).

    Yields
    ------
    None
        While the lock is held.
    """
    fd = os.open(Path(watch_dir) / LOCK, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor drops the lock


def _refuse(problems: list[str], what: str) -> None:
    if problems:
        shown = problems[:20] + ([f"... and {len(problems) - 20} more"] if len(problems) > 20 else [])
        raise WatchError(f"{what}:\n" + "\n".join(shown))


def _observations(records: pl.DataFrame, *, stage: str, plan: RolloutPlan, source: str) -> pl.DataFrame:
    """The records checked as observations of ``stage`` of the plan's release, stage and layer filled in."""
    checked = validate_records(records, source=source)
    if checked.is_empty():
        raise WatchError(f"{source}: no observations (an empty batch is not written)")
    problems: list[str] = []
    cohorts = plan.stage(stage).cohorts
    for row, rec in enumerate(checked.select("record_id", "system", "stage", "layer", *_ID_FIELDS[1:]).iter_rows()):
        record_id, system, own_stage, layer, case_id, cohort = rec
        where = f"{source}: row {row} (record_id {record_id!r:.80})"
        for name, value in zip(_ID_FIELDS, (record_id, case_id, cohort), strict=True):
            if value is not None and (why := name_problem(value)) is not None:
                problems.append(f"{where}: field '{name}': {why}")
        if system != plan.release:
            problems.append(f"{where}: field 'system': release {system!r:.80} is not the watched {plan.release!r}")
        if own_stage is not None and own_stage != stage:
            problems.append(f"{where}: field 'stage': {own_stage!r} in a batch of stage {stage!r}")
        if layer == "replay":
            problems.append(f"{where}: field 'layer': 'replay' is the golden suite's layer, not an observation's")
        if cohorts is not None and cohort not in cohorts:
            problems.append(f"{where}: field 'cohort': {cohort!r:.80} is not a cohort of stage {stage!r} {cohorts}")
    repeated = checked.filter(pl.col("record_id").is_duplicated()).get_column("record_id").unique().to_list()
    problems += [f"{source}: field 'record_id': {r!r:.80} is used twice in the batch" for r in sorted(repeated)]
    _refuse(problems, f"{source}: not observations of stage {stage!r} of release {plan.release!r}")
    return checked.with_columns(
        pl.col("stage").fill_null(stage),
        pl.col("layer").fill_null(_STAGE_LAYER[stage]),
    )


@dataclass(frozen=True, slots=True)
class _PlanRef:
    """The plan as the policy a batch registers (the runner stores the digest, never reads the plan)."""

    digest: str
    name: str
    version: str


def add_batch(
    watch_dir: str | os.PathLike[str],
    records: pl.DataFrame,
    *,
    stage: str,
    plan_path: str | os.PathLike[str],
    source: str | None = None,
) -> BatchInfo:
    """Write ``records`` as the next batch ``WATCH/batches/NNNN/``: observations of one stage.

    Checked first, nothing written on a problem: the plan is the registered one (same digest), the
    stage is one of the plan's, every record fits the contract, names the watched release as its
    ``system``, has no other ``stage``, a ``cohort`` of the stage's named cohorts (when it has
    some), no ``replay`` layer, ids without control characters, and a ``record_id`` that no
    record of the batch or of an earlier batch has. A record without ``stage`` or ``layer`` gets
    the batch's stage and its layer (``shadow`` for the shadow stage, ``live`` otherwise). Under
    ``WATCH/.lock`` (two writers take turns, and never get the same number), the runner writes the
    batch whole, with the plan's digest as its registered policy.

    Parameters
    ----------
    watch_dir
        The log's directory (made by :func:`init_log`).
    records
        Contract records (as the importers return them).
    stage
        The stage the observations come from.
    plan_path
        The rollout plan file (its digest must be the registered one).
    source
        The file the records were imported from (its digest goes into the batch's manifest).

    Returns
    -------
    BatchInfo
        The batch written.

    Raises
    ------
    WatchError
        The plan was edited, the stage is unknown, a record is not an observation of the release
        and stage, or a record id is already in the log.
    RecordFileError
        A record breaks the contract (row and field named), or an earlier batch cannot be read.
    """
    root = Path(watch_dir)
    plan = check_plan(root, plan_path)
    if stage not in plan.stage_names:
        stated = ", ".join(plan.stage_names)
        raise WatchError(f"--stage: {stage!r:.80} is not a stage of the plan {plan_path} (its stages: {stated})")
    where = source or "<records>"
    batch = _observations(records, stage=stage, plan=plan, source=where)
    with watch_lock(root):
        existing = _batch_dirs(root)
        seen = _record_ids(existing)
        again = sorted(set(batch.get_column("record_id").to_list()) & seen)
        _refuse(
            [f"{where}: field 'record_id': {r!r:.80} is already in the log" for r in again],
            f"{where}: observations already in {root}",
        )
        number = (existing[-1][0] + 1) if existing else 1
        out = root / BATCHES / f"{number:04d}"
        ref = _PlanRef(digest=plan.digest, name=f"rollout plan of {plan.release}", version=stage)
        write_imported_run_set(batch, out, policy=ref, source=where)
    _, info = read_run_set(out)
    return _batch_info(number, out, info.manifest, info.digest, info.n_records, stage)


def _batch_dirs(root: Path) -> list[tuple[int, Path]]:
    """The batches of the log in order; a name that is not a batch, or a gap, is a :class:`RecordFileError`."""
    directory = root / BATCHES
    try:
        names = sorted(e.name for e in os.scandir(directory) if not e.name.startswith("."))
    except OSError as exc:
        raise RecordFileError.single(directory, "<file>", f"cannot list the batches: {exc.strerror}") from None
    strays = [n for n in names if not _BATCH_NAME.fullmatch(n) or not (directory / n).is_dir()]
    if strays:
        problems = [RecordProblem(file=str(directory / n), field="<file>", message="not a batch") for n in strays]
        raise RecordFileError(problems)
    numbered = sorted((int(n), directory / n) for n in names)
    for expected, (number, path) in enumerate(numbered, start=1):
        if number != expected:
            message = f"batch {expected:04d} is missing (the log's batches are numbered 1, 2, ... without gaps)"
            raise RecordFileError.single(path, "<file>", message)
    return numbered


def _record_ids(batches: list[tuple[int, Path]]) -> set[str]:
    ids: set[str] = set()
    for _, path in batches:
        frame, _ = read_run_set(path)
        ids.update(frame.get_column("record_id").to_list())
    return ids


def _batch_info(
    number: int, path: Path, manifest: Any, digest: str, n_records: int, stage: str | None = None
) -> BatchInfo:
    written = manifest.get("imported_at") if isinstance(manifest, dict) else None
    return BatchInfo(
        number=number,
        path=path,
        stage=stage or "",
        written_at=str(written or ""),
        n_records=n_records,
        digest=digest,
    )


def _same_plan_and_release(path: Path, batch: Any, frame: pl.DataFrame, manifest: WatchManifest) -> None:
    """A batch written under another plan, or holding another release's records, is not this log's."""
    registered = batch.get("policy_digest") if isinstance(batch, dict) else None
    if registered != manifest.plan_digest:
        message = f"written under plan {registered!r}, not the registered {manifest.plan_digest} (not this log's batch)"
        raise RecordFileError.single(path, "policy_digest", message)
    others = frame.filter(pl.col("system") != manifest.release).get_column("system").unique().to_list()
    if others:
        message = f"records of release {sorted(others)[0]!r}, not the watched {manifest.release!r}"
        raise RecordFileError.single(path, "system", message)


def read_log(watch_dir: str | os.PathLike[str]) -> ObservationLog:
    """Read the observation log: the manifest, then every batch through the records' one door, in order.

    Parameters
    ----------
    watch_dir
        The log's directory.

    Returns
    -------
    ObservationLog
        The manifest, the batches, and every record in one frame (``batch``, ``written_at`` added).

    Raises
    ------
    WatchError
        Not a watch directory, or its manifest was edited.
    RecordFileError
        A batch is missing, edited, or not a run set (every line's checksum and the seal are checked).
    """
    root = Path(watch_dir)
    manifest = read_watch_manifest(root)
    frames: list[pl.DataFrame] = []
    batches: list[BatchInfo] = []
    for number, path in _batch_dirs(root):
        frame, info = read_run_set(path)
        _same_plan_and_release(path, info.manifest, frame, manifest)
        stages = frame.get_column("stage").drop_nulls().unique().to_list()
        info_batch = _batch_info(number, path, info.manifest, info.digest, info.n_records, ",".join(sorted(stages)))
        batches.append(info_batch)
        frames.append(
            frame.with_columns(
                pl.lit(number, dtype=pl.Int64).alias("batch"),
                pl.lit(info_batch.written_at, dtype=pl.String).alias("written_at"),
            )
        )
    empty = pl.DataFrame(schema={**POLARS_SCHEMA, "batch": pl.Int64(), "written_at": pl.String()})
    records = pl.concat(frames, how="vertical") if frames else empty
    return ObservationLog(root=root, manifest=manifest, batches=tuple(batches), records=records)
