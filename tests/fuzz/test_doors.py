"""The doors' commands accept their unmutated inputs: a refusal in the fuzz suite is the mutant's doing.

Each door target's commands run on an untouched copy of its directory (as :func:`tests.fuzz.targets.run_target`
lays it out) and must do their normal work: promote writes the proposed case, ``run --baseline-sample``
its re-run, recovery and ``correct --resume`` exit 0 without touching the journal. ``drift`` exits 12
(insufficient evidence: two sampled cases, and the exact paired test needs six) — not 1, its exit for a
damaged run set.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from tests.fuzz.corpus import Corpus
from tests.fuzz.doors import DOOR_TARGETS
from tests.fuzz.targets import tree_bytes

#: The exit of each command on valid input (0 unless said).
EXPECTED_EXIT = {"drift (stored)": 12, "drift (re-run)": 12}


@pytest.mark.parametrize(("target", "command"), [(t.name, name) for t in DOOR_TARGETS for name in t.commands], ids=str)
def test_each_door_accepts_its_valid_input(target: str, command: str, corpus: Corpus, tmp_path: Path) -> None:
    door = next(t for t in DOOR_TARGETS if t.name == target)
    source: Path = getattr(corpus, str(door.folder))
    folder = tmp_path / source.name
    shutil.copytree(source, folder, symlinks=True)
    before = tree_bytes(folder)
    args, outputs = door.commands[command](tmp_path, folder / door.file, corpus)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == EXPECTED_EXIT.get(command, 0), result.output
    if command.startswith("drift"):
        assert '"status": "insufficient_evidence"' in result.stdout
    assert all(p.exists() for p in outputs)  # promote's proposed case, run's re-run
    if not command.startswith("promote"):
        assert tree_bytes(folder) == before
