"""Import Inspect AI evaluation logs (``.eval`` archives and ``.json`` logs) as run records.

Read without Inspect installed. An ``.eval`` file is a zip archive (``header.json``,
``samples/<id>_epoch_<n>.json``, ``summaries.json``, ``reductions.json``, ``_journal/...``) whose
members current Inspect compresses with zstd; a ``.json`` log is one document holding the header
fields and a ``samples`` list. Only the header and the samples are read (``reductions.json``, where
some versions write a bare ``NaN``, is not needed: gatestats reduces epochs itself).

Mapping (see ``docs/importers.md``):

- sample id -> ``case_id``; epoch ``n`` (1-based) -> ``trial`` ``n - 1``;
- the outcome scorer's value -> ``outcome`` through :data:`DEFAULT_VALUES` (``C`` passed; ``I``,
  ``P``, ``N`` failed; overridable), ``true``/``false``, or a number compared with ``threshold``
  (``>=`` passes); every scorer -> one grader (``model_graded_*`` scorers and those named in
  ``judges`` are ``judge`` graders, the rest ``code``; a value the mapping cannot read is
  ``unparseable``);
- a sample with ``error`` set -> ``infra_error`` with the message in ``failed_check`` (never a
  failure, never dropped); each of its ``error_retries`` -> an earlier ``attempt``, also
  ``infra_error``; a sample that hit a ``limit`` -> ``resource_killed`` with the bound of
  :data:`LIMIT_BOUNDS` (an ``operator`` interruption is ``infra_error``);
- a (sample, epoch) the header's dataset and epochs promise but the log lacks (a cancelled or
  failed eval) -> ``infra_error`` "not in the log", so denominators stay stated;
- ``eval.model`` -> ``model_id``; ``task@task_version`` -> ``task_set_version``; the plan (solvers)
  -> ``orchestration_version``; scorers, epochs, reducers and ``fail_on_error`` ->
  ``verifier_version``; ``retry_on_error`` -> ``retry_policy``; token usage summed over models;
  ``total_cost`` summed where every model reports it (else null, never 0).
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import ProblemList, RecordFileError, RecordProblem
from gatestats.importers._common import file_digest, imported_records
from gatestats.importers._logfiles import MAX_LOG_BYTES, decode_tool_json, open_zip, read_member
from gatestats.io.digest import digest_json
from gatestats.io.jsonfile import read_regular_file
from gatestats.io.text import TEXT_LIMIT, shorten
from gatestats.tables.inputs import describe, typed_cell
from gatestats.vocabulary import FAILED, INFRA_ERROR, PASSED, RESOURCE_KILLED

__all__ = ["DEFAULT_VALUES", "LIMIT_BOUNDS", "LOG_VERSIONS", "import_inspect", "parse_values"]

#: Inspect's score letters (``inspect_ai.scorer``: CORRECT, INCORRECT, PARTIAL, NOANSWER) -> outcome.
DEFAULT_VALUES: Mapping[str, str] = {"C": PASSED, "I": FAILED, "P": FAILED, "N": FAILED}
#: Inspect limit type -> contract bound. Message, turn, token, context and cost limits bound how
#: much the agent produced (``output``); time and working limits are wall-clock bounds.
LIMIT_BOUNDS: Mapping[str, str] = {
    "time": "wall_clock",
    "working": "wall_clock",
    "message": "output",
    "turn": "output",
    "token": "output",
    "context": "output",
    "cost": "output",
    "custom": "output",
}
#: Inspect log format versions this importer reads (``EvalLog.version``).
LOG_VERSIONS: tuple[int, ...] = (1, 2)
_SAMPLE_MEMBER = re.compile(r"^samples/(?P<id>.+)_epoch_(?P<epoch>[0-9]+)\.json$")
_COLUMNS: dict[str, pl.DataType] = {
    "case_id": pl.String(),
    "trial": pl.Int64(),
    "attempt": pl.Int64(),
    "outcome": pl.String(),
    "bound": pl.String(),
    "failed_check": pl.String(),
    "graders": pl.List(
        pl.Struct(
            {"name": pl.String(), "kind": pl.String(), "verdict": pl.String(), "calibration_version": pl.String()}
        )
    ),
    "tokens_input": pl.Int64(),
    "tokens_output": pl.Int64(),
    "cost_model_usd": pl.Float64(),
    "machine_seconds": pl.Float64(),
    "started_at": pl.String(),
    "ended_at": pl.String(),
}


def parse_values(text: str) -> dict[str, str]:
    """Parse ``VALUE=outcome,...`` (e.g. ``P=passed``) into a score-value mapping.

    Parameters
    ----------
    text
        The ``--value`` option's text: comma-separated ``VALUE=passed`` or ``VALUE=failed``.

    Returns
    -------
    dict of str to str
        Score value -> ``passed`` or ``failed``, to merge over :data:`DEFAULT_VALUES`.

    Raises
    ------
    ValueError
        An entry is not ``VALUE=passed|failed`` or a value is repeated.

    Examples
    --------
    >>> parse_values("P=passed,N=failed")
    {'P': 'passed', 'N': 'failed'}
    """
    result: dict[str, str] = {}
    for entry in text.split(","):
        value, sep, outcome = entry.strip().partition("=")
        if not sep or not value or outcome not in (PASSED, FAILED):
            msg = f"--value: expected VALUE=passed or VALUE=failed (got {entry.strip()!r})"
            raise ValueError(msg)
        if value in result:
            msg = f"--value: {value!r} is given twice"
            raise ValueError(msg)
        result[value] = outcome
    return result


@dataclass(frozen=True, slots=True, kw_only=True)
class _Sample:
    """One sample of a log and where it is (``file[member]`` or ``file`` with a ``samples[i]`` prefix)."""

    source: str
    prefix: str
    data: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class _Log:
    file: Path
    header: dict[str, Any]
    samples: list[_Sample]


@dataclass(frozen=True, slots=True, kw_only=True)
class _Scoring:
    scorer: str | None
    values: Mapping[str, str]
    threshold: float
    judges: frozenset[str]


def _read_eval(file: Path, data: bytes) -> _Log:
    archive = open_zip(data, file=file, what="Inspect .eval log")
    with archive:
        names = archive.namelist()
        if "header.json" not in names:
            msg = "no header.json member: the log is incomplete (Inspect writes it when the eval ends)"
            raise RecordFileError.single(file, "header.json", msg)
        header = decode_tool_json(read_member(archive, "header.json", file=file), source=f"{file}[header.json]")
        if not isinstance(header, dict):
            raise RecordFileError.single(
                f"{file}[header.json]", "<json>", f"expected an object (got {describe(header)})"
            )
        members = sorted(
            (name for name in names if _SAMPLE_MEMBER.match(name)),
            key=lambda name: (len(name), name),
        )
        samples = [
            _Sample(
                source=f"{file}[{name}]",
                prefix="",
                data=decode_tool_json(read_member(archive, name, file=file), source=f"{file}[{name}]"),
            )
            for name in members
        ]
    return _Log(file=file, header=header, samples=samples)


def _read_json(file: Path, data: bytes) -> _Log:
    document = decode_tool_json(data, source=str(file))
    if not isinstance(document, dict):
        raise RecordFileError.single(file, "<json>", f"expected an Inspect log object (got {describe(document)})")
    samples = document.get("samples")
    if samples is not None and not isinstance(samples, list):
        raise RecordFileError.single(file, "samples", f"expected a list (got {describe(samples)})")
    header = {key: value for key, value in document.items() if key not in ("samples", "reductions")}
    items = [
        _Sample(source=str(file), prefix=f"samples[{index}].", data=item) for index, item in enumerate(samples or [])
    ]
    return _Log(file=file, header=header, samples=items)


def _read_log(file: Path) -> _Log:
    data = read_regular_file(file, limit=MAX_LOG_BYTES, what="saved Inspect log")
    if data.startswith(b"PK") or file.suffix == ".eval":
        return _read_eval(file, data)
    return _read_json(file, data)


def _get(holder: Any, key: str) -> Any:
    return holder.get(key) if isinstance(holder, dict) else None


def _header_text(log: _Log, path: str, *, required: bool) -> str | None:
    """A string (or integer, as text) at dotted ``path`` of the header; an error when required and absent."""
    value: Any = log.header
    for key in path.split("."):
        value = _get(value, key)
    if value is None and not required:
        return None
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise RecordFileError.single(log.file, path, f"expected a string (got {describe(value)})")
    return str(value)


def _digest12(value: Any) -> str:
    try:
        return str(digest_json(value)).removeprefix("sha256:")[:12]
    except (TypeError, ValueError):
        return "undigestable"


def _system_parts(log: _Log) -> dict[str, str | None]:
    """The eval's model, task version, plan, scoring configuration and retry policy as system parts."""
    evaluation = log.header.get("eval")
    if not isinstance(evaluation, dict):
        raise RecordFileError.single(log.file, "eval", f"expected an object (got {describe(evaluation)})")
    model = _header_text(log, "eval.model", required=True)
    task = _header_text(log, "eval.task", required=True)
    task_version = _header_text(log, "eval.task_version", required=False)
    package = _header_text(log, "eval.packages.inspect_ai", required=False)
    found = evaluation.get("config")
    config: dict[str, Any] = found if isinstance(found, dict) else {}
    steps = _get(log.header.get("plan"), "steps")
    solvers = [str(_get(step, "solver")) for step in steps] if isinstance(steps, list) else []
    listed = evaluation.get("scorers")
    scorers: list[Any] = listed if isinstance(listed, list) else []
    scoring = {
        "scorers": scorers,
        "epochs": config.get("epochs"),
        "epochs_reducer": config.get("epochs_reducer"),
        "fail_on_error": config.get("fail_on_error"),
    }
    names = ",".join(str(_get(item, "name")) for item in scorers) or "none"
    retry = config.get("retry_on_error")
    return {
        "model_id": model,
        "task_set_version": f"{task}@{task_version}" if task_version is not None else task,
        "orchestration_version": (
            f"inspect_ai {package or 'unknown'}; plan {'+'.join(solvers) or 'none'} "
            f"(sha256 {_digest12(log.header.get('plan'))})"
        ),
        "verifier_version": (
            f"scorers {names}; epochs {config.get('epochs')}; reducer {config.get('epochs_reducer')}; "
            f"fail_on_error {config.get('fail_on_error')} (sha256 {_digest12(scoring)})"
        ),
        "retry_policy": None if retry is None else f"retry_on_error={retry}",
        "package": package,
    }


