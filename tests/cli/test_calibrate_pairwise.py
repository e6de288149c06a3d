"""``calibrate`` for a pairwise judge: the pairwise tables, hostile names, bad verdicts, unparseable pairs, slices."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app

runner = CliRunner()
MAP = "item=id,label=human,verdict=v1,verdict_swapped=v2,slice=topic,judge=judge"
PAIRWISE = ["--map", MAP, "--positive", "A", "--negative", "B", "--tie", "tie", "--kind", "pairwise"]


def _write(path: Path, rows: list[tuple[str, str, str, str, str, str]]) -> Path:
    lines = ["id,human,v1,v2,topic,judge", *(",".join(r) for r in rows)]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, ["calibrate", *(str(a) for a in args)], catch_exceptions=False)


ROWS = [
    ("1", "A", "A", "A", "code", "j"),
    ("2", "A", "B", "A", "code", "j"),
    ("3", "B", "tie", "B", "code", "j"),
    ("4", "B", "", "", "math", "j"),
    ("5", "A", "A", "", "math", "j"),
    ("6", "B", "B", "B", "", "j"),
]


def _cells(stdout: str, first: str, *, after: str = "") -> list[str]:
    """The cells of the first table row named ``first`` (after the line holding ``after``)."""
    for line in stdout[stdout.index(after) :].splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0] == first:
            return cells[1:]
    raise AssertionError(f"no row {first!r} in:\n{stdout}")


def test_pairwise_tables_with_ties_unparseable_pairs_and_slices(tmp_path: Path) -> None:
    result = _invoke(_write(tmp_path / "j.csv", ROWS), *PAIRWISE)
    assert result.exit_code == 0, result.output
    out = result.stdout
    # original order: agreed 1, 5, 6; picked worse 2; tie 3; unparseable 4.
    assert _cells(out, "original (A first)") == ["3", "1", "1", "1", "0.500 [0.188, 0.812]", "3/6"]
    assert _cells(out, "swapped (B first)")[:4] == ["4", "0", "0", "2"]
    assert _cells(out, "two-order average accuracy") == ["0.583", "7/12"]
    assert _cells(out, "correct in both orders")[-1] == "2/6"
    # Consistent pairs 1, 6 of the 4 parseable in both orders; pair 4 is unparseable in both, 5 in one.
    assert _cells(out, "positional agreement (both orders parseable)")[-1] == "2/4"
    assert _cells(out, "unparseable in both orders / in one order")[-1] == "1 / 1"
    # Pairwise words, the gate's rate name kept.
    assert "picked the worse output 'A' (people preferred 'B'): false-pass rate" in out
    assert "picked the worse output 'B' or a tie 'tie' (people preferred 'A'): false-fail rate" in out
    # Flips per slice; the empty slice is shown as such.
    code = _cells(out, "code", after="pairwise by slice")
    assert code[:3] == ["3", "1/3 / 3/3", "2/3"]
    assert code[4] == "1 / 1"  # pair 2 leans to the second position, pair 3 (tie, then B) to the first
    assert _cells(out, "(empty)", after="pairwise by slice")[:3] == ["1", "1/1 / 1/1", "0/1"]
    math = _cells(out, "math", after="pairwise by slice")
    assert math[2:4] == [
        "0/0",
        "insufficient evidence",
    ]  # no pair parseable in both orders  # no pair parseable in both orders


def test_llmbar_convention_counts_both_unparseable_pairs_as_agreeing(tmp_path: Path) -> None:
    path = _write(tmp_path / "j.csv", ROWS)
    result = _invoke(path, *PAIRWISE, "--positional-agreement", "both-unparseable-agree")
    assert result.exit_code == 0, result.output
    assert _cells(result.stdout, "positional agreement (both unparseable = agree, LLMBar)")[-1] == "3/6"
    payload = json.loads(_invoke(path, *PAIRWISE, "--json", "--positional-agreement", "both-unparseable-agree").stdout)
    pairwise = payload["pairwise"]
    assert pairwise["convention"] == "both-unparseable-agree"
    assert (pairwise["positional_agreement"]["numerator"], pairwise["positional_agreement"]["n"]) == (3, 6)
    assert [s["slice"] for s in pairwise["by_slice"]] == ["", "code", "math"]


def test_every_pair_unparseable_in_both_orders_is_insufficient_evidence_not_zero(tmp_path: Path) -> None:
    rows = [(str(i), "A" if i % 2 else "B", "", "", "s", "j") for i in range(4)]
    result = _invoke(_write(tmp_path / "j.csv", rows), *PAIRWISE)
    assert result.exit_code == 0, result.output
    assert _cells(result.stdout, "positional agreement (both orders parseable)") == ["insufficient evidence", "0/0"]
    llmbar = _invoke(tmp_path / "j.csv", *PAIRWISE, "--positional-agreement", "both-unparseable-agree")
    assert _cells(llmbar.stdout, "positional agreement (both unparseable = agree, LLMBar)")[-1] == "4/4"


@pytest.mark.parametrize("bad", ["C", "A>B", "1.0"])
def test_a_verdict_outside_a_b_tie_exits_1_naming_file_line_and_field(tmp_path: Path, bad: str) -> None:
    rows = [*ROWS[:2], ("3", "B", "B", bad, "x", "j")]
    path = _write(tmp_path / "j.csv", rows)
    result = _invoke(path, *PAIRWISE)
    assert result.exit_code == 1
    assert result.stdout == ""
    assert f"{path}:4" in result.stderr
    assert "verdict_swapped" in result.stderr


@pytest.mark.parametrize(
    "name", ["[bold red]evil[/]", "[/]", "\x1b[31mred\x1b[0m", "tab\tand\nnewline", "\u202eevil", "x" * 500]
)
def test_hostile_judge_and_slice_names_are_printed_as_text(tmp_path: Path, name: str) -> None:
    quoted = '"' + name.replace('"', '""') + '"'
    rows = [(r[0], r[1], r[2], r[3], quoted, quoted) for r in ROWS]
    result = _invoke(_write(tmp_path / "j.csv", rows), *PAIRWISE)
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.stdout
    assert "\u202e" not in result.stdout
    if name.startswith("[bold"):
        assert "[bold red]evil[/]" in result.stdout


def test_positional_agreement_without_both_orders_is_a_usage_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "j.csv", ROWS)
    one_order = ["--map", "item=id,label=human,verdict=v1", "--positive", "A", "--kind", "pairwise", "--tie", "tie"]
    result = _invoke(path, *one_order, "--positional-agreement", "both-unparseable-agree")
    assert result.exit_code == 2
    assert "verdict_swapped" in result.output
    ok = _invoke(path, *one_order)
    assert ok.exit_code == 0, ok.output
    assert _cells(ok.stdout, "original (A first)")[:4] == ["3", "1", "1", "1"]
    assert "pairwise: both orders" not in ok.stdout


# --- judge bias by covariate (--by-covariate) --------------------------------------------------


def test_by_covariate_table_and_json(tmp_path: Path) -> None:
    rows = [(str(i), "A", "B" if i < 8 else "A", "A", "long" if i < 10 else "short", "j") for i in range(20)]
    path = _write(tmp_path / "j.csv", rows)
    result = _invoke(path, *PAIRWISE, "--by-covariate", "topic", "--by-covariate", "id", "--covariate-bins", "2")
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert "judge bias by covariate" in out
    assert _cells(out, "topic", after="judge bias by covariate")[1:] == ["n=20", "Fisher exact", "7.14e-04", "0.0014 *"]
    assert _cells(out, "long", after="judge bias by covariate")[1] == "8/10"
    payload = json.loads(_invoke(path, *PAIRWISE, "--by-covariate", "topic", "--json").stdout)
    (topic,) = payload["covariates"]["covariates"]
    assert (topic["test"], topic["flagged"], [b["n_disagree"] for b in topic["bins"]]) == ("fisher-exact", True, [8, 0])


def test_by_covariate_hostile_values_missing_column_and_usage_errors(tmp_path: Path) -> None:
    rows = [(str(i), "A", "B" if i % 3 else "A", "A", "[bold]x[/]" if i % 2 else "\x1b[2J", "j") for i in range(9)]
    path = _write(tmp_path / "j.csv", rows)
    ok = _invoke(path, *PAIRWISE, "--by-covariate", "topic")
    assert ok.exit_code == 0, ok.output
    assert "[bold]x[/]" in ok.stdout
    assert "\x1b" not in ok.stdout
    missing = _invoke(path, *PAIRWISE, "--by-covariate", "nope")
    assert missing.exit_code == 1
    assert f"{path}:1" in missing.stderr
    assert "nope" in missing.stderr
    assert _invoke(path, *PAIRWISE, "--covariate-bins", "3").exit_code == 2
    assert _invoke(path, *PAIRWISE, "--by-covariate", "topic", "--covariate-bins", "1").exit_code == 2
    assert _invoke(path, *PAIRWISE, "--by-covariate", "topic", "--by-covariate", "topic").exit_code == 2
    classes = ["--map", "item=id,label=human,verdict=v1", "--positive", "A", "--classes", "A,B"]
    assert _invoke(path, *classes, "--by-covariate", "topic").exit_code == 2


def test_by_covariate_all_agree_is_insufficient_evidence(tmp_path: Path) -> None:
    rows = [(str(i), "A", "A", "A", "x" if i % 2 else "y", "j") for i in range(6)]
    result = _invoke(_write(tmp_path / "j.csv", rows), *PAIRWISE, "--by-covariate", "topic")
    assert result.exit_code == 0, result.output
    assert "topic: insufficient evidence: the judge agrees with people on all 6 items" in result.stdout
