"""Import SWE-bench harness results (run summaries and per-instance ``report.json``) as run records.

``python -m swebench.harness.run_evaluation`` writes a run summary ``<model>.<run_id>.json``
(``swebench/harness/reporting.py``, ``make_run_report``: ``total_instances``, ``resolved_ids``,
``unresolved_ids``, ``error_ids``, ``empty_patch_ids``, ``incomplete_ids``, ``completed_ids``,
``submitted_ids``, the ``*_instances`` counts, ``schema_version`` 2) and, per instance,
``logs/run_evaluation/<run_id>/<model>/<instance_id>/report.json``
(``swebench/harness/grading.py``, ``get_eval_report``: ``{instance_id: {patch_is_None,
patch_exists, patch_successfully_applied, resolved, tests_status?}}``). Mapping (see
``docs/importers.md``):

- instance -> ``case_id`` (its repository, ``owner__repo``, -> ``case_group``); each summary given
  is one run -> ``trial`` 0, 1, ... in the order given;
- ``resolved_ids`` -> ``passed``; ``unresolved_ids`` -> ``failed``; ``empty_patch_ids`` ->
  ``failed`` with ``failed_check`` "empty patch"; ``error_ids`` (the harness could not evaluate the
  patch) -> ``infra_error``; ``incomplete_ids`` (no prediction submitted) and an instance another
  run has but this one lists nowhere -> ``infra_error`` naming why: never silently unresolved;
- ``infra_failure_ids`` (swebench 5: failures its log classifier puts on the environment, e.g.
  ``network_unreachable``; they stay in ``unresolved_ids``/``error_ids`` there) keep their list's
  outcome with the reason in the failed check, or become ``infra_error`` with
  ``trust_infra_failures``; another ``failure_reasons`` entry is added to the failed check;
- the five lists must be disjoint, the counts must match the lists, and every one of
  ``total_instances`` must be in a list; a ``report.json`` must agree with the summary;
- ``--costs``: a table (CSV, JSONL, Parquet) with ``instance_id``, ``trial``, ``cost_usd`` -> ``cost_usd``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import ProblemList, RecordFileError, RecordProblem
from gatestats.importers._common import imported_records
from gatestats.importers._logfiles import MAX_LOG_BYTES, decode_tool_json
from gatestats.io.jsonfile import read_regular_file
from gatestats.tables.inputs import describe, read_input_table, typed_cell
from gatestats.vocabulary import FAILED, INFRA_ERROR, PASSED

__all__ = ["LISTS", "SCHEMA_VERSIONS", "import_swe_bench"]

#: The summary's outcome lists -> (outcome, failed_check). An instance is in at most one of them.
LISTS: Mapping[str, tuple[str, str | None]] = {
    "resolved_ids": (PASSED, None),
    "unresolved_ids": (FAILED, "unresolved: the FAIL_TO_PASS or PASS_TO_PASS tests did not all pass"),
    "empty_patch_ids": (FAILED, "empty patch: the model produced no patch"),
    "error_ids": (INFRA_ERROR, "harness error: the evaluation produced no valid report.json"),
    "incomplete_ids": (INFRA_ERROR, "incomplete: no prediction was submitted for this instance"),
}
#: Run-summary schema versions read (None: summaries written before the field existed).
SCHEMA_VERSIONS: tuple[int | None, ...] = (None, 2)
_COUNTS = {
    "resolved_ids": "resolved_instances",
    "unresolved_ids": "unresolved_instances",
    "empty_patch_ids": "empty_patch_instances",
    "error_ids": "error_instances",
}
_MAX_REPORT_BYTES = 1 << 26


def _document(file: Path) -> dict[str, Any]:
    """The run summary's JSON object, with a known ``schema_version``."""
    raw = read_regular_file(file, limit=MAX_LOG_BYTES, what="SWE-bench run summary")
    document = decode_tool_json(raw, source=str(file))
    if not isinstance(document, dict):
        raise RecordFileError.single(file, "<json>", f"expected a run summary object (got {describe(document)})")
    version = document.get("schema_version")
    if version not in SCHEMA_VERSIONS or isinstance(version, bool):
        msg = f"run summary schema_version {describe(version)} is not supported (known: 2, or absent)"
        raise RecordFileError.single(file, "schema_version", msg)
    return document


