"""``gatestats compare``: paired comparison of a candidate against a baseline, or of many systems."""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Annotated, TypedDict, cast, get_args

import typer

from gatestats.cli._common import (
    RecordFilesArgument,
    ResamplesOption,
    checked_option,
    comma_separated,
    reports_errors,
)
from gatestats.cli._plot import PlotOption, write_plot
from gatestats.cli._publish import (
    FormatOption,
    LabelOption,
    LabelsFileOption,
    OutputOption,
    Publishing,
    checked_publishing,
    emit,
)
from gatestats.cli._where import WhereOption, checked_where, paired_columns, where_records
from gatestats.vocabulary import (
    CORRECTIONS,
    Alternative,
    ComparisonFamily,
    Correction,
    Metric,
    PairedIntervalMethod,
    PairedTest,
    check_choice,
    check_confidence_level,
    check_n_resamples,
    check_seed,
)

if TYPE_CHECKING:
    from pathlib import Path

    import polars as pl
    from rich.console import Console

    from gatestats.paired import Comparison, MultipleComparison
    from gatestats.publish.labels import Labels

__all__ = ["compare_command", "render_comparison", "render_many"]


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}f}"


def _p(value: float | None) -> str:
    if value is None:
        return "—"
    return f"{value:.3g}" if value < 0.001 else f"{value:.4f}"


def _cases(labels: tuple[str, ...], show: int) -> str:
    if not labels:
        return "none"
    head = ", ".join(labels[:show])
    return head + (f" ... and {len(labels) - show} more" if len(labels) > show else "")


def render_comparison(result: Comparison, console: Console, *, show: int = 20, labels: Labels | None = None) -> None:
    """Print one comparison: the table, the tests, the interval, the decision, flips and what was not paired.

    Parameters
    ----------
    result
        The comparison.
    console
        Where to print.
    show
        Case ids shown per list.
    labels
        Display names of the two systems (None: their ids).
    """
    from gatestats.paired.published import decision, family_alpha, pvalue_header
    from gatestats.publish.labels import Labels

    name = labels or Labels()
    level = f"{result.confidence_level:.0%}"
    unit = "case groups" if result.clustered else "cases"
    design = (
        "one trial per case"
        if result.design == "one_trial"
        else f"several trials per case ({result.metric} at k={result.k})"
    )
    title = (
        f"{name(result.candidate)} (candidate) vs {name(result.baseline)} (baseline): "
        f"{result.n_pairs} paired cases, {design}"
    )
    from rich.table import Table
    from rich.text import Text

    table = Table(title=Text(title), title_justify="left", show_header=False)  # a name or label is never markup
    table.add_column("what")
    table.add_column("value")
    if result.design == "one_trial":
        table.add_row("both passed (a)", str(result.a))
        table.add_row("baseline only: pass → fail (b)", str(result.b))
        table.add_row("candidate only: fail → pass (c)", str(result.c))
        table.add_row("both failed (d)", str(result.d))
    else:
        table.add_row("baseline better (b)", str(result.b))
        table.add_row("candidate better (c)", str(result.c))
        table.add_row("no difference", str(result.n_ties))
    table.add_row("pass rate: baseline / candidate", f"{_fmt(result.p_baseline)} / {_fmt(result.p_candidate)}")
    if result.diff is not None:
        method = result.interval.method or "none"
        ci = (
            f"[{_fmt(result.diff_ci_low)}, {_fmt(result.diff_ci_high)}] ({level}, {method})"
            if result.interval.status == "ok"
            else f"no interval: {result.interval.reason}"
        )
        table.add_row("difference candidate − baseline", f"{result.diff:+.4f} {ci}")
    tests = f"exact {_p(result.pvalue_exact)}, mid-p {_p(result.pvalue_midp)}"
    if result.pvalue_permutation is not None:
        tests += f", permutation {_p(result.pvalue_permutation)}"
    table.add_row(f"p-values ({result.alternative}; {unit} as units)", tests)
    if result.pvalue_adjusted is not None:
        table.add_row(f"adjusted p ({result.correction})", _p(result.pvalue_adjusted))
    if result.odds_ratio is not None and result.odds_ratio.status == "ok":
        o = result.odds_ratio
        high = "∞" if o.upper_unbounded else _fmt(o.ci_high, 3)
        estimate = "∞" if o.estimate is None else _fmt(o.estimate, 3)
        table.add_row("conditional odds ratio c/b (exact)", f"{estimate} [{_fmt(o.ci_low, 3)}, {high}]")
    if result.noninferiority is not None:
        ni = result.noninferiority
        verdict = {True: "non-inferior", False: "not shown non-inferior", None: ni.status.replace("_", " ")}
        table.add_row(
            f"non-inferiority (margin {ni.margin:g}, {ni.method})",
            f"{verdict[ni.non_inferior]}: p = {_p(ni.pvalue)} (one-sided level {ni.alpha:g})",
        )
    alpha = family_alpha((result,))
    table.add_row(f"decision ({pvalue_header((result,), adjusted=False)} at alpha {alpha:g})", decision(result, alpha))
    console.print(table)
    _print_cases(result, console, show)


