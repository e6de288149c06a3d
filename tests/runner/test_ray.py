"""The Ray executor: the same run set fanned out as Ray tasks on a local Ray instance, the same records.

Skipped only when ``ray`` is not importable (it is the optional ``gatestats[ray]`` extra).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from gatestats_runner._util import digest_file
from gatestats_runner.runset import RunSetOptions, run_run_set
from gatestats_runner.store import RECORDS, read_manifest, read_records
from tests.conftest import DATA
from tests.runner.conftest import needs_sandbox

# Keep the local Ray instance on 127.0.0.1 (read when ray is imported; RayExecutor sets it too).
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")
pytest.importorskip("ray", reason="ray is not installed (pip install 'gatestats[ray]')")

from gatestats_runner.executors import RayExecutor

pytestmark = needs_sandbox
GOLDEN = DATA / "golden_example"


@pytest.mark.slow  # a Ray cluster started end to end (issue 28, item 3: out of the fast loop)
def test_a_run_set_on_ray_has_the_same_outcomes_and_evidence(tmp_path: Path) -> None:
    out = tmp_path / "ray-run-set"
    summary = run_run_set(
        RunSetOptions(
            cases=GOLDEN / "cases",
            candidate=GOLDEN / "candidates" / "fixed",
            out=out,
            trials=2,
        ),
        executor=RayExecutor(None, workers=2, shutdown_ray=True),
    )
    assert summary.complete
    assert summary.counts == {"passed": 6}
    assert read_manifest(out)["sessions"][0]["executor"] == "ray"
    records = read_records(out / RECORDS).records
    assert len(records) == 6
    for record in records:
        assert record["source"].startswith("gatestats-runner ")
        assert digest_file(out / record["stdout_path"]) == record["stdout_digest"]
        assert digest_file(out / record["stderr_path"]) == record["stderr_digest"]
        for artifact in record["artifacts"]:
            assert digest_file(out / artifact["path"]) == artifact["digest"]
        assert (out / record["stdout_path"]).with_name("evidence.json").is_file()