def _verdict(value: Any, scoring: _Scoring) -> str | None:
    """A score value as ``passed``/``failed``, or None when the mapping cannot read it."""
    if isinstance(value, bool):
        return PASSED if value else FAILED
    if isinstance(value, str):
        return scoring.values.get(value)
    if isinstance(value, int | float) and math.isfinite(value):
        return PASSED if value >= scoring.threshold else FAILED
    return None


def _graders(scores: Mapping[str, object], scoring: _Scoring) -> list[dict[str, str | None]]:
    return [
        {
            "name": name,
            "kind": "judge" if name.startswith("model_graded") or name in scoring.judges else "code",
            "verdict": _verdict(_get(score, "value"), scoring) or "unparseable",
            "calibration_version": None,
        }
        for name, score in scores.items()
    ]


def _usage(sample: Mapping[str, object]) -> tuple[int | None, int | None, float | None]:
    """Input and output tokens summed over the sample's models; cost only when every model reports it."""
    usage = sample.get("model_usage")
    if not isinstance(usage, dict) or not usage:
        return None, None, None
    tokens_in = tokens_out = 0
    costs: list[float] = []
    for item in usage.values():
        tokens_in += _count(_get(item, "input_tokens"))
        tokens_out += _count(_get(item, "output_tokens"))
        cost = _get(item, "total_cost")
        if isinstance(cost, int | float) and not isinstance(cost, bool) and math.isfinite(cost) and cost >= 0:
            costs.append(float(cost))
    return tokens_in, tokens_out, (sum(costs) if len(costs) == len(usage) else None)


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else 0