def _print_cases(result: Comparison, console: Console, show: int) -> None:
    """The reason, the flips and what was not paired, below the table of one comparison."""
    if result.reason:
        console.print(f"  {result.reason}", highlight=False)
    console.print(f"  flips pass → fail: {_cases(result.flips_pass_to_fail, show)}", highlight=False)
    console.print(f"  flips fail → pass: {_cases(result.flips_fail_to_pass, show)}", highlight=False)
    for label, items in (
        ("only the baseline ran", result.unpaired_baseline),
        ("only the candidate ran", result.unpaired_candidate),
        ("excluded (different versions)", result.excluded_versions),
    ):
        if items:
            console.print(f"  not paired, {label}: {_cases(items, show)}", highlight=False)
    console.print()


def render_many(result: MultipleComparison, console: Console, *, labels: Labels | None = None) -> None:
    """Print one row per comparison: p headed by its test, adjusted p by its correction, and the decision.

    System names are never cut: a long name folds onto more lines (``--label`` gives short ones).

    Parameters
    ----------
    result
        The comparisons, their p-values adjusted by the family's correction.
    console
        Where to print.
    labels
        Display names of the systems (None: their ids).
    """
    from gatestats.publish.formats import render

    text = render(result.table(labels), "terminal", width=console.width)
    console.print(text, end="", markup=False, highlight=False, soft_wrap=True)


# The options whose declaration does not fit on one line of the signature.
_VsBaseline = Annotated[str | None, typer.Option("--vs-baseline", help="Compare every other system against this one.")]
_Systems = Annotated[
    str | None, typer.Option(help="With --all-pairs/--vs-baseline: only these systems (comma-separated).")
]
_Margin = Annotated[
    float | None, typer.Option(help="Non-inferiority margin on the difference of pass rates, in (0, 1).")
]
_Test = Annotated[
    str,
    typer.Option(help="p-value reported as 'pvalue': auto (mid-p with one trial per case), midp, exact, permutation."),
]
_Metric = Annotated[str, typer.Option(help="Per-case metric with several trials: pass_hat_k, pass_at_k.")]
_SharedVersions = Annotated[
    bool, typer.Option("--shared-versions-only", help="Compare only case versions both systems ran (others listed).")
]


