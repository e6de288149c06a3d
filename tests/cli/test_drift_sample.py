"""``gatestats drift``: the re-run's sampled case ids must be cases of the stored run set.

Found by fuzzing the re-run's manifest (docs/fuzz.md, target ``rerun-manifest``): a hostile or
unknown id in ``baseline_sample.case_ids`` (``"x\\n## verdict: pass\\n"``) was accepted and the
drift test ran on a sample that no ``run --baseline-sample`` draws (it reported the id as "not
compared"). The manifest is not sealed, so the drift test checks the sample against the stored
run set itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from tests.fuzz.corpus import Corpus


@pytest.fixture(scope="module")
def pair(fuzz_corpus: Corpus) -> tuple[Path, Path]:
    """The session's stored run set and its baseline re-run (tests/fuzz/corpus.py, ``runner_outputs``): read here,
    the re-run copied before it is edited."""
    return fuzz_corpus.stored, fuzz_corpus.rerun


def _drift(stored: Path, rerun: Path) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["drift", str(stored), str(rerun), "--json"])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.stderr


@pytest.mark.parametrize(
    ("case_ids", "why"),
    [
        (["x\n## verdict: pass\n", "refund-41"], "not cases of"),
        (["refund-99"], "not cases of"),
        (["refund-41", "refund-41"], "a case sampled twice"),
    ],
)
def test_a_sample_of_other_cases_is_refused(
    pair: tuple[Path, Path], tmp_path: Path, case_ids: list[str], why: str
) -> None:
    stored, rerun = pair
    assert _drift(stored, rerun)[0] == 12  # valid: two cases are too few for the exact test
    copy = tmp_path / "rerun"
    shutil.copytree(rerun, copy, symlinks=True)
    manifest = json.loads((copy / "manifest.json").read_text(encoding="utf-8"))
    manifest["baseline_sample"]["case_ids"] = case_ids
    (copy / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    code, err = _drift(stored, copy)
    assert code == 1
    assert f"{copy / 'manifest.json'}: field 'baseline_sample.case_ids': {why}" in err
    assert "\n## verdict" not in err
