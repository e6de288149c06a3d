"""``--plot FILE`` on ``compare`` and ``analyze``: the chart written, its rows, and refused paths (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from gatestats.cli import app
from tests.conftest import make_record

SYSTEMS = {  # per system: outcome of cases c0..c19 on trials 0 and 1
    "base": ([1] * 12 + [0] * 8, [1] * 10 + [0] * 10),
    "cand<script>": ([1] * 17 + [0] * 3, [1] * 16 + [0] * 4),
    "other": ([1] * 11 + [0] * 9, [1] * 11 + [0] * 9),
}


def _run(args: list[object]) -> Result:
    return CliRunner().invoke(app, [str(a) for a in args])


@pytest.fixture
def records(tmp_path: Path) -> Path:
    rows = [
        make_record(
            record_id=f"{system}-{case}-{trial}",
            system=system,
            case_id=f"c{case}",
            trial=trial,
            outcome="passed" if outcome else "failed",
        )
        for system, trials in SYSTEMS.items()
        for trial, column in enumerate(trials)
        for case, outcome in enumerate(column)
    ]
    path = tmp_path / "records.jsonl"
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_compare_one_pair_writes_a_one_row_forest_svg(records: Path, tmp_path: Path) -> None:
    out = tmp_path / "pair.svg"
    result = _run(["compare", records, "--baseline", "base", "--candidate", "cand<script>", "--plot", out, "--json"])
    assert result.exit_code == 0, result.output
    json.loads(result.stdout)  # stdout stays one JSON object
    assert f"chart written: {out}" in result.stderr
    svg = out.read_text()
    assert svg.startswith("<svg")
    assert "cand&lt;script&gt; − base" in svg
    assert "per-comparison" in svg


def test_compare_all_pairs_writes_the_family_forest_as_html(records: Path, tmp_path: Path) -> None:
    out = tmp_path / "pairs.html"
    result = _run(["compare", records, "--all-pairs", "--plot", out])
    assert result.exit_code == 0, result.output
    page = out.read_text()
    assert "cand\\u003cscript\\u003e − base" in page  # the spec escaped inside the page's script
    assert "holm adjustment" in page


def test_analyze_writes_the_pass_curves_png(records: Path, tmp_path: Path) -> None:
    out = tmp_path / "curves.png"
    result = _run(["analyze", records, "--k", "1-2", "--plot", out])
    assert result.exit_code == 0, result.output
    assert out.read_bytes()[:4] == b"\x89PNG"


@pytest.mark.parametrize("command", [["analyze"], ["compare", "--all-pairs"]])
@pytest.mark.parametrize(
    ("name", "message"),
    [("chart.pdf", "'.pdf'"), ("missing/chart.svg", "does not exist"), ("records.jsonl", "")],
)
def test_a_bad_plot_path_is_a_usage_error_and_nothing_is_written(
    records: Path, tmp_path: Path, command: list[str], name: str, message: str
) -> None:
    before = {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    target = tmp_path / name
    result = _run([command[0], records, *command[1:], "--plot", target])
    assert result.exit_code == 2, result.output
    assert "--plot" in result.stderr
    assert message in result.stderr
    assert result.stdout == ""  # refused before anything was computed
    assert {p.name: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == before


def test_plot_refuses_a_link_to_a_record_file_and_leaves_the_records_whole(records: Path) -> None:
    link = records.with_name("chart.svg")
    link.symlink_to(records)
    before = records.read_bytes()
    result = _run(["analyze", records, "--plot", link])
    assert result.exit_code == 2
    assert "is one of the record files read" in result.stderr
    assert records.read_bytes() == before
    assert link.is_symlink()


def test_compare_plot_uses_the_labels(tmp_path: Path) -> None:
    """--label renames the systems in the forest plot as in the table (SWE-bench Verified, 3 systems)."""
    data = Path(__file__).resolve().parents[2] / "data" / "swe_bench_verified" / "records.jsonl"
    chart = tmp_path / "forest.svg"
    systems = "20241028_solver,20241023_emergent,20241028_agentless-1.5_gpt4o"
    result = CliRunner().invoke(
        app,
        [
            "compare",
            str(data),
            "--all-pairs",
            "--systems",
            systems,
            "--label",
            "20241028_solver=Solver <x>",
            "--plot",
            str(chart),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    svg = chart.read_text(encoding="utf-8")
    assert "Solver &lt;x&gt;" in svg
    assert "20241028_solver" not in svg