@reports_errors
def compare_command(
    records: RecordFilesArgument,
    baseline: Annotated[str | None, typer.Option(help="Baseline system (with --candidate).")] = None,
    candidate: Annotated[str | None, typer.Option(help="Candidate system (with --baseline).")] = None,
    all_pairs: Annotated[bool, typer.Option("--all-pairs", help="Compare every pair of systems.")] = False,
    vs_baseline: _VsBaseline = None,
    systems: _Systems = None,
    correction: Annotated[str, typer.Option(help=f"Multiplicity correction: {', '.join(CORRECTIONS)}.")] = "holm",
    margin: _Margin = None,
    alternative: Annotated[str, typer.Option(help="two-sided, less (candidate worse), greater.")] = "two-sided",
    confidence_level: Annotated[float, typer.Option(help="Of the interval; tests use 1 − level.")] = 0.95,
    test: _Test = "auto",
    interval: Annotated[str, typer.Option(help="auto, tango, scas, newcombe, bootstrap, clt.")] = "auto",
    metric: _Metric = "pass_hat_k",
    k: Annotated[int, typer.Option("--k", help="k of the per-case metric (1: the pass rate).")] = 1,
    shared_versions_only: _SharedVersions = False,
    by: Annotated[str, typer.Option(help="Record column that names the system.")] = "system",
    n_resamples: ResamplesOption = 2000,
    n_permutations: Annotated[int, typer.Option(help="Monte Carlo permutations (test=permutation).")] = 9999,
    seed: Annotated[int, typer.Option(help="Seed of the bootstrap and permutations (recorded).")] = 0,
    show: Annotated[int, typer.Option(help="Case ids shown per list in the tables.")] = 20,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables (--format json).")] = False,
    where: WhereOption = None,
    fmt: FormatOption = "terminal",
    output: OutputOption = None,
    label: LabelOption = None,
    labels: LabelsFileOption = None,
    plot: PlotOption = None,
) -> None:
    """Paired comparison on shared cases: flips, exact and mid-p McNemar, interval, non-inferiority.

    \f
    Parameters
    ----------
    records
        The record files.
    baseline, candidate
        One comparison of these two systems.
    all_pairs, vs_baseline, systems, correction
        Many comparisons instead: every pair, or each system against ``vs_baseline`` (among
        ``systems`` when given), with p-values adjusted by ``correction``.
    margin, alternative, confidence_level, test, interval, metric, k, shared_versions_only, by
        The options of :func:`gatestats.paired.compare` (``by``: its ``system_column``).
    n_resamples, n_permutations, seed, show
        Bootstrap resamples, Monte Carlo permutations and their seed; case ids shown per list.
    as_json, where, fmt, output, label, labels, plot
        ``--json`` (``--format json``), ``--where`` filters (all must hold, applied before any statistic)
        and the publishing options of :mod:`gatestats.cli._publish`; ``--plot`` also writes a forest plot.

    Raises
    ------
    typer.BadParameter
        A usage error (exit 2): the modes mixed, an option outside its domain.
    """
    single = _check_mode(baseline, candidate, all_pairs=all_pairs, vs_baseline=vs_baseline)
    options = _options(
        margin=margin,
        alternative=alternative,
        confidence_level=confidence_level,
        test=test,
        interval=interval,
        metric=metric,
        k=k,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        seed=seed,
        shared_versions_only=shared_versions_only,
        system_column=by,
    )
    chosen = _refuse_unread(single, systems, correction, show, test, n_permutations)
    publishing = _checked_outputs(where, fmt, as_json, output, label, labels, records)
    from gatestats.paired import compare  # after the options are checked: a usage error stays fast

    frame = where_records(records, where, columns=paired_columns(by))
    if single:
        result = compare(frame, baseline=str(baseline), candidate=str(candidate), **options)
        _print_one(result, publishing, records=records, show=show)
        return write_plot(plot, lambda: result.plot(publishing.labels), records)
    many = _many(frame, all_pairs=all_pairs, baseline=vs_baseline, systems=systems, correction=chosen, options=options)
    _print_many(many, publishing, plot=plot, records=records)


class _PairedOptions(TypedDict):
    """The options of one paired comparison, shared by :func:`~gatestats.paired.compare` and ``compare_many``."""

    margin: float | None
    alternative: Alternative
    confidence_level: float
    test: PairedTest
    interval: PairedIntervalMethod
    metric: Metric
    k: int
    n_resamples: int
    n_permutations: int
    seed: int
    shared_versions_only: bool
    system_column: str


def _many(
    frame: pl.DataFrame,
    *,
    all_pairs: bool,
    baseline: str | None,
    systems: str | None,
    correction: Correction,
    options: _PairedOptions,
) -> MultipleComparison:
    """The family of comparisons asked for (among ``--systems`` when given), p-values adjusted by ``correction``."""
    from gatestats.paired import compare_many

    names = None if systems is None else comma_separated(systems)
    family: ComparisonFamily = "all_pairs" if all_pairs else "vs_baseline"
    return compare_many(frame, family=family, baseline=baseline, systems=names, correction=correction, **options)


def _print_one(result: Comparison, publishing: Publishing, *, records: list[Path], show: int) -> None:
    """Print one comparison: its JSON object (with the record files read), its tables, or another format."""
    emit(
        publishing,
        table=result.table,
        payload=lambda: {**result.to_dict(), "records": [str(p) for p in records]},
        terminal=functools.partial(render_comparison, result, show=show, labels=publishing.labels),
    )


