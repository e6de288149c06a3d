"""``gatestats key``: make an Ed25519 key pair for signing verdicts and policy registrations.

Exit codes: 0 written; 2 a key file exists already (never replaced) or cannot be written.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gatestats.cli._common import usage_error

__all__ = ["app"]

app = typer.Typer(help="Make signing keys (Ed25519, PEM).", no_args_is_help=True)


@app.command("generate")
def generate_command(
    out: Annotated[Path, typer.Option("--out", help="Prefix: writes PREFIX.key (private, mode 0600) and PREFIX.pub.")],
) -> None:
    """Write a new Ed25519 key pair: PREFIX.key (PKCS #8 PEM, 0600) and PREFIX.pub (public PEM).

    \f
    Parameters
    ----------
    out
        The prefix of the two key files.

    Raises
    ------
    typer.Exit
        2 when a key file exists already or cannot be written.
    """
    from gatestats.attest import generate_key_pair

    try:
        pair = generate_key_pair(out)
    except OSError as exc:
        raise usage_error(str(exc)) from None
    print(f"private key: {pair.private} (mode 0600; keep it secret)")
    print(f"public key:  {pair.public}")
    print(f"key id:      {pair.key_id}")
