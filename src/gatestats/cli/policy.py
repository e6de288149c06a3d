"""``gatestats policy``: check a gate policy, show its digest, register it in a run set before it runs.

Exit codes: 0 done; 2 invalid policy (every problem named with key and line) or a refused
registration (the run set has records already, or another policy is registered).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from gatestats.cli._common import usage_error

__all__ = ["app"]

#: :data:`gatestats.attest.REGISTRATION_ENVELOPE`, written out so that ``--help`` does not import the
#: attestation and gate stack (tests/cli/test_import_discipline.py checks that the two agree).
REGISTRATION_ENVELOPE = "registration.intoto.jsonl"

app = typer.Typer(help="Check and register gate policies.", no_args_is_help=True)


@app.command("check")
def check_command(
    policy: Annotated[Path, typer.Argument(help="Gate policy (TOML).")],
    as_json: Annotated[bool, typer.Option("--json", help="Print the parsed policy as JSON.")] = False,
) -> None:
    """Check POLICY strictly and print its digest.

    \f
    Parameters
    ----------
    policy, as_json
        The policy file; print it parsed, as JSON.

    Raises
    ------
    typer.Exit
        2 when the policy is invalid.
    """
    from gatestats.gate import PolicyError, load_policy

    try:
        loaded = load_policy(policy)
    except PolicyError as exc:
        raise usage_error(str(exc)) from None
    if as_json:
        body = loaded.to_dict() | {"rules": [r.name for r in loaded.rules]}
        sys.stdout.write(json.dumps(body, indent=2) + "\n")
    else:
        print(f"{policy}: valid gate policy {loaded.name!r} v{loaded.version}, {len(loaded.rules)} rules")
        print(f"digest: {loaded.digest}")


@app.command("register")
def register_command(
    policy: Annotated[Path, typer.Argument(help="Gate policy (TOML).")],
    run_set: Annotated[Path, typer.Argument(help="Run set directory that has no record yet.")],
    sign: Annotated[
        Path | None,
        typer.Option("--sign", help=f"Ed25519 private key (PEM): also write RUN_SET/{REGISTRATION_ENVELOPE}."),
    ] = None,
) -> None:
    """Write POLICY's digest and the time into RUN_SET's manifest, before its first record.

    \f
    Parameters
    ----------
    policy
        The policy file.
    run_set
        The run set directory (no record yet).
    sign
        A private key to sign the registration with (None: unsigned).

    Raises
    ------
    typer.Exit
        2 when the policy is invalid, the registration is refused or the signature cannot be written.
    """
    from gatestats.attest import (
        KeyFileError,
        check_registration_envelope,
        load_private_key,
        write_registration_envelope,
    )
    from gatestats.gate import PolicyError, RegistrationError, load_policy, register_policy

    try:
        key = None if sign is None else load_private_key(sign)
        loaded = load_policy(policy)
        reg = register_policy(loaded, run_set)
    except (KeyFileError, PolicyError, RegistrationError) as exc:
        raise usage_error(str(exc)) from None
    print(f"registered {loaded.digest} in {run_set} at {reg.registered_at}")
    if key is None:
        return
    envelope = run_set / REGISTRATION_ENVELOPE
    if envelope.exists():  # registering the same policy again: keep the first envelope if it is this key's
        problems = [c for c in check_registration_envelope(run_set, key.public_key()) if c.status != "ok"]
        if problems:
            raise usage_error("\n".join([f"{envelope}: exists and is never replaced, but:", *map(str, problems)]))
        print(f"already signed: {envelope}")
        return
    from gatestats.errors import GatestatsError
    from gatestats.records.runset import MANIFEST, read_run_set_manifest

    try:
        run_set_id = read_run_set_manifest(run_set / MANIFEST).get("run_set_id")
        written = write_registration_envelope(loaded, reg, run_set_id=run_set_id, key=key)
    except (OSError, GatestatsError) as exc:
        raise usage_error(f"{exc} (the registration itself is written; rerun with --sign to sign it)") from None
    print(f"signed: {written}")