def _print_many(many: MultipleComparison, publishing: Publishing, *, plot: Path | None, records: list[Path]) -> None:
    """Print the family of comparisons (one JSON list, its table, or its table in another format); then ``--plot``."""
    emit(
        publishing,
        table=many.table,
        payload=many.to_dict,
        terminal=functools.partial(render_many, many, labels=publishing.labels),
    )
    write_plot(plot, lambda: many.plot(publishing.labels), records)


def _options(
    *,
    margin: float | None,
    alternative: str,
    confidence_level: float,
    test: str,
    interval: str,
    metric: str,
    k: int,
    n_resamples: int,
    n_permutations: int,
    seed: int,
    shared_versions_only: bool,
    system_column: str,
) -> _PairedOptions:
    """The comparison options, each checked in turn (a usage error names the option)."""
    if margin is not None and not 0 < margin < 1:
        msg = f"must lie strictly between 0 and 1 (got {margin})"
        raise typer.BadParameter(msg, param_hint="--margin")
    level = checked_option(check_confidence_level, confidence_level, "--confidence-level")
    if k < 1:
        msg = f"must be an integer >= 1 (got {k})"
        raise typer.BadParameter(msg, param_hint="--k")
    return {
        "margin": margin,
        "confidence_level": level,
        "k": k,
        "n_resamples": checked_option(check_n_resamples, n_resamples, "--n-resamples"),
        "n_permutations": checked_option(check_n_resamples, n_permutations, "--n-permutations", minimum=99),
        "seed": checked_option(check_seed, seed, "--seed"),
        "alternative": cast("Alternative", _choice(alternative, "--alternative", Alternative)),
        "test": cast("PairedTest", _choice(test, "--test", PairedTest)),
        "interval": cast("PairedIntervalMethod", _choice(interval, "--interval", PairedIntervalMethod)),
        "metric": cast("Metric", _choice(metric, "--metric", Metric)),
        "shared_versions_only": shared_versions_only,
        "system_column": system_column,
    }


def _choice(value: str, hint: str, words: object) -> str:
    """``value`` checked against the words of the ``Literal`` type ``words`` (a usage error names ``hint``)."""
    return checked_option(check_choice, value, hint, get_args(words))


def _checked_outputs(
    where: list[str] | None,
    fmt: str,
    as_json: bool,
    output: Path | None,
    label: list[str] | None,
    labels: Path | None,
    records: list[Path],
) -> Publishing:
    """Check ``--where`` and the publishing options (usage errors, before any record is read)."""
    checked_where(where)
    return checked_publishing(fmt=fmt, as_json=as_json, output=output, label=label, labels_file=labels, inputs=records)


def _refuse_unread(
    single: bool, systems: str | None, correction: str, show: int, test: str, n_permutations: int
) -> Correction:
    """The correction, checked; options that mean nothing in the chosen mode are usage errors (never ignored)."""
    chosen = cast("Correction", checked_option(check_choice, correction, "--correction", CORRECTIONS))
    unread = [
        ("--systems", single and systems is not None, "one comparison names its two systems"),
        ("--correction", single and correction != "holm", "one comparison is no family to correct"),
        ("--show", not single and show != 20, "the table of many comparisons lists no case ids"),
        ("--n-permutations", test != "permutation" and n_permutations != 9999, "only --test permutation draws them"),
    ]
    for hint, refused, why in unread:
        if refused:
            raise typer.BadParameter(f"means nothing here: {why}", param_hint=hint)
    return chosen


def _check_mode(baseline: str | None, candidate: str | None, *, all_pairs: bool, vs_baseline: str | None) -> bool:
    """Whether one comparison is asked (else many); refuse modes mixed or half given."""
    single = baseline is not None or candidate is not None
    modes = int(single) + int(all_pairs) + int(vs_baseline is not None)
    if modes != 1:
        msg = f"choose exactly one of --baseline A --candidate B, --all-pairs, --vs-baseline A (got {modes} of them)"
        raise typer.BadParameter(msg, param_hint="--baseline/--all-pairs/--vs-baseline")
    if single and (baseline is None or candidate is None):
        missing = "--candidate" if candidate is None else "--baseline"
        msg = f"--baseline and --candidate go together (got no {missing})"
        raise typer.BadParameter(msg, param_hint=missing)
    return single
