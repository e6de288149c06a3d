"""``gatestats analyze``: pass^k and pass@k per system, with intervals and the counts behind them."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, cast, get_args

import typer

from gatestats.cli._common import (
    BootstrapSeedOption,
    ConfidenceLevelOption,
    RecordFilesArgument,
    ResamplesOption,
    checked_bootstrap_options,
    checked_option,
    reports_errors,
)
from gatestats.cli._plot import PlotOption, write_plot
from gatestats.cli._publish import FormatOption, LabelOption, LabelsFileOption, OutputOption, checked_publishing, emit
from gatestats.cli._where import WhereOption, checked_where, where_records
from gatestats.vocabulary import IntervalMethod, check_choice, metric_spec

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from gatestats.estimators import Analysis, MetricEstimate, SystemAnalysis
    from gatestats.publish.labels import Labels

__all__ = [
    "WhereOption",
    "analysis_columns",
    "analyze_command",
    "checked_where",
    "parse_ks",
    "render_analysis",
    "where_records",
]


def parse_ks(text: str) -> list[int]:
    """Parse ``1,2,4`` or ``1-4`` (or a mix) into sorted distinct k values.

    Parameters
    ----------
    text
        The ``--k`` option's value: comma-separated integers and ``low-high`` ranges.

    Returns
    -------
    list of int
        The k values, sorted, each once.

    Raises
    ------
    ValueError
        Not integers or ranges, or a k below 1 (the message starts with ``--k:``).

    Examples
    --------
    >>> parse_ks("1,2,4")
    [1, 2, 4]
    >>> parse_ks("1-3,8")
    [1, 2, 3, 8]
    """
    values: set[int] = set()
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        low, sep, high = part.partition("-")
        try:
            if sep:
                start, stop = int(low), int(high)
                if start > stop:
                    raise ValueError
                values.update(range(start, stop + 1))
            else:
                values.add(int(part))
        except ValueError:
            msg = f"--k: expected comma-separated integers or ranges like 1-4 (got {part!r})"
            raise ValueError(msg) from None
    if not values or min(values) < 1:
        msg = f"--k: every k must be an integer >= 1 (got {text!r})"
        raise ValueError(msg)
    return sorted(values)


def _counts(e: MetricEstimate) -> str:
    if e.numerator is None:
        return "—"
    numerator = f"({e.numerator})" if "/" in e.numerator else e.numerator
    return f"{numerator}/{e.denominator}"


def _cell(e: MetricEstimate) -> tuple[str, str]:
    if e.status != "ok" or e.estimate is None or e.ci_low is None or e.ci_high is None:
        return "insufficient evidence", _counts(e)
    return f"{e.estimate:.3f} [{e.ci_low:.3f}, {e.ci_high:.3f}]", _counts(e)


def _system_table(result: Analysis, system: SystemAnalysis, name: str) -> Table:
    from rich.table import Table
    from rich.text import Text

    from gatestats.estimators import METRICS
    from gatestats.estimators.published import system_counts

    level = f"{result.confidence_level:.0%}"
    table = Table(
        title=Text(system_counts(system, name)), title_justify="left"
    )  # a system name or label is never markup
    table.add_column("k", justify="right")
    for label in (metric_spec(metric).short.format(k="k") for metric in METRICS):
        table.add_column(f"{label} [{level} CI]", justify="right", no_wrap=True)
        table.add_column("sum/cases", justify="right", no_wrap=True)
    table.add_column("interval")
    for k in result.ks:
        hat, at = system.get("pass_hat_k", k), system.get("pass_at_k", k)
        methods = {m for m in (hat.method, at.method) if m}
        table.add_row(str(k), *_cell(hat), *_cell(at), ", ".join(sorted(methods)) or "—")
    return table


def render_analysis(result: Analysis, console: Console, *, labels: Labels | None = None) -> None:
    """Print the human-readable tables of an analysis.

    Parameters
    ----------
    result
        The analysis to show: one table per system.
    console
        Where to print.
    labels
        Display names of the systems (None: their names).
    """
    from gatestats.estimators.published import method_note, system_notes

    for system in result.systems:
        name = labels(system.system) if labels else system.system
        console.print(_system_table(result, system, name))
        for note in system_notes(system, name):
            console.print(f"  {note}", highlight=False, markup=False)
        console.print()
    console.print(f"  {method_note(result)}", highlight=False, markup=False)


def analysis_columns(by: str) -> tuple[str, ...] | None:
    """The record columns ``gatestats analyze --by BY`` reads, for ``load_records(columns=...)``.

    Every record is still checked on every column; only these are kept in memory:
    :data:`gatestats.estimators.ANALYSIS_COLUMNS`, and ``by`` when it names another column.

    Parameters
    ----------
    by
        The ``--by`` option: the record column that names the system.

    Returns
    -------
    tuple of str or None
        The columns; ``None`` (every column) when ``by`` is not a field of the contract, so that
        the analysis refuses it with the list of every column, exactly as it always has.

    Examples
    --------
    >>> analysis_columns("system")
    ('system', 'case_id', 'case_version', 'case_group', 'trial', 'attempt', 'outcome')
    >>> analysis_columns("model_id")[-1], analysis_columns("model")
    ('model_id', None)
    """
    from gatestats.estimators import ANALYSIS_COLUMNS
    from gatestats.records.contract import POLARS_SCHEMA

    if by not in POLARS_SCHEMA:
        return None
    return tuple(dict.fromkeys((*ANALYSIS_COLUMNS, by)))


@reports_errors
def analyze_command(
    records: RecordFilesArgument,
    k: Annotated[str, typer.Option("--k", help="k values: 1,2,4 or 1-4.")] = "1",
    by: Annotated[str, typer.Option(help="Record column that names the system.")] = "system",
    confidence_level: ConfidenceLevelOption = 0.95,
    method: Annotated[str, typer.Option(help="Interval method: auto, bootstrap, clt or wilson.")] = "auto",
    n_resamples: ResamplesOption = 2000,
    seed: BootstrapSeedOption = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of tables.")] = False,
    where: WhereOption = None,
    fmt: FormatOption = "terminal",
    output: OutputOption = None,
    label: LabelOption = None,
    labels: LabelsFileOption = None,
    plot: PlotOption = None,
) -> None:
    """pass^k (all k trials pass) and pass@k (at least one passes) per system, case-level intervals.

    \f
    Parameters
    ----------
    records
        Record files.
    k
        The k values, e.g. ``1,2,4`` or ``1-4``.
    by, confidence_level, method, n_resamples, seed
        As in :func:`gatestats.estimators.analyze`.
    as_json, where
        Print the JSON object instead of the tables; ``--where`` filters (all must hold), applied first.
    fmt, output, label, labels
        The publishing options of :mod:`gatestats.cli._publish`.
    plot
        Also write the pass@k / pass^k curves with their intervals to this ``.svg``, ``.png`` or ``.html``.

    Raises
    ------
    typer.BadParameter
        An invalid option (exit 2).
    """
    chosen = cast(IntervalMethod, checked_option(check_choice, method, "--method", get_args(IntervalMethod)))
    checked_bootstrap_options(confidence_level, n_resamples, seed)
    try:
        ks = parse_ks(k)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix("--k: "), param_hint="--k") from None
    checked_where(where)
    publishing = checked_publishing(
        fmt=fmt, as_json=as_json, output=output, label=label, labels_file=labels, inputs=records
    )
    from gatestats.estimators import analyze  # after the options are checked: a usage error stays fast

    result = analyze(
        where_records(records, where, columns=analysis_columns(by)),
        ks=ks,
        by=by,
        confidence_level=confidence_level,
        method=chosen,
        n_resamples=n_resamples,
        seed=seed,
    )
    emit(
        publishing,
        table=result.table,
        payload=lambda: {**result.to_dict(), "records": [str(p) for p in records]},
        terminal=functools.partial(render_analysis, result, labels=publishing.labels),
    )
    write_plot(plot, result.plot, records)
