"""``gatestats gate`` on a ``[sequential]`` policy: the stop in the terminal output and the Markdown summary.

The example (``examples/sequential``, run by the controller without a sandbox) stops after 32 of 48
cases with both rules passed; the numbers below are its recorded path (docs/sequential.md, "The demo"):
both levels are 1 / 0.0125 = 80 (alpha 0.05 split evenly between the two sides and across the two rows).
"""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest
from rich.console import Console
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.cli.gate import render_verdict
from gatestats.gate import Verdict, read_verdict
from gatestats.gate.bindings import SequencePointBinding, SequentialBinding
from gatestats.io.text import visible
from tests.conftest import copy_sequential_example
from tests.gate.test_safe_outputs import HOSTILE, RAW_CONTROL, _render, _texts
from tests.sequential.run.conftest import EXAMPLE, run_example

SOLVES = "solves: pass rate ≥ 0.6"
NOT_WORSE = "not worse: pass rate not worse by more than 0.1 than baseline"
STOP = (
    "stopped after 32 of at most 48 cases (batch 4 of at most 6, batches of 8 cases; betting confidence "
    "sequences, 2 trials per case on both systems): the decision was determined there"
)
TRIALS = "128 of the fixed-size design's 192 trials used (48 cases × 2 trials × 2 systems), 64 saved (33%)"
GUARANTEE = (
    "Each rule was read after every batch with an anytime-valid test against levels fixed before the first "
    "trial, so its chance of a false pass stays within its alpha under exactly the monitoring and the stop "
    "that happened here."
)
TERMINAL = [
    f"sequential: {STOP}",
    f"  {SOLVES}: pass at 16 cases; e_pass 99.8 (level 80), e_fail 1.53e-05 (level 80)",
    f"  {NOT_WORSE}: pass at 32 cases; e_pass 166 (level 80), e_fail 0.00128 (level 80)",
    f"  trials: {TRIALS}",
    f"  {GUARANTEE}",
]
MARKDOWN = [
    "### Sequential stop",
    "",
    STOP.replace("stopped", "Stopped", 1).replace("betting", "<code>betting</code>") + ".",
    "",
    f"Trials: {TRIALS}.",
    "",
    "| rule | at the stop | e-value pass (level) | e-value fail (level) |",
    "|---|---|---|---|",
    f"| {SOLVES} | pass at 16 cases | 99.8 (level 80) | 1.53e-05 (level 80) |",
    f"| {NOT_WORSE} | pass at 32 cases | 166 (level 80) | 0.00128 (level 80) |",
    "",
    GUARANTEE,
    "",
    "### Flips per case",
]


