"""Trace formats: gatestats-trace/1 strictly, OpenTelemetry GenAI spans (OTLP/JSON)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from gatestats.golden import TraceError, read_trace
from tests.conftest import DATA


def _write(tmp_path: Path, body: Any) -> Path:
    path = tmp_path / "trace.json"
    path.write_text(json.dumps(body), encoding="utf-8")
    return path


def test_a_production_trace_is_read_with_its_digest_and_tool_calls() -> None:
    trace = read_trace(DATA / "golden_refund" / "refund-41-days.json")
    assert trace.source_id == "prod-2026-11-28-0193"
    assert [c.name for c in trace.tool_calls] == ["lookup_order", "issue_refund"]
    assert sorted(trace.snapshot) == ["orders.json", "policy.md"]
    assert (trace.model, trace.harness_version) == ("support-model-2026-10", "support-agent 3.2.1")


@pytest.mark.parametrize("missing", ["trace_id", "request", "tool_calls", "output"])
def test_a_trace_without_a_required_field_names_file_and_field(tmp_path: Path, missing: str) -> None:
    body = json.loads((DATA / "golden_refund" / "refund-41-days.json").read_text(encoding="utf-8"))
    del body[missing]
    path = _write(tmp_path, body)
    with pytest.raises(TraceError, match=re.escape(f"{path}: field '{missing}': required field is missing")):
        read_trace(path)


def test_an_unknown_trace_field_is_refused_not_dropped(tmp_path: Path) -> None:
    body = json.loads((DATA / "golden_refund" / "refund-41-days.json").read_text(encoding="utf-8"))
    body["tool_cals"] = []
    with pytest.raises(TraceError, match=r"field 'tool_cals': unknown field"):
        read_trace(_write(tmp_path, body))


def test_a_snapshot_path_that_leaves_the_case_is_refused(tmp_path: Path) -> None:
    body = json.loads((DATA / "golden_refund" / "refund-41-days.json").read_text(encoding="utf-8"))
    body["snapshot"] = {"../../etc/passwd": "x"}
    with pytest.raises(TraceError, match=r"field 'snapshot\.'\.\./\.\./etc/passwd'': expected a relative file path"):
        read_trace(_write(tmp_path, body))


def _attr(key: str, value: Any) -> dict[str, Any]:
    kind = "intValue" if isinstance(value, int) else "stringValue"
    return {"key": key, "value": {kind: str(value) if kind == "intValue" else value}}


def test_opentelemetry_genai_spans_become_a_trace(tmp_path: Path) -> None:
    messages_in = json.dumps([{"role": "user", "parts": [{"type": "text", "content": "Refund order A-1009 please"}]}])
    messages_out = json.dumps(
        [{"role": "assistant", "parts": [{"type": "text", "content": "Refunded under our 45-day policy."}]}]
    )
    spans = [
        {
            "traceId": "t1",
            "spanId": "s1",
            "startTimeUnixNano": "1",
            "attributes": [
                _attr("gen_ai.operation.name", "chat"),
                _attr("gen_ai.request.model", "m-1"),
                _attr("gen_ai.input.messages", messages_in),
                _attr("gen_ai.usage.input_tokens", 100),
            ],
        },
        {
            "traceId": "t1",
            "spanId": "s2",
            "startTimeUnixNano": "2",
            "attributes": [
                _attr("gen_ai.operation.name", "execute_tool"),
                _attr("gen_ai.tool.name", "issue_refund"),
                _attr("gen_ai.tool.call.arguments", '{"order_id": "A-1009"}'),
            ],
        },
        {
            "traceId": "t1",
            "spanId": "s3",
            "startTimeUnixNano": "3",
            "attributes": [
                _attr("gen_ai.operation.name", "chat"),
                _attr("gen_ai.output.messages", messages_out),
                _attr("gen_ai.usage.output_tokens", 20),
            ],
        },
    ]
    path = _write(tmp_path, {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]})
    trace = read_trace(path)
    assert (trace.source_id, trace.request, trace.output) == (
        "t1",
        "Refund order A-1009 please",
        "Refunded under our 45-day policy.",
    )
    assert [(c.name, dict(c.arguments)) for c in trace.tool_calls] == [("issue_refund", {"order_id": "A-1009"})]
    assert trace.model == "m-1"
    assert dict(trace.cost or {}) == {"input_tokens": 100, "output_tokens": 20}


def test_spans_of_two_traces_are_refused(tmp_path: Path) -> None:
    spans = [{"traceId": "a", "spanId": "1"}, {"traceId": "b", "spanId": "2"}]
    with pytest.raises(TraceError, match=r"expected one trace \(got 2\)"):
        read_trace(_write(tmp_path, {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}))
