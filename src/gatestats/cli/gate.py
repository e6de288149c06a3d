"""``gatestats gate``: the release decision under a policy registered before execution.

Exit codes: 0 pass; 10 warn (0 with ``--warn-exit-zero``); 11 fail; 12 insufficient evidence;
1 invalid record files; 2 usage error, invalid policy, a refused policy registration (edited
after registration, or registered after the first record), or an output that cannot be written.
On 1 and 2 no output file is written: ``-o``, ``--markdown`` and ``--junit`` are created together
or not at all (see :func:`write_outputs`), and none of them ever replaces an existing file.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from gatestats._typing import JSONObject
from gatestats.cli._common import fail, usage_error
from gatestats.errors import GatestatsError
from gatestats.io.files import sweep_temporaries, write_new_files
from gatestats.io.text import LABEL_LIMIT, TEXT_LIMIT, visible

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

    from gatestats.gate import Verdict
    from gatestats.gate.bindings import SequentialBinding
    from gatestats.gate.graders import GoldenFindings

__all__ = ["gate_command", "write_outputs"]


def _fmt(value: float | None, digits: int = 4) -> str:
    return "—" if value is None else f"{value:.{digits}g}"


def _term(text: object, limit: int = LABEL_LIMIT) -> str:
    """Data for the terminal: invisible characters escaped (no ANSI sequences), Rich markup escaped."""
    return escape(visible(text, limit=limit))


def render_verdict(verdict: Verdict, console: Console) -> None:
    """The verdict as text: headline, reasons, rules table, severe slices, flips.

    Parameters
    ----------
    verdict
        The gate's verdict.
    console
        Where to print (data from the records is escaped for the terminal).
    """
    style = {"pass": "bold green", "warn": "bold yellow", "fail": "bold red", "insufficient_evidence": "bold magenta"}
    console.print(f"verdict: [{style[verdict.verdict]}]{verdict.verdict}[/] (exit {verdict.exit_code})")
    notice = verdict.registration.notice_text
    if notice is not None:  # a policy registered at import: said in words, never only as "origin import"
        console.print(f"  registration: {_term(notice, TEXT_LIMIT)}", highlight=False)
    for reason in verdict.reasons:
        console.print(f"  - {_term(reason, TEXT_LIMIT)}", highlight=False)
    table = Table(title="rules", show_lines=False)
    for column in ("rule", "observed", "baseline", "CI", "threshold", "test", "adj. p pass", "adj. p fail", "decision"):
        table.add_column(column)
    for r in verdict.rules:
        ci = "—" if r.ci_low is None or r.ci_high is None else f"[{r.ci_low:.4g}, {r.ci_high:.4g}]"
        table.add_row(
            _term(r.row),
            _fmt(r.observed),
            _fmt(r.baseline),
            escape(ci),
            _fmt(r.threshold),
            _term(r.test),
            _fmt(r.pvalue_pass_adjusted, 3),
            _fmt(r.pvalue_fail_adjusted, 3),
            r.decision,
        )
    console.print(table)
    for r in verdict.rules:
        if r.unresolved is not None:  # decided on the bound of its unresolved attempts (docs/gate.md)
            console.print(
                f"unresolved attempts: {_term(r.row)}: {_term(r.unresolved.summary, TEXT_LIMIT)}", highlight=False
            )
    if verdict.sequential is not None:
        _render_sequential(verdict.sequential, console)
    for s in verdict.severe_slices:
        console.print(
            f"severe slice {_term(s.slice)}: {s.n_passed}/{s.n_trials} trials passed over {s.n_cases} cases: "
            f"{s.decision}",
            highlight=False,
        )
    console.print(
        f"flips: pass→fail {len(verdict.flips_pass_to_fail)} ({_case_ids(verdict.flips_pass_to_fail)}); "
        f"fail→pass {len(verdict.flips_fail_to_pass)} ({_case_ids(verdict.flips_fail_to_pass)})",
        highlight=False,
    )


def _render_sequential(binding: SequentialBinding, console: Console) -> None:
    """The sequential stop: where, each rule row's e-values against their levels, the trials saved, the guarantee."""
    from gatestats.gate.sequential_summary import guarantee_text, rule_stop, stop_text, trials_text

    console.print(f"sequential: {stop_text(binding, escape=_term)}", highlight=False)
    for rule in binding.rules:
        s = rule_stop(rule)
        console.print(f"  {_term(s.row)}: {s.status}; e_pass {s.e_pass}, e_fail {s.e_fail}", highlight=False)
    console.print(f"  trials: {trials_text(binding)}", highlight=False)
    console.print(f"  {guarantee_text(binding)}", highlight=False)