def _message(error: Any) -> str:
    text = _get(error, "message")
    return shorten(text if isinstance(text, str) else describe(error), TEXT_LIMIT)


class _SampleReader:
    """Turns samples into rows; every defect is collected (file, member, field) and raised together."""

    def __init__(self, scoring: _Scoring, primary: str) -> None:
        self.scoring = scoring
        self.primary = primary
        self.problems = ProblemList()
        self.rows: list[Mapping[str, object]] = []
        self.sources: list[str] = []

    def problem(self, sample: _Sample, field: str, message: str) -> None:
        self.problems.add(RecordProblem(file=sample.source, field=sample.prefix + field, message=message))

    def add(self, sample: _Sample, row: JSONObject) -> None:
        self.rows.append(row)
        self.sources.append(sample.source if not sample.prefix else f"{sample.source} {sample.prefix.rstrip('.')}")

    def read(self, sample: _Sample) -> tuple[str, int] | None:
        """Add the rows of one sample (its retries, then its final attempt); return its (case, epoch)."""
        data = sample.data
        if not isinstance(data, dict):
            self.problem(sample, "<sample>", f"expected an object (got {describe(data)})")
            return None
        before = self.problems.total
        case_id, bad = typed_cell(data.get("id"), "id", text=False)
        if bad is not None or case_id is None:
            self.problem(sample, "id", bad or "required key is missing")
        epoch = data.get("epoch")
        if isinstance(epoch, bool) or not isinstance(epoch, int) or epoch < 1:
            self.problem(sample, "epoch", f"expected an integer >= 1 (got {describe(epoch)})")
        retries = data.get("error_retries") or []
        if not isinstance(retries, list):
            self.problem(sample, "error_retries", f"expected a list (got {describe(retries)})")
            retries = []
        final = self._final(sample, data)
        if self.problems.total > before or not isinstance(epoch, int):
            return None
        common = {"case_id": case_id, "trial": epoch - 1}
        for attempt, retry in enumerate(retries):
            row = {**common, "attempt": attempt, "outcome": INFRA_ERROR}
            self.add(sample, {**row, "failed_check": f"inspect error (retried): {_message(retry)}"})
        self.add(sample, {**common, "attempt": len(retries), **final})
        return str(case_id), epoch

    def _final(self, sample: _Sample, data: Mapping[str, object]) -> JSONObject:
        tokens_in, tokens_out, cost = _usage(data)
        seconds, started, ended = data.get("total_time"), data.get("started_at"), data.get("completed_at")
        row: JSONObject = {
            "tokens_input": tokens_in,
            "tokens_output": tokens_out,
            "cost_model_usd": cost,
            "machine_seconds": float(seconds)
            if isinstance(seconds, int | float) and not isinstance(seconds, bool) and math.isfinite(seconds)
            else None,
            "started_at": started if isinstance(started, str) else None,
            "ended_at": ended if isinstance(ended, str) else None,
        }
        scores = data.get("scores") or {}
        if not isinstance(scores, dict):
            self.problem(sample, "scores", f"expected an object (got {describe(scores)})")
            return row
        graders = _graders(scores, self.scoring) or None
        if data.get("error") is not None:
            return {**row, "outcome": INFRA_ERROR, "failed_check": f"inspect error: {_message(data['error'])}"}
        limit = data.get("limit")
        if limit is not None:
            return {**row, "graders": graders, **self._limit(sample, limit)}
        if self.primary not in scores:
            have = ", ".join(sorted(scores)) or "none"
            msg = f"no score from the outcome scorer {self.primary!r} (the sample has: {have}; unscored?)"
            self.problem(sample, "scores", msg)
            return row
        value = _get(scores[self.primary], "value")
        outcome = _verdict(value, self.scoring)
        if outcome is None:
            known = ", ".join(self.scoring.values) or "none"
            msg = f"expected a mapped value ({known}), true/false or a finite number (got {describe(value)})"
            self.problem(sample, f"scores.{self.primary}.value", msg)
            return row
        check = None if outcome == PASSED else f"scorer {self.primary}: {shorten(value)}"
        return {**row, "graders": graders, "outcome": outcome, "failed_check": check}

    def _limit(self, sample: _Sample, limit: Any) -> JSONObject:
        kind, bound = _get(limit, "type"), _get(limit, "limit")
        reason = _get(limit, "reason")
        text = f"inspect {kind} limit {bound}" + (f": {shorten(reason)}" if isinstance(reason, str) else "")
        if kind == "operator":
            return {"outcome": INFRA_ERROR, "failed_check": text}
        if kind not in LIMIT_BOUNDS:
            known = ", ".join([*LIMIT_BOUNDS, "operator"])
            self.problem(sample, "limit.type", f"expected one of {known} (got {describe(kind)})")
            return {}
        return {"outcome": RESOURCE_KILLED, "bound": LIMIT_BOUNDS[kind], "failed_check": text}


