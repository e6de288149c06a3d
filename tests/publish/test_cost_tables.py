"""``CostAnalysis.table()``, ``CostRatio.table()`` and ``gatestats cost --format``."""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.cost import cost_per_accepted, cost_ratio
from gatestats.publish import Labels, LabelsError, render
from tests.conftest import make_record
from tests.cost.conftest import frame, many_cases

runner = CliRunner()


def _rows() -> list[dict[str, Any]]:
    rows = many_cases(40, system="base", seed=1) + many_cases(40, system="cand|<i>", scale=1.5, seed=2)
    return [{**row, "record_id": f"r-{i}"} for i, row in enumerate(rows)]


def test_cost_analysis_table_cells_notes_and_csv() -> None:
    result = cost_per_accepted(frame(_rows()), n_resamples=300)
    table = result.table(Labels.from_options(["cand|<i>=Cand"]))
    headers = [c.header for c in table.columns]
    assert headers[:4] == ["system", "per accepted (USD) [95% CI]", "accepted/trials", "attempts (infra)"]
    base = result.group(system="base")
    assert table.rows[0][0] == "base"
    assert table.rows[1][0] == "Cand"
    assert table.rows[0][1] == f"{base.estimate:.4g} [{base.ci_low:.4g}, {base.ci_high:.4g}]"
    assert table.rows[0][2] == f"{base.accepted}/{base.trials}"
    csv = pl.read_csv(io.StringIO(render(table, "csv")))
    assert csv["estimate"].to_list() == result.to_frame()["estimate"].to_list()
    assert csv["system_label"].to_list() == ["base", "Cand"]
    assert "Cand" in render(table, "markdown")
    with pytest.raises(LabelsError, match="'nope' is none of the ids shown here"):
        result.table(Labels.from_options(["nope=x"]))


def test_cost_ratio_table() -> None:
    ratio = cost_ratio(frame(_rows()), baseline="base", candidate="cand|<i>", n_resamples=300)
    table = ratio.table()
    assert table.columns[-1].header == "ratio candidate/baseline [95% CI]"
    assert table.rows[0][:3] == ("base", "cand|<i>", "40")
    assert ratio.ratio is not None
    assert table.rows[0][-1].startswith(f"{ratio.ratio:.4g} [")
    assert "cand|&lt;i&gt;" in ratio._repr_html_()
    assert "ratio candidate/baseline" in ratio.summary()
    assert pl.read_csv(io.StringIO(render(table, "csv")))["candidate_label"].to_list() == ["cand|<i>"]


def test_cost_command_formats(write_jsonl: Any, tmp_path: Path) -> None:
    path = write_jsonl([make_record(**row) for row in _rows()])
    args = ["cost", str(path), "--n-resamples", "200"]
    md = runner.invoke(app, [*args, "--format", "markdown", "--label", "cand|<i>=Cand"])
    assert md.exit_code == 0, md.stderr
    assert md.stdout.startswith("**Cost per accepted outcome (USD) by system**")
    assert "| Cand |" in md.stdout
    terminal = runner.invoke(app, [*args, "--label", "cand|<i>=Cand"]).stdout
    assert "│ Cand " in terminal
    assert "system=Cand" not in runner.invoke(app, args).stdout
    labelled = json.loads(runner.invoke(app, [*args, "--json", "--label", "base=B"]).stdout)
    assert "system_label" not in json.dumps(json.loads(runner.invoke(app, [*args, "--json"]).stdout))
    assert labelled["groups"][0]["group"] == {"system": "base", "system_label": "B"}
    out = tmp_path / "cost.tex"
    assert runner.invoke(app, [*args, "--format", "latex", "--output", str(out)]).exit_code == 0
    assert "cand\\textbar{}\\textless{}i\\textgreater{}" in out.read_text(encoding="utf-8")