#: Case ids shown per flip list in the terminal (the Markdown summary shows as many; the verdict file all).
_IDS_SHOWN = 50


def _case_ids(labels: tuple[str, ...]) -> str:
    """Case labels without their version digests (the verdict file keeps them whole), escaped; the first 50."""
    shown = ", ".join(_term(label.rsplit("@", 1)[0]) for label in labels[:_IDS_SHOWN]) or "none"
    more = len(labels) - _IDS_SHOWN
    return shown if more <= 0 else f"{shown}, … and {more} more (the verdict file lists them all)"


def write_outputs(outputs: Sequence[tuple[Path, bytes]], *, append: Sequence[tuple[Path, bytes]] = ()) -> None:
    """Write every output file of one ``gate`` run, all or none; exit 2 naming the reason otherwise.

    Each of ``outputs`` is a new file, created exclusively (an existing file is never replaced, and of
    two runs racing for a path one loses); if any cannot be written, none is left behind. ``append``
    (``--markdown-append``) is written last, with one ``O_APPEND`` write each, after every new file
    exists. Add an option's file here by adding its ``(path, bytes)`` to ``outputs``.

    Parameters
    ----------
    outputs
        The new files, each ``(path, bytes)``.
    append
        Existing files to append to, each ``(path, bytes)``.

    Raises
    ------
    typer.Exit
        Exit 2 (a message names the file that could not be written); nothing was written.
    """
    try:
        write_new_files(outputs, append=append)
    except (OSError, ValueError) as exc:
        raise usage_error(f"{exc}; no output file was written") from None


def _refuse_existing(output: Path | None, markdown: Path | None, junit: Path | None) -> None:
    """Fail fast (exit 2) when an output path is taken, before any work; :func:`write_outputs` checks again."""
    for path in (output, markdown, junit):
        if path is not None:  # a killed gate's temporary files go even when a path is taken (all of them: one
            sweep_temporaries(path)  # killed between its links leaves the verdict and the others' temporaries)
    for option, path in (("--output", output), ("--markdown", markdown), ("--junit", junit)):
        if path is None or not os.path.lexists(path):
            continue
        if path.is_dir():
            raise usage_error(f"{path}: {option}: is a directory (expected a new file's path)")
        if option == "--output":
            raise usage_error(
                f"{path}: a verdict file already exists there; verdicts are immutable (choose a new path)"
            )
        hint = " or --markdown-append FILE to append to a job summary" if option == "--markdown" else ""
        raise usage_error(
            f"{path}: {option}: already exists; output files are never overwritten (choose a new path{hint})"
        )