def _primary_scorer(log: _Log, scorer: str | None) -> str:
    """The scorer that decides the outcome: ``scorer`` when given, else the log's first scorer."""
    listed = _get(log.header.get("eval"), "scorers")
    names = [str(_get(item, "name")) for item in listed] if isinstance(listed, list) else []
    if scorer is not None:
        if names and scorer not in names:
            msg = f"no scorer {scorer!r} in this log (scorers: {', '.join(names)})"
            raise RecordFileError.single(log.file, "eval.scorers", msg)
        return scorer
    if not names:
        raise RecordFileError.single(log.file, "eval.scorers", "the log names no scorer: give the outcome scorer")
    return names[0]


def _missing(log: _Log, seen: set[tuple[str, int]]) -> list[dict[str, object]]:
    """Rows for the (sample, epoch) pairs the header promises and the log lacks (a cancelled or failed eval)."""
    ids = _get(_get(log.header.get("eval"), "dataset"), "sample_ids")
    epochs = _get(_get(log.header.get("eval"), "config"), "epochs")
    if not isinstance(ids, list) or not isinstance(epochs, int) or isinstance(epochs, bool):
        return []
    status = log.header.get("status")
    rows = []
    for sample_id in ids:
        for epoch in range(1, epochs + 1):
            if (str(sample_id), epoch) not in seen:
                check = f"no sample in the log (eval status {status}): not run or not recorded"
                rows.append(
                    {"case_id": str(sample_id), "trial": epoch - 1, "attempt": 0, "outcome": INFRA_ERROR}
                    | {"failed_check": check}
                )
    return rows


