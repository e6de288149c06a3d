"""``gatestats calibrate --correct PRODUCTION --estimator ppi`` end to end (LLMBar, GPT-4, no rules)."""

from __future__ import annotations

import csv
import json
from pathlib import Path
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from gatestats.cli.calibrate import calibrate_command
from tests.judges.conftest import LLMBAR
from tests.judges.fixtures.ppi_reference import datasets

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("calibrate")(calibrate_command)


@app.command("version")
def _version() -> None:  # a second command keeps "calibrate" a subcommand, as in the real app
    """Unused."""


runner = CliRunner()
MAP = ["--map", "item=item,label=label,verdict=verdict", "--positive", "1"]


def _invoke(*args: str | Path) -> Any:
    return runner.invoke(app, ["calibrate", *(str(a) for a in args)], catch_exceptions=False)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    """Every 4th row of GPT-4 / Vanilla_NoRules labelled (117 items), the other 349 verdicts as production."""
    with (LLMBAR / "judgments.csv").open(newline="") as handle:
        rows = [r for r in csv.DictReader(handle) if r["evaluator"] == "GPT-4" and r["strategy"] == "Vanilla_NoRules"]
    labelled, production = tmp_path / "labelled.csv", tmp_path / "production.csv"
    with labelled.open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["item", "label", "verdict"])
        w.writerows([f"{r['subset']}/{r['item_idx']}", r["label"], r["winner_original_order"]] for r in rows[::4])
    with production.open("w", newline="") as handle:
        w = csv.writer(handle)
        w.writerow(["verdict"])
        w.writerows([r["winner_original_order"]] for i, r in enumerate(rows) if i % 4)
    return labelled, production


def test_table_shows_five_estimators(files: tuple[Path, Path]) -> None:
    labelled, production = files
    result = _invoke(labelled, *MAP, "--correct", production, "--estimator", "ppi")
    assert result.exit_code == 0, result.output
    for row in ("human labels only", "judge only", "Rogan-Gladen", "PPI (lambda = 1)", "PPI++ (tuned lambda)"):
        assert row in result.output
    # The line names the production file (a tmp path of any length), so rich may wrap anywhere in it.
    assert "349 production verdicts" in " ".join(result.output.split())


def test_json_matches_the_array_estimators(files: tuple[Path, Path]) -> None:
    """The CLI's PPI point estimate and lambda equal ppi-python's on the same data (test_ppi_reference)."""
    labelled, production = files
    result = _invoke(labelled, *MAP, "--correct", production, "--estimator", "ppi", "--json")
    assert result.exit_code == 0, result.output
    doc = json.loads(result.output)
    assert "correction" in doc
    estimates = {e["method"]: e for e in doc["ppi"]["estimates"]}
    assert list(estimates) == ["human-only", "judge-only", "rogan-gladen", "ppi", "ppi++"]
    # ppi-python 0.2.3 on the same split (tests/judges/fixtures/ppi_reference.py, "llmbar-gpt4")
    assert estimates["ppi"]["estimate"] == pytest.approx(0.4300443268924644, abs=1e-12)
    assert estimates["ppi++"]["lam"] == pytest.approx(0.5260943215116702, abs=1e-12)
    assert estimates["ppi++"]["estimate"] == pytest.approx(0.473322907331888, abs=1e-12)
    # and the Rogan-Gladen row equals the existing correction (no clustering)
    assert estimates["rogan-gladen"]["estimate"] == pytest.approx(doc["correction"]["estimate"])
    assert len(datasets()["llmbar-gpt4"][0]) == estimates["ppi"]["n_labelled"] == 117


def test_default_output_has_no_ppi(files: tuple[Path, Path]) -> None:
    labelled, production = files
    result = _invoke(labelled, *MAP, "--correct", production, "--json")
    assert result.exit_code == 0
    assert "ppi" not in json.loads(result.output)


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--estimator", "ppi"], "--estimator ppi needs --correct"),
        (["--estimator", "bootstrap"], "bootstrap"),
    ],
)
def test_usage_errors(files: tuple[Path, Path], extra: list[str], message: str) -> None:
    labelled, _ = files
    result = _invoke(labelled, *MAP, *extra)
    assert result.exit_code == 2
    assert message in result.output


def test_case_is_refused_with_ppi(files: tuple[Path, Path], tmp_path: Path) -> None:
    labelled, _ = files
    production = tmp_path / "clustered.csv"
    production.write_text("case,verdict\na,1\na,2\nb,1\n")
    result = _invoke(labelled, *MAP, "--correct", production, "--case", "case", "--estimator", "ppi")
    assert result.exit_code == 2
    assert "--case" in result.output


def test_bad_production_verdict_is_an_input_error(files: tuple[Path, Path], tmp_path: Path) -> None:
    labelled, _ = files
    production = tmp_path / "bad.csv"
    production.write_text("verdict\n1\nmaybe\n")
    result = _invoke(labelled, *MAP, "--correct", production, "--estimator", "ppi")
    assert result.exit_code == 1
    assert "bad.csv" in result.output
    assert "Traceback" not in result.output


def test_label_budget(files: tuple[Path, Path]) -> None:
    labelled, production = files
    result = _invoke(labelled, *MAP, "--correct", production, "--estimator", "ppi", "--label-budget", "0.05", "--json")
    assert result.exit_code == 0, result.output
    budget = json.loads(result.output)["ppi"]["label_budget"]
    assert budget["half_width"] == 0.05
    # human-only: ceil((z sigma / h)^2) with the calibration set's label variance; classical PPI cannot reach
    # +-0.05 with 349 production verdicts (its imputed term var(f)/N alone is above (h/z)^2)
    assert budget["labels"]["ppi"] is None
    assert budget["labels"]["ppi++"] < budget["labels"]["human-only"]
    text = _invoke(labelled, *MAP, "--correct", production, "--estimator", "ppi", "--label-budget", "0.05")
    assert "labels for a ±0.05 interval" in text.output


@pytest.mark.parametrize("value", ["0", "1.5", "nan"])
def test_label_budget_usage_errors(files: tuple[Path, Path], value: str) -> None:
    labelled, production = files
    result = _invoke(labelled, *MAP, "--correct", production, "--estimator", "ppi", "--label-budget", value)
    assert result.exit_code == 2


def test_label_budget_needs_ppi(files: tuple[Path, Path]) -> None:
    labelled, production = files
    result = _invoke(labelled, *MAP, "--correct", production, "--label-budget", "0.05")
    assert result.exit_code == 2
    assert "--estimator ppi" in result.output