def gate_command(
    policy: Annotated[Path, typer.Option("--policy", help="Gate policy (TOML) registered before execution.")],
    baseline: Annotated[Path, typer.Option("--baseline", help="Baseline run set directory (or record file).")],
    candidate: Annotated[Path, typer.Option("--candidate", help="Candidate run set directory.")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the verdict file's JSON on stdout.")] = False,
    markdown: Annotated[
        Path | None,
        typer.Option("--markdown", help="Write a GitHub-flavoured summary to a new file (never overwritten)."),
    ] = None,
    markdown_append: Annotated[
        Path | None,
        typer.Option(
            "--markdown-append",
            help="Append the summary to FILE with one O_APPEND write (for $GITHUB_STEP_SUMMARY, which exists).",
        ),
    ] = None,
    junit: Annotated[
        Path | None, typer.Option("--junit", help="Write JUnit XML to a new file: one test case per rule.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write the immutable verdict file (never overwritten).")
    ] = None,
    warn_exit_zero: Annotated[bool, typer.Option("--warn-exit-zero", help="Exit 0 on warn.")] = False,
    sign: Annotated[
        Path | None,
        typer.Option("--sign", help="Ed25519 private key (PEM): also write a signed VERDICT.intoto.jsonl (needs -o)."),
    ] = None,
) -> None:
    """Decide pass / warn / fail / insufficient_evidence for CANDIDATE against BASELINE under POLICY.

    \f
    Parameters
    ----------
    policy
        The gate policy file (TOML), registered before execution.
    baseline, candidate
        The two run set directories (or record files).
    as_json
        Print the verdict file's JSON on stdout instead of the text verdict.
    markdown, junit, output
        New files for the Markdown summary, the JUnit XML and the verdict file (never overwritten).
    markdown_append
        An existing file the summary is appended to (``$GITHUB_STEP_SUMMARY``).
    warn_exit_zero
        Exit 0 instead of 10 on warn.
    sign
        An Ed25519 private key: also write the signed envelope beside ``output``.

    Raises
    ------
    typer.Exit
        Always, with the verdict's exit code (1 for invalid record files, 2 for a usage error).
    """
    _refuse_existing(output, markdown, junit)
    signing_key = None if sign is None else _signing_key(sign, output)
    verdict = _evaluate(policy, baseline, candidate)
    body = verdict.to_dict()
    summary = verdict.to_markdown().encode("utf-8")
    outputs: list[tuple[Path, bytes]] = []
    if output is not None:
        outputs += _verdict_files(body, output, signing_key)
    if markdown is not None:
        outputs.append((markdown, summary))
    if junit is not None:
        outputs.append((junit, verdict.to_junit().encode("utf-8")))
    write_outputs(outputs, append=[] if markdown_append is None else [(markdown_append, summary)])
    if as_json:
        sys.stdout.write(json.dumps(body, indent=2, ensure_ascii=False) + "\n")
    else:
        _print_verdict(verdict, output, str(body["digest"]))
    code = verdict.exit_code
    if verdict.verdict == "warn" and warn_exit_zero:
        code = 0
    raise typer.Exit(code)


def _signing_key(sign: Path, output: Path | None) -> Ed25519PrivateKey:
    """The ``--sign`` key, after checking that there is a verdict file to sign and no envelope yet."""
    from gatestats.attest import KeyFileError, load_private_key, verdict_envelope_path

    if output is None:
        raise usage_error("--sign: signs the verdict file, so it needs -o/--output VERDICT")
    if os.path.lexists(verdict_envelope_path(output)):
        raise usage_error(f"{verdict_envelope_path(output)}: --sign: the envelope already exists; it is never replaced")
    try:
        return load_private_key(sign)
    except KeyFileError as exc:
        raise usage_error(str(exc)) from None


def _evaluate(policy: Path, baseline: Path, candidate: Path) -> Verdict:
    """The verdict; exit 2 on an invalid policy or refused registration, 1 on invalid record files."""
    from gatestats.gate import (
        PolicyError,
        RegistrationError,
        evaluate_gate,
        load_bound_judge_labels,
        load_judge_calibrations,
        load_policy,
        load_record_set,
    )

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
        labels, label_files = load_bound_judge_labels(loaded, set(cand.records.get_column("case_id").to_list()))
    except (GatestatsError, ValueError, OSError) as exc:
        raise usage_error(str(exc)) from None
    try:
        return evaluate_gate(
            loaded,
            base,
            cand,
            calibrations=load_judge_calibrations(loaded),
            golden=_golden_findings(loaded.golden_set, candidate),
            labels=labels,
            label_files=label_files,
        )
    except RegistrationError as exc:
        raise usage_error(str(exc)) from None


def _golden_findings(golden_set: Path | None, candidate: Path) -> GoldenFindings | None:
    """The policy's golden set checked against the candidate's run set, as data for the engine.

    ``None`` when the policy names no set; the reason (a string) when the set or the run set's
    manifest cannot be read, which blocks the gate like any finding.
    """
    from gatestats.gate.graders import GraderFinding
    from gatestats.golden import check_graders

    if golden_set is None:
        return None
    if not (golden_set / "golden.json").is_file():
        return f"{golden_set}: not a golden set (no golden.json; the policy's golden_set)"
    try:
        found = check_graders(golden_set, candidate)
    except (GatestatsError, ValueError, OSError) as exc:
        return str(exc)
    return tuple(GraderFinding(case_id=f.case_id, kind=f.kind, message=f.message) for f in found)


def _verdict_files(body: JSONObject, output: Path, signing_key: Ed25519PrivateKey | None) -> list[tuple[Path, bytes]]:
    """The verdict file's ``(path, bytes)`` and, when signing, its envelope's."""
    from gatestats.attest import sign_verdict, verdict_envelope_path
    from gatestats.gate.verdict import verdict_file_bytes

    data = verdict_file_bytes(body)
    files = [(output, data)]
    if signing_key is not None:
        envelope = sign_verdict(body, data, name=output.name, key=signing_key)
        files.append((verdict_envelope_path(output), envelope.to_json_line()))
    return files


def _print_verdict(verdict: Verdict, output: Path | None, digest: str) -> None:
    """The text verdict on stdout (200 columns when not a terminal), then the verdict file's path."""
    console = Console(emoji=False, soft_wrap=True)
    if not console.is_terminal:
        console = Console(emoji=False, soft_wrap=True, width=200)
    render_verdict(verdict, console)
    if output is not None:
        print(f"verdict file: {output} ({digest})")