def _listed(file: Path, name: str, items: Any, where: dict[str, str], problems: ProblemList) -> None:
    """Record which list each instance of ``items`` is in; an instance in two lists is a problem."""

    def problem(field: str, message: str) -> None:
        problems.add(RecordProblem(file=str(file), field=field, message=message))

    if not isinstance(items, list):
        problem(name, f"expected a list of instance ids (got {describe(items)})")
        return
    for index, item in enumerate(items):
        if not isinstance(item, str) or not item:
            problem(f"{name}[{index}]", f"expected an instance id (got {describe(item)})")
        elif item in where:
            problem(name, f"instance {item!r} is in both {where[item]} and {name} (the lists are disjoint)")
        else:
            where[item] = name


@dataclass(frozen=True, slots=True)
class _Run:
    """One run summary: instance id -> the list it is in, and the harness's failure classification."""

    where: dict[str, str]
    #: ``infra_failure_ids`` (swebench 5): failures the harness puts on the environment -> their reason.
    infra: dict[str, str]
    #: ``failure_reasons``: why a non-resolved instance failed, where the harness could tell.
    reasons: dict[str, str]


def _classified(file: Path, document: Mapping[str, object], where: dict[str, str], problems: ProblemList) -> _Run:
    """The run with ``infra_failure_ids`` and ``failure_reasons`` checked against its outcome lists."""
    raw_reasons = document.get("failure_reasons", {})
    reasons: dict[str, str] = {}
    if isinstance(raw_reasons, dict):
        for key, value in raw_reasons.items():
            if not isinstance(value, str) or not value:
                msg = f"expected the reason as a non-empty string (got {describe(value)})"
                problems.add(RecordProblem(file=str(file), field=f"failure_reasons.{key}", message=msg))
    if not isinstance(raw_reasons, dict):
        problems.add(
            RecordProblem(
                file=str(file), field="failure_reasons", message=f"expected an object (got {describe(raw_reasons)})"
            )
        )
    else:
        reasons = {str(k): v for k, v in raw_reasons.items() if isinstance(v, str)}
    infra_ids = document.get("infra_failure_ids", [])
    infra: dict[str, str] = {}
    if not isinstance(infra_ids, list):
        problems.add(
            RecordProblem(
                file=str(file),
                field="infra_failure_ids",
                message=f"expected a list of instance ids (got {describe(infra_ids)})",
            )
        )
        return _Run(where, infra, reasons)
    for index, item in enumerate(infra_ids):
        if isinstance(item, str) and item in infra:
            msg = f"instance {item!r} is listed twice"
            problems.add(RecordProblem(file=str(file), field=f"infra_failure_ids[{index}]", message=msg))
        elif not isinstance(item, str) or where.get(item) not in ("unresolved_ids", "error_ids"):
            what = f"instance {item!r}" if isinstance(item, str) else describe(item)
            msg = f"{what} is in neither unresolved_ids nor error_ids (the only ones the harness classifies)"
            problems.add(RecordProblem(file=str(file), field=f"infra_failure_ids[{index}]", message=msg))
        else:
            infra[item] = reasons.get(item, "no reason given")
    return _Run(where, infra, reasons)


def _summary(file: Path) -> _Run:
    """The run's lists and classification; every inconsistency of the summary is an error."""
    document = _document(file)
    problems = ProblemList()
    where: dict[str, str] = {}
    for name in LISTS:
        items = document.get(name, [] if name == "incomplete_ids" else None)
        _listed(file, name, items, where, problems)
        count = document.get(_COUNTS.get(name, ""))
        if isinstance(items, list) and count is not None and count != len(items):
            msg = f"{_COUNTS[name]} is {describe(count)} but {name} lists {len(items)} instance(s)"
            problems.add(RecordProblem(file=str(file), field=_COUNTS[name], message=msg))
    total = document.get("total_instances")
    if not problems and total is not None and total != len(where):
        msg = f"total_instances is {describe(total)} but the lists hold {len(where)} instance(s): some are in no list"
        problems.add(RecordProblem(file=str(file), field="total_instances", message=msg))
    run = _classified(file, document, where, problems)
    problems.raise_if_any()
    if not where:
        raise RecordFileError.single(file, "resolved_ids", "the run summary lists no instance")
    return run


