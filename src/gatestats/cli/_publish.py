"""The publishing options, declared once: ``--format``, ``--output``, ``--label``, ``--labels`` (docs/publish.md).

A command checks them with :func:`checked_publishing` (before it reads any record: a usage error
stays fast) and hands its result to :func:`emit`: the terminal tables it always drew, the JSON
object (``--json`` is the short form of ``--format json``), or the result's published table
(``result.table(labels)``) rendered as Markdown, LaTeX, HTML or CSV. ``--output FILE`` writes the
whole text atomically (a temporary file renamed over the target, :func:`gatestats.io.files.write_atomic`):
on any error nothing, or the previous file, is left -- never half a table. It refuses a file the
command reads (a record file, or a file inside a run set directory given as input).
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from gatestats.cli._common import usage_error
from gatestats.publish.labels import Labels, LabelsError
from gatestats.vocabulary import OUTPUT_FORMATS, OutputFormat

if TYPE_CHECKING:
    from rich.console import Console

    from gatestats.publish.formats import PublishedTable

__all__ = [
    "FormatOption",
    "LabelOption",
    "LabelsFileOption",
    "OutputOption",
    "Publishing",
    "checked_publishing",
    "emit",
    "labelled_json",
]

FormatOption = Annotated[str, typer.Option("--format", help=f"Output format: {', '.join(OUTPUT_FORMATS)}.")]
OutputOption = Annotated[
    Path | None, typer.Option("--output", help="Write the output to this file (atomically) instead of standard output.")
]
LabelOption = Annotated[
    list[str] | None, typer.Option("--label", help="OLD=NEW: show the system (or id) OLD as NEW; repeatable.")
]
LabelsFileOption = Annotated[
    Path | None, typer.Option("--labels", help="Labels file: CSV with the header name,label, or TOML with [labels].")
]
#: The JSON keys whose values are ids a label may stand for.
ID_KEYS = ("baseline", "candidate", "system", "slice")
#: The least width of a terminal table written to a file (no terminal to measure).
FILE_WIDTH = 120


@dataclass(frozen=True, slots=True, kw_only=True)
class Publishing:
    """The checked publishing options of one command.

    Attributes
    ----------
    fmt
        The output format (``--json`` already folded into ``json``).
    output
        The file written, or None for standard output.
    labels
        The display names (empty: the ids themselves).
    """

    fmt: OutputFormat
    output: Path | None
    labels: Labels = field(default_factory=Labels)


def checked_publishing(
    *,
    fmt: str,
    as_json: bool,
    output: Path | None,
    label: Sequence[str] | None,
    labels_file: Path | None,
    inputs: Sequence[Path],
) -> Publishing:
    """Check the publishing options (usage errors, exit 2, each naming its option).

    Parameters
    ----------
    fmt, as_json, output, label, labels_file
        ``--format``, ``--json``, ``--output``, ``--label`` (repeated), ``--labels``.
    inputs
        The files and directories the command reads (``--output`` may not be one of them or inside one).

    Returns
    -------
    Publishing
        The options.

    Raises
    ------
    typer.BadParameter
        An unknown format, ``--json`` with another ``--format``, or an ``--output`` the command reads.
    typer.Exit
        A refused label or labels file (exit 2; the message names the file or ``--label``, line and field).
    """
    if fmt not in OUTPUT_FORMATS:
        raise typer.BadParameter(f"expected one of {', '.join(OUTPUT_FORMATS)} (got {fmt!r})", param_hint="--format")
    if as_json and fmt not in ("terminal", "json"):
        msg = f"--json is the short form of --format json; it cannot go with --format {fmt}"
        raise typer.BadParameter(msg, param_hint="--json")
    if output is not None:
        _check_output(output, inputs)
    try:
        labels = Labels.from_options(tuple(label or ()), labels_file)
    except LabelsError as exc:
        raise usage_error(str(exc)) from None
    return Publishing(fmt="json" if as_json else fmt, output=output, labels=labels)


def _check_output(output: Path, inputs: Sequence[Path]) -> None:
    """Refuse an ``--output`` that is a directory, or a file the command reads (or inside a directory it reads)."""
    if output.is_dir():
        raise typer.BadParameter(f"{output} is a directory (expected a file to write)", param_hint="--output")
    target = output.resolve()
    for given in inputs:
        source = given.resolve()
        if target == source or (given.is_dir() and source in target.parents):
            msg = f"{output} is an input of this command ({given}): writing it would destroy what was read"
            raise typer.BadParameter(msg, param_hint="--output")


def labelled_json(payload: Any, labels: Labels, keys: Iterable[str] = ID_KEYS) -> Any:
    """``payload`` with ``<key>_label`` beside each id key of its objects, at any depth.

    JSON keeps the ids; a label is added beside an id only when labels were given, so the JSON of a
    command without labels is unchanged.

    Parameters
    ----------
    payload
        The JSON object, or a list of objects.
    labels
        The labels.
    keys
        The id keys.

    Returns
    -------
    Any
        The payload (a new object where a label was added).
    """
    if not labels:
        return payload
    if isinstance(payload, list):
        return [labelled_json(item, labels, keys) for item in payload]
    if not isinstance(payload, dict):
        return payload
    out = {key: labelled_json(value, labels, keys) for key, value in payload.items()}
    for key in keys:
        value = payload.get(key)
        if isinstance(value, str):
            out[f"{key}_label"] = labels(value)
    return out


def emit(
    publishing: Publishing,
    *,
    table: Callable[[Labels], PublishedTable],
    payload: Callable[[], Any],
    terminal: Callable[[Console], None],
    width: int = FILE_WIDTH,
) -> None:
    """Print or write a command's result in the chosen format.

    Parameters
    ----------
    publishing
        The checked options.
    table
        The result's published table for some labels (``result.table``); built first when labels
        were given, so a label that names no id is refused in every format.
    payload
        The JSON object (``json`` only; it may hold no NaN).
    terminal
        Draws the command's terminal tables on a console.
    width
        The least width of the terminal tables.

    Raises
    ------
    LabelsError
        A label names none of the ids shown.
    OSError
        ``--output`` cannot be written (nothing is left half-written).
    """
    fmt = publishing.fmt
    published = table(publishing.labels) if publishing.labels or fmt not in ("terminal", "json") else None
    if fmt == "json":
        text = json.dumps(labelled_json(payload(), publishing.labels), allow_nan=False) + "\n"
    elif fmt == "terminal" and publishing.output is None:
        from rich.console import Console  # only the terminal tables need rich (not --json)

        terminal(Console(emoji=False, width=max(Console(emoji=False).width, width)))
        return
    elif fmt == "terminal":
        from rich.console import Console

        console = Console(emoji=False, file=io.StringIO(), width=width, color_system=None, force_terminal=False)
        terminal(console)
        text = console.file.getvalue()  # type: ignore[attr-defined]
    else:
        from gatestats.publish.formats import render

        assert published is not None  # built above for every table format
        text = render(published, fmt)
    _write(text, publishing.output)


def _write(text: str, output: Path | None) -> None:
    if output is None:
        typer.echo(text, nl=False)
        return
    from gatestats.io.files import write_atomic

    write_atomic(output, text.encode("utf-8"))
    typer.echo(f"wrote {output}", err=True)
