"""Shared CLI helpers: one way to report an error and exit."""

from __future__ import annotations

import functools
import json
import os
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any, Literal, ParamSpec, TypeVar, cast, get_args

import typer

from gatestats._typing import JSONValue
from gatestats.errors import GatestatsError
from gatestats.io.text import TEXT_LIMIT, visible

__all__ = [
    "EXIT_INPUT_ERROR",
    "EXIT_USAGE",
    "BootstrapSeedOption",
    "ConfidenceLevelOption",
    "Isolation",
    "IsolationOption",
    "RecordFilesArgument",
    "ResamplesOption",
    "checked_bootstrap_options",
    "checked_isolation",
    "checked_option",
    "comma_separated",
    "echo_json",
    "fail",
    "load_cli_records",
    "reports_errors",
    "usage_error",
]

EXIT_INPUT_ERROR = 1
EXIT_USAGE = 2

#: Options several commands share (the same words in every ``--help``).
RecordFilesArgument = Annotated[list[Path], typer.Argument(help="Record files (.jsonl, .parquet, .csv).")]
ConfidenceLevelOption = Annotated[float, typer.Option(help="Two-sided confidence level.")]
ResamplesOption = Annotated[int, typer.Option(help="Bootstrap resamples.")]
BootstrapSeedOption = Annotated[int, typer.Option(help="Seed of the case-level bootstrap (recorded).")]
IsolationOption = Annotated[str, typer.Option("--isolation", help="auto | bwrap | none.")]
#: The sandbox isolation of the commands that run trials (``run``, ``correct``), as the runner takes it.
Isolation = Literal["auto", "bwrap", "none"]
P = ParamSpec("P")
R = TypeVar("R")


def fail(message: str, *, code: int = EXIT_INPUT_ERROR) -> typer.Exit:
    """Print ``message`` to standard error and return the exit to raise (input error by default).

    Parameters
    ----------
    message
        The error; each of its lines is printed after ``error:``, control characters escaped.
    code
        The exit status.

    Returns
    -------
    typer.Exit
        The exit for the caller to raise.
    """
    for line in message.splitlines():
        print(f"error: {visible(line, keep=chr(9), limit=TEXT_LIMIT)}", file=sys.stderr)
    return typer.Exit(code)


def usage_error(message: str) -> typer.Exit:
    """Print ``message`` to standard error and return the usage-error exit (2).

    A usage error is a bad option, an invalid policy or a refused policy registration.

    Parameters
    ----------
    message
        The error.

    Returns
    -------
    typer.Exit
        The exit (status 2) for the caller to raise.
    """
    return fail(message, code=EXIT_USAGE)


def comma_separated(text: str) -> tuple[str, ...]:
    """The items of a comma-separated option value, stripped, blank ones left out.

    The options that take a list in one value read it so: ``--require-enforced``, ``--by``, ``--systems``.

    Parameters
    ----------
    text
        The option's value, e.g. ``"memory, disk"``.

    Returns
    -------
    tuple of str
        The items in order, e.g. ``("memory", "disk")``; empty for a blank value.
    """
    return tuple(item.strip() for item in text.split(",") if item.strip())


def checked_isolation(isolation: str) -> Isolation:
    """Check ``--isolation``: ``auto``, ``bwrap`` or ``none``, else a usage error (exit 2).

    ``run`` and ``correct`` check it first, before any other option or file.

    Parameters
    ----------
    isolation
        The option's value.

    Returns
    -------
    Isolation
        The value, typed as the runner takes it.

    Raises
    ------
    typer.Exit
        The value is none of the three (the message printed).
    """
    if isolation not in get_args(Isolation):
        raise usage_error(f"--isolation: expected auto, bwrap or none (got {isolation!r})")
    return cast("Isolation", isolation)


