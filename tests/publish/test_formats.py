"""Every format of one published table: headers, legend, notes, and hostile texts escaped per format."""

from __future__ import annotations

import io
import re

import polars as pl
import pytest

from gatestats.publish import Column, PublishedTable, render, render_summary
from gatestats.vocabulary import TABLE_FORMATS

HOSTILE = "<script>alert(1)</script> `code` a|b & 50% x_y $5 \\cmd {z} #1 ~t ^u *em* [l](u)"
CONTROL = "line\nbreak\x00nul\x1b[31mred\u202eevil"


def _table(name: str = HOSTILE) -> PublishedTable:
    data = pl.DataFrame({"system": [name, "plain"], "rate": [0.5, 0.25], "system_label": [name, "plain"]})
    return PublishedTable(
        title=f"title {name}",
        columns=(Column(header=f"system {name}"), Column(header="rate", numeric=True)),
        rows=((name, "0.500 (1/2)"), ("plain", "0.250 (1/4)")),
        data=data,
        notes=(f"note {name}",),
        legend=("* : p (exact) <= 0.05",),
    )


def test_rows_must_match_the_columns() -> None:
    with pytest.raises(ValueError, match="row 1 has 1 cells for 2 columns"):
        PublishedTable(title="t", columns=(Column(header="a"), Column(header="b")), rows=(("x",),), data=pl.DataFrame())


def test_markdown_escapes_every_special_and_keeps_one_row_per_line() -> None:
    text = render(_table(), "markdown")
    lines = text.splitlines()
    assert lines[0].startswith("**title ")
    assert lines[2] == "| system " + _md(HOSTILE) + " | rate |"
    assert lines[3] == "|:---|---:|"
    assert lines[4] == f"| {_md(HOSTILE)} | 0.500 (1/2) |"
    assert "<script>" not in text
    assert "&lt;script&gt;" in text
    assert "a\\|b" in text
    assert "\\`code\\`" in text
    assert "x\\_y" in text
    assert "\\$5" in text
    assert "&amp;" in text
    assert lines[-2:] == ["\\* : p (exact) &lt;= 0.05  ", f"note {_md(HOSTILE)}"]
    assert all(line.count("|") - line.count("\\|") == 3 for line in lines[2:6])  # 2 columns: 3 unescaped pipes


def _md(text: str) -> str:
    escaped = re.sub(r"([\\`*_\[\]|~$])", r"\\\1", text)
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def test_html_escapes_markup() -> None:
    text = render(_table(), "html")
    assert "<script>" not in text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "a|b &amp; 50% x_y $5" in text
    assert render(_table(), "html") == text  # a stable id: the same table gives the same bytes


def test_latex_escapes_specials() -> None:
    text = render(_table(), "latex")
    body = "\\textless{}script\\textgreater{}alert(1)\\textless{}/script\\textgreater{} \\textasciigrave{}code"
    assert body in text
    for escaped in ("a\\textbar{}b", "\\&", "50\\%", "x\\_y", "\\$5", "\\textbackslash{}cmd", "\\{z\\}", "\\#1"):
        assert escaped in text
    assert "\\textasciitilde{}t" in text
    assert "\\textasciicircum{}u" in text
    assert "\\toprule" in text
    assert "\\bottomrule" in text
    assert "* : p (exact) \\textless{}= 0.05" in text


@pytest.mark.parametrize("fmt", ["terminal", "markdown", "latex", "html"])
def test_control_characters_are_shown_escaped_never_raw(fmt: str) -> None:
    text = render(_table(CONTROL), fmt)  # type: ignore[arg-type]
    for raw in ("\x00", "\x1b", "\u202e", "break\x00"):
        assert raw not in text
    backslash = "\\textbackslash{}" if fmt == "latex" else "\\\\" if fmt == "markdown" else "\\"
    assert f"{backslash}x00nul" in text
    assert f"{backslash}u202eevil" in text
    assert "line\nbreak" not in text


def test_terminal_folds_long_names_never_cuts_them() -> None:
    name = "20250807_mini-v1.7.0_claude-sonnet-4-20250514-very-long-system-name"
    text = render(_table(name), "terminal", width=60)
    assert "…" not in text
    assert all(len(line) <= 60 for line in text.splitlines())
    cells = "".join(line.split("│")[1].strip() for line in text.splitlines() if line.startswith("│"))
    assert name in cells
    assert "[" not in render(_table("[bold]x[/bold]"), "terminal").replace("[bold]x[/bold]", "")  # no markup parsed


def test_csv_is_the_data_frame() -> None:
    text = render(_table('a,"b"\nc'), "csv")
    assert pl.read_csv(io.StringIO(text)).equals(_table('a,"b"\nc').data)


def test_summary_is_short_and_counts_the_rows_left_out() -> None:
    rows = tuple((f"s{i}", f"{i}") for i in range(30))
    table = PublishedTable(
        title="t", columns=(Column(header="s"), Column(header="n", numeric=True)), rows=rows, data=pl.DataFrame()
    )
    text = render_summary(table, max_rows=5)
    assert "s4" in text
    assert "s5 " not in text
    assert "... and 25 more row(s)" in text
    assert len(text.splitlines()) <= 15


def test_every_format_is_offered_and_unknown_ones_refused() -> None:
    assert set(TABLE_FORMATS) == {"terminal", "markdown", "latex", "html", "csv"}
    with pytest.raises(ValueError, match="format"):
        render(_table(), "json")  # type: ignore[arg-type]
