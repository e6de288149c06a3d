"""Multi-class calibrate honours --judge-model, --labels, --rubric, --rubric-version; refuses --negative (issue 24)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.io.digest import digest_file

ITEMS = Path(__file__).resolve().parents[2] / "data" / "pandalm_multi_rater" / "items.csv"
RATERS = "annotator1+annotator2+annotator3"
COMMON = ["--classes", "1,2,0", "--tie", "0", "--kind", "pairwise", "--positive", "1", "--alias", "Tie=0"]
COMMON += ["--alias", "garbage=0"]


def _calibrate(*args: str | Path) -> dict[str, object]:
    result = CliRunner().invoke(app, ["calibrate", *(str(a) for a in args), *COMMON, "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


MAP = f"item=idx,label={RATERS},verdict=gpt35_result_raw"


@pytest.fixture(scope="module")
def one_file() -> dict[str, object]:
    """``calibrate`` on PandaLM's one file with no judge model or rubric: run once, read by two tests."""
    return _calibrate(ITEMS, "--map", MAP)


@pytest.fixture
def split_files(tmp_path: Path) -> tuple[Path, Path]:
    """PandaLM's items as two files: the judge's verdicts in one, the three annotators in the other."""
    with ITEMS.open(encoding="utf-8", newline="") as handle:
        rows = list(csv.DictReader(handle))
    verdicts, labels = tmp_path / "verdicts.csv", tmp_path / "labels.csv"
    with verdicts.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["idx", "gpt"])
        writer.writerows([r["idx"], r["gpt35_result_raw"]] for r in rows)
    with labels.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["idx", "annotator1", "annotator2", "annotator3"])
        # reversed, and one more labelled item that no verdict row judges
        writer.writerows([r["idx"], r["annotator1"], r["annotator2"], r["annotator3"]] for r in reversed(rows))
        writer.writerow(["extra", "1", "1", "1"])
    return verdicts, labels


def test_labels_in_a_separate_file_give_the_same_statistics_as_one_file(
    split_files: tuple[Path, Path], one_file: dict[str, object]
) -> None:
    verdicts, labels = split_files
    one = one_file
    two = _calibrate(verdicts, "--labels", labels, "--map", f"item=idx,label={RATERS},verdict=gpt")
    for key in ("binary", "multiclass", "raters", "judge_vs_raters", "n_items", "n_without_majority"):
        assert two[key] == one[key], key
    assert two["sources"] == [str(verdicts), str(labels)]
    assert two["n_labels_without_verdict"] == 1
    assert one["n_labels_without_verdict"] == 0
    # accuracy 71.07 as published by PandaLM (docs/judges.md)
    assert round(100 * two["multiclass"]["accuracy"]["estimate"], 2) == 71.07  # type: ignore[index]


def test_judge_model_and_rubric_are_recorded(tmp_path: Path, one_file: dict[str, object]) -> None:
    rubric = tmp_path / "rubric.md"
    rubric.write_text("Which response follows the instruction better?\n", encoding="utf-8")
    mapping = MAP
    bare = one_file
    assert bare["judge_model"] is None
    assert bare["rubric_digest"] is None
    named = _calibrate(ITEMS, "--map", mapping, "--judge-model", "gpt-3.5-turbo", "--rubric", rubric)
    assert named["judge_model"] == "gpt-3.5-turbo"
    assert named["rubric_digest"] == digest_file(rubric)
    versioned = _calibrate(ITEMS, "--map", mapping, "--rubric-version", "pandalm-v1")
    assert versioned["rubric_version"] == "pandalm-v1"
    assert versioned["rubric_digest"] is not None
    table = CliRunner().invoke(
        app, ["calibrate", str(ITEMS), "--map", mapping, *COMMON, "--judge-model", "gpt-3.5-turbo"], terminal_width=200
    )
    assert table.exit_code == 0, table.output
    assert table.output.startswith("judge gpt-3.5-turbo: 999 items")


def test_a_judged_item_without_a_label_names_the_judgments_file(split_files: tuple[Path, Path], tmp_path: Path) -> None:
    verdicts, labels = split_files
    short = tmp_path / "short.csv"
    short.write_text("\n".join(labels.read_text(encoding="utf-8").splitlines()[:-3]) + "\n", encoding="utf-8")
    result = CliRunner().invoke(
        app,
        ["calibrate", str(verdicts), "--labels", str(short), "--map", f"item=idx,label={RATERS},verdict=gpt", *COMMON],
    )
    assert result.exit_code == 1
    assert f"{verdicts}:2: field 'idx': item '0' has no label in {short}" in result.output


@pytest.mark.parametrize(
    ("extra", "hint"),
    [
        (["--negative", "2"], "--negative"),
        (["--swapped-coding", "presented"], "--swapped-coding"),
        (["--judge-model", "x", "--map", f"item=idx,label={RATERS},verdict=gpt35_result_raw,judge=cmp_key"], None),
    ],
)
def test_options_that_mean_nothing_with_classes_are_refused(extra: list[str], hint: str | None) -> None:
    mapping = ["--map", f"item=idx,label={RATERS},verdict=gpt35_result_raw"] if "--map" not in extra else []
    result = CliRunner().invoke(app, ["calibrate", str(ITEMS), *mapping, *COMMON, *extra])
    assert result.exit_code == 2, result.output
    if hint is not None:
        assert f"Invalid value for {hint}" in result.output