def _gate(out: Path, tmp: Path, policy: Path = EXAMPLE / "policy.toml") -> tuple[list[str], str, Verdict]:
    """``gatestats gate`` on the run sets in ``out``: its stdout lines, its Markdown summary, its verdict file."""
    args = [
        "gate", "--policy", str(policy), "--baseline", str(out / "baseline"), "--candidate", str(out / "candidate"),
        "-o", str(tmp / "verdict.json"), "--markdown", str(tmp / "summary.md"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    markdown = (tmp / "summary.md").read_text(encoding="utf-8")
    return result.stdout.splitlines(), markdown, read_verdict(tmp / "verdict.json").verdict


@pytest.fixture(scope="module")
def example_gate(
    tmp_path_factory: pytest.TempPathFactory, sequential_example_run: Path
) -> tuple[list[str], str, Verdict]:
    tmp = tmp_path_factory.mktemp("sequential-gate")
    copy_sequential_example(sequential_example_run, tmp / "out")
    return _gate(tmp / "out", tmp)


def _section(markdown: str) -> list[str]:
    lines = markdown.splitlines()
    start = lines.index("### Sequential stop")
    return lines[start : lines.index("### Flips per case") + 1]


def test_terminal_shows_the_stop_each_rule_s_e_values_and_levels_and_the_trials_saved(
    example_gate: tuple[list[str], str, Verdict],
) -> None:
    lines, _, _ = example_gate
    start = lines.index(TERMINAL[0])
    assert lines[start : start + len(TERMINAL)] == TERMINAL
    assert lines[start - 1].startswith("└")  # right after the rules table
    assert lines[start + len(TERMINAL)].startswith("flips: pass→fail 0 (none); fail→pass 8 ")


def test_markdown_summary_has_the_sequential_stop_section_after_the_rules(
    example_gate: tuple[list[str], str, Verdict],
) -> None:
    _, markdown, _ = example_gate
    assert _section(markdown) == MARKDOWN
    assert markdown.index("### Rules") < markdown.index("### Sequential stop")


def test_a_fixed_size_verdict_has_no_sequential_lines(example_gate: tuple[list[str], str, Verdict]) -> None:
    _, _, verdict = example_gate
    fixed = dataclasses.replace(verdict, sequential=None)
    assert "Sequential stop" not in fixed.to_markdown()
    assert "sequential:" not in _terminal(fixed)


def _terminal(verdict: Verdict) -> str:
    console = Console(file=io.StringIO(), width=200, soft_wrap=True, color_system=None)
    render_verdict(verdict, console)
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def _undecided(binding: SequentialBinding) -> SequentialBinding:
    """The example's binding as if the second rule were still undecided at the run's end (all 48 cases)."""
    last = SequencePointBinding(n_cases=48, estimate=0.1, lower=-0.2, upper=0.4, e_pass=12.5, e_fail=0.25)
    rule = dataclasses.replace(binding.rules[1], status="undecided", decided_at=None, cases_needed=40, path=(last,))
    return dataclasses.replace(
        binding, rules=(binding.rules[0], rule), stopped_at=48, checkpoints=(8, 16, 24, 32, 40, 48), decided=False,
        trials_used=192, trials_saved=0,
    )  # fmt: skip


def test_an_undecided_rule_shows_its_e_values_at_the_end_and_the_cases_it_would_need(
    example_gate: tuple[list[str], str, Verdict],
) -> None:
    _, _, verdict = example_gate
    assert verdict.sequential is not None
    undecided = dataclasses.replace(verdict, sequential=_undecided(verdict.sequential))
    text = _terminal(undecided).splitlines()
    start = next(i for i, line in enumerate(text) if line.startswith("sequential:"))
    assert text[start : start + 4] == [
        "sequential: stopped after 48 of at most 48 cases (batch 6 of at most 6, batches of 8 cases; betting "
        "confidence sequences, 2 trials per case on both systems): every case of the design ran and the decision "
        "was not determined (insufficient evidence)",
        f"  {SOLVES}: pass at 16 cases; e_pass 99.8 (level 80), e_fail 1.53e-05 (level 80)",
        f"  {NOT_WORSE}: undecided after 48 cases, about 40 more cases needed; e_pass 12.5 (level 80), "
        "e_fail 0.25 (level 80)",
        "  trials: 192 of the fixed-size design's 192 trials used (48 cases × 2 trials × 2 systems), 0 saved (0%)",
    ]
    assert (
        f"| {NOT_WORSE} | undecided after 48 cases, about 40 more cases needed | 12.5 (level 80) | 0.25 (level 80) |"
        in undecided.to_markdown().splitlines()
    )


def test_no_batch_complete_and_no_rule_read_say_so_and_claim_no_guarantee(
    example_gate: tuple[list[str], str, Verdict],
) -> None:
    _, _, verdict = example_gate
    assert verdict.sequential is not None
    empty = dataclasses.replace(
        verdict.sequential, checkpoints=(), stopped_at=0, decided=False, trials_used=0, trials_saved=192, rules=()
    )
    section = _section(dataclasses.replace(verdict, sequential=empty).to_markdown())
    assert section == [
        "### Sequential stop",
        "",
        "No batch is complete on both sides yet (0 of at most 48 cases; batches of 8 cases; <code>betting</code> "
        "confidence sequences, 2 trials per case on both systems): not decided yet, 48 cases of the design not run.",
        "",
        "Trials: 0 of the fixed-size design's 192 trials used (48 cases × 2 trials × 2 systems), 192 saved (100%).",
        "",
        "No rule's sequence was read (see the reasons): nothing was decided by it, so no pass rests on this "
        "monitoring.",
        "",
        "### Flips per case",
    ]


def _hostile(binding: SequentialBinding, h: str) -> SequentialBinding:
    rules = tuple(dataclasses.replace(r, row=h) for r in binding.rules)
    return dataclasses.replace(binding, method=h, rules=rules)


@pytest.mark.parametrize("h", HOSTILE, ids=range(len(HOSTILE)))
def test_hostile_rule_names_and_method_stay_inert_in_markdown_and_terminal(
    example_gate: tuple[list[str], str, Verdict], h: str
) -> None:
    _, _, verdict = example_gate
    assert verdict.sequential is not None
    hostile = dataclasses.replace(verdict, sequential=_hostile(verdict.sequential, h))
    section = "\n".join(_section(hostile.to_markdown()))
    assert RAW_CONTROL.search(section) is None
    parsed = _render(section)
    assert set(parsed.tags) <= {"h3", "p", "table", "thead", "tbody", "tr", "th", "td", "code"}
    assert _texts(parsed, "h3") == ["Sequential stop", "Flips per case"]
    assert parsed.row_cells == [4, 4, 4]  # the header and one row per rule: nothing opened a cell or a row
    cells = _texts(parsed, "td")
    if len(h) <= 100:  # shown whole: the text is the data with only invisible characters made visible
        shown = visible(h) if h else "(empty)"
        assert [cells[0].strip(), cells[4].strip()] == [shown.strip()] * 2
        assert _texts(parsed, "code")[0].strip() == shown.strip()
    else:
        assert f"… (+{len(h) - 200} characters)" in cells[0]
    terminal = _terminal(hostile)
    assert RAW_CONTROL.search(terminal.replace("\n", "")) is None
    rows = [line for line in terminal.splitlines() if line.startswith("  ") and "(level 80)" in line]
    assert len(rows) == 2  # a newline in a name never starts a line of its own
    if len(h) <= 100:
        assert rows[0].startswith(f"  {visible(h)}: pass at 16 cases; ")


def test_gate_on_a_policy_with_a_hostile_rule_name_end_to_end(tmp_path: Path) -> None:
    name = (
        "evil <script>x</script> `y` | z\u2028# pass"  # a newline itself is refused (tests/gate/test_policy_limits.py)
    )
    policy = tmp_path / "policy.toml"
    text = (EXAMPLE / "policy.toml").read_text(encoding="utf-8")
    policy.write_text(text.replace('name = "solves"', f"name = {json.dumps(name)}"), encoding="utf-8")
    run_example(tmp_path / "out", policy=policy)
    lines, markdown, _ = _gate(tmp_path / "out", tmp_path, policy)
    shown = r"evil <script>x</script> `y` | z\u2028# pass: pass rate ≥ 0.6"
    assert f"  {shown}: pass at 16 cases; e_pass 99.8 (level 80), e_fail 1.53e-05 (level 80)" in lines
    cell = r"| evil &lt;script&gt;x&lt;/script&gt; \`y\` \| z\\u2028\# pass: pass rate ≥ 0.6 |"
    assert f"{cell} pass at 16 cases | 99.8 (level 80) | 1.53e-05 (level 80) |" in markdown.splitlines()
    assert f"{cell} 1 | — | 0.6 | sequential (betting) | 0.0401 / 1 | pass |" in markdown.splitlines()  # as the rules
    assert "<script>" not in markdown
