"""``python3 dev.py demo``'s sequential step: run until decided, gate, report, and say where the files are.

The step is ``dev.sequential_demo`` run here on its own (the whole demo also runs the golden set and
the correction loop); its output is what the README shows (``## Quick start``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any
from unittest import mock

import pytest

from gatestats.gate import read_verdict
from tests.conftest import ROOT
from tests.dev_module import load_dev
from tests.runner.conftest import needs_sandbox

EXAMPLE = ROOT / "examples" / "sequential"


def _dev() -> ModuleType:
    return load_dev("gatestats_dev")


#: The demo's commands run in this process, through the console script's body (``gatestats.cli.main``), except
#: ``run --until-decided``, which stays the installed script's process (its sandboxed agents are its children).
#: Session 42: 14 processes of ~0.5 CPU-s start-up each; the console script as a process is tested by that
#: ``run`` here and by tests/cli/test_kill_loop.py (``report``, ``gate -o``) and tests/fuzz (every command).
IN_PROCESS = ("watch", "promote", "gate", "report")


def _in_process(gatestats: Path) -> SimpleNamespace:
    """A stand-in for the demo's ``subprocess``: ``gatestats IN_PROCESS…`` runs the console script's body here."""

    def run(args: Sequence[str], *, check: bool = False, **kwargs: Any) -> subprocess.CompletedProcess[str]:
        if args[0] != str(gatestats) or args[1] not in IN_PROCESS:
            return subprocess.run(args, check=check, **kwargs)
        from gatestats.cli import main

        sys.stdout.flush()
        with mock.patch.object(sys, "argv", ["gatestats", *args[1:]]), mock.patch.dict(os.environ):
            try:
                main()
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else 1
            finally:
                sys.stdout.flush()
        if check and code:
            raise subprocess.CalledProcessError(code, list(args))
        return subprocess.CompletedProcess(list(args), code)

    return SimpleNamespace(run=run)


def _readme_block() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("The main job then runs its sequential variant", 1)[1]
    return section.split("```\n", 2)[1].splitlines()


@pytest.mark.slow  # end to end: the sandbox runs both agents in batches (about 55 s in CI)
@needs_sandbox
def test_demo_gates_the_sequential_run_renders_its_report_and_prints_where_they_are(
    tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    out, reports = tmp_path / "sequential", tmp_path / "reports"
    gatestats = Path(sys.executable).parent / "gatestats"
    dev = _dev()
    dev.subprocess = _in_process(gatestats)  # gate and report in this process; run as the console script
    dev.sequential_demo(gatestats, out, reports)
    lines = capfd.readouterr().out.splitlines()
    policy = EXAMPLE / "policy.toml"
    assert lines[0] == "== sequential: both agents in batches until the gate is decided (examples/sequential)"
    stop = lines.index(f"== gate: {policy}")
    assert lines[stop - 1].startswith(f"{out}: stopped after 32 of 48 cases (decided; gate so far: pass); ")
    assert lines[stop + 1] == "verdict: pass (exit 0)"
    sequential = next(i for i, line in enumerate(lines) if line.startswith("sequential: "))
    assert lines[sequential : sequential + 3] == [
        "sequential: stopped after 32 of at most 48 cases (batch 4 of at most 6, batches of 8 cases; betting "
        "confidence sequences, 2 trials per case on both systems): the decision was determined there",
        "  solves: pass rate ≥ 0.6: pass at 16 cases; e_pass 99.8 (level 80), e_fail 1.53e-05 (level 80)",
        "  not worse: pass rate not worse by more than 0.1 than baseline: pass at 32 cases; e_pass 166 (level 80), "
        "e_fail 0.00128 (level 80)",
    ]
    verdict_file = read_verdict(out / "verdict.json")
    verdict = verdict_file.verdict
    report = reports / "product-sequential-new" / "1"
    tail = lines.index("== report: the sequential verdict")
    assert lines[tail - 1] == f"verdict file: {out / 'verdict.json'} ({verdict_file.digest})"
    assert lines[tail + 1 : tail + 4] == [
        f"+ {gatestats} report {out / 'verdict.json'} --out {reports}",
        f"report: {report} (release product-sequential-new, version 1)",
        f"html: {report / 'report.html'}",
    ]
    assert lines[tail + 4].startswith(f"verdict: pass ({verdict_file.digest}); rendered with ")
    assert lines[tail + 5 :] == [
        f"sequential verdict: pass (gatestats gate exit 0); verdict {out / 'verdict.json'}, "
        f"summary {out / 'verdict.md'}"
    ]
    assert verdict.sequential is not None
    assert verdict.sequential.trials_saved == 64
    assert "### Sequential stop" in (out / "verdict.md").read_text(encoding="utf-8")
    html = (report / "report.html").read_text(encoding="utf-8")
    # The report's summary is the gate's own sentences (gate.sequential_summary).
    assert "stopped after 32 of at most 48 cases (batch 4 of at most 6" in html
    assert "the decision was determined there." in html
    assert "128 of the fixed-size design's 192 trials used (48 cases × 2 trials × 2 systems), 64 saved (33%)" in html
    # The README shows these lines as the demo prints them.
    shown = [line for line in _readme_block() if line.startswith(("sequential: ", "  "))]
    assert shown == lines[sequential : sequential + len(shown)]
    assert len(shown) == 5
    # After the gate (examples/rollout): the same release in shadow (advances), then pilot (rolled back).
    rollout = tmp_path / "rollout"
    dev = _dev()
    dev.subprocess = _in_process(gatestats)  # the watch and promote commands in this process
    dev.rollout_demo(gatestats, rollout, out / "verdict.json", reports)
    after = capfd.readouterr().out
    assert "rollout: ADVANCE (exit 20)" in after
    assert "rollout: ROLL BACK (exit 21)" in after
    assert "roll back: stage pilot: escaped defects at most 2% (escaped defect rate) fired at observation" in after
    assert (rollout / "golden" / "proposed" / "escaped-pilot-1-0051").is_dir()  # proposed, never approved
    page = (reports / "product-sequential-new" / "2" / "report.html").read_text(encoding="utf-8")
    assert "After the gate" in page
    assert "ROLL BACK" in page
