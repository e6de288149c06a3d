"""LLMBar's published table read off ``calibrate``'s terminal output, under both agreement conventions.

The published figures are the authors' ``statistics.json`` of every configuration of the bundled
extract (Zeng et al. 2024, "Evaluating Large Language Models at Evaluating Instruction Following",
ICLR 2024, LLMBar; https://github.com/princeton-nlp/LLMBar at commit caa7bee,
``Dataset/Processed/<subset>/evaluators/<judge>/<strategy>/statistics.json``): ``correct_False``
(original order), ``correct_True`` (swapped order), ``correct_average``, ``correct_both`` and
``equal`` (positional agreement), each of n. LLMBar counts a pair unparseable in both orders as
``equal``: gatestats' ``--positional-agreement both-unparseable-agree`` prints that number; the
default ``parseable-only`` prints the consistent pairs over the pairs parseable in both orders,
and the "unparseable in both orders" count that closes the gap is printed beside it.
"""

from __future__ import annotations

import pytest
import typer
from typer.testing import CliRunner

from gatestats.cli.calibrate import calibrate_command
from tests.judges.conftest import LLMBAR

app = typer.Typer(add_completion=False, pretty_exceptions_enable=False)
app.command("calibrate")(calibrate_command)


@app.command("version")
def _version() -> None:  # a second command keeps "calibrate" a subcommand
    """Unused."""


runner = CliRunner()

# (subset, judge, strategy): correct_False, correct_True, correct_average (%), correct_both, equal, n.
PUBLISHED: dict[tuple[str, str, str], tuple[int, int, float, int, int, int]] = {
    ("MT-Bench", "GPT-4", "Vanilla_NoRules"): (159, 165, 81.0, 149, 174, 200),
    ("MT-Bench", "ChatGPT", "Vanilla_NoRules"): (140, 145, 71.25, 100, 115, 200),
    ("MT-Bench", "LLaMA2", "Vanilla_NoRules"): (146, 142, 72.0, 111, 134, 200),
    ("MT-Bench", "PaLM2", "Vanilla_NoRules"): (138, 143, 70.25, 114, 147, 200),
    ("MT-Bench", "GPT-4", "Metrics_Reference"): (161, 163, 81.0, 146, 168, 200),
    ("MT-Bench", "ChatGPT", "Metrics_Reference"): (137, 146, 70.75, 104, 125, 200),
    ("MT-Bench", "LLaMA2", "Metrics_Reference"): (144, 145, 72.25, 115, 141, 200),
    ("MT-Bench", "PaLM2", "Metrics_Reference"): (133, 134, 66.75, 108, 148, 200),
    ("FairEval", "GPT-4", "Vanilla_NoRules"): (51, 45, 72.72727272727273, 38, 46, 66),
    ("FairEval", "GPT-4", "Metrics_Reference"): (47, 41, 66.66666666666666, 31, 40, 66),
    ("FairEval", "ChatGPT", "Vanilla_NoRules"): (44, 32, 57.57575757575758, 11, 12, 66),
    ("FairEval", "ChatGPT", "Metrics_Reference"): (46, 33, 59.84848484848485, 16, 19, 66),
    ("FairEval", "LLaMA2", "Vanilla_NoRules"): (40, 34, 56.060606060606055, 15, 22, 66),
    ("FairEval", "LLaMA2", "Metrics_Reference"): (42, 36, 59.09090909090909, 28, 44, 66),
    ("FairEval", "PaLM2", "Vanilla_NoRules"): (41, 38, 59.84848484848485, 17, 21, 66),
    ("FairEval", "PaLM2", "Metrics_Reference"): (36, 41, 58.333333333333336, 22, 33, 66),
    ("LLMEval^2", "GPT-4", "Vanilla_NoRules"): (152, 150, 75.5, 139, 175, 200),
    ("LLMEval^2", "GPT-4", "Metrics_Reference"): (152, 149, 75.25, 138, 175, 200),
    ("LLMEval^2", "ChatGPT", "Vanilla_NoRules"): (140, 141, 70.25, 113, 144, 200),
    ("LLMEval^2", "ChatGPT", "Metrics_Reference"): (148, 139, 71.75, 116, 144, 200),
    ("LLMEval^2", "LLaMA2", "Vanilla_NoRules"): (136, 140, 69.0, 113, 150, 200),
    ("LLMEval^2", "LLaMA2", "Metrics_Reference"): (118, 121, 59.75, 60, 81, 200),
    ("LLMEval^2", "PaLM2", "Vanilla_NoRules"): (133, 131, 66.0, 113, 162, 200),
    ("LLMEval^2", "PaLM2", "Metrics_Reference"): (129, 129, 64.5, 99, 139, 200),
}
# The MT-Bench Vanilla_NoRules rows are also in tests/judges/test_order.py (PUBLISHED there).
MAP = (
    "item=item_idx,label=label,verdict=winner_original_order,verdict_swapped=winner_swapped_order,"
    "judge=evaluator,rubric=strategy"
)


