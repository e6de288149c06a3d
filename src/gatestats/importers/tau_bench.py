"""Import τ-bench and τ²-bench result files as run records.

τ-bench (sierra-research/tau-bench) writes a JSON list of ``{task_id, reward, info, traj,
trial}``; τ²-bench writes ``{timestamp, info, tasks, simulations: [{task_id, trial, reward_info:
{reward}, agent_cost, user_cost, ...}]}``. Both are read here; the format is detected from the
top-level JSON type.

- success: ``|reward - 1| <= 1e-6`` (τ-bench's own ``is_success`` rule), else ``failed``.
- cost: the agent's spend (τ²: ``agent_cost``; τ-bench: ``info.agent_cost``/``info.total_cost``
  when present) goes to ``cost_model_usd``; the user simulator's spend (``user_cost``, which the
  harness pays to run the trial) goes to ``cost_execution_usd``. Missing costs stay null, never 0.
- τ-bench does not record the model; pass it (``model_id``) or it stays null. τ²-bench's
  ``info.agent_info.llm`` is used as ``model_id`` and its domain as ``task_set_version``.
- the file is decoded strictly (:func:`gatestats_runner.contract.decode_json`): a duplicate key,
  ``NaN``/``Infinity``, an overflowing number, an integer beyond 64 bits, nesting deeper than 32
  levels, a byte-order mark or bytes that are not UTF-8 anywhere in it are errors (with the line
  where it can be told). ``task_id`` is a string or an integer (written as its decimal text),
  ``trial`` a non-negative integer, ``reward`` a finite number, costs non-negative numbers.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import RecordFileError, RecordProblem
from gatestats.importers._common import imported_records
from gatestats.io.jsonfile import read_json_file
from gatestats.tables.inputs import ProblemList, describe, typed_cell
from gatestats.vocabulary import FAILED, PASSED

__all__ = ["MAX_RESULT_BYTES", "SUCCESS_TOLERANCE", "import_tau_bench"]

#: A trial succeeded when its reward is within this distance of 1 (τ-bench's rule).
SUCCESS_TOLERANCE = 1e-6
#: The largest result file read (the bundled 200-trial τ-bench file is 4 MB, trajectories included).
MAX_RESULT_BYTES = 1 << 30


def _mapping(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        return None
    return float(value)


def _cost(value: Any, *, where: str, field: str, problem: Callable[[str, str], None]) -> float | None:
    if value is None:
        return None
    number = _number(value)
    if number is None or number < 0:
        problem(field, f"{where}: expected a non-negative number (got {describe(value)})")
        return None
    return number


def _trial_rows(items: list[Any], file: Path, *, tau2: bool) -> tuple[list[JSONObject], ProblemList]:
    rows: list[JSONObject] = []
    problems = ProblemList()
    kind = "simulation" if tau2 else "item"
    for index, item in enumerate(items):
        before = problems.total

        def problem(field: str, message: str, index: int = index) -> None:
            problems.add(RecordProblem(file=str(file), row=index, field=field, message=f"{kind} {index}: {message}"))

        if not isinstance(item, dict):
            problem("<item>", f"expected a JSON object (got {describe(item)})")
            continue
        row = _trial_row(item, tau2=tau2, problem=problem)
        if problems.total == before:
            rows.append(row)
    return rows, problems


def _trial_row(item: Mapping[str, object], *, tau2: bool, problem: Callable[[str, str], None]) -> JSONObject:
    """One result item as record fields; each defect goes to ``problem`` (the row is then not used)."""
    for key in ("task_id", "trial"):
        if key not in item:
            problem(key, "required key is missing")
    task_id, trial = item.get("task_id"), item.get("trial")
    case_id, bad = typed_cell(task_id, "id", text=False)
    if bad is not None:
        problem("task_id", bad)
    if "trial" in item and (isinstance(trial, bool) or not isinstance(trial, int) or trial < 0):
        problem("trial", f"expected a non-negative integer (got {describe(trial)})")
    reward_holder = item.get("reward_info") if tau2 else item
    reward = reward_holder.get("reward") if isinstance(reward_holder, dict) else None
    number = _number(reward)
    if number is None:
        where = "reward_info.reward" if tau2 else "reward"
        problem(where, f"expected a finite number (got {describe(reward)})")
    agent_cost, user_cost = _raw_costs(item, tau2=tau2, problem=problem)
    return {
        "case_id": case_id,
        "trial": trial,
        "outcome": PASSED if number is not None and abs(number - 1.0) <= SUCCESS_TOLERANCE else FAILED,
        "cost_model_usd": _cost(agent_cost, where="agent cost", field="cost_model_usd", problem=problem),
        "cost_execution_usd": _cost(user_cost, where="user_cost", field="cost_execution_usd", problem=problem),
    }


def _raw_costs(item: Mapping[str, object], *, tau2: bool, problem: Callable[[str, str], None]) -> tuple[Any, Any]:
    """The agent's and the user simulator's cost as the item gives them (τ²: top level; τ-bench: ``info``)."""
    if tau2:
        return item.get("agent_cost"), item.get("user_cost")
    info = item.get("info")
    if info is not None and not isinstance(info, dict):
        problem("info", f"expected a JSON object (got {describe(info)})")
        info = None
    info = info or {}
    return info.get("agent_cost", info.get("total_cost")), info.get("user_cost")


def _decode(file: Path) -> Any:
    """The file's one JSON document, decoded strictly (:func:`gatestats.io.jsonfile.read_json_file`)."""
    return read_json_file(file, limit=MAX_RESULT_BYTES, what="τ-bench results")


