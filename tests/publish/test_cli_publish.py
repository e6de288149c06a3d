"""``--format``, ``--output``, ``--label`` and ``--labels`` on ``gatestats compare`` (end to end)."""

from __future__ import annotations

import io
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import pytest
import typer
from typer.testing import CliRunner

from gatestats.cli.compare import compare_command
from tests.paired.conftest import table_records, trial_records
from tests.paired.test_cli import _write

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("compare")(compare_command)
app.command("other")(lambda: None)
runner = CliRunner()
LONG = "20250807_mini-v1.7.0_claude-sonnet-4-20250514-with-a-long-suffix"


def _plain(text: str) -> str:
    """Usage errors come in a rich box that wraps lines: drop the box and join the words."""
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, [str(a) for a in args], catch_exceptions=False)


@pytest.fixture
def three(tmp_path: Path) -> Path:
    rng = np.random.default_rng(2)
    ease = rng.random(60)
    names = (("A", 0), (LONG, 0.05), ("C|<b>&_%$", 0.3))
    outcomes = {s: [[int(rng.random() < min(1, e + d))] for e in ease] for s, d in names}
    return _write(trial_records(outcomes), tmp_path / "three.jsonl")


def test_terminal_table_has_named_p_columns_decision_and_whole_names(three: Path) -> None:
    result = _invoke("compare", three, "--all-pairs")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "…" not in out
    assert "decision" in out
    assert "status" not in out
    assert " ok " not in out
    assert "* : p adjusted (holm, mid-p) <= 0.05" in out
    # Holm's family has simultaneous intervals beside the per-comparison ones, and the note says which is which.
    assert "the 3 intervals hold together at 95%, compatible with the holm-adjusted decision" in " ".join(out.split())
    hochberg = _invoke("compare", three, "--all-pairs", "--correction", "hochberg")
    assert "per-comparison, not adjusted for the 3 comparisons" in " ".join(hochberg.stdout.split())
    folded = "".join(line.split("│")[1].strip() for line in out.splitlines() if line.startswith("│"))
    assert LONG in folded


def test_markdown_latex_html_csv_from_one_command(three: Path, tmp_path: Path) -> None:
    markdown = _invoke("compare", three, "--all-pairs", "--format", "markdown", "--label", f"{LONG}=Long")
    assert markdown.exit_code == 0, markdown.stderr
    lines = markdown.stdout.splitlines()
    assert lines[2].startswith("| baseline | candidate | pairs |")
    assert "p adjusted (holm, mid-p)" in lines[2]
    assert lines[4].startswith("| Long | A | 60 |")
    assert "C\\|&lt;b&gt;&amp;\\_%\\$" in markdown.stdout
    latex = _invoke("compare", three, "--all-pairs", "--format", "latex")
    assert "\\begin{tabular" in latex.stdout
    assert "C\\textbar{}\\textless{}b\\textgreater{}\\&\\_\\%\\$" in latex.stdout
    html = _invoke("compare", three, "--all-pairs", "--format", "html")
    assert "C|&lt;b&gt;&amp;_%$" in html.stdout
    assert "<b>&" not in html.stdout
    csv = _invoke("compare", three, "--all-pairs", "--format", "csv")
    frame = pl.read_csv(io.StringIO(csv.stdout), schema_overrides={"non_inferior": pl.Boolean})
    payload = json.loads(_invoke("compare", three, "--all-pairs", "--json").stdout)
    assert frame["pvalue_adjusted"].to_list() == [x["pvalue_adjusted"] for x in payload]
    assert frame["diff_ci_low"].to_list() == [x["diff_ci_low"] for x in payload]


def test_single_comparison_formats_and_json_labels(tmp_path: Path) -> None:
    path = _write(table_records(1, 1, 7, 12), tmp_path / "two.jsonl")
    args = ("compare", path, "--baseline", "base", "--candidate", "cand")
    plain = _invoke(*args, "--json").stdout
    assert json.loads(plain)["records"] == [str(path)]
    assert "candidate_label" not in plain
    labelled = json.loads(_invoke(*args, "--json", "--label", "cand=New").stdout)
    assert (labelled["candidate"], labelled["candidate_label"], labelled["baseline_label"]) == ("cand", "New", "base")
    assert json.loads(_invoke(*args, "--format", "json").stdout) == json.loads(plain)
    terminal = _invoke(*args, "--label", "cand=New")
    assert "New (candidate) vs base (baseline)" in terminal.stdout
    assert "decision (p (mid-p) at alpha 0.05)" in terminal.stdout
    assert "candidate better" in terminal.stdout
    md = _invoke(*args, "--format", "markdown").stdout
    assert "| base | cand | 21 | 0.095 (2/21) | 0.381 (8/21) | 1 | 7 | +0.286 \\[0.026, 0.517\\] | 0.0391 \\* |" in md


