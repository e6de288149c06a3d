"""``print_line`` writes the bytes rich would, with or without importing rich (issue 28 item 2, session 48).

``gatestats validate`` prints its one line through :func:`gatestats.cli._common.print_line`, which skips rich (~30 ms
of CPU at every start) when rich would write the line unchanged. The oracle is rich itself: for every line and every
width rich could take (``COLUMNS``, the terminals on standard input, output and error), the two ways give the same
bytes, whichever way ``print_line`` took.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import pytest
from rich.console import Console

from gatestats.cli import _common
from gatestats.cli._common import print_line

VALIDATE_LINE = "ok: 6 records in 1 file(s) satisfy the run-record contract v1"
#: Lines rich writes unchanged at a wide enough width, and lines it marks up, sanitises, wraps or measures otherwise.
LINES = (
    VALIDATE_LINE,
    "ok: 1234567890123 records in 123456 file(s) satisfy the run-record contract v1",
    "a" * 79,
    "a" * 80,
    "a" * 81,
    "words " * 13 + "end",
    "two  spaces and (parentheses) and :colons: and 100%",
    "x [bold]y[/bold] z",
    "an escaped \\[not markup]",
    "tab\there",
    "line\nbreak",
    "\x1b[31mred\x1b[0m",
    "accent é and wide 漢字 and an emoji 🙂",
    "漢" * 45,
    " leading space",
    "trailing space ",
    "a" * 79 + " ",
    " " * 80,
    "",
)
#: ``COLUMNS`` as the environment may give it (None: unset).
COLUMNS = (None, "0", "abc", "10", "60", "61", "79", "80", "81", "200")


def _no_terminal(descriptor: int) -> os.terminal_size:
    raise OSError(descriptor)


def _terminals(sizes: dict[int, int]) -> Callable[[int], os.terminal_size]:
    """A stand-in for ``os.get_terminal_size``: the descriptors in ``sizes`` are terminals of that many columns."""

    def get(descriptor: int = 1) -> os.terminal_size:
        if descriptor not in sizes:
            raise OSError(descriptor)
        return os.terminal_size((sizes[descriptor], 24))

    return get


#: Which of standard input, output and error are terminals, and their widths.
TERMINALS = {
    "none": _no_terminal,
    "stdin 0 columns": _terminals({0: 0}),
    "stdin 40": _terminals({0: 40}),
    "stdout 60": _terminals({1: 60}),
    "stdin 200, stdout 40": _terminals({0: 200, 1: 40}),
    "stderr 61": _terminals({2: 61}),
    "stdin 120": _terminals({0: 120}),
}


@pytest.mark.parametrize("terminal", TERMINALS)
@pytest.mark.parametrize("columns", COLUMNS)
def test_print_line_writes_what_rich_writes(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, columns: str | None, terminal: str
) -> None:
    if columns is None:
        monkeypatch.delenv("COLUMNS", raising=False)
    else:
        monkeypatch.setenv("COLUMNS", columns)
    monkeypatch.delenv("LINES", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", TERMINALS[terminal])
    for line in LINES:
        print_line(line)
        ours = capsys.readouterr()
        Console(emoji=False).print(line, highlight=False)
        assert ours == capsys.readouterr(), (line, columns, terminal)


def test_the_validate_line_skips_rich_where_no_terminal_or_columns_narrows_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The way the suite's and a pipeline's `gatestats validate` take (tests/cli/test_import_discipline.py: no rich).
    monkeypatch.delenv("COLUMNS", raising=False)
    monkeypatch.setattr(os, "get_terminal_size", _no_terminal)
    assert _common._rich_width_at_least(len(VALIDATE_LINE))
    monkeypatch.setattr(os, "get_terminal_size", _terminals({0: 120}))
    assert _common._rich_width_at_least(len(VALIDATE_LINE))
    monkeypatch.setenv("COLUMNS", str(len(VALIDATE_LINE) - 1))
    assert not _common._rich_width_at_least(len(VALIDATE_LINE))
