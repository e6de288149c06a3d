"""Shared CLI helpers: one way to report an error and exit."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Sequence
from typing import Any, ParamSpec, TypeVar

import typer

from gatestats._text import TEXT_LIMIT, visible
from gatestats.errors import GatestatsError

__all__ = ["EXIT_INPUT_ERROR", "EXIT_USAGE", "echo_json", "fail", "reports_errors", "usage_error"]

EXIT_INPUT_ERROR = 1
EXIT_USAGE = 2
P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str, *, code: int = EXIT_INPUT_ERROR) -> typer.Exit:
    """Print ``message`` to standard error and return the exit to raise (input error by default)."""
    for line in message.splitlines():
        print(f"error: {visible(line, keep=chr(9), limit=TEXT_LIMIT)}", file=sys.stderr)
    return typer.Exit(code)


def usage_error(message: str) -> typer.Exit:
    """Print ``message`` to standard error and return the usage-error exit (2): bad options, an invalid
    policy, a refused policy registration."""
    return fail(message, code=EXIT_USAGE)


def reports_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn gatestats' input errors into a message on stderr and exit status 1 (no traceback)."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (GatestatsError, ValueError, FileExistsError, OSError) as exc:
            raise fail(str(exc)) from None

    return wrapper


def echo_json(payload: dict[str, Any], records: Sequence[str | os.PathLike[str]] | None = None) -> None:
    """Print a command's ``--json`` object (no NaN), with the record files it read when given."""
    if records is not None:
        payload = {**payload, "records": [str(p) for p in records]}
    typer.echo(json.dumps(payload, allow_nan=False))
