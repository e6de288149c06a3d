"""The release report's "After the gate" section: the rollout's latest reading, bound and checked."""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from pathlib import Path

import pytest

from gatestats.io.digest import digest_file
from gatestats.report import build_release_report
from gatestats.report._release_data import ReportInputError
from gatestats.rollout.log import add_batch, init_log
from gatestats.rollout.record import write_decision
from gatestats.rollout.watch import watch
from tests.rollout.conftest import observations

LATER = datetime(2026, 12, 1, tzinfo=UTC)


def _text(html: str) -> str:
    shown = re.sub(r"<(style|script)\b.*?</\1>", " ", html, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", shown))


@pytest.fixture
def rolled_back(tmp_path: Path, plan_path: Path, verdict_path: Path) -> Path:
    root = tmp_path / "WATCH"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    add_batch(root, observations(20), stage="shadow", plan_path=plan_path)
    add_batch(root, observations(3, start=20, unauthorized_actions=1), stage="pilot", plan_path=plan_path)
    write_decision(root, watch(root, plan_path=plan_path, now=LATER))
    return root


@pytest.mark.slow
def test_the_report_shows_the_latest_reading_bound_in_its_data(
    rolled_back: Path, verdict_path: Path, tmp_path: Path
) -> None:
    report = build_release_report(verdict_path, out=tmp_path / "reports", watch=rolled_back)
    data = report.directory / "data"
    latest = rolled_back / "decisions" / "0001.json"
    assert (data / "watch.json").read_bytes() == latest.read_bytes()
    index = json.loads((data / "digests.json").read_text())
    assert index["files"]["watch.json"] == digest_file(latest)
    html = report.html_path.read_text(encoding="utf-8")
    assert 'aria-label="e-value paths of stage pilot"' in html  # a stage's e-value paths, drawn
    page = _text(html)
    assert "After the gate" in page
    assert "ROLL BACK" in page
    assert "stage pilot" in page  # the decision
    assert "obs-20" in page  # where the trigger fired
    assert "roll_back" not in page  # words, not tokens
    assert "insufficient_evidence" not in page
    # A report built without a reading says so: tests/report/test_release.py, on the report every test there reads.


def test_a_reading_that_follows_another_verdict_or_was_edited_is_refused(
    rolled_back: Path, verdict_path: Path, tmp_path: Path
) -> None:
    from gatestats.report.release import latest_reading

    with pytest.raises(ReportInputError, match="verdict_digest"):
        latest_reading(rolled_back, "sha256:" + "0" * 64)
    latest = rolled_back / "decisions" / "0001.json"
    body = json.loads(latest.read_text())
    body["action"] = "advance"
    latest.chmod(0o644)
    latest.write_text(json.dumps(body), encoding="utf-8")
    with pytest.raises(ReportInputError, match="edited"):
        build_release_report(verdict_path, out=tmp_path / "reports", watch=rolled_back)
    assert not (tmp_path / "reports").exists() or not any((tmp_path / "reports").rglob("report.html"))


def test_a_log_never_read_is_refused_with_the_command_to_run(
    tmp_path: Path, plan_path: Path, verdict_path: Path
) -> None:
    root = tmp_path / "WATCH"
    init_log(root, plan_path=plan_path, verdict_path=verdict_path)
    with pytest.raises(ReportInputError, match="gatestats watch status"):
        build_release_report(verdict_path, out=tmp_path / "reports", watch=root)
