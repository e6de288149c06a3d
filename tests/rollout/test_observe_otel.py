"""`gatestats watch observe --from otel|trace`: spans and traces into the watch log, read by `watch status`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.rollout import read_labels, read_log
from tests.rollout.conftest import PLAN, verdict_path  # noqa: F401 - the session fixture, shared

SPANS = Path(__file__).parents[1] / "importers" / "fixtures" / "otel_observations" / "spans.otlp.json"
PROTOBUF_SPANS = SPANS.with_name("spans.protobuf.json")
UNAUTHORIZED = "20cbcdc3abc79f730a11be883ba1d2a8"  # the trace whose issue_refund span is flagged
ACCEPTED = "a8d251aac404ca50eabf05d68e6e85cb"


def _run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def watch(tmp_path: Path, verdict_path: Path) -> Path:  # noqa: F811 - the fixture imported above
    plan = tmp_path / "rollout.toml"
    plan.write_text(PLAN, encoding="utf-8")
    result = _run("watch", "init", str(tmp_path / "WATCH"), "--plan", str(plan), "--verdict", str(verdict_path))
    assert result.exit_code == 0, result.output
    return tmp_path / "WATCH"


def test_spans_are_observed_read_by_status_and_labelled_by_trace_id(watch: Path, tmp_path: Path) -> None:
    result = _run("watch", "observe", str(watch), str(SPANS), "--stage", "shadow", "--from", "otel")
    assert result.exit_code == 0, result.output
    assert "wrote batch 0001 (stage shadow): 4 observations" in result.stderr
    log = read_log(watch)
    assert log.records.get_column("record_id").to_list()[0] == ACCEPTED
    assert log.records.get_column("layer").unique().to_list() == ["shadow"]
    assert log.records.get_column("stage").unique().to_list() == ["shadow"]
    assert log.records.get_column("system").unique().to_list() == ["candidate"]
    status = _run("watch", "status", str(watch), "--no-record", "--json")
    assert status.exit_code == 21, status.output  # the flagged tool call: none tolerated
    reading = json.loads(status.stdout)
    assert UNAUTHORIZED in json.dumps(reading)
    labels = tmp_path / "labels.csv"
    labels.write_text(
        f"record_id,label,observed_at\n{ACCEPTED},escaped_defect,2026-12-01T09:00:00Z\n", encoding="utf-8"
    )
    result = _run("watch", "label", str(watch), str(labels))
    assert result.exit_code == 0, result.output
    assert [x.record_id for x in read_labels(watch)] == [ACCEPTED]
    defects = _run("watch", "defects", str(watch))
    assert defects.exit_code == 0, defects.output
    assert ACCEPTED in defects.output


def test_the_same_traces_again_are_refused_in_either_encoding(watch: Path) -> None:
    assert _run("watch", "observe", str(watch), str(SPANS), "--stage", "shadow", "--from", "otel").exit_code == 0
    before = _tree(watch)
    result = _run("watch", "observe", str(watch), str(PROTOBUF_SPANS), "--stage", "shadow", "--from", "otel")
    assert result.exit_code == 2
    assert f"field 'record_id': '{ACCEPTED}' is already in the log" in result.output
    assert _tree(watch) == before


def test_a_directory_of_traces_is_one_batch(watch: Path, tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    for number, outcome in enumerate(["passed", "failed", "passed"]):
        trace = {
            "format": "gatestats-trace/1",
            "trace_id": f"pilot-{number}",
            "request": "Refund order A-1009",
            "tool_calls": [],
            "output": "Done.",
            "outcome": outcome,
            "cost": {"usd": 0.01},
        }
        (traces / f"{number}.json").write_text(json.dumps(trace), encoding="utf-8")
    result = _run("watch", "observe", str(watch), str(traces), "--stage", "pilot", "--from", "trace")
    assert result.exit_code == 0, result.output
    log = read_log(watch)
    assert log.records.get_column("record_id").to_list() == ["pilot-0", "pilot-1", "pilot-2"]
    assert log.records.get_column("layer").unique().to_list() == ["live"]
    assert log.records.get_column("outcome").to_list() == ["passed", "failed", "passed"]


def test_bad_spans_exit_2_and_write_nothing(watch: Path, tmp_path: Path) -> None:
    before = _tree(watch)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "spans.json").write_text(SPANS.read_text(encoding="utf-8").replace("2.5", "NaN", 1), encoding="utf-8")
    vip = tmp_path / "vip.json"
    vip.write_text(SPANS.read_text(encoding="utf-8").replace('"beta"', '"vip"'), encoding="utf-8")
    cases = [
        ([str(vip), "--stage", "shadow", "--from", "otel"], "field 'cohort': 'vip' is not a cohort of stage 'shadow'"),
        ([str(bad), "--stage", "shadow", "--from", "otel"], f"{bad / 'spans.json'}"),
        ([str(SPANS), "--stage", "shadow", "--from", "trace"], "field 'resourceSpans': unknown field"),
        ([str(SPANS), "--stage", "shadow", "--from", "jaeger"], "--from: expected otel or trace"),
        ([str(SPANS), "--stage", "shadow", "--from", "otel", "--map", "case_id=x"], "--map/--id-column: only"),
        ([str(SPANS), "--stage", "canary", "--from", "otel"], "--stage: 'canary' is not a stage of the plan"),
    ]
    for args, message in cases:
        result = _run("watch", "observe", str(watch), *args)
        assert result.exit_code == 2, (args, result.output)
        assert message in result.output, (args, result.output)
        assert "Traceback" not in result.output
    assert _tree(watch) == before
