"""Shared CLI helpers: one way to report an error and exit."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from typing import ParamSpec, TypeVar

import typer

from gatestats.errors import GatestatsError

__all__ = ["EXIT_INPUT_ERROR", "fail", "reports_errors"]

EXIT_INPUT_ERROR = 1
P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str) -> typer.Exit:
    """Print ``message`` to standard error and return the exit to raise."""
    for line in message.splitlines():
        print(f"error: {line}", file=sys.stderr)
    return typer.Exit(EXIT_INPUT_ERROR)


def reports_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn gatestats' input errors into a message on stderr and exit status 1 (no traceback)."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (GatestatsError, ValueError, FileExistsError, OSError) as exc:
            raise fail(str(exc)) from None

    return wrapper
