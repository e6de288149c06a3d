"""``gatestats gate``: the release decision under a policy registered before execution.

Exit codes: 0 pass; 10 warn (0 with ``--warn-exit-zero``); 11 fail; 12 insufficient evidence;
1 invalid record files; 2 usage error, invalid policy, or a refused policy registration (edited
after registration, or registered after the first record). On 1 and 2 no verdict file is written.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from gatestats._files import write_atomic
from gatestats.cli._common import fail, usage_error
from gatestats.errors import GatestatsError
from gatestats.gate import (
    PolicyError,
    RegistrationError,
    Verdict,
    evaluate_gate,
    load_policy,
    load_record_set,
    write_verdict,
)

__all__ = ["gate_command"]


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


def render_verdict(verdict: Verdict, console: Console) -> None:
    """The verdict as text: headline, reasons, rules table, severe slices, flips."""
    style = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "insufficient_evidence": "bold magenta"}
    console.print(f"verdict: [{style[verdict.verdict]}]{verdict.verdict}[/] (exit {verdict.exit_code})")
    for reason in verdict.reasons:
        console.print(f"  - {reason}", highlight=False)
    table = Table(title="rules", show_lines=False)
    for column in ("rule", "observed", "baseline", "CI", "threshold", "test", "adj. p pass", "adj. p fail", "decision"):
        table.add_column(column)
    for r in verdict.rules:
        ci = "—" if r.ci_low is None or r.ci_high is None else f"[{r.ci_low:.4g}, {r.ci_high:.4g}]"
        table.add_row(
            r.row,
            _fmt(r.observed),
            _fmt(r.baseline),
            ci,
            _fmt(r.threshold),
            r.test,
            _fmt(r.pvalue_pass_adjusted, 3),
            _fmt(r.pvalue_fail_adjusted, 3),
            r.decision,
        )
    console.print(table)
    for s in verdict.severe_slices:
        console.print(
            f"severe slice {s.slice}: {s.n_passed}/{s.n_trials} trials passed over {s.n_cases} cases: {s.decision}"
        )
    console.print(
        f"flips: pass→fail {len(verdict.flips_pass_to_fail)} ({_case_ids(verdict.flips_pass_to_fail)}); "
        f"fail→pass {len(verdict.flips_fail_to_pass)} ({_case_ids(verdict.flips_fail_to_pass)})",
        highlight=False,
    )


def _case_ids(labels: tuple[str, ...]) -> str:
    """Case labels without their version digests (the verdict file keeps them whole)."""
    return ", ".join(label.split("@", 1)[0] for label in labels) or "none"


def gate_command(
    policy: Annotated[Path, typer.Option("--policy", help="Gate policy (TOML) registered before execution.")],
    baseline: Annotated[Path, typer.Option("--baseline", help="Baseline run set directory (or record file).")],
    candidate: Annotated[Path, typer.Option("--candidate", help="Candidate run set directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict file's JSON on stdout.")] = False,
    markdown: Annotated[
        Path | None, typer.Option("--markdown", help="Write a GitHub-flavoured summary (job summary, PR comment).")
    ] = None,
    junit: Annotated[Path | None, typer.Option("--junit", help="Write JUnit XML: one test case per rule.")] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the immutable verdict file (never overwritten).")
    ] = None,
    warn_exit_zero: Annotated[bool, typer.Option("--warn-exit-zero", help="Exit 0 on warn.")] = False,
) -> None:
    """Decide pass / warn / fail / insufficient_evidence for CANDIDATE against BASELINE under POLICY."""
    if output is not None and output.exists():
        raise usage_error(f"{output}: a verdict file already exists there; verdicts are immutable (choose a new path)")
    try:
        loaded = load_policy(policy)
    except PolicyError as exc:
        raise usage_error(str(exc)) from None
    try:
        base = load_record_set(baseline)
        cand = load_record_set(candidate)
    except (GatestatsError, ValueError, OSError) as exc:
        raise fail(str(exc)) from None
    try:
        verdict = evaluate_gate(loaded, base, cand)
    except RegistrationError as exc:
        raise usage_error(str(exc)) from None
    body = verdict.to_dict()
    try:
        if output is not None:
            write_verdict(body, output)
        if markdown is not None:
            markdown.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(markdown, verdict.to_markdown().encode("utf-8"))
        if junit is not None:
            junit.parent.mkdir(parents=True, exist_ok=True)
            write_atomic(junit, verdict.to_junit().encode("utf-8"))
    except (FileExistsError, OSError) as exc:
        raise usage_error(str(exc)) from None
    if as_json:
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    else:
        console = Console(soft_wrap=True)
        if not console.is_terminal:
            console = Console(soft_wrap=True, width=200)
        render_verdict(verdict, console)
        if output is not None:
            print(f"verdict file: {output} ({body['digest']})")
    code = verdict.exit_code
    if verdict.verdict == "warn" and warn_exit_zero:
        code = 0
    raise typer.Exit(code)