def _log_records(log: _Log, scoring: _Scoring, *, system: str | None, run_set_id: str) -> pl.DataFrame:
    version = log.header.get("version")
    if version not in LOG_VERSIONS:
        known = ", ".join(map(str, LOG_VERSIONS))
        msg = f"Inspect log format version {describe(version)} is not supported (known: {known})"
        raise RecordFileError.single(log.file, "version", msg)
    if not log.samples:
        msg = "the log holds no samples (was the eval run with log_samples=False, or has it not finished?)"
        raise RecordFileError.single(log.file, "samples", msg)
    parts = _system_parts(log)
    reader = _SampleReader(scoring, _primary_scorer(log, scoring.scorer))
    seen = {pair for sample in log.samples if (pair := reader.read(sample)) is not None}
    reader.problems.raise_if_any()
    missing = _missing(log, seen)
    reader.rows.extend(missing)
    reader.sources.extend([f"{log.file} eval.dataset.sample_ids"] * len(missing))
    package = parts.pop("package")
    frame = pl.DataFrame(reader.rows, schema=_COLUMNS, orient="row").with_columns(
        system=pl.lit(system or parts["model_id"]),
        **{name: pl.lit(value, pl.String) for name, value in parts.items()},
    )
    tool = f"inspect_ai {package or 'unknown'}, log format {version}"
    try:
        return imported_records(frame, files=log.file, command="inspect", run_set_id=run_set_id, tool=tool)
    except RecordFileError as exc:
        named = [_at_sample(problem, reader.sources) for problem in exc.problems]
        raise RecordFileError(named, total=exc.total) from None


