"""Import promptfoo evaluation results (``promptfoo eval -o results.json``, format version 3) as run records.

The file is ``{evalId, results: {version, timestamp, prompts, results: [row, ...], stats}, config,
metadata: {promptfooVersion, ...}}``; each row is one (test, prompt, provider) run. Mapping (see
``docs/importers.md``):

- provider (its ``label``, else its ``id``) -> ``system`` and ``model_id``; when the file holds
  several prompts, the prompt's label is added to the system (``provider | prompt``) and it is the
  ``prompt_version`` either way;
- test -> ``case_id``: the test's ``description`` when it names one set of ``vars``, else the
  description (or ``test``) with the first 8 hex of the sha256 of its canonical ``vars`` — never
  its position, which ``--repeat`` and reordering change;
- repeats: promptfoo has no repeat index (``--repeat 3`` gives the copies consecutive
  ``testIdx``), so the rows of one (system, case) are numbered ``trial`` 0, 1, ... in ``testIdx``
  order;
- ``success`` -> ``passed``/``failed`` (``failureReason`` 1, with the grading reason in
  ``failed_check``); ``failureReason`` 2 (an error) -> ``infra_error`` with the error message, its
  ``cost`` of 0 and token counts of 0 -> null (unknown, not free);
- ``gradingResult.componentResults`` -> graders: model-graded assertion types
  (:data:`JUDGE_ASSERTIONS`) are ``judge`` graders, the rest ``code``; a component without a
  boolean ``pass`` is ``unparseable``;
- ``cost`` -> ``cost_model_usd``; ``tokenUsage.prompt``/``completion`` -> ``tokens_input``/``tokens_output``;
  ``latencyMs`` -> ``machine_seconds`` (wall time of the provider call).
"""

from __future__ import annotations

import hashlib
import math
from collections import defaultdict
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from gatestats._typing import JSONObject
from gatestats.errors import ProblemList, RecordFileError, RecordProblem
from gatestats.importers._common import imported_records
from gatestats.importers._logfiles import MAX_LOG_BYTES, decode_tool_json
from gatestats.io.digest import canonical_json
from gatestats.io.jsonfile import read_regular_file
from gatestats.io.text import TEXT_LIMIT, shorten
from gatestats.tables.inputs import describe
from gatestats.vocabulary import FAILED, INFRA_ERROR, PASSED, UNPARSEABLE

__all__ = ["FORMAT_VERSIONS", "JUDGE_ASSERTIONS", "import_promptfoo"]

#: promptfoo results format versions this importer reads (``results.version``).
FORMAT_VERSIONS: tuple[int, ...] = (3,)
#: Assertion types graded by a model (promptfoo's model-graded metrics): recorded as judge graders.
JUDGE_ASSERTIONS: frozenset[str] = frozenset(
    {
        "llm-rubric",
        "g-eval",
        "model-graded-closedqa",
        "model-graded-factuality",
        "factuality",
        "answer-relevance",
        "context-faithfulness",
        "context-recall",
        "context-relevance",
        "conversation-relevance",
        "select-best",
        "search-rubric",
        "pi",
    }
)
_FAILURE_REASONS = {0: "none", 1: "assert", 2: "error"}
_COLUMNS: dict[str, pl.DataType] = {
    "system": pl.String(),
    "model_id": pl.String(),
    "prompt_version": pl.String(),
    "case_id": pl.String(),
    "test_index": pl.Int64(),
    "outcome": pl.String(),
    "failed_check": pl.String(),
    "graders": pl.List(
        pl.Struct(
            {"name": pl.String(), "kind": pl.String(), "verdict": pl.String(), "calibration_version": pl.String()}
        )
    ),
    "cost_model_usd": pl.Float64(),
    "tokens_input": pl.Int64(),
    "tokens_output": pl.Int64(),
    "machine_seconds": pl.Float64(),
}


def _get(holder: Any, key: str) -> Any:
    return holder.get(key) if isinstance(holder, dict) else None


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value) or value < 0:
        return None
    return float(value)


