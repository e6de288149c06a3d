"""``Analysis.table()`` and ``gatestats analyze --format``: pass^k / pass@k with intervals and exact sums."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import polars as pl
import typer
from typer.testing import CliRunner

from gatestats.cli.analyze import analyze_command
from gatestats.estimators import analyze
from gatestats.publish import Labels, render
from tests.paired.conftest import trial_records
from tests.paired.test_cli import _write

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("analyze")(analyze_command)
app.command("other")(lambda: None)


def _records() -> pl.DataFrame:
    rng = np.random.default_rng(4)
    outcomes = {
        s: [[int(rng.random() < p) for _ in range(3)] for _ in range(30)] for s, p in (("A", 0.5), ("B&<b>", 0.7))
    }
    return trial_records(outcomes)


def test_one_row_per_system_and_k_with_intervals_and_sums() -> None:
    result = analyze(_records(), ks=[1, 2, 4])
    table = result.table(Labels.from_options(["B&<b>=Bee"]))
    assert [c.header for c in table.columns] == [
        "system",
        "k",
        "cases",
        "pass^k [95% CI]",
        "sum/cases",
        "pass@k [95% CI]",
        "sum/cases",
        "interval",
    ]
    assert [row[:2] for row in table.rows] == [
        ("A", "1"),
        ("A", "2"),
        ("A", "4"),
        ("Bee", "1"),
        ("Bee", "2"),
        ("Bee", "4"),
    ]
    a1 = result.system("A").get("pass_hat_k", 1)
    assert table.rows[0][3] == f"{a1.estimate:.3f} [{a1.ci_low:.3f}, {a1.ci_high:.3f}]"
    assert table.rows[0][4] == f"{a1.numerator}/30"
    assert table.rows[2][3] == "insufficient evidence"  # k = 4 > 3 trials: never 0
    assert any("insufficient evidence: pass^4" in note for note in table.notes)
    frame = pl.read_csv(io.StringIO(render(table, "csv")))
    assert frame["estimate"].to_list() == result.to_frame()["estimate"].to_list()
    assert set(frame["system_label"]) == {"A", "Bee"}


def test_analyze_formats_from_the_command(tmp_path: Path) -> None:
    path = _write(_records(), tmp_path / "r.jsonl")
    runner = CliRunner()
    md = runner.invoke(app, ["analyze", str(path), "--k", "1,2", "--format", "markdown", "--label", "A=Alpha"])
    assert md.exit_code == 0, md.stderr
    assert "| Alpha | 1 | 30 |" in md.stdout
    assert "| B&amp;&lt;b&gt; | 2 | 30 |" in md.stdout
    terminal = runner.invoke(app, ["analyze", str(path), "--label", "A=Alpha"])
    assert terminal.stdout.startswith("Alpha: 30 cases")
    plain = runner.invoke(app, ["analyze", str(path), "--json"]).stdout
    labelled = json.loads(runner.invoke(app, ["analyze", str(path), "--json", "--label", "A=Alpha"]).stdout)
    assert "system_label" not in plain
    assert [s["system_label"] for s in labelled["systems"]] == ["Alpha", "B&<b>"]
    latex = runner.invoke(app, ["analyze", str(path), "--format", "latex"]).stdout
    assert "B\\&\\textless{}b\\textgreater{}" in latex
    out = tmp_path / "t.html"
    assert runner.invoke(app, ["analyze", str(path), "--format", "html", "--output", str(out)]).exit_code == 0
    assert "&lt;b&gt;" in out.read_text(encoding="utf-8")
    assert "<b>" not in out.read_text(encoding="utf-8").split("<tbody")[1]


def test_analysis_summary_and_html() -> None:
    result = analyze(_records(), ks=[1, 2])
    summary = result.summary()
    assert "pass^k and pass@k of 2 system(s) by system" in summary
    # the title, 4 rows with their header, and per system its counts and variance split, then the method
    assert len(summary.splitlines()) <= 18
    assert "A: 30 cases," in summary
    assert "B&amp;&lt;b&gt;" in result._repr_html_()


def test_infra_errors_and_counts_are_in_every_rendering(tmp_path: Path) -> None:
    # the terminal named "10 infra errors" and the published table said nothing of them: a published
    # pass@k rested on an assumption it did not state. One set of notes now serves both.
    frame = _records().with_columns(
        outcome=pl.when(pl.col("case_id").is_in(["case-0", "case-1", "case-2"]) & (pl.col("trial") == 1))
        .then(pl.lit("infra_error"))
        .otherwise(pl.col("outcome"))
    )
    path = _write(frame, tmp_path / "r.jsonl")
    for fmt in ("terminal", "markdown", "html"):
        text = " ".join(CliRunner().invoke(app, ["analyze", str(path), "--format", fmt]).stdout.split())
        assert "A: 30 cases, 90 trials (87 valid," in text, fmt
        assert "3 infra errors)" in text, fmt
        assert "A: 3 infra error(s) left out: the estimates use the valid trials, which assumes" in text, fmt
        assert "variance of pass@1" in text, fmt