def _tau_parts(file: Path, data: Any) -> tuple[list[Any], str | None, str | None]:
    """A τ-bench file's items (it names no model and no domain)."""
    if not isinstance(data, list):
        raise RecordFileError.single(file, "<json>", f"expected a JSON list of results (got {type(data).__name__})")
    return data, None, None


def _tau2_parts(file: Path, data: Mapping[str, object]) -> tuple[list[Any], str | None, str | None]:
    """A τ²-bench file's simulations, the agent's model and the domain (None where the file lacks them)."""
    items = data.get("simulations")
    if not isinstance(items, list):
        raise RecordFileError.single(
            file,
            "simulations",
            "expected a τ-bench JSON list or a τ²-bench object with a 'simulations' list",
        )
    info = _mapping(data.get("info"))
    agent_info, env_info = _mapping(info.get("agent_info")), _mapping(info.get("environment_info"))
    llm = agent_info.get("llm") if isinstance(agent_info.get("llm"), str) else None
    domain = env_info.get("domain_name") if isinstance(env_info.get("domain_name"), str) else None
    return items, llm, domain


def import_tau_bench(
    path: str | Path,
    *,
    system: str | None = None,
    model_id: str | None = None,
    run_set_id: str | None = None,
) -> pl.DataFrame:
    """Read a τ-bench (or τ²-bench) result file into validated run records.

    A task is a case; a trial passes when its reward is within 1e-6 of 1, and its costs are read
    from ``info`` where present.

    Parameters
    ----------
    path
        The JSON file τ-bench writes (a list of ``{task_id, reward, info, traj, trial}``), or a
        τ²-bench results file.
    system
        System label; default: the file name without suffix.
    model_id
        Model identifier to record (τ-bench files do not carry it).
    run_set_id
        Default ``import-<first 12 hex of the file's sha256>``.

    Raises
    ------
    RecordFileError
        Invalid JSON (with its line), a wrong top-level shape, or items with missing/mistyped
        keys (with the item index), duplicate (task_id, trial) pairs.

    Returns
    -------
    polars.DataFrame
        The validated records, one per trial.
    """
    file = Path(path)
    if not file.is_file():
        raise RecordFileError.single(file, "<file>", "no such τ-bench result file")
    data = _decode(file)
    tau2 = isinstance(data, dict)
    items, llm, domain = _tau2_parts(file, data) if tau2 else _tau_parts(file, data)
    if tau2:
        model_id = model_id or llm
    if not items:
        raise RecordFileError.single(file, "<json>", "the result file holds no trials")
    rows, problems = _trial_rows(items, file, tau2=tau2)
    problems.raise_if_any()
    columns = pl.DataFrame(
        rows,
        schema={
            "case_id": pl.String,
            "trial": pl.Int64,
            "outcome": pl.String,
            "cost_model_usd": pl.Float64,
            "cost_execution_usd": pl.Float64,
        },
        orient="row",
    ).with_columns(
        system=pl.lit(system or file.stem),
        model_id=pl.lit(model_id, pl.String),
        task_set_version=pl.lit(None if domain is None else f"tau2-bench/{domain}", pl.String),
    )
    return imported_records(columns, files=file, command="tau-bench", run_set_id=run_set_id)
