"""``gatestats run``: cases x trials of a candidate in the sandbox runner, into an immutable run set.

A thin wrapper: the work is done by the standard-library runner, through its public API
(:mod:`gatestats_runner.launch`); this module adds the options and a progress bar, shown once the
first trial is about to start (an error before that prints the error alone). Exit codes: 0 the
run set is complete; 1 invalid input (cases, candidate, a run set that does not match, damaged
records, isolation that was required but is missing); 2 usage error (as ``python -m
gatestats_runner``, including ``--executor ray`` where Ray is not installed: the message says how
to install it); 3 the run set is incomplete (interrupted).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from gatestats.cli._baseline import check_baseline_options
from gatestats.cli._common import IsolationOption, checked_isolation, comma_separated, fail, usage_error
from gatestats.cli._trial_bar import TrialBar, run_with_bar
from gatestats_runner.baseline import BaselineSampleOptions, run_baseline_sample
from gatestats_runner.launch import Executor, RunSetOptions, RunSetSummary, run_run_set

__all__ = ["EXIT_INCOMPLETE", "run_command"]

EXIT_INCOMPLETE = 3


_CandidateOption = Annotated[
    Path | None,
    typer.Option("--candidate", help="Candidate directory: CASE_ID/ holds the files laid over that case."),
]
_TrialsOption = Annotated[
    int | None, typer.Option("--trials", min=1, help="Trials per case (k; required unless --baseline-sample).")
]
_RequireEnforcedOption = Annotated[
    str, typer.Option("--require-enforced", help="Comma-separated bounds that must be enforced, e.g. memory,disk.")
]
_PolicyOption = Annotated[
    Path | None,
    typer.Option("--policy", help="Gate policy (TOML) to register in the run set before its first trial."),
]
_PolicyDigestOption = Annotated[
    str | None, typer.Option("--policy-digest", help="Digest of the gate policy registered before the run.")
]
_PrepareOption = Annotated[
    bool,
    typer.Option("--prepare", help="Create the run set without running trials (then `policy register`, --resume)."),
]
_RerunOption = Annotated[
    bool,
    typer.Option(
        "--rerun-unresolved",
        help="With --resume: run one new attempt of every trial whose final attempt is an infra_error.",
    ),
]
_BaselineSampleOption = Annotated[
    int | None,
    typer.Option("--baseline-sample", help="Re-run a seeded random sample of N cases of --against (drift check)."),
]
_AgainstOption = Annotated[
    Path | None, typer.Option("--against", help="The stored baseline run set to re-run (--baseline-sample).")
]
_UntilDecidedOption = Annotated[
    bool,
    typer.Option(
        "--until-decided",
        help="Run --baseline and --candidate in batches until the [sequential] policy's decision is made.",
    ),
]
_BaselineOption = Annotated[
    Path | None,
    typer.Option("--baseline", help="Baseline candidate directory (--until-decided); writes OUT/baseline."),
]


def run_command(
    cases: Annotated[Path, typer.Argument(help="Cases directory: one subdirectory with case.json per case.")],
    out: Annotated[Path, typer.Option("--out", help="Run set directory (new; or existing with --resume).")],
    candidate: _CandidateOption = None,
    trials: _TrialsOption = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="Parallel trials (default: cores).")] = None,
    resume: Annotated[
        bool, typer.Option("--resume", help="Continue a crashed run set: run only missing trials.")
    ] = False,
    system: Annotated[str, typer.Option("--system", help="Label of the evaluated system.")] = "candidate",
    model_id: Annotated[str | None, typer.Option("--model-id", help="System part: model id.")] = None,
    prompt_version: Annotated[str | None, typer.Option("--prompt-version", help="System part.")] = None,
    tools_digest: Annotated[str | None, typer.Option("--tools-digest", help="System part.")] = None,
    orchestration_version: Annotated[str | None, typer.Option("--orchestration-version", help="System part.")] = None,
    infra_retries: Annotated[int, typer.Option("--infra-retries", min=0, help="Retries of an infra_error.")] = 2,
    isolation: IsolationOption = "auto",
    require_enforced: _RequireEnforcedOption = "",
    policy: _PolicyOption = None,
    policy_digest: _PolicyDigestOption = None,
    prepare: _PrepareOption = False,
    executor: Annotated[str, typer.Option("--executor", help="local | ray.")] = "local",
    address: Annotated[str | None, typer.Option("--address", help="Ray cluster address (--executor ray).")] = None,
    baseline_sample: _BaselineSampleOption = None,
    against: _AgainstOption = None,
    seed: Annotated[int, typer.Option("--seed", help="Seed of the --baseline-sample draw (recorded).")] = 0,
    until_decided: _UntilDecidedOption = False,
    baseline: _BaselineOption = None,
    rerun_unresolved: _RerunOption = False,
) -> None:
    """Run every case TRIALS times against the candidate in fresh, isolated, bounded sandboxes.

    \f
    Parameters
    ----------
    cases, candidate, trials, out, workers, resume, rerun_unresolved
        What to run, where to write it, how many trials at once; ``rerun_unresolved`` (with
        ``resume``) also re-runs every unresolved attempt as a new one (docs/runner.md).
    system, model_id, prompt_version, tools_digest, orchestration_version
        The evaluated system's label and parts.
    infra_retries, isolation, require_enforced, executor, address
        How and where the sandboxes run the trials.
    policy, policy_digest, prepare
        The gate policy registered before the first trial.
    baseline_sample, against, seed, until_decided, baseline
        Re-run a seeded sample of a stored baseline run set instead (see ``gatestats.cli._baseline``),
        or both systems in batches until the ``[sequential]`` policy decides (``cli._sequential_run``).

    Raises
    ------
    typer.Exit
        1 on invalid input, 2 on a usage error, 3 when the run set is incomplete.
    """
    mode = checked_isolation(isolation)
    if rerun_unresolved and (not resume or until_decided or baseline is not None or baseline_sample is not None):
        raise usage_error("--rerun-unresolved: re-runs the unresolved attempts of one run set: use it with --resume")
    if until_decided or baseline is not None:
        _run_until_decided(locals())
        return
    if baseline_sample is not None or against is not None:
        _run_baseline_sample(locals())
        return
    if candidate is None or trials is None:
        raise usage_error(f"{'--candidate' if candidate is None else '--trials'}: required")
    options = RunSetOptions(
        cases=cases,
        candidate=candidate,
        out=out,
        trials=trials,
        resume=resume,
        system=system,
        system_parts=_system_parts(model_id, prompt_version, tools_digest, orchestration_version),
        infra_retries=infra_retries,
        isolation=mode,
        require_enforced=comma_separated(require_enforced),
        policy_digest=_policy_digest(policy, policy_digest),
        prepare_only=prepare,
        rerun_unresolved=rerun_unresolved,
    )
    _run_in_bar(options, executor=executor, workers=workers, address=address)


def _run_in_bar(
    options: RunSetOptions | BaselineSampleOptions, *, executor: str, workers: int | None, address: str | None
) -> None:
    """Run the run set (or a stored baseline's sample) behind the trial bar, then print its summary."""
    console = Console(emoji=False, stderr=True, soft_wrap=True)
    bar = TrialBar(console)

    def work(runner: Executor) -> RunSetSummary:
        """The run, on the executor the bar starts."""
        if isinstance(options, BaselineSampleOptions):
            return run_baseline_sample(options, executor=runner, progress=bar)
        return run_run_set(options, executor=runner, progress=bar)

    summary = run_with_bar(work, bar, executor=executor, workers=workers, address=address)
    if isinstance(options, BaselineSampleOptions):
        _print_summary(summary, console, prepare=False)
    else:
        _print_summary(summary, console, prepare=options.prepare_only, rerun=options.rerun_unresolved)


def _system_parts(*values: str | None) -> dict[str, str]:
    """The system parts given: ``--model-id``, ``--prompt-version``, ``--tools-digest``, ``--orchestration-version``."""
    names = ("model_id", "prompt_version", "tools_digest", "orchestration_version")
    return {name: value for name, value in zip(names, values, strict=True) if value is not None}


def _run_until_decided(given: Mapping[str, Any]) -> None:
    """``--until-decided``: the sequential run (its module is imported only for it)."""
    from gatestats.cli._sequential_run import run_sequential

    run_sequential(given)


def _run_baseline_sample(given: Mapping[str, Any]) -> None:
    """``--baseline-sample N --against STORED``: the stored run set's sample, in the same bar and summary."""
    names = ("trials", "model_id", "prompt_version", "tools_digest", "orchestration_version", "policy")
    decided = {f"--{name.replace('_', '-')}": given[name] for name in (*names, "policy_digest", "prepare")}
    decided["--system"] = None if given["system"] == "candidate" else given["system"]
    check_baseline_options(baseline_sample=given["baseline_sample"], against=given["against"], decided=decided)
    _read_stored(given["against"])
    options = BaselineSampleOptions(
        cases=given["cases"],
        stored=given["against"],
        out=given["out"],
        n=given["baseline_sample"],
        seed=given["seed"],
        candidate=given["candidate"],
        resume=given["resume"],
        infra_retries=given["infra_retries"],
        isolation=given["mode"],
        require_enforced=comma_separated(given["require_enforced"]),
    )
    _run_in_bar(options, executor=given["executor"], workers=given["workers"], address=given["address"])


def _read_stored(stored: Path) -> None:
    """The stored baseline through the gate's reader before it is re-run (exit 1 naming file, line, field)."""
    from gatestats.errors import GatestatsError
    from gatestats.records import read_run_set

    try:
        read_run_set(stored)
    except (GatestatsError, OSError) as exc:
        raise fail(str(exc)) from None


def _policy_digest(policy: Path | None, policy_digest: str | None) -> str | None:
    """The digest of ``--policy`` or ``--policy-digest``: a usage error for both or a bad policy."""
    from gatestats.gate import PolicyError, load_policy

    if policy is None:
        return policy_digest
    if policy_digest is not None:
        raise usage_error("give --policy or --policy-digest, not both")
    try:
        return load_policy(policy).digest
    except PolicyError as exc:
        raise usage_error(str(exc)) from None


#: Said after ``--rerun-unresolved``: what the gate makes of the new attempts depends on the policy.
RERUN_NOTE = (
    "note: the gate counts a re-run attempt's outcome only under a policy that states "
    'infra_retries = "counted" (infrastructure errors unrelated to the outcome); under the default '
    '("bounded") a trial retried after an infrastructure error stays a bound (docs/gate.md, "Retries")'
)


def _print_summary(summary: RunSetSummary, console: Console, *, prepare: bool, rerun: bool = False) -> None:
    """Warn of bounds not enforced, print what was done, and exit 3 when the run set is incomplete."""
    if rerun:
        console.print(RERUN_NOTE, highlight=False)
    for name, why in (summary.isolation.get("not_enforced") or {}).items():
        console.print(f"warning: bound '{name}' not enforced: {why}", highlight=False)
    if prepare:
        Console(emoji=False, soft_wrap=True).print(
            f"{summary.out}: prepared run set {summary.run_set_id} ({summary.total_trials} trials planned, none run); "
            "register a policy with `gatestats policy register`, then run with --resume",
            highlight=False,
        )
        return
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items())) or "no trials"
    state = "complete" if summary.complete else "INCOMPLETE"
    Console(emoji=False, soft_wrap=True).print(
        f"{summary.out}: {state} — {summary.total_trials} trials ({counts}); "
        f"{summary.attempts_run} attempts run now; run set {summary.run_set_id}",
        highlight=False,
    )
    if not summary.complete:
        raise typer.Exit(EXIT_INCOMPLETE)