def reports_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn gatestats' input errors into a message on stderr and exit status 1 (no traceback).

    Parameters
    ----------
    command
        A command function.

    Returns
    -------
    Callable
        The command, raising ``typer.Exit(1)`` where it raised a :class:`~gatestats.errors.GatestatsError`,
        ``ValueError`` or ``OSError``.
    """

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except (GatestatsError, ValueError, FileExistsError, OSError) as exc:
            raise fail(str(exc)) from None

    return wrapper


def echo_json(payload: Mapping[str, JSONValue], records: Sequence[str | os.PathLike[str]] | None = None) -> None:
    """Print a command's ``--json`` object (no NaN), with the record files it read when given.

    Parameters
    ----------
    payload
        The object to print.
    records
        The record files the command read, added as ``records`` (None: not added).

    Raises
    ------
    ValueError
        ``payload`` holds NaN or infinity.
    """
    if records is not None:
        payload = {**payload, "records": [str(p) for p in records]}
    typer.echo(json.dumps(payload, allow_nan=False))


T = TypeVar("T")


def load_cli_records(
    paths: Sequence[str | os.PathLike[str]], *, columns: Sequence[str] | None = None
) -> tuple[Any, tuple[Any, ...]]:
    """The records of ``paths`` and what was read of each (:func:`gatestats.records.load_record_files`).

    Zero records is never "ok": a file or run set with no record is an error naming it (exit 1),
    in every command that reads records, so an empty or blank-lines file cannot read as an
    analysis of nothing or a contract check that passed.

    Parameters
    ----------
    paths
        The record files or run set directories given on the command line.
    columns
        As :func:`gatestats.records.load_record_files`.

    Returns
    -------
    tuple
        The records (a polars DataFrame) and one :class:`~gatestats.records.io.RecordFileInfo` per path.

    Raises
    ------
    RecordFileError
        A defect in a file, or a file without any record (file named).
    """
    from gatestats.errors import RecordFileError
    from gatestats.records import load_record_files

    frame, infos = load_record_files(list(paths), columns=columns)
    for path, info in zip(paths, infos, strict=True):
        if info.n_records == 0:
            raise RecordFileError.single(path, "<file>", "no records: an empty input is not evidence of anything")
    return frame, infos


def checked_option(check: Callable[..., T], value: object, hint: str, *args: Any, **kwargs: Any) -> T:
    """Run a :mod:`gatestats.vocabulary` check on a command-line option, as a usage error.

    Parameters
    ----------
    check
        The check, e.g. :func:`gatestats.vocabulary.check_confidence_level`; it is called as
        ``check(value, *args, hint, **kwargs)``, so its message names ``hint``.
    value
        The option's value.
    hint
        The option as typed, e.g. ``--confidence-level``.
    *args, **kwargs
        Further arguments of the check (the choices of :func:`~gatestats.vocabulary.check_choice`,
        the ``minimum`` of :func:`~gatestats.vocabulary.check_n_resamples`).

    Returns
    -------
    T
        What the check returns.

    Raises
    ------
    typer.BadParameter
        The check refused the value; the message (without the option's name, which typer adds) is
        the check's.
    """
    try:
        return check(value, *args, hint, **kwargs)
    except ValueError as exc:
        raise typer.BadParameter(str(exc).removeprefix(f"{hint} "), param_hint=hint) from None


def checked_bootstrap_options(confidence_level: float, n_resamples: int, seed: int) -> None:
    """Check ``--confidence-level``, ``--n-resamples`` and ``--seed`` of a bootstrap command, in turn.

    Parameters
    ----------
    confidence_level, n_resamples, seed
        The options' values.

    Raises
    ------
    typer.BadParameter
        The first option refused (see :func:`checked_option`).
    """
    # here, not at the top: gatestats.vocabulary imports polars, which the commands that take no frame (run,
    # correct, watch, policy, key, ...) need late or never (a killed `correct` paid it before its first round)
    from gatestats.vocabulary import check_confidence_level, check_n_resamples, check_seed

    checked_option(check_confidence_level, confidence_level, "--confidence-level")
    checked_option(check_n_resamples, n_resamples, "--n-resamples")
    checked_option(check_seed, seed, "--seed")
