"""``gatestats plan``: how many cases a paired decision needs, what N can detect, false blocks, and
whether to add cases or trials (from a pilot's variance split)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypedDict, TypeVar, cast, get_args

import typer
from rich.console import Console
from rich.table import Table

from gatestats.cli._common import checked_option, echo_json, load_cli_records, reports_errors
from gatestats.vocabulary import Alternative, PlanTest, check_alpha, check_choice

if TYPE_CHECKING:
    from gatestats.paired import CasesTrialsPlan

__all__ = ["plan_command"]

T = TypeVar("T")

_WHAT = ("cases", "mde", "false-block", "cases-trials")

#: The options each plan reads; any other option given is a usage error (never silently ignored).
_READS: dict[str, frozenset[str]] = {
    "cases": frozenset({"--delta", "--discordance", "--power", "--alpha", "--alternative", "--test"}),
    "mde": frozenset({"--cases", "--discordance", "--power", "--alpha", "--alternative", "--test"}),
    "false-block": frozenset({"--cases", "--k", "--error-rate", "--alpha"}),
    "cases-trials": frozenset(
        {"--pilot", "--system", "--mde", "--trials", "--cases", "--alternative", "--alpha", "--power"}
    ),
}
_DEFAULTS: Mapping[str, object] = {
    "--power": 0.8,
    "--alpha": 0.05,
    "--alternative": "two-sided",
    "--test": "auto",
    "--trials": "1,2,4,8",
}


def _refuse_unread(what: str, given: Mapping[str, object]) -> None:
    """A usage error for an option ``plan WHAT`` does not read (``given``: option -> value, None when absent)."""
    for option, value in given.items():
        if option in ("--what", "--as-json"):
            continue
        if value is not None and value != _DEFAULTS.get(option) and option not in _READS[what]:
            readers = ", ".join(w for w in _WHAT if option in _READS[w])
            msg = f"'plan {what}' does not read it (it is an option of: {readers})"
            raise typer.BadParameter(msg, param_hint=option)


def _need(value: T | None, hint: str, what: str) -> T:
    if value is None:
        msg = f"is required for 'plan {what}'"
        raise typer.BadParameter(msg, param_hint=hint)
    return value


def _unit(value: float | None, hint: str, *, closed_high: bool = False) -> None:
    if value is None:
        return
    ok = 0 < value <= 1 if closed_high else 0 < value < 1
    if not ok:
        bound = "in (0, 1]" if closed_high else "strictly between 0 and 1"
        msg = f"must lie {bound} (got {value})"
        raise typer.BadParameter(msg, param_hint=hint)


def _print(rows: Mapping[str, object], title: str) -> None:
    console = Console(emoji=False, width=max(Console(emoji=False).width, 100))
    console.print(title, highlight=False)
    table = Table(show_header=False)
    table.add_column("what")
    table.add_column("value", justify="right")
    for key, value in rows.items():
        shown = f"{value:.4g}" if isinstance(value, float) else str(value)
        table.add_row(key.replace("_", " "), shown)
    console.print(table)


def _parse_trials(text: str) -> list[int]:
    values = []
    for part in (p.strip() for p in text.split(",")):
        try:
            value = int(part)
        except ValueError:
            value = 0
        if not 1 <= value <= 10_000:
            msg = f"expected comma-separated integers in [1, 10000] such as 1,2,4,8 (got {text!r})"
            raise typer.BadParameter(msg, param_hint="--trials")
        values.append(value)
    return sorted(set(values))


def _print_cases_trials(plan: CasesTrialsPlan) -> None:
    console = Console(emoji=False, width=max(Console(emoji=False).width, 100))
    level = f"{plan.alternative}, alpha {plan.alpha:g}, power {plan.power:g}"
    console.print(
        f"cases needed to detect a pass-rate difference of {plan.mde:g} ({level}), "
        f"pilot {plan.pilot_system!r}: {plan.pilot_cases} cases, {plan.pilot_mean_trials or 0:.3g} trials per case",
        highlight=False,
    )
    if plan.status != "ok":
        console.print(f"insufficient evidence: {plan.reason}", highlight=False)
        return
    console.print(
        f"variance of one trial's outcome: between cases {plan.between_case_variance:.4g}, "
        f"within cases (trial to trial) {plan.within_case_variance:.4g}",
        highlight=False,
    )
    table = Table()
    for name in ("trials per case", "cases needed", "total trials", "share of variance from trials"):
        table.add_column(name, justify="right")
    for o in plan.options:
        table.add_row(str(o.trials), str(o.cases_needed), str(o.total_trials), f"{o.share_from_trials:.0%}")
    console.print(table)
    console.print(f"cases needed however many trials are run: {plan.cases_floor}", highlight=False)
    console.print(plan.advice or "", highlight=False)


def _cases_trials(
    pilot: list[Path] | None,
    system: str | None,
    mde: float | None,
    trials: str,
    cases: int | None,
    chosen: _Design,
    as_json: bool,
) -> None:
    what = "cases-trials"
    paths = _need(pilot, "--pilot", what)
    name = _need(system, "--system", what)
    effect = _need(mde, "--mde", what)
    _unit(effect, "--mde")
    if cases is not None and cases < 1:
        msg = f"must be an integer >= 1 (got {cases})"
        raise typer.BadParameter(msg, param_hint="--cases")
    ks = _parse_trials(trials)
    from gatestats.paired import plan_cases_trials_from_pilot

    plan = plan_cases_trials_from_pilot(
        load_cli_records(paths)[0], system=name, mde=effect, trials=ks, available_cases=cases, **chosen
    )
    if as_json:
        echo_json({"plan": what, **plan.to_dict()}, paths)
        return
    _print_cases_trials(plan)


@reports_errors
def plan_command(
    what: Annotated[str, typer.Argument(help="cases | mde | false-block | cases-trials")],
    delta: Annotated[
        float | None, typer.Option(help="cases: paired difference to detect, candidate − baseline.")
    ] = None,
    discordance: Annotated[
        float | None, typer.Option(help="cases, mde: share of cases whose outcome differs, in (0, 1].")
    ] = None,
    cases: Annotated[
        int | None,
        typer.Option("--cases", help="mde, false-block: number of cases N; cases-trials: cases available."),
    ] = None,
    power: Annotated[float, typer.Option(help="cases, mde: target power.")] = 0.8,
    alpha: Annotated[float, typer.Option(help="Significance level (false-block: tolerated risk).")] = 0.05,
    alternative: Annotated[str, typer.Option(help="two-sided, less, greater.")] = "two-sided",
    test: Annotated[
        str, typer.Option(help="cases, mde: auto (mid-p two-sided, exact one-sided), midp or exact.")
    ] = "auto",
    k: Annotated[int | None, typer.Option("--k", help="false-block: runs per case of the all-k rule.")] = None,
    error_rate: Annotated[
        float | None, typer.Option(help="false-block: per-run evaluator error (false fail) rate, in [0, 1).")
    ] = None,
    pilot: Annotated[
        list[Path] | None, typer.Option(help="cases-trials: pilot record files (repeat for several).")
    ] = None,
    system: Annotated[str | None, typer.Option(help="cases-trials: the pilot system whose variance is split.")] = None,
    mde: Annotated[
        float | None, typer.Option(help="cases-trials: pass-rate difference to detect (absolute), in (0, 1).")
    ] = None,
    trials: Annotated[str, typer.Option(help="cases-trials: trials per case to plan for, e.g. 1,2,4,8.")] = "1,2,4,8",
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object instead of a table.")] = False,
) -> None:
    """Plan a decision: cases needed, minimum detectable effect, false-block risk of all-k rules, cases or trials.

    \f
    Parameters
    ----------
    what
        The plan: ``cases``, ``mde``, ``false-block`` or ``cases-trials``.
    delta, discordance, cases, power, alpha, alternative, test, k, error_rate
        The plan's inputs (see :func:`gatestats.paired.cases_needed`,
        :func:`~gatestats.paired.minimum_detectable_effect` and :func:`~gatestats.paired.false_block`).
    pilot, system, mde, trials, as_json
        ``cases-trials``: pilot record files, the system whose variance is split, the effect, the
        trials per case; print JSON.

    Raises
    ------
    typer.BadParameter
        A usage error (exit 2): an option missing for the plan, or outside its domain.
    """
    checked_option(check_choice, what, "WHAT", _WHAT)
    _refuse_unread(what, {"--" + name.replace("_", "-"): value for name, value in locals().items()})
    side = cast("Alternative", checked_option(check_choice, alternative, "--alternative", get_args(Alternative)))
    chosen_test = cast("PlanTest", checked_option(check_choice, test, "--test", get_args(PlanTest)))
    _unit(power, "--power")
    checked_option(check_alpha, alpha, "--alpha")
    _unit(discordance, "--discordance", closed_high=True)
    if what == "cases-trials":
        _cases_trials(pilot, system, mde, trials, cases, _Design(power=power, alpha=alpha, alternative=side), as_json)
        return
    chosen = _Chosen(power=power, alpha=alpha, alternative=side, test=chosen_test)
    if what == "cases":
        result, title = _plan_cases(delta, discordance, chosen)
    elif what == "mde":
        result, title = _plan_mde(cases, discordance, chosen)
    else:
        result, title = _plan_false_block(cases, k, error_rate, alpha)
    payload = {"plan": what, **result.to_dict()}
    if as_json:
        typer.echo(json.dumps(payload, allow_nan=False))
        return
    _print(payload, title)


class _Design(TypedDict):
    """The design every plan is made for: the target power, the significance level, the alternative."""

    power: float
    alpha: float
    alternative: Alternative


class _Chosen(_Design):
    """The design of a paired-test plan (``cases``, ``mde``), with the test it plans for."""

    test: PlanTest


def _plan_cases(delta: float | None, discordance: float | None, chosen: _Chosen) -> tuple[Any, str]:
    delta = _need(delta, "--delta", "cases")
    discordance = _need(discordance, "--discordance", "cases")
    if delta == 0 or not -1 < delta < 1 or abs(delta) > discordance:
        msg = f"must satisfy 0 < |delta| <= discordance (got {delta}, discordance {discordance})"
        raise typer.BadParameter(msg, param_hint="--delta")
    from gatestats.paired import cases_needed

    result = cases_needed(delta, discordance, **chosen)
    return result, f"cases needed to detect a paired difference of {delta:+g} (discordance {discordance:g})"


def _plan_mde(cases: int | None, discordance: float | None, chosen: _Chosen) -> tuple[Any, str]:
    cases = _need(cases, "--cases", "mde")
    discordance = _need(discordance, "--discordance", "mde")
    if cases < 1:
        msg = f"must be an integer >= 1 (got {cases})"
        raise typer.BadParameter(msg, param_hint="--cases")
    from gatestats.paired import minimum_detectable_effect

    result = minimum_detectable_effect(cases, discordance, **chosen)
    return result, f"minimum detectable paired difference with {cases} cases (discordance {discordance:g})"


def _plan_false_block(cases: int | None, k: int | None, error_rate: float | None, alpha: float) -> tuple[Any, str]:
    what = "false-block"
    cases = _need(cases, "--cases", what)
    k = _need(k, "--k", what)
    error_rate = _need(error_rate, "--error-rate", what)
    if cases < 1 or k < 1:
        hint, got = ("--cases", cases) if cases < 1 else ("--k", k)
        msg = f"must be an integer >= 1 (got {got})"
        raise typer.BadParameter(msg, param_hint=hint)
    if not 0 <= error_rate < 1:
        msg = f"must lie in [0, 1) (got {error_rate})"
        raise typer.BadParameter(msg, param_hint="--error-rate")
    from gatestats.paired import false_block

    result = false_block(cases, k, error_rate, alpha=alpha)
    return result, f"false blocks of a strict all-{k} rule over {cases} cases (evaluator error {error_rate:g} per run)"
