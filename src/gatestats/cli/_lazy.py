"""Subcommands imported when they are used, so that ``gatestats --help`` and each command start fast.

A command's module is imported only when the command runs, when its own ``--help`` is shown, or
when something asks the group for it by name (completion, ``Did you mean ...?``). The group's
``--help`` lists every command with its one-line summary without importing any of them: the
summaries are written out in :data:`gatestats.cli.COMMANDS`, and
tests/cli/test_import_discipline.py checks that each equals the first paragraph of the loaded
command's help, so the listing reads exactly as if every command were imported.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterator, Mapping, MutableMapping
from dataclasses import dataclass
from typing import Any, ClassVar

import typer
import typer.main
from typer.core import TyperCommand, TyperGroup

from gatestats.cli._help import use_plain_help

__all__ = ["LazyCommand", "LazyCommands", "LazyGroup", "load_command"]


@dataclass(frozen=True, slots=True, kw_only=True)
class LazyCommand:
    """Where a subcommand lives and how ``gatestats --help`` summarises it.

    Attributes
    ----------
    module
        The module that defines it, e.g. ``gatestats.cli.analyze``.
    attribute
        The command function, or the :class:`typer.Typer` of a command group (``app``).
    summary
        The first paragraph of its help: the command's docstring, or the group's ``help``.
    """

    module: str
    attribute: str
    summary: str


def load_command(name: str, where: LazyCommand, settings: Mapping[str, Any]) -> Any:
    """Import a subcommand's module and build its click command as ``app.command(name)`` would.

    Parameters
    ----------
    name
        The subcommand's name.
    where
        Its module and attribute.
    settings
        The parent :class:`typer.Typer`'s settings (markup mode, exception display), which typer
        passes down to its commands.

    Returns
    -------
    Any
        The click command (a :class:`typer.core.TyperGroup` for a command group).
    """
    target = getattr(importlib.import_module(where.module), where.attribute)
    holder = typer.Typer(**settings)
    if isinstance(target, typer.Typer):
        holder.add_typer(target, name=name)
    else:
        holder.command(name)(target)
    use_plain_help(holder)
    return typer.main.get_group(holder).commands[name]


class LazyCommands(MutableMapping[str, Any]):
    """A group's commands by name: every name known from the start, each command built on first access.

    Parameters
    ----------
    table
        The lazily imported commands, in the order ``--help`` lists them.
    load
        Builds one command from its name.
    """

    def __init__(self, table: Mapping[str, LazyCommand], load: Callable[[str], Any]) -> None:
        self._table = table
        self._load = load
        self._loaded: dict[str, Any] = {}
        self._order = list(table)

    def __getitem__(self, name: str) -> Any:
        if name not in self._loaded:
            if name not in self._table:
                raise KeyError(name)
            self._loaded[name] = self._load(name)
        return self._loaded[name]

    def __setitem__(self, name: str, command: Any) -> None:
        if name not in self._order:
            self._order.append(name)
        self._loaded[name] = command

    def __delitem__(self, name: str) -> None:
        if name not in self._order:
            raise KeyError(name)
        self._order.remove(name)
        self._loaded.pop(name, None)

    def __iter__(self) -> Iterator[str]:
        return iter(list(self._order))

    def __len__(self) -> int:
        return len(self._order)

    def __contains__(self, name: object) -> bool:
        return name in self._order

    def summary(self, name: str) -> str | None:
        """The written-out summary of a command not imported yet (None once it is, or for others).

        Parameters
        ----------
        name
            The subcommand's name.

        Returns
        -------
        str or None
            Its summary, when the command has not been built.
        """
        if name in self._loaded or name not in self._table:
            return None
        return self._table[name].summary


class LazyGroup(TyperGroup):
    """The top-level group: its commands are a :class:`LazyCommands` filled by :func:`load_command`.

    Subclasses set :attr:`table` and :attr:`settings`; ``typer.Typer(cls=...)`` creates the group.
    """

    table: ClassVar[Mapping[str, LazyCommand]] = {}
    settings: ClassVar[Mapping[str, Any]] = {}
    _built_commands: ClassVar[dict[str, Any]]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        eager = dict(self.commands)
        self.commands = LazyCommands(self.table, self.built)
        self.commands.update(eager)

    @classmethod
    def built(cls, name: str) -> Any:
        """The command ``name``, built by :func:`load_command` once per process and class.

        typer builds a new group at every call of the application (each in-process invocation:
        ``CliRunner.invoke``, a program calling ``app`` again), and building a command reads its
        function's signature and annotations again (≈ 7 ms); a click command holds no state of an
        invocation, so the one built first serves every later group (issue 28, item 3: a third of
        the in-process CLI tests' CPU). The console script calls the application once: no change.

        Parameters
        ----------
        name
            The subcommand's name, a key of :attr:`table`.

        Returns
        -------
        Any
            The click command.
        """
        if "_built_commands" not in cls.__dict__:  # one cache per subclass, not shared through the base
            cls._built_commands = {}
        cache = cls._built_commands
        if name not in cache:
            cache[name] = load_command(name, cls.table[name], cls.settings)
        return cache[name]

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The Commands section, as click writes it, from the summaries of the commands not imported yet.

        A command already imported (or registered eagerly) is listed from its own help; a hidden one is not.

        Parameters
        ----------
        ctx
            The click context.
        formatter
            Where the section is written.
        """
        commands = self.commands
        if not isinstance(commands, LazyCommands):  # pragma: no cover - set in __init__
            super().format_commands(ctx, formatter)
            return
        names = list(commands)
        if not names:
            return
        limit = formatter.width - 6 - max(len(name) for name in names)
        rows: list[tuple[str, str]] = []
        for name in names:
            summary = commands.summary(name)
            if summary is None:
                command = commands[name]
                if command.hidden:
                    continue
                rows.append((name, command.get_short_help_str(limit)))
            else:
                # A stand-in with the same help: click shortens it exactly as it would the command's.
                rows.append((name, TyperCommand(name=name, help=summary).get_short_help_str(limit)))
        with formatter.section("Commands"):
            formatter.write_dl(rows)