def _report_check(logs: Path, instance: str, listed: str) -> str | None:
    """The failed check a ``report.json`` adds (None: no report); an error when it contradicts the summary."""
    path = logs / instance / "report.json"
    if not path.is_file():
        return None
    report = decode_tool_json(read_regular_file(path, limit=_MAX_REPORT_BYTES, what="report.json"), source=str(path))
    found = report.get(instance) if isinstance(report, dict) else None
    entry: dict[str, Any] = found if isinstance(found, dict) else {}
    resolved = entry.get("resolved")
    if not isinstance(resolved, bool):
        raise RecordFileError.single(path, f"{instance}.resolved", f"expected true or false (got {describe(resolved)})")
    if listed in ("resolved_ids", "unresolved_ids") and resolved != (listed == "resolved_ids"):
        msg = f"resolved is {str(resolved).lower()} but the run summary lists the instance in {listed}"
        raise RecordFileError.single(path, f"{instance}.resolved", msg)
    if resolved or listed != "unresolved_ids":
        return None
    if entry.get("patch_successfully_applied") is False:  # swebench 5: the log held no parseable test results
        reason = entry.get("infra_failure_reason")
        why = f" ({reason})" if isinstance(reason, str) and reason else ""
        return f"unresolved: no parseable test results in the log{why}"
    return _tests_check(entry.get("tests_status"))


def _tests_check(status: Any) -> str | None:
    if not isinstance(status, dict):
        return None
    failing = []
    for group in ("FAIL_TO_PASS", "PASS_TO_PASS"):
        failures = status.get(group, {}).get("failure") if isinstance(status.get(group), dict) else None
        if isinstance(failures, list) and failures:
            failing.append(f"{group} {len(failures)} failing ({failures[0]}{', ...' if len(failures) > 1 else ''})")
    return "unresolved: " + "; ".join(failing) if failing else None


def _costs(path: Path) -> dict[tuple[str, int], float]:
    table = read_input_table(path, ["instance_id", "trial", "cost_usd"])
    problems = ProblemList()
    costs: dict[tuple[str, int], float] = {}
    for index, row in enumerate(table.rows):
        instance, bad_id = typed_cell(row["instance_id"], "string", text=table.text)
        trial, bad_trial = typed_cell(row["trial"], "integer", text=table.text)
        cost, bad_cost = typed_cell(row["cost_usd"], "number", text=table.text)
        for field, bad in (("instance_id", bad_id), ("trial", bad_trial), ("cost_usd", bad_cost)):
            if bad is not None:
                problems.add(table.problem(index, field, bad))
        if bad_id or bad_trial or bad_cost or instance is None or trial is None or cost is None:
            continue
        if cost < 0 or not math.isfinite(cost):
            problems.add(table.problem(index, "cost_usd", f"expected a non-negative number (got {cost})"))
        elif (instance, trial) in costs:
            problems.add(table.problem(index, "instance_id", f"instance {instance!r}, trial {trial} is given twice"))
        else:
            costs[(instance, trial)] = cost
    problems.raise_if_any()
    return costs


