"""Ids that look like rich's emoji codes (``:smile:``) are printed as written, never as emoji.

rich replaces ``:name:`` with an emoji in every string a console renders unless the console is made
with ``emoji=False``: a system ``:smile:`` was printed as a face and a case ``case:fire:12`` as
``case🔥12``, a name the user cannot find in the records. Every console gatestats makes passes
``emoji=False`` (the second test reads the source); the first prints hostile ids through the
reading commands' terminal tables and notes.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app

SYSTEMS = (":smile:", "x:thumbs_up:y")
CASE = "case:fire:{}"
SRC = Path(__file__).resolve().parents[2] / "src" / "gatestats"


@pytest.fixture(scope="module")
def records(tmp_path_factory: pytest.TempPathFactory) -> Path:
    lines = []
    for system, rate in zip(SYSTEMS, (0.7, 0.4), strict=True):
        for i in range(40):
            outcome = "passed" if (i * 7 % 10) / 10 < rate else "failed"
            record = {"schema_version": 1, "record_id": f"{system}-{i}", "run_set_id": "rs-1", "system": system}
            record.update({"case_id": CASE.format(i), "trial": 0, "attempt": 0, "outcome": outcome})
            lines.append(json.dumps(record))
    path = tmp_path_factory.mktemp("emoji") / "r.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("command", "shown"),
    [
        (["analyze"], SYSTEMS),
        (["compare", "--baseline", SYSTEMS[0], "--candidate", SYSTEMS[1]], (*SYSTEMS, CASE.format(12))),
        (["rank"], SYSTEMS),
        (["cost"], SYSTEMS),
    ],
    ids=["analyze", "compare", "rank", "cost"],
)
def test_emoji_codes_in_ids_are_printed_as_written(records: Path, command: list[str], shown: tuple[str, ...]) -> None:
    result = CliRunner().invoke(app, [*command, str(records)], env={"COLUMNS": "240"}, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    for text in shown:
        assert text in result.output
    assert not [c for c in result.output if ord(c) > 0xFFFF or c in "\u2764\u263a"], result.output


def _console_calls() -> list[tuple[Path, int, bool]]:
    calls = []
    for path in sorted(SRC.rglob("*.py")):
        text = path.read_text(encoding="utf-8")
        if "Console" not in text:  # no call of Console can be in it: not parsed
            continue
        for node in ast.walk(ast.parse(text)):
            if isinstance(node, ast.Call):
                name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
                if name == "Console":
                    off = any(
                        k.arg == "emoji" and isinstance(k.value, ast.Constant) and k.value.value is False
                        for k in node.keywords
                    )
                    calls.append((path.relative_to(SRC), node.lineno, off))
    return calls


def test_every_console_gatestats_makes_leaves_emoji_codes_alone() -> None:
    calls = _console_calls()
    assert len(calls) >= 20  # the terminal commands' consoles are found (a walk that finds none proves nothing)
    assert [f"{path}:{line}" for path, line, off in calls if not off] == []