def _rows(subset: str, judge: str, strategy: str, convention: str) -> dict[str, list[str]]:
    """The terminal output's table rows by their first cell (the cells stripped)."""
    args = [
        "calibrate", str(LLMBAR / "judgments.csv"), "--map", MAP, "--positive", "1", "--kind", "pairwise",
        "--where", f"subset=Processed/{subset}", "--where", f"evaluator={judge}", "--where", f"strategy={strategy}",
        "--positional-agreement", convention,
    ]  # fmt: skip
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    rows: dict[str, list[str]] = {}
    for line in result.stdout.splitlines():
        cells = [c.strip() for c in line.split("│")[1:-1]]
        if cells and cells[0]:
            rows.setdefault(cells[0], cells[1:])
    return rows


def _count(cell: str) -> tuple[int, int]:
    numerator, n = cell.split("/")
    return int(numerator), int(n)


@pytest.mark.parametrize("config", sorted(PUBLISHED), ids="-".join)
def test_llmbar_published_table_from_the_terminal(config: tuple[str, str, str]) -> None:
    correct_original, correct_swapped, average, correct_both, equal, n = PUBLISHED[config]
    llmbar = _rows(*config, "both-unparseable-agree")
    assert _count(llmbar["original (A first)"][-1]) == (correct_original, n)
    assert _count(llmbar["swapped (B first)"][-1]) == (correct_swapped, n)
    correct, judgments = _count(llmbar["two-order average accuracy"][-1])
    assert (judgments, 100 * correct / judgments) == (2 * n, pytest.approx(average, abs=1e-9))
    assert llmbar["two-order average accuracy"][0] == f"{correct / judgments:.3f}"
    assert _count(llmbar["correct in both orders"][-1]) == (correct_both, n)
    (agreement,) = [cells for name, cells in llmbar.items() if name.startswith("positional agreement")]
    assert _count(agreement[-1]) == (equal, n)
    # The default convention: the consistent pairs over the pairs parseable in both orders; the pairs
    # unparseable in both orders (printed) are LLMBar's difference.
    ours = _rows(*config, "parseable-only")
    (agreement,) = [cells for name, cells in ours.items() if name.startswith("positional agreement")]
    consistent, parseable = _count(agreement[-1])
    both, one = (int(x) for x in ours["unparseable in both orders / in one order"][-1].split(" / "))
    assert (consistent + both, parseable + both + one) == (equal, n)
    # The order-flip row of the summary is the complement of the parseable-only agreement.
    (flip,) = [cells for name, cells in ours.items() if name.startswith("order-flip rate")]
    assert _count(flip[-1]) == (parseable - consistent, parseable)


def test_the_two_conventions_differ_exactly_where_pairs_are_unparseable_in_both_orders() -> None:
    # PaLM2, MT-Bench, Vanilla_NoRules: 7 pairs unparseable in both orders, 1 in one order.
    ours = _rows("MT-Bench", "PaLM2", "Vanilla_NoRules", "parseable-only")
    llmbar = _rows("MT-Bench", "PaLM2", "Vanilla_NoRules", "both-unparseable-agree")
    (a,) = [c for name, c in ours.items() if name.startswith("positional agreement")]
    (b,) = [c for name, c in llmbar.items() if name.startswith("positional agreement")]
    assert (a[-1], b[-1]) == ("140/192", "147/200")
    assert ours["unparseable in both orders / in one order"][-1] == "7 / 1"
