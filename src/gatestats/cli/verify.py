"""``gatestats verify``: re-check a verdict file, its signature, the policy, the registration and the records.

Exit codes: 0 every check passed (skipped checks are listed: a policy file that is not reachable, an
unsigned registration); 1 a check failed (each failure names file, field, expected and got) or the
verdict or envelope cannot be read strictly; 2 usage error (unknown option, an unusable key file).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from gatestats.cli._common import EXIT_INPUT_ERROR, fail, usage_error

__all__ = ["verify_command"]


def _printable(text: str) -> str:
    """``text`` with control and other invisible characters escaped (paths come from the verdict file)."""
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text)


def verify_command(
    verdict: Annotated[Path, typer.Argument(help="Verdict file written by `gatestats gate -o`.")],
    key: Annotated[
        Path | None,
        typer.Option("--key", help="Ed25519 public key (PEM): the verdict must carry a valid signature by it."),
    ] = None,
    envelope: Annotated[
        Path | None, typer.Option("--envelope", help="The verdict's envelope (default: VERDICT.intoto.jsonl).")
    ] = None,
    policy: Annotated[
        Path | None, typer.Option("--policy", help="The policy file, when not at the path the verdict names.")
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print every check as JSON.")] = False,
) -> None:
    """Re-check VERDICT: its digest, signature, policy, registration and every record file it names.

    \f
    Parameters
    ----------
    verdict, key
        The verdict file, and the public key whose signature it must carry (None: a signature is not
        required).
    envelope
        The verdict's envelope (None: beside the verdict).
    policy
        The policy file (None: the path the verdict names).
    as_json
        Print every check as JSON instead of a line each.

    Raises
    ------
    typer.Exit
        1 when a check fails or the verdict cannot be read; 2 when the key file is unusable.
    """
    from gatestats.attest import AttestationError, KeyFileError, load_public_key, verify_verdict

    try:
        public = None if key is None else load_public_key(key)
    except KeyFileError as exc:
        raise usage_error(str(exc)) from None
    try:
        report = verify_verdict(verdict, key=public, envelope=envelope, policy=policy)
    except AttestationError as exc:
        raise fail(_printable(str(exc))) from None
    if as_json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2, ensure_ascii=False, allow_nan=False) + "\n")
    else:
        for check in report.checks:
            print(_printable(f"{check.status:<7} {check.check:<22} {check}"))
        counts = report.counts
        if report.ok:
            skipped = counts["skipped"]
            print(f"verified: {counts['ok']} checks passed, {skipped} skipped (verdict file {report.file_digest})")
        else:
            print(f"NOT VERIFIED: {counts['failed']} of {len(report.checks)} checks failed")
    if not report.ok:
        for check in report.failures:
            print(_printable(f"error: {check}"), file=sys.stderr)
        raise typer.Exit(EXIT_INPUT_ERROR)
