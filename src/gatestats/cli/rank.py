"""``gatestats rank``: many systems on shared cases ranked, with rank intervals and tie groups."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, cast, get_args

import typer

from gatestats.cli._common import (
    RecordFilesArgument,
    checked_option,
    comma_separated,
    reports_errors,
)
from gatestats.cli._plot import PlotOption, write_plot
from gatestats.cli._publish import FormatOption, LabelOption, LabelsFileOption, OutputOption, checked_publishing, emit
from gatestats.cli._where import WhereOption, checked_where, paired_columns, where_records
from gatestats.publish.labels import Labels
from gatestats.vocabulary import (
    RANK_CORRECTIONS,
    Correction,
    Metric,
    PairedTest,
    check_choice,
    check_confidence_level,
    check_n_resamples,
    check_seed,
)

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from gatestats.paired.rank import Ranking

__all__ = ["rank_command", "render_ranking"]


def _name(text: str) -> Text:
    """A system name as plain text: no rich markup, control characters shown escaped."""
    from rich.text import Text

    shown = "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)
    return Text(shown)


def render_ranking(result: Ranking, console: Console, *, labels: Labels | None = None) -> None:
    """Print the ranking: one row per system, best first, with its rank interval and tie group.

    Parameters
    ----------
    result
        The ranking.
    console
        Where to print.
    labels
        Display names of the systems (None: their ids).
    """
    from rich.table import Table

    shown = labels or Labels()
    level = f"{result.confidence_level:.0%}"
    tests = sorted({x.test for x in result.comparisons.comparisons})
    title = (
        f"{len(result.ranks)} systems ranked on the {result.n_cases} cases all of them ran "
        f"({result.metric} at k={result.k}); pairwise {'/'.join(tests)} tests, "
        f"{result.correction}-adjusted at alpha = {result.alpha:g}"
    )
    table = Table(title=title, title_justify="left")
    for name in ("group", "rank", f"rank interval ({level} joint)", "system", "estimate", "beats", "beaten by"):
        table.add_column(name, justify="left" if name == "system" else "right")
    for x in result.ranks:
        table.add_row(
            str(x.group),
            "—" if x.rank is None else f"{x.rank:g}",
            f"[{x.rank_low}, {x.rank_high}]",
            _name(shown(x.system)),
            "—" if x.estimate is None else f"{x.estimate:.4f}",
            str(len(x.better_than)),
            str(len(x.worse_than)),
        )
    console.print(table)
    console.print(
        f"  The rank intervals hold for all systems together with probability >= {level} when the pairwise "
        "decisions do (docs/paired.md, Ranks); systems in different groups differ significantly.",
        highlight=False,
    )
    if result.n_excluded_cases:
        console.print(f"  {result.n_excluded_cases} case(s) not run by every system were left out.", highlight=False)
    for pair in result.comparisons.comparisons:
        if pair.status != "ok":
            why = f"{pair.candidate} vs {pair.baseline}: {pair.status.replace('_', ' ')} ({pair.reason})"
            console.print("  ", _name(why), sep="")


_Systems = Annotated[str | None, typer.Option(help="Rank only these systems (comma-separated; default: all).")]
_Correction = Annotated[
    str, typer.Option(help=f"Multiplicity correction of the pairwise tests: {', '.join(RANK_CORRECTIONS)}.")
]
_Test = Annotated[
    str, typer.Option(help="Pairwise test: auto (mid-p with one trial per case), midp, exact, permutation.")
]
_Metric = Annotated[str, typer.Option(help="Per-case metric with several trials: pass_hat_k, pass_at_k.")]
_SharedVersions = Annotated[
    bool, typer.Option("--shared-versions-only", help="Compare only case versions both systems ran (others listed).")
]


def _checked_test_options(test: str, metric: str, n_permutations: int, seed: int) -> dict[str, object]:
    """``--test``, ``--metric``, ``--n-permutations`` and ``--seed``, checked (the last two only with permutations)."""
    options: dict[str, object] = {
        "test": cast("PairedTest", checked_option(check_choice, test, "--test", get_args(PairedTest))),
        "metric": cast("Metric", checked_option(check_choice, metric, "--metric", get_args(Metric))),
        "n_permutations": checked_option(check_n_resamples, n_permutations, "--n-permutations", minimum=99),
        "seed": checked_option(check_seed, seed, "--seed"),
    }
    for hint, given in (("--n-permutations", n_permutations != 9999), ("--seed", seed != 0)):
        if given and test != "permutation":
            msg = "means nothing here: only --test permutation draws permutations"
            raise typer.BadParameter(msg, param_hint=hint)
    return options


@reports_errors
def rank_command(
    records: RecordFilesArgument,
    systems: _Systems = None,
    correction: _Correction = "holm",
    confidence_level: Annotated[
        float, typer.Option(help="Joint level of the rank intervals; tests use 1 − level.")
    ] = 0.95,
    test: _Test = "auto",
    metric: _Metric = "pass_hat_k",
    k: Annotated[int, typer.Option("--k", help="k of the per-case metric (1: the pass rate).")] = 1,
    shared_versions_only: _SharedVersions = False,
    by: Annotated[str, typer.Option(help="Record column that names the system.")] = "system",
    n_permutations: Annotated[int, typer.Option(help="Monte Carlo permutations (test=permutation).")] = 9999,
    seed: Annotated[int, typer.Option(help="Seed of the permutations (test=permutation; recorded).")] = 0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of the table.")] = False,
    where: WhereOption = None,
    fmt: FormatOption = "terminal",
    output: OutputOption = None,
    label: LabelOption = None,
    labels: LabelsFileOption = None,
    plot: PlotOption = None,
) -> None:
    """Rank systems on the cases all of them ran: rank intervals and tie groups from adjusted pairwise tests.

    \f
    Parameters
    ----------
    records
        The record files.
    systems, correction, confidence_level, test, metric, k, shared_versions_only, by
        The options of :func:`gatestats.paired.rank.rank_systems` (``by``: its ``system_column``); the
        interval options of ``compare`` are not offered: no interval enters a rank.
    n_permutations, seed
        Monte Carlo permutations (``--test permutation``) and their seed.
    as_json, where
        Print JSON instead of the table; ``--where`` filters (all must hold), applied before any statistic.
    fmt, output, label, labels, plot
        The publishing options of :mod:`gatestats.cli._publish`; ``--plot`` also writes the rank intervals chart.

    Raises
    ------
    typer.BadParameter
        A usage error (exit 2): an option outside its domain.
    """
    chosen = cast("Correction", checked_option(check_choice, correction, "--correction", RANK_CORRECTIONS))
    level = checked_option(check_confidence_level, confidence_level, "--confidence-level")
    if k < 1:
        raise typer.BadParameter(f"must be an integer >= 1 (got {k})", param_hint="--k")
    options = _checked_test_options(test, metric, n_permutations, seed)
    names = None if systems is None else comma_separated(systems)
    checked_where(where)
    publishing = checked_publishing(
        fmt=fmt, as_json=as_json, output=output, label=label, labels_file=labels, inputs=records
    )
    from gatestats.paired.rank import rank_systems  # after the options are checked: a usage error stays fast

    frame = where_records(records, where, columns=paired_columns(by))
    result = rank_systems(
        frame,
        systems=names,
        correction=chosen,
        confidence_level=level,
        k=k,
        shared_versions_only=shared_versions_only,
        system_column=by,
        **options,  # type: ignore[arg-type]
    )
    emit(
        publishing,
        table=result.table,
        payload=lambda: {**result.to_dict(), "records": [str(p) for p in records]},
        terminal=functools.partial(render_ranking, result, labels=publishing.labels),
    )
    write_plot(plot, lambda: result.plot(publishing.labels), records)
