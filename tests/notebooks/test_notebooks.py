"""The research notebooks: committed without outputs, public API only, and they run top to bottom.

Execution runs each notebook with nbclient on the ``python3`` kernel (the one in ``.venv``) and checks
that no cell errs, that the charts rendered as static SVG, and that figures the notebook prints agree
with values computed here independently from the CSV files (plain polars and the Wilson formula) or
published by the LLMBar authors.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from statistics import NormalDist

import nbformat
import polars as pl
import pytest
from nbclient import NotebookClient

from tests.conftest import DATA, ROOT

NOTEBOOKS = ROOT / "notebooks"
NAMES = ("harness_comparison.ipynb", "judge_calibration.ipynb")
LLMBAR = DATA / "llmbar_judge_swap"
PUBLIC_MODULES = {
    "gatestats",
    "gatestats.records",
    "gatestats.importers",
    "gatestats.estimators",
    "gatestats.paired",
    "gatestats.judges",
}
# LLMBar statistics.json (Processed/MT-Bench, GPT-4, Vanilla_NoRules; data/llmbar_judge_swap/PROVENANCE.md):
# correct in the original order, in the swapped order, in both, positional agreement, of 200.
GPT4_MT_BENCH = (159, 165, 149, 174)


def _read(name: str) -> nbformat.NotebookNode:
    return nbformat.read(NOTEBOOKS / name, as_version=4)


def _execute(name: str, cwd: Path) -> nbformat.NotebookNode:
    notebook = _read(name)
    client = NotebookClient(notebook, kernel_name="python3", timeout=600, resources={"metadata": {"path": str(cwd)}})
    client.execute()
    return notebook


def _outputs(notebook: nbformat.NotebookNode) -> tuple[str, int]:
    """All printed and displayed text of the executed notebook, and the number of SVG charts."""
    texts: list[str] = []
    charts = 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            if output["output_type"] == "error":
                pytest.fail(f"cell {cell.get('id')} raised {output['ename']}: {output['evalue']}")
            if output["output_type"] == "stream":
                texts.append(output["text"])
            data = output.get("data", {})
            charts += "image/svg+xml" in data
            if "text/plain" in data:
                texts.append(data["text/plain"])
    return "\n".join(texts), charts


def _original_order() -> pl.DataFrame:
    """Per GPT-4 configuration and item: correct in the original order (unparseable = not correct)."""
    return (
        pl.read_csv(LLMBAR / "judgments.csv", infer_schema=False)
        .filter(pl.col("evaluator") == "GPT-4")
        .with_columns(correct=(pl.col("winner_original_order") == pl.col("label")).fill_null(False))
        .pivot(on="strategy", index=["subset", "item_idx"], values="correct")
    )


def _wilson(x: int, n: int, z: float = 1.959963984540054) -> tuple[float, float]:
    """Wilson (1927) score interval; R: prop.test(x, n, correct = FALSE)$conf.int."""
    centre = (x + z * z / 2) / (n + z * z)
    half = z / (n + z * z) * math.sqrt(x * (n - x) / n + z * z / 4)
    return centre - half, centre + half


@pytest.mark.parametrize("name", NAMES)
def test_committed_notebook_has_no_outputs_and_the_python3_kernel(name: str) -> None:
    notebook = _read(name)
    nbformat.validate(notebook)
    assert notebook.metadata["kernelspec"]["name"] == "python3"
    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    assert code, f"{name} has no code cell"
    assert [(cell.id, cell.outputs, cell.execution_count) for cell in code] == [(cell.id, [], None) for cell in code]
    assert 'alt.renderers.enable("svg")' in code[0].source


@pytest.mark.parametrize("name", NAMES)
def test_notebook_imports_only_the_public_api(name: str) -> None:
    source = "\n".join(cell.source for cell in _read(name).cells if cell.cell_type == "code")
    imported = set(re.findall(r"^\s*(?:from|import)\s+(gatestats[\w.]*)", source, flags=re.MULTILINE))
    assert imported, f"{name} imports nothing from gatestats"
    assert imported <= PUBLIC_MODULES, f"{name} imports private modules: {sorted(imported - PUBLIC_MODULES)}"
    private = re.findall(r"gatestats(?:\.[a-z]\w*)*\._(?!_)\w*", source)
    assert not private, f"{name} uses private names: {private}"


@pytest.mark.slow
def test_harness_comparison_runs_and_reproduces_the_llmbar_figures() -> None:
    text, charts = _outputs(_execute("harness_comparison.ipynb", cwd=ROOT))
    assert charts == 2  # pass rates, paired differences
    original, swapped, both, _ = GPT4_MT_BENCH
    assert (
        f"GPT-4/Vanilla_NoRules on MT-Bench: {original}/200 correct in the original order, {swapped}/200 swapped, "
        f"{both}/200 in both" in text
    )
    # The 2x2 table of GPT-4 Metrics_Reference (candidate) against Vanilla_NoRules (baseline), original order.
    table = _original_order()
    vanilla, metrics = table["Vanilla_NoRules"], table["Metrics_Reference"]
    a, b = int((vanilla & metrics).sum()), int((vanilla & ~metrics).sum())
    c, d = int((~vanilla & metrics).sum()), int((~vanilla & ~metrics).sum())
    assert (
        f"GPT-4/Metrics_Reference − GPT-4/Vanilla_NoRules: n = {table.height}, a = {a}, b = {b}, c = {c}, d = {d}"
        in text
    )
    assert f"highest: GPT-4/Vanilla_NoRules {int(vanilla.sum())}/{table.height}" in text
    # Connor (1987): n = (z_a sqrt(psi) + z_b sqrt(psi - delta^2))^2 / delta^2 for the GPT-4 strategy pair.
    delta, psi = (c - b) / table.height, (b + c) / table.height
    z_a, z_b = NormalDist().inv_cdf(0.975), NormalDist().inv_cdf(0.8)
    n_connor = math.ceil((z_a * math.sqrt(psi) + z_b * math.sqrt(psi - delta**2)) ** 2 / delta**2)
    assert re.search(rf"GPT-4/Vanilla_NoRules − GPT-4/Metrics_Reference\s+┆\s+{c}\s+┆\s+{b}\s+┆.*┆ {n_connor}\s", text)


def test_judge_calibration_runs_from_notebooks_dir_and_reproduces_the_llmbar_figures() -> None:
    text, charts = _outputs(_execute("judge_calibration.ipynb", cwd=NOTEBOOKS))
    assert charts == 1  # false-pass vs false-fail rate
    original, swapped, both, equal = GPT4_MT_BENCH
    assert (
        f"GPT-4/Vanilla_NoRules on MT-Bench: {original}/200 correct in the original order, {swapped}/200 swapped, "
        f"{both}/200 in both, positional agreement {equal}/200" in text
    )
    judged = pl.read_csv(LLMBAR / "judgments.csv", infer_schema=False).filter(
        evaluator="GPT-4", strategy="Vanilla_NoRules"
    )
    verdict, label = pl.col("winner_original_order"), pl.col("label")
    false_pass = judged.filter(label == "2", verdict.is_not_null()).select(n=pl.len(), x=(verdict == "1").sum())
    false_fail = judged.filter(label == "1", verdict.is_not_null()).select(n=pl.len(), x=(verdict == "2").sum())
    parseable = judged.filter(verdict.is_not_null(), pl.col("winner_swapped_order").is_not_null())
    flips = int((parseable["winner_original_order"] != parseable["winner_swapped_order"]).sum())
    expected = []
    for x, n in ((false_pass["x"].item(), false_pass["n"].item()), (false_fail["x"].item(), false_fail["n"].item())):
        low, high = _wilson(x, n)
        expected.append(f"{x / n:.3f} [{low:.3f}, {high:.3f}] ({x}/{n})")
    assert (
        f"GPT-4/Vanilla_NoRules, 466 items: false-pass rate {expected[0]}, false-fail rate {expected[1]}, "
        f"flip rate {flips / parseable.height:.3f}" in text
    )
    assert "the calibration was edited after it was written" in text
    assert "same version: True" in text
    assert "false-pass ≤ 0.35, flips ≤ 0.25: can vote = True" in text
    assert "false-pass ≤ 0.30 (upper bound): can vote = False" in text