def test_output_is_written_whole_and_refuses_inputs(three: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    result = _invoke("compare", three, "--all-pairs", "--format", "markdown", "--output", target)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert target.read_text(encoding="utf-8") == _invoke("compare", three, "--all-pairs", "--format", "markdown").stdout
    terminal = tmp_path / "out.txt"
    assert _invoke("compare", three, "--all-pairs", "--output", terminal).exit_code == 0
    assert "p adjusted" in terminal.read_text(encoding="utf-8")
    before = three.read_bytes()
    onto_input = _invoke("compare", three, "--all-pairs", "--format", "csv", "--output", three)
    assert onto_input.exit_code == 2
    assert "is an input of this command" in _plain(onto_input.stderr)
    assert three.read_bytes() == before
    inside = _invoke("compare", tmp_path, "--all-pairs", "--output", tmp_path / "x.md")
    assert inside.exit_code == 2
    assert "is an input of this command" in _plain(inside.stderr)
    assert _invoke("compare", three, "--all-pairs", "--output", tmp_path).exit_code == 2


def test_an_error_leaves_no_half_written_file(three: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.md"
    target.write_text("previous\n", encoding="utf-8")
    result = _invoke("compare", three, "--all-pairs", "--format", "markdown", "--output", target, "--label", "Z=z")
    assert result.exit_code == 1
    assert "'Z' is none of the ids shown here" in result.stderr
    assert target.read_text(encoding="utf-8") == "previous\n"
    missing = _invoke("compare", three, "--all-pairs", "--format", "markdown", "--output", tmp_path / "no" / "x.md")
    assert missing.exit_code == 1
    assert not (tmp_path / "no").exists()
    assert sorted(os.listdir(tmp_path)) == ["out.md", "three.jsonl"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--format", "pdf"), "expected one of terminal, json, markdown, latex, csv, html (got 'pdf')"),
        (("--json", "--format", "csv"), "--json is the short form of --format json"),
        (("--label", "oops"), "--label:1: field '<value>': expected OLD=NEW (got 'oops')"),
        (("--label", "A=x", "--label", "C=x"), "--label:2: field 'label': label 'x' given to 'A' too"),
    ],
)
def test_usage_errors_exit_2(three: Path, args: tuple[str, ...], message: str) -> None:
    result = _invoke("compare", three, "--all-pairs", *args)
    assert result.exit_code == 2
    assert message in _plain(result.stderr)


def test_labels_file_errors_name_file_and_line(three: Path, tmp_path: Path) -> None:
    labels = tmp_path / "labels.csv"
    labels.write_text("name,label\nA,Short A\nA,Again\n", encoding="utf-8")
    result = _invoke("compare", three, "--all-pairs", "--labels", labels)
    assert result.exit_code == 2
    assert f"{labels}:3: field 'name': 'A' given twice (first at line 2)" in result.stderr
    labels.write_text(f"name,label\nA,Short A\n{LONG},Long\n", encoding="utf-8")
    ok = _invoke("compare", three, "--all-pairs", "--labels", labels, "--format", "markdown")
    assert "| Long | Short A |" in ok.stdout


def test_output_through_a_symlink_onto_an_input_is_refused(three: Path, tmp_path: Path) -> None:
    link = tmp_path / "link.md"
    link.symlink_to(three)
    before = three.read_bytes()
    result = _invoke("compare", three, "--all-pairs", "--format", "markdown", "--output", link)
    assert result.exit_code == 2
    assert "is an input of this command" in _plain(result.stderr)
    assert three.read_bytes() == before


def test_labels_file_attacks(three: Path, tmp_path: Path) -> None:
    duplicate_keys = tmp_path / "labels.toml"
    duplicate_keys.write_text('[labels]\nA = "x"\nA = "y"\n', encoding="utf-8")
    result = _invoke("compare", three, "--all-pairs", "--labels", duplicate_keys)
    assert result.exit_code == 2
    assert "not TOML" in result.stderr
    result = _invoke("compare", three, "--all-pairs", "--labels", tmp_path)
    assert result.exit_code == 2
    assert "a directory (expected a labels file)" in result.stderr
    huge = tmp_path / "huge.csv"
    huge.write_bytes(b"name,label\n" + b"a,b\n" * 300_000)
    result = _invoke("compare", three, "--all-pairs", "--labels", huge)
    assert result.exit_code == 2


def test_a_label_is_never_rich_markup(tmp_path: Path) -> None:
    path = _write(table_records(1, 1, 7, 12), tmp_path / "two.jsonl")
    result = _invoke("compare", path, "--baseline", "base", "--candidate", "cand", "--label", "cand=[bold red]C[/]")
    assert result.exit_code == 0, result.stderr
    assert "[bold red]C[/] (candidate) vs base (baseline)" in result.stdout


def test_json_goes_to_output_too(three: Path, tmp_path: Path) -> None:
    target = tmp_path / "out.json"
    result = _invoke("compare", three, "--all-pairs", "--json", "--output", target)
    assert result.exit_code == 0
    assert result.stdout == ""
    assert json.loads(target.read_text(encoding="utf-8")) == json.loads(
        _invoke("compare", three, "--all-pairs", "--json").stdout
    )


@pytest.mark.parametrize(
    "label", ['=HYPERLINK("http://x","y")', "+1+1", "-2+3", "@SUM(A1)", "\tcmd", "\rcmd", "plain-name", "a=b"]
)
def test_a_csv_cell_a_spreadsheet_would_run_gets_a_leading_quote(label: str) -> None:
    # OWASP "CSV Injection": a text cell starting with = + - @ tab or CR is run as a formula by a spreadsheet
    from gatestats.publish.formats import Column, PublishedTable, render

    frame = pl.DataFrame({"system": [label], "delta": [-0.25]})
    columns = (Column(header="system"), Column(header="delta", numeric=True))
    table = PublishedTable(title="t", columns=columns, rows=(("x", "-0.25"),), data=frame)
    out = pl.read_csv(io.StringIO(render(table, "csv")))
    defused = label[0] in "=+-@\t\r"
    assert out["system"].to_list() == [("'" + label) if defused else label]
    assert out["delta"].to_list() == [-0.25]  # numbers are never changed
