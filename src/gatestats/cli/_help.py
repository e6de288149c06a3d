"""How ``--help`` reads: flags as flags, arguments by their names (``RECORDS...``), one plain layout.

Typer's rich help shows a type beside every parameter, so a flag reads as if it took a value
(``--json <bool>``) and a list argument as a Python type (``records... <list[Path]>``); its usage
line writes arguments as ``{records}...``. The commands here use click's plain layout instead, in
which a flag is shown alone, and name each argument the way a man page does: ``CASES``,
``RECORDS...`` (one or more), ``[NAME]`` when optional. Options that take a value keep their
type (``--trials <int range>``); a repeatable one shows the type of one value (``--pilot <path>``),
as typer 0.28 writes it (tests/cli/test_help.py refuses a ``<list[...]>``).

:func:`use_plain_help` applies this to every command of an app, its sub-apps included, so a new
command gets it without doing anything.
"""

from __future__ import annotations

from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand

__all__ = ["PlainHelpCommand", "argument_name", "use_plain_help"]


def argument_name(argument: TyperArgument) -> str:
    """The argument as help shows it: its metavar, or its name in capitals; ``...`` when it takes several.

    Parameters
    ----------
    argument
        A command's positional parameter.

    Returns
    -------
    str
        For example ``CASES`` or ``RECORDS...``.
    """
    name = argument.metavar or (argument.name or "").upper()  # typer names every argument (click types it optional)
    return f"{name}..." if argument.nargs != 1 else name


class PlainHelpCommand(TyperCommand):
    """A command whose help is click's plain layout, with arguments named as :func:`argument_name` does.

    The context and formatter are typed ``Any``: their classes live in typer's private ``_click``
    module, which nothing here imports (tests/test_architecture.py).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs["rich_markup_mode"] = None  # the plain layout: it shows a flag without a value
        super().__init__(*args, **kwargs)
        for param in self.params:
            if param.metavar is not None:
                continue
            if isinstance(param, TyperArgument):
                param.metavar = (param.name or "").upper()  # errors say "Missing argument 'RECORDS'", as help does

    def collect_usage_pieces(self, ctx: Any) -> list[str]:
        """``[OPTIONS]`` then each argument: ``NAME``, ``NAME...``, or ``[NAME]`` when optional.

        Parameters
        ----------
        ctx
            The click context.

        Returns
        -------
        list of str
            The pieces of the usage line.
        """
        pieces = [self.options_metavar] if self.options_metavar else []
        for param in self.get_params(ctx):
            if isinstance(param, TyperArgument):
                name = argument_name(param)
                pieces.append(name if param.required else f"[{name}]")
            else:
                pieces.extend(param.get_usage_pieces(ctx))
        return pieces

    def format_options(self, ctx: Any, formatter: Any) -> None:
        """The Arguments section (named by :func:`argument_name`, without a type), then the Options.

        Parameters
        ----------
        ctx
            The click context.
        formatter
            The click help formatter written to.
        """
        arguments: list[tuple[str, str]] = []
        options: list[tuple[str, str]] = []
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is None:
                continue
            if isinstance(param, TyperArgument):
                arguments.append((argument_name(param), record[1]))
            else:
                options.append(record)
        for title, rows in (("Arguments", arguments), ("Options", options)):
            if rows:
                with formatter.section(title):
                    formatter.write_dl(rows)


def use_plain_help(app: typer.Typer) -> None:
    """Give every command of ``app`` and of its sub-apps :class:`PlainHelpCommand` (unless it chose another class).

    Parameters
    ----------
    app
        The application, after its commands and sub-apps are registered.
    """
    for command in app.registered_commands:
        if command.cls in (None, TyperCommand):  # typer's default class, not one a command chose
            command.cls = PlainHelpCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            use_plain_help(group.typer_instance)
