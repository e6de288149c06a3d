"""``gatestats rank`` end to end: table, --json, --systems, --correction, --where, refusals and hostile names."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app

runner = CliRunner()

HOSTILE = ["[bold red]evil[/]", "pipe|and`tick`", "<script>x</script>", "ünï cødé", "tab\there"]


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[│╭╮╰╯─]", " ", text).split())


def _write(path: Path, outcomes: dict[str, list[int]]) -> Path:
    """Contract-v1 JSONL records, one trial per case (1 passed, 0 failed, -1 infra error)."""
    names = {1: "passed", 0: "failed", -1: "infra_error"}
    lines = []
    for system, column in outcomes.items():
        for i, x in enumerate(column):
            record = {"schema_version": 1, "record_id": f"{system}-{i}", "run_set_id": "rs-1", "system": system}
            record.update({"case_id": f"case-{i}", "trial": 0, "attempt": 0, "outcome": names[x]})
            lines.append(json.dumps(record))
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, ["rank", *(str(a) for a in args)], catch_exceptions=False)


@pytest.fixture
def three(tmp_path: Path) -> Path:
    return _write(tmp_path / "r.jsonl", {"A": [1, 1, 1, 0] * 25, "B": [1, 0, 0, 0] * 25, "C": [1, 1, 0, 0] * 25})


def test_table_and_json(three: Path) -> None:
    table = _invoke(three)
    assert table.exit_code == 0, table.output
    assert "3 systems ranked on the 100 cases" in _plain(table.output)
    assert "rank interval (95% joint)" in table.output
    result = _invoke(three, "--json")
    payload = json.loads(result.output)
    assert [(r["system"], r["rank_low"], r["rank_high"], r["group"]) for r in payload["ranks"]] == [
        ("A", 1, 1, 1),
        ("C", 2, 2, 2),
        ("B", 3, 3, 3),
    ]
    assert payload["records"] == [str(three)]
    assert payload["comparisons"][0]["decision"] in ("candidate better", "baseline better")


def test_systems_correction_level_and_where(three: Path) -> None:
    payload = json.loads(_invoke(three, "--systems", "B,C", "--json").output)
    assert [r["system"] for r in payload["ranks"]] == ["C", "B"]
    payload = json.loads(_invoke(three, "--correction", "bonferroni", "--confidence-level", "0.9", "--json").output)
    assert (payload["correction"], payload["alpha"]) == ("bonferroni", 0.1)
    filtered = _invoke(three, "--where", "system != 'B'", "--json")
    assert filtered.exit_code == 0
    assert [r["system"] for r in json.loads(filtered.stdout)["ranks"]] == ["A", "C"]


def test_two_systems_and_all_tied(tmp_path: Path) -> None:
    two = _write(tmp_path / "two.jsonl", {"A": [1, 0] * 20, "B": [1, 0] * 20})
    payload = json.loads(_invoke(two, "--json").output)
    assert [(r["rank"], r["rank_low"], r["rank_high"], r["group"]) for r in payload["ranks"]] == [(1.5, 1, 2, 1)] * 2
    tied = _write(tmp_path / "tied.jsonl", {name: [1, 0, 0] * 10 for name in "ABCDE"})
    payload = json.loads(_invoke(tied, "--json").output)
    assert {(r["rank_low"], r["rank_high"], r["group"]) for r in payload["ranks"]} == {(1, 5, 1)}


def test_hostile_system_names_are_shown_as_text(tmp_path: Path) -> None:
    outcomes = {name: [1] * (10 + 12 * i) + [0] * (70 - 12 * i) for i, name in enumerate(HOSTILE)}
    path = _write(tmp_path / "h.jsonl", outcomes)
    result = _invoke(path)
    assert result.exit_code == 0, result.output
    assert "[bold red]evil[/]" in result.output  # rich markup printed, not interpreted
    assert "tab\\there" in result.output  # a control character shown escaped
    payload = json.loads(_invoke(path, "--json").output)
    assert {r["system"] for r in payload["ranks"]} == set(HOSTILE)


def test_insufficient_evidence_is_said(tmp_path: Path) -> None:
    path = _write(tmp_path / "ie.jsonl", {"A": [1, 1, 0, 0] * 10, "B": [-1] + [1, 0, 0, 0] * 9 + [1, 0, 0]})
    result = _invoke(path)
    assert result.exit_code == 0, result.output
    assert "insufficient evidence" in result.output
    payload = json.loads(_invoke(path, "--json").output)
    assert {r["rank"] for r in payload["ranks"]} == {None}


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (("--correction", "bh"), 2, "must be one of holm, bonferroni, hochberg"),
        (("--confidence-level", "1.5"), 2, "--confidence-level"),
        (("--k", "0"), 2, "--k"),
        (("--seed", "3"), 2, "only --test permutation"),
        (("--n-permutations", "300"), 2, "only --test permutation"),
        (("--test", "nope"), 2, "--test"),
        (("--where", "nosuchcolumn = 1"), 2, "--where"),
        (("--systems", "A"), 1, "at least two systems are needed to rank"),
        (("--systems", "A,Z"), 1, "'Z'"),
    ],
)
def test_refusals(three: Path, args: tuple[str, ...], code: int, message: str) -> None:
    result = _invoke(three, *args)
    assert result.exit_code == code, result.output
    assert message in _plain(result.output)
    assert "Traceback" not in result.output


def test_one_system_and_no_shared_cases(tmp_path: Path) -> None:
    one = _write(tmp_path / "one.jsonl", {"A": [1, 0] * 5})
    result = _invoke(one)
    assert result.exit_code == 1
    assert "at least two systems" in _plain(result.output)
    apart = tmp_path / "apart.jsonl"
    lines = _write(tmp_path / "a.jsonl", {"A": [1, 0]}).read_text(encoding="utf-8")
    other = _write(tmp_path / "b.jsonl", {"B": [1, 0]}).read_text(encoding="utf-8").replace("case-", "other-")
    apart.write_text(lines + other, encoding="utf-8")
    result = _invoke(apart)
    assert result.exit_code == 1
    assert "no case was run by all 2 systems" in _plain(result.output)
    missing = _invoke(tmp_path / "missing.jsonl")
    assert missing.exit_code in (1, 2)
    assert "Traceback" not in missing.output


def test_formats_labels_output_and_plot(three: Path, tmp_path: Path) -> None:
    """rank publishes as the other commands do: Markdown/LaTeX/CSV/HTML, labels everywhere, --output, --plot."""
    markdown = _invoke(three, "--format", "markdown", "--label", "A=Alpha <b>")
    assert markdown.exit_code == 0, markdown.output
    assert "| group | rank | rank interval (95% joint) | system |" in markdown.output
    assert "| 1 | 1 | \\[1, 1\\] | Alpha &lt;b&gt; |" in markdown.output
    latex = _invoke(three, "--format", "latex")
    assert "\\begin{tabular" in latex.output
    csv = _invoke(three, "--format", "csv", "--label", "C=Cee")
    assert csv.output.splitlines()[0] == "system,label,estimate,rank,rank_low,rank_high,group,n_beaten,n_beaten_by"
    assert csv.output.splitlines()[2].startswith("C,Cee,0.5,2.0,2,2,2,")
    labelled = json.loads(_invoke(three, "--json", "--label", "B=Bee").output)
    assert labelled["ranks"][2]["system"] == "B"
    out = tmp_path / "ranks.html"
    written = _invoke(three, "--format", "html", "--output", out)
    assert written.exit_code == 0, written.output
    assert "<table" in out.read_text(encoding="utf-8")
    chart = tmp_path / "ranks.svg"
    plotted = _invoke(three, "--plot", chart, "--label", "A=Alpha")
    assert plotted.exit_code == 0, plotted.output
    assert "Alpha" in chart.read_text(encoding="utf-8")
    unknown = _invoke(three, "--label", "Z=zed")
    assert unknown.exit_code != 0
    assert "'Z'" in unknown.output
    assert not (tmp_path / "bad.svg").exists()
    assert _invoke(three, "--plot", tmp_path / "bad.txt").exit_code == 2


def test_ranking_notebook_api(three: Path) -> None:
    """A Ranking shows itself: summary(), _repr_html_(), to_frame() and plot()."""
    import polars as pl

    from gatestats.paired.rank import rank_systems
    from gatestats.records import load_records

    ranking = rank_systems(load_records([three]))
    assert "3 systems ranked" in ranking.summary()
    assert "<table" in ranking._repr_html_()
    assert ranking.to_frame().select("system", "group").rows() == [("A", 1), ("C", 2), ("B", 3)]
    spec = ranking.plot().to_dict()
    assert spec["layer"]
    assert isinstance(ranking.to_frame(), pl.DataFrame)