def _at_sample(problem: RecordProblem, sources: Sequence[str]) -> RecordProblem:
    """A record problem that names a frame row, named by the sample (member) the row came from."""
    if problem.row is None or problem.row >= len(sources):
        return problem
    first = ""
    if problem.first_row is not None and problem.first_row < len(sources):
        first = f" (first from {sources[problem.first_row]})"
    return RecordProblem(file=sources[problem.row], field=problem.field, message=problem.message + first)


def _check_unique(frames: Iterable[tuple[Path, pl.DataFrame]]) -> None:
    """Refuse the same (system, case, trial, attempt) from two logs (give each log its own --system)."""
    first: dict[tuple[str, str, int, int], Path] = {}
    for file, frame in frames:
        for key in frame.select("system", "case_id", "trial", "attempt").iter_rows():
            if key in first:
                msg = (
                    f"system {key[0]!r}, case {key[1]!r}, epoch {key[2] + 1} is also in {first[key]} "
                    "(import the logs separately or label each with its own --system)"
                )
                raise RecordFileError.single(file, "samples", msg)
            first[key] = file


def import_inspect(
    paths: str | Path | Sequence[str | Path],
    *,
    scorer: str | None = None,
    values: Mapping[str, str] | None = None,
    threshold: float = 1.0,
    judges: Iterable[str] = (),
    system: str | None = None,
    run_set_id: str | None = None,
) -> pl.DataFrame:
    """Read Inspect AI logs (``.eval`` or ``.json``) into validated run records, one per sample attempt.

    A sample is a case and an epoch a trial; an errored sample is an ``infra_error``, one that hit
    a resource limit ``resource_killed`` (the module docstring gives the whole mapping).

    Parameters
    ----------
    paths
        One log or several (e.g. one per model of an eval set).
    scorer
        The scorer whose value decides the outcome; default: the log's first scorer.
    values
        Score value -> ``passed``/``failed``, merged over :data:`DEFAULT_VALUES` (e.g. ``{"P": "passed"}``).
    threshold
        A numeric score passes when ``>= threshold`` (default 1.0: only full marks pass).
    judges
        Scorer names recorded as ``judge`` graders besides ``model_graded_*``.
    system
        System label for every record; default: the log's model (``eval.model``).
    run_set_id
        Default ``import-<first 12 hex of the first log's sha256>``.

    Returns
    -------
    polars.DataFrame
        The validated records: one per sample attempt (an errored sample's retries are its earlier
        attempts), and an ``infra_error`` record for each (sample, epoch) the header promises and
        the log lacks.

    Raises
    ------
    RecordFileError
        A log is missing, not a zip or JSON, truncated, has a member that is not JSON, an unknown
        format version, or samples with missing or unreadable fields (named ``file[member]`` and
        field); nothing is returned.
    ValueError
        ``threshold`` is not finite or ``values`` maps to something other than passed/failed.
    """
    files = [Path(paths)] if isinstance(paths, str | Path) else [Path(p) for p in paths]
    if not files:
        msg = "give at least one Inspect log"
        raise ValueError(msg)
    if isinstance(threshold, bool) or not isinstance(threshold, int | float) or not math.isfinite(threshold):
        msg = f"threshold: expected a finite number (got {threshold!r})"
        raise ValueError(msg)
    merged = {**DEFAULT_VALUES, **(values or {})}
    if bad := sorted(v for v, outcome in merged.items() if outcome not in (PASSED, FAILED)):
        msg = f"values: each score value maps to passed or failed (got {bad[0]!r} -> {merged[bad[0]]!r})"
        raise ValueError(msg)
    scoring = _Scoring(scorer=scorer, values=merged, threshold=float(threshold), judges=frozenset(judges))
    run_set = run_set_id
    if run_set is None:
        run_set = f"import-{file_digest(files[0])[:12]}" if files[0].is_file() else "import"
    frames = [(file, _log_records(_read_log(file), scoring, system=system, run_set_id=run_set)) for file in files]
    _check_unique(frames)
    return pl.concat([frame for _, frame in frames], how="vertical")
