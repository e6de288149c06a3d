"""``gatestats import table|tau-bench|inspect|promptfoo|swe-bench``: other harnesses' results in, records out."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console

from gatestats.cli._common import reports_errors, usage_error
from gatestats.cli._where import WhereOption, checked_where

if TYPE_CHECKING:
    import polars as pl

    from gatestats.gate import Policy

__all__ = ["app"]

app = typer.Typer(help="Import trial outcomes from other tools as run records (JSONL).", no_args_is_help=True)

Output = Annotated[
    Path | None, typer.Option("--output", "-o", help="Record file to write (.jsonl); never overwritten.")
]
RunSet = Annotated[
    Path | None,
    typer.Option("--run-set", help="Write a run set directory (manifest + records) instead, for `gatestats gate`."),
]
RunSetId = Annotated[str | None, typer.Option(help="Run-set id (default: from the file's digest).")]
PolicyOption = Annotated[
    Path | None,
    typer.Option("--policy", help="Gate policy to register in the run set at import (with --run-set)."),
]


@dataclass(frozen=True, slots=True)
class _Imported:
    """What an import command read: the records, and the file named as their source in a run set."""

    records: pl.DataFrame
    source: Path


def _imports(command: Callable[..., _Imported]) -> Callable[..., None]:
    """Give an import command the options of where its records go: ``--output``, ``--run-set``, ``--policy``,
    ``--where``.

    The command typer registers takes ``command``'s parameters with ``--output`` after the required
    ones and the other two last. It checks those options (and loads the policy) before ``command``
    reads anything, writes what it read (the records ``--where`` keeps), and reports errors as
    :func:`~gatestats.cli._common.reports_errors` does.

    Parameters
    ----------
    command
        Reads the records from its own parameters.
    """
    own = list(inspect.signature(command, eval_str=True).parameters.values())
    required = sum(p.default is inspect.Parameter.empty for p in own)
    added = {
        name: inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None, annotation=kind)
        for name, kind in (("output", Output), ("run_set", RunSet), ("policy", PolicyOption), ("where", WhereOption))
    }
    params = [*own[:required], added["output"], *own[required:], added["run_set"], added["policy"], added["where"]]

    @functools.wraps(command)
    def run(
        *,
        output: Path | None = None,
        run_set: Path | None = None,
        policy: Path | None = None,
        where: list[str] | None = None,
        **given: object,
    ) -> None:
        loaded = _target(output, run_set, policy)
        checked_where(where)
        imported = command(**given)
        _written(_kept(imported, where), output, run_set, loaded, imported.source)

    run.__signature__ = inspect.Signature([p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in params])  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in params} | {"return": None}
    return reports_errors(run)


def _kept(imported: _Imported, where: list[str] | None) -> pl.DataFrame:
    """The imported records every ``--where`` keeps (all of them without one), the count said on stderr."""
    if not where:
        return imported.records
    from gatestats.records.where import apply_where

    kept = apply_where(imported.records, where, source=str(imported.source))
    Console(emoji=False, stderr=True).print(kept.message, highlight=False)
    return kept.records


def _target(output: Path | None, run_set: Path | None, policy: Path | None) -> Policy | None:
    if (output is None) == (run_set is None):
        raise usage_error("give exactly one of --output FILE and --run-set DIR")
    if policy is not None and run_set is None:
        raise usage_error("--policy registers a policy in a run set: it needs --run-set DIR")
    if policy is None:
        return None
    from gatestats.gate import PolicyError, load_policy

    try:
        return load_policy(policy)
    except PolicyError as exc:
        raise usage_error(str(exc)) from None


def _written(
    records: pl.DataFrame, output: Path | None, run_set: Path | None, policy: Policy | None, source: Path
) -> None:
    from gatestats.records import write_imported_run_set, write_records_jsonl

    if run_set is not None:
        path = write_imported_run_set(records, run_set, policy=policy, source=str(source))
    else:
        assert output is not None  # checked by _target
        path = write_records_jsonl(records, output)
    Console(emoji=False, stderr=True).print(_summary(records, path), highlight=False)


def _summary(records: pl.DataFrame, path: Path) -> str:
    """Records, distinct systems, distinct case ids (a case run by 25 systems is one case) and trials per pair."""
    import polars as pl

    systems = records["system"].n_unique()
    cases = records["case_id"].n_unique()
    versions = records.select("case_id", "case_version").unique().height
    trials = records.group_by("system", "case_id", "case_version").agg(pl.col("trial").n_unique())["trial"]
    counts: list[int] = sorted(set(trials.to_list())) or [0]
    low, high = counts[0], counts[-1]
    text = f"wrote {records.height} records ({systems} system(s), {cases} case(s)) to {path}: "
    text += f"{trials.len()} system-case pair(s) with {low if low == high else f'{low} to {high}'} trial(s) each"
    if versions > cases:
        text += f"; {versions} (case, case_version) pairs: some cases come in several versions"
    if records["source"].str.contains("; trial label ", literal=True).any():
        text += "; trial labels numbered per system and case in natural order (each record's source names its label)"
    return text


def _calibrations(items: list[str] | None) -> dict[str, str]:
    """``--calibration NAME=VERSION`` (repeatable) as judge name -> calibration version."""
    found: dict[str, str] = {}
    for item in items or []:
        name, sep, version = (part.strip() for part in item.partition("="))
        if not sep or not name or not version:
            raise usage_error(f"--calibration: expected JUDGE=VERSION (got {item!r})")
        if name in found:
            raise usage_error(f"--calibration: judge {name!r} is given twice")
        found[name] = version
    return found


@app.command("table")
@_imports
def table_command(
    file: Annotated[Path, typer.Argument(help="Table of trial outcomes: .csv, .jsonl or .parquet.")],
    mapping: Annotated[
        str,
        typer.Option(
            "--map",
            help=(
                "Record field = table column, comma-separated: "
                "case_id=COL,outcome=COL[,system=COL,trial=COL|trial_label=COL,slices=COL,"
                "grader:NAME=COL,judge:NAME=COL,graders=COL,cost_usd=COL,...]."
            ),
        ),
    ],
    system: Annotated[str | None, typer.Option(help="System label for every row (instead of system=COL).")] = None,
    calibration: Annotated[
        list[str] | None,
        typer.Option(help="JUDGE=VERSION: calibration version of a judge:JUDGE column's verdicts (repeatable)."),
    ] = None,
    run_set_id: RunSetId = None,
) -> _Imported:
    """Import any table. Outcomes 1/0, true/false, pass/fail, passed/failed; no trial column = one trial per case.

    \f
    Parameters
    ----------
    file, mapping, system, calibration, run_set_id
        The table, its columns for the record fields and graders, and the labels of the records.

    Returns
    -------
    _Imported
        The records, for :func:`_imports` to write (as every import command's).
    """
    from gatestats.importers import import_table, parse_mapping

    records = import_table(
        file, parse_mapping(mapping), system=system, calibrations=_calibrations(calibration), run_set_id=run_set_id
    )
    return _Imported(records, file)


@app.command("tau-bench")
@_imports
def tau_bench_command(
    file: Annotated[Path, typer.Argument(help="τ-bench results (JSON list) or τ²-bench results file.")],
    system: Annotated[str | None, typer.Option(help="System label (default: the file name).")] = None,
    model_id: Annotated[str | None, typer.Option(help="Model id to record (τ-bench files lack it).")] = None,
    run_set_id: RunSetId = None,
) -> _Imported:
    """Import τ-bench results: success = reward within 1e-6 of 1; costs from info where present.

    \f
    Parameters and return as for :func:`table_command`, the options those of
    :func:`gatestats.importers.import_tau_bench`.
    """
    from gatestats.importers import import_tau_bench

    return _Imported(import_tau_bench(file, system=system, model_id=model_id, run_set_id=run_set_id), file)


@app.command("inspect")
@_imports
def inspect_command(
    logs: Annotated[list[Path], typer.Argument(help="Inspect AI logs: .eval archives or .json logs.")],
    scorer: Annotated[
        str | None, typer.Option(help="Scorer whose value is the outcome (default: the log's first scorer).")
    ] = None,
    value: Annotated[
        str | None,
        typer.Option("--value", help="Score values to outcomes, e.g. P=passed (default C passes; I, P, N fail)."),
    ] = None,
    threshold: Annotated[float, typer.Option(help="A numeric score passes when >= this.")] = 1.0,
    judge: Annotated[list[str] | None, typer.Option(help="Scorer recorded as a judge grader (repeatable).")] = None,
    system: Annotated[str | None, typer.Option(help="System label (default: the log's model).")] = None,
    run_set_id: RunSetId = None,
) -> _Imported:
    """Import Inspect AI logs: sample = case, epoch = trial, errored samples = infra_error, limits = resource_killed.

    \f
    As :func:`table_command`; ``--value`` is parsed by :func:`gatestats.importers.inspect_ai.parse_values`
    (a usage error when malformed), the rest goes to :func:`gatestats.importers.import_inspect`.
    """
    from gatestats.importers import import_inspect
    from gatestats.importers.inspect_ai import parse_values

    try:
        values = None if value is None else parse_values(value)
    except ValueError as exc:
        raise usage_error(str(exc)) from None
    records = import_inspect(
        logs,
        scorer=scorer,
        values=values,
        threshold=threshold,
        judges=judge or (),
        system=system,
        run_set_id=run_set_id,
    )
    return _Imported(records, logs[0])


@app.command("promptfoo")
@_imports
def promptfoo_command(
    file: Annotated[Path, typer.Argument(help="promptfoo results (promptfoo eval -o results.json).")],
    system: Annotated[str | None, typer.Option(help="System label (one provider only; default: its label).")] = None,
    run_set_id: RunSetId = None,
) -> _Imported:
    """Import promptfoo results: test = case, repeats = trials, errors = infra_error, assertions = graders.

    \f
    The results file and the record labels, read by :func:`gatestats.importers.import_promptfoo`.
    """
    from gatestats.importers import import_promptfoo

    return _Imported(import_promptfoo(file, system=system, run_set_id=run_set_id), file)


@app.command("swe-bench")
@_imports
def swe_bench_command(
    summaries: Annotated[
        list[Path], typer.Argument(help="SWE-bench run summaries <model>.<run_id>.json, one per run.")
    ],
    logs: Annotated[
        list[Path] | None,
        typer.Option(help="Each run's logs/run_evaluation/<run_id>/<model> directory (repeat, in order)."),
    ] = None,
    costs: Annotated[Path | None, typer.Option(help="Table of instance_id, trial, cost_usd.")] = None,
    system: Annotated[
        str | None, typer.Option(help="System label (default: the file name up to its first '.').")
    ] = None,
    run_set_id: RunSetId = None,
    trust_infra_failures: Annotated[
        bool,
        typer.Option(
            "--trust-infra-failures",
            help="Record the harness's infra_failure_ids as infra_error (default: failed, with the reason).",
        ),
    ] = False,
) -> _Imported:
    """Import SWE-bench harness results: run = trial, error_ids/incomplete_ids = infra_error, empty patch = failed.

    \f
    Run summaries, their report directories and a cost table for
    :func:`gatestats.importers.import_swe_bench`, after a check of one directory per summary.
    """
    if logs is not None and len(logs) != len(summaries):
        raise usage_error(f"--logs: give one directory per run summary ({len(summaries)}), got {len(logs)}")
    from gatestats.importers import import_swe_bench

    records = import_swe_bench(
        summaries,
        logs=logs,
        costs=costs,
        system=system,
        run_set_id=run_set_id,
        trust_infra_failures=trust_infra_failures,
    )
    return _Imported(records, summaries[0])
