"""``gatestats run --until-decided``: batches of baseline and candidate until the gate's decision is made.

``gatestats run CASES --until-decided --policy POLICY --baseline BASE_DIR --candidate CAND_DIR --out OUT``
writes ``OUT/baseline`` and ``OUT/candidate`` (run sets, the policy registered before their first
trial) and ``OUT/sequential.json`` (the path, rewritten after every batch), printing one line per
batch. The same command resumes a run that was interrupted. Exit codes: 0 the run stopped (the
decision is determined, or the design's ``max_cases`` is reached: then ``gatestats gate`` answers
insufficient evidence); 1 invalid input (cases, candidates, a run set under another design, damaged
records); 2 usage error (an option the design fixes, a policy without ``[sequential]``, an invalid
policy). The verdict file is ``gatestats gate``'s, as for every run.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from gatestats.cli._common import comma_separated, usage_error
from gatestats.io.text import visible

if TYPE_CHECKING:
    from gatestats.sequential.run import SequentialRunOptions

__all__ = ["run_sequential"]

#: Options of ``gatestats run`` that a sequential run does not take (the design fixes them, or the
#: command does it itself), with why.
_REFUSED = {
    "trials": "--trials: the policy's [sequential] trials fixes the trials per case",
    "resume": "--resume: --until-decided resumes by itself (run the same command again)",
    "prepare": "--prepare: --until-decided creates and registers both run sets itself",
    "policy_digest": "--policy-digest: --until-decided reads the design from --policy",
    "baseline_sample": "--baseline-sample: not with --until-decided",
    "against": "--against: not with --until-decided",
}


def _fmt(value: float) -> str:
    return f"{value:.3g}" if abs(value) < 1e6 else f"{value:.2e}"


def _batch_line(entry: Mapping[str, Any]) -> str:
    """One batch: its cases, which system ran first, each rule's estimate, bounds, e-values and status."""
    parts = []
    for rule in entry["rules"]:
        row = visible(rule["row"])  # a rule name is the policy author's text: no control characters
        if "estimate" in rule:
            parts.append(
                f"{row}: {_fmt(rule['estimate'])} [{_fmt(rule['lower'])}, {_fmt(rule['upper'])}] "
                f"e_pass {_fmt(rule['e_pass'])} e_fail {_fmt(rule['e_fail'])} → {rule['status']}"
            )
        else:
            parts.append(f"{row}: {rule['status']} at {rule['decided_at']} cases")
    return f"batch {entry['batch']}: {entry['n_cases']} cases ({entry['first']} first); " + "; ".join(parts)


def _print_batch(out: Console, entry: Mapping[str, Any]) -> None:
    """Print :func:`_batch_line` as text: a rule name like ``[/]`` is not markup."""
    out.print(_batch_line(entry), highlight=False, markup=False)


def _stop_line(document: Mapping[str, Any], out: Path, policy: Path) -> str:
    stop = document["stop"]
    why = "decided" if stop["state"] == "decided" else "max_cases reached, undecided"
    saved = stop["trials_saved"]
    share = saved / stop["trials_fixed"] if stop["trials_fixed"] else 0.0
    return (
        f"{out}: stopped after {stop['n_cases']} of {document['design']['max_cases']} cases ({why}; "
        f"gate so far: {stop['verdict']}); {stop['trials_used']} of {stop['trials_fixed']} trials used, "
        f"{saved} saved ({share:.0%}); the verdict: gatestats gate --policy {policy} "
        f"--baseline {out / 'baseline'} --candidate {out / 'candidate'}"
    )


def _options(given: Mapping[str, Any], make: type[SequentialRunOptions]) -> SequentialRunOptions:
    """The controller's options, after the usage checks of the command line (each a usage error)."""
    if not given["until_decided"]:
        raise usage_error("--baseline: only with --until-decided (a stored baseline run set is --against)")
    for name, message in _REFUSED.items():
        if given[name] not in (None, False):
            raise usage_error(message)
    if given["system"] != "candidate":
        raise usage_error("--system: with --until-decided the policy's [baseline] and [candidate] name the systems")
    for name in ("policy", "baseline", "candidate"):
        if given[name] is None:
            raise usage_error(f"--{name}: required with --until-decided")
    parts = {p: given[p] for p in ("model_id", "prompt_version", "tools_digest", "orchestration_version")}
    return make(
        policy=given["policy"],
        cases=given["cases"],
        baseline=given["baseline"],
        candidate=given["candidate"],
        out=given["out"],
        candidate_parts={k: v for k, v in parts.items() if v is not None},
        infra_retries=given["infra_retries"],
        isolation=given["isolation"],
        require_enforced=comma_separated(given["require_enforced"]),
    )


def run_sequential(given: Mapping[str, Any]) -> None:
    """``gatestats run --until-decided`` with the options ``run_command`` was given.

    Parameters
    ----------
    given
        ``run_command``'s arguments by name.

    Raises
    ------
    typer.Exit
        1 on invalid input, 2 on a usage error.
    """
    from gatestats.cli._trial_bar import TrialBar, run_with_bar  # the same bar as `gatestats run`
    from gatestats.errors import GatestatsError
    from gatestats.gate import PolicyError
    from gatestats.sequential.run import (  # heavy: imported when the command runs
        NotSequentialError,
        SequentialRunOptions,
        run_until_decided,
    )
    from gatestats_runner.launch import (
        CaseError,
        OptionError,
        RunSetError,
        SandboxError,
        make_executor,
    )

    options = _options(given, SequentialRunOptions)
    console = Console(emoji=False, stderr=True, soft_wrap=True)
    out = Console(emoji=False, soft_wrap=True)
    seen: set[int] = set()

    def on_batch(document: Mapping[str, Any]) -> None:
        for entry in document["batches"]:
            if entry["batch"] not in seen:
                seen.add(entry["batch"])
                _print_batch(out, entry)

    bar = TrialBar(console)
    name, workers, address = given["executor"], given["workers"], given["address"]
    result = run_with_bar(  # the executor made first only checks the option: each batch makes its own
        lambda _: run_until_decided(
            options,
            executor=lambda: make_executor(name, workers=workers, address=address),
            on_batch=on_batch,
            on_trial=bar,
        ),
        bar,
        executor=name,
        workers=workers,
        address=address,
        usage=(OptionError, NotSequentialError, PolicyError),
        invalid=(CaseError, RunSetError, SandboxError, GatestatsError, ValueError, OSError),
    )
    out.print(_stop_line(result.document, given["out"], given["policy"]), highlight=False, markup=False)