def _tokens(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 0 else None


def _graders(grading: Any) -> list[dict[str, str | None]] | None:
    components = _get(grading, "componentResults")
    if not isinstance(components, list) or not components:
        return None
    graders: list[dict[str, str | None]] = []
    seen: dict[str, int] = defaultdict(int)
    for component in components:
        assertion = _get(component, "assertion")
        kind = _get(assertion, "type")
        base = str(_get(assertion, "metric") or kind or "assertion")
        seen[base] += 1
        name = base if seen[base] == 1 else f"{base}#{seen[base]}"
        passed = _get(component, "pass")
        verdict = (PASSED if passed else FAILED) if isinstance(passed, bool) else UNPARSEABLE
        judge = isinstance(kind, str) and kind.removeprefix("not-") in JUDGE_ASSERTIONS
        graders.append({"name": name, "kind": "judge" if judge else "code", "verdict": verdict})
        graders[-1]["calibration_version"] = None
    return graders


def _case_ids(rows: list[Any]) -> list[str | None]:
    """A stable case id per row: its description when that names one ``vars``, else description + vars digest."""
    keys: list[tuple[str, str] | None] = []
    for row in rows:
        test = _get(row, "testCase")
        description = _get(test, "description")
        variables = _get(test, "vars") if _get(test, "vars") is not None else _get(row, "vars")
        try:
            text = canonical_json(variables if variables is not None else {})
        except (TypeError, ValueError):
            keys.append(None)
            continue
        keys.append((description if isinstance(description, str) and description else "", text))
    variants: dict[str, set[str]] = defaultdict(set)
    for key in keys:
        if key is not None:
            variants[key[0]].add(key[1])
    ids: list[str | None] = []
    for key in keys:
        if key is None:
            ids.append(None)
        elif key[0] and len(variants[key[0]]) == 1:
            ids.append(key[0])
        else:
            digest = hashlib.sha256(key[1].encode()).hexdigest()[:8]
            ids.append(f"{key[0] or 'test'} [vars {digest}]")
    return ids


def _provider(row: Mapping[str, object]) -> tuple[str | None, str | None]:
    provider = row.get("provider")
    if isinstance(provider, str):
        return provider, provider
    label, ident = _get(provider, "label"), _get(provider, "id")
    ident = ident if isinstance(ident, str) and ident else None
    return (label if isinstance(label, str) and label else ident), ident


def _prompt(row: Mapping[str, object]) -> str | None:
    prompt = row.get("prompt")
    label = _get(prompt, "label")
    if isinstance(label, str) and label:
        return label
    ident = row.get("promptId")
    return ident[:12] if isinstance(ident, str) and ident else None


def _row(row: Any, case_id: str | None, problem: Callable[[str, str], None]) -> JSONObject | None:
    """One result row as record fields, or None after reporting why it cannot be read."""
    if not isinstance(row, dict):
        problem("<row>", f"expected an object (got {describe(row)})")
        return None
    system, model = _provider(row)
    if system is None:
        problem("provider", f"expected a provider id or label (got {describe(row.get('provider'))})")
    if case_id is None:
        problem("testCase.vars", "the test's vars cannot be written as JSON")
    index = row.get("testIdx")
    if isinstance(index, bool) or not isinstance(index, int) or index < 0:
        problem("testIdx", f"expected a non-negative integer (got {describe(index)})")
    success, reason = row.get("success"), row.get("failureReason", 0 if row.get("success") is True else 1)
    if not isinstance(success, bool):
        problem("success", f"expected true or false (got {describe(success)})")
    if reason not in _FAILURE_REASONS or isinstance(reason, bool):
        problem("failureReason", f"expected 0 (none), 1 (assert) or 2 (error) (got {describe(reason)})")
    elif success is True and reason != 0:
        problem("failureReason", f"a successful row has failureReason 0 (got {describe(reason)})")
    if system is None or case_id is None or not isinstance(index, int) or not isinstance(success, bool):
        return None
    error = reason == 2
    usage = row.get("tokenUsage")
    message = row.get("error") or _get(row.get("gradingResult"), "reason")
    latency = _number(row.get("latencyMs"))
    return {
        "system": system,
        "model_id": model,
        "prompt_version": _prompt(row),
        "case_id": case_id,
        "test_index": index,
        "outcome": INFRA_ERROR if error else PASSED if success else FAILED,
        "failed_check": None if success else shorten(f"promptfoo {_FAILURE_REASONS[reason]}: {message}", TEXT_LIMIT),
        "graders": None if error else _graders(row.get("gradingResult")),
        "cost_model_usd": None if error else _number(row.get("cost")),
        "tokens_input": None if error else _tokens(_get(usage, "prompt")),
        "tokens_output": None if error else _tokens(_get(usage, "completion")),
        "machine_seconds": None if latency is None else latency / 1000,
    }


def _results(file: Path, document: Any) -> tuple[list[Any], str]:
    """The result rows and promptfoo's version; an unknown format version is an error."""
    results = _get(document, "results")
    if not isinstance(results, dict):
        msg = f"expected promptfoo's output object with a 'results' object (got {describe(results)})"
        raise RecordFileError.single(file, "results", msg)
    version = results.get("version")
    if version not in FORMAT_VERSIONS or isinstance(version, bool):
        known = ", ".join(map(str, FORMAT_VERSIONS))
        msg = f"promptfoo results format version {describe(version)} is not supported (known: {known})"
        raise RecordFileError.single(file, "results.version", msg)
    rows = results.get("results")
    if not isinstance(rows, list):
        raise RecordFileError.single(file, "results.results", f"expected a list (got {describe(rows)})")
    if not rows:
        msg = "the results hold no rows (promptfoo exits 0 on an empty run: was any test run?)"
        raise RecordFileError.single(file, "results.results", msg)
    tool = _get(_get(document, "metadata"), "promptfooVersion")
    return rows, tool if isinstance(tool, str) else "unknown"


def import_promptfoo(
    path: str | Path,
    *,
    system: str | None = None,
    run_set_id: str | None = None,
) -> pl.DataFrame:
    """Read a promptfoo ``results.json`` (format version 3) into validated run records, one per row.

    A test is a case and its repeats are trials; an errored row is an ``infra_error``, and each
    assertion is a grader.

    Parameters
    ----------
    path
        The file ``promptfoo eval -o results.json`` wrote.
    system
        System label for every record (only for a file with one provider and one prompt); default:
        the provider's label (and the prompt's, when the file holds several).
    run_set_id
        Default ``import-<first 12 hex of the file's sha256>``.

    Returns
    -------
    polars.DataFrame
        The validated records, one per result row; the repeats of a test are its trials 0, 1, ...

    Raises
    ------
    RecordFileError
        Not JSON, an unknown format version, no rows, or rows with missing or mistyped fields
        (named by ``results.results[i]`` and field); nothing is returned.
    """
    file = Path(path)
    document = decode_tool_json(
        read_regular_file(file, limit=MAX_LOG_BYTES, what="promptfoo results"), source=str(file)
    )
    rows, tool = _results(file, document)
    problems = ProblemList()
    read: list[JSONObject] = []
    for index, (row, case_id) in enumerate(zip(rows, _case_ids(rows), strict=True)):

        def problem(field: str, message: str, index: int = index) -> None:
            problems.add(RecordProblem(file=str(file), field=f"results.results[{index}].{field}", message=message))

        if (item := _row(row, case_id, problem)) is not None:
            read.append(item)
    problems.raise_if_any()
    prompts = {item["prompt_version"] for item in read}
    frame = pl.DataFrame(read, schema=_COLUMNS, orient="row")
    if len(prompts) > 1:
        frame = frame.with_columns(system=pl.col("system") + " | " + pl.col("prompt_version").fill_null("?"))
    if system is not None:
        if frame["system"].n_unique() > 1:
            msg = f"--system labels one system, but the file holds {frame['system'].n_unique()} providers/prompts"
            raise RecordFileError.single(file, "results.results", msg)
        frame = frame.with_columns(system=pl.lit(system))
    frame = frame.sort("system", "case_id", "test_index").with_columns(
        trial=pl.int_range(pl.len(), dtype=pl.Int64).over("system", "case_id")
    )
    return imported_records(
        frame.drop("test_index"),
        files=file,
        command="promptfoo",
        run_set_id=run_set_id,
        tool=f"promptfoo {tool}, results format 3",
    )