def import_swe_bench(
    summaries: str | Path | Sequence[str | Path],
    *,
    logs: Sequence[str | Path | None] | None = None,
    costs: str | Path | None = None,
    system: str | None = None,
    run_set_id: str | None = None,
    trust_infra_failures: bool = False,
) -> pl.DataFrame:
    """Read SWE-bench harness run summaries (one per run) into validated run records.

    An instance is a case and a run a trial; an instance in ``error_ids`` or ``incomplete_ids`` is
    an ``infra_error``, one with an empty patch ``failed``.

    Parameters
    ----------
    summaries
        The run summaries ``<model>.<run_id>.json``, one per run; run ``i`` becomes trial ``i``.
    logs
        For each summary, its ``logs/run_evaluation/<run_id>/<model>`` directory (or None), whose
        ``<instance_id>/report.json`` files are checked against the summary and name the failing tests.
    costs
        A table with ``instance_id``, ``trial``, ``cost_usd`` (the agent's spend per instance and run).
    system
        System label; default: the first summary's file name up to its first ``.`` (the model).
    run_set_id
        Default ``import-<first 12 hex of the first summary's sha256>``.
    trust_infra_failures
        Record the instances of ``infra_failure_ids`` (swebench 5: failures its log classifier puts on
        the environment) as ``infra_error``; by default they stay the candidate's failures, the
        classifier's reason in ``failed_check`` (a wrong guess could otherwise hide a regression).

    Returns
    -------
    polars.DataFrame
        The validated records, one per instance and run.

    Raises
    ------
    RecordFileError
        A summary that is not JSON, an unknown ``schema_version``, an instance in two lists, counts
        that do not match their lists, a ``report.json`` that contradicts its summary, a bad cost
        table or a cost for an instance no run has (each named by file and field); nothing is returned.
    ValueError
        ``logs`` is not one directory per summary.
    """
    files = [Path(summaries)] if isinstance(summaries, str | Path) else [Path(s) for s in summaries]
    directories = [None if d is None else Path(d) for d in logs] if logs is not None else []
    if not files or (logs is not None and len(directories) != len(files)):
        msg = f"give run summaries and, with logs, one directory per summary (got {len(files)} and {len(directories)})"
        raise ValueError(msg)
    runs = [_summary(file) for file in files]
    instances = sorted(set().union(*(run.where for run in runs)))
    rows: list[JSONObject] = []
    for trial, (file, run) in enumerate(zip(files, runs, strict=True)):
        directory = directories[trial] if directories else None
        rows.extend(
            _row(file, run, instance, trial, directory, trust_infra=trust_infra_failures) for instance in instances
        )
    frame = pl.DataFrame(
        rows,
        schema={"case_id": pl.String, "trial": pl.Int64, "outcome": pl.String, "failed_check": pl.String},
        orient="row",
    )
    if costs is not None:
        frame = _joined_costs(frame, Path(costs))
    frame = frame.with_columns(
        system=pl.lit(system or files[0].name.split(".", 1)[0]),
        case_group=pl.col("case_id").str.replace(r"-[0-9]+$", ""),
    )
    tool = "SWE-bench harness run summaries, trial = position"
    return imported_records(frame, files=files, command="swe-bench", run_set_id=run_set_id, tool=tool)


def _row(file: Path, run: _Run, instance: str, trial: int, directory: Path | None, *, trust_infra: bool) -> JSONObject:
    """One instance of one run: its outcome and why.

    An instance of ``infra_failure_ids`` keeps its list's outcome unless ``trust_infra``: the
    harness's classifier reads logs, and a candidate that breaks the network looks like a network
    failure; taking it out of the pass rate could turn a regression into a pass.
    """
    listed = run.where.get(instance)
    outcome, check = LISTS[listed] if listed else (INFRA_ERROR, f"not in run summary {file.name}: not run")
    if listed and directory is not None:
        check = _report_check(directory, instance, listed) or check
    if instance in run.infra and trust_infra:
        outcome = INFRA_ERROR
        check = f"infrastructure failure: {run.infra[instance]} (the harness's infra_failure_ids)"
    elif instance in run.infra:
        check = f"{check}; the harness suspects infrastructure: {run.infra[instance]} (infra_failure_ids)"
    elif listed in ("unresolved_ids", "error_ids") and instance in run.reasons and check is not None:
        reason = run.reasons[instance]
        check = check if reason in check else f"{check}; the harness's failure reason: {reason}"
    return {"case_id": instance, "trial": trial, "outcome": outcome, "failed_check": check}


def _joined_costs(frame: pl.DataFrame, path: Path) -> pl.DataFrame:
    costs = _costs(path)
    known = set(frame.select("case_id", "trial").iter_rows())
    if unknown := sorted(key for key in costs if key not in known):
        instance, trial = unknown[0]
        msg = f"instance {instance!r}, trial {trial} is in no run summary ({len(unknown)} such row(s))"
        raise RecordFileError.single(path, "instance_id", msg)
    values = [costs.get(key) for key in frame.select("case_id", "trial").iter_rows()]
    return frame.with_columns(cost_usd=pl.Series(values, dtype=pl.Float64))
