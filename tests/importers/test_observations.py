"""Observations from OpenTelemetry GenAI spans (OTLP/JSON) and gatestats-trace/1 traces.

The fixture is written by the OpenTelemetry SDK and its OTLP encoder
(fixtures/otel_observations/make_fixture.py, versions in VERSION.txt), in both JSON encodings
of the OTLP message: the OTLP specification's (hex ids, enums as integers: the collector's file
exporter) and protobuf's JSON mapping (base64 ids, enum names, 64-bit integers as strings).
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gatestats.errors import RecordFileError
from gatestats.importers import import_otel_observations, import_trace_observations, read_otlp_spans
from gatestats.rollout import add_batch, init_log
from tests.rollout.conftest import PLAN, verdict_path  # noqa: F401 - the session fixture, shared

FIXTURES = Path(__file__).parent / "fixtures" / "otel_observations"
OTLP = FIXTURES / "spans.otlp.json"
PROTOBUF = FIXTURES / "spans.protobuf.json"
FIELDS = (
    "record_id",
    "case_id",
    "system",
    "trial",
    "outcome",
    "failed_check",
    "accepted",
    "review_minutes",
    "unauthorized_actions",
    "cost_usd",
    "cohort",
    "tokens_input",
    "tokens_output",
    "model_id",
    "started_at",
    "ended_at",
)
#: What the SDK was told (make_fixture.py): four traces a minute apart from 2025-12-04T10:00:00Z.
EXPECTED = [
    ("a8d251aac404ca50eabf05d68e6e85cb", "passed", None, True, 2.5, 0, 0.0125, "internal", "10:00"),
    ("0ecbc76d1f5ec48aba620841033a62fc", "passed", None, False, 6.0, 0, 0.02, "beta", "10:01"),
    ("20cbcdc3abc79f730a11be883ba1d2a8", "passed", None, False, 4.25, 1, 0.018, "beta", "10:02"),
    (
        "6d7952eb984593045e2a1b798f24312a",
        "failed",
        "span status ERROR: timeout",
        None,
        None,
        None,
        0.004,
        "internal",
        "10:03",
    ),
]


def _expected_rows() -> list[dict[str, Any]]:
    rows = []
    for trace_id, outcome, check, accepted, review, unauthorized, cost, cohort, minute in EXPECTED:
        rows.append(
            {
                "record_id": trace_id,
                "case_id": trace_id,
                "system": "new",
                "trial": 0,
                "outcome": outcome,
                "failed_check": check,
                "accepted": accepted,
                "review_minutes": review,
                "unauthorized_actions": unauthorized,
                "cost_usd": cost,
                "cohort": cohort,
                "tokens_input": 1200,
                "tokens_output": 150,
                "model_id": "gpt-4o-mini-2024-07-18",
                "started_at": f"2025-12-04T{minute}:00Z",
                "ended_at": f"2025-12-04T{minute}:10Z",
            }
        )
    return rows


@pytest.mark.parametrize("fixture", [OTLP, PROTOBUF], ids=["otlp-json", "protobuf-json"])
def test_the_sdks_spans_become_one_observation_per_trace(fixture: Path) -> None:
    records = import_otel_observations(fixture, system="new")
    assert records.select(FIELDS).to_dicts() == _expected_rows()
    assert records.get_column("schema_version").unique().to_list() == [1]
    assert records.get_column("stage").null_count() == records.height  # the batch's stage fills it
    source = records.get_column("source")[0]
    assert source.startswith("gatestats watch observe --from otel (OTLP/JSON GenAI spans); ")
    assert f"{fixture.name}:1 resourceSpans[0].scopeSpans[0].spans[2] (sha256 " in source


def test_the_two_encodings_hold_the_same_spans() -> None:
    otlp, protobuf = read_otlp_spans(OTLP), read_otlp_spans(PROTOBUF)
    assert len(otlp) == 13  # 3 + 4 + 4 + 2 spans
    same = ("trace_id", "span_id", "parent_span_id", "name", "start_unix_nano", "end_unix_nano", "status_code")
    assert [[getattr(s, k) for k in same] for s in otlp] == [[getattr(s, k) for k in same] for s in protobuf]
    assert [dict(s.attributes) for s in otlp] == [dict(s.attributes) for s in protobuf]


def _document() -> dict[str, Any]:
    return json.loads(OTLP.read_text(encoding="utf-8"))


def _span(document: dict[str, Any], index: int) -> dict[str, Any]:
    return document["resourceSpans"][0]["scopeSpans"][0]["spans"][index]


def _root_of_first_trace(document: dict[str, Any]) -> dict[str, Any]:
    return _span(document, 2)  # the invoke_agent span ends last: the SDK exports it after its children


def _write(tmp_path: Path, document: Any, name: str = "spans.json") -> Path:
    path = tmp_path / name
    path.write_text(document if isinstance(document, str) else json.dumps(document), encoding="utf-8")
    return path


def _set(span: dict[str, Any], key: str, value: dict[str, Any]) -> None:
    span["attributes"] = [a for a in span["attributes"] if a["key"] != key] + [{"key": key, "value": value}]


def _refused(path: Path, *fragments: str) -> str:
    with pytest.raises(RecordFileError) as caught:
        import_otel_observations(path, system="new")
    text = str(caught.value)
    for fragment in fragments:
        assert fragment in text, text
    return text


def test_the_root_span_is_the_invoke_agent_span() -> None:
    root = _root_of_first_trace(_document())
    assert root["name"] == "invoke_agent support-agent"
    assert "parentSpanId" not in root


@pytest.mark.parametrize(
    ("key", "value", "message"),
    [
        ("gatestats.accepted", {"stringValue": "true"}, "gatestats.accepted]': expected a boolean (boolValue)"),
        ("gatestats.review_minutes", {"doubleValue": "NaN"}, "doubleValue': not a valid doubleValue (NaN"),
        ("gatestats.review_minutes", {"doubleValue": -1.0}, "expected a finite number >= 0"),
        ("gatestats.cost_usd", {"stringValue": "0.01"}, "gatestats.cost_usd]': expected a finite number >= 0"),
        ("gatestats.unauthorized_actions", {"doubleValue": 1.5}, "expected an integer >= 0 (intValue)"),
        ("gatestats.unauthorized_actions", {"intValue": "1e3"}, "intValue': not a valid intValue"),
        ("gatestats.unauthorized_actions", {"intValue": "9223372036854775808"}, "not a valid intValue"),
        ("gatestats.cohort", {"stringValue": "beta\u0000"}, "gatestats.cohort]': expected a non-empty one-line"),
        ("gatestats.cohort", {"intValue": "3"}, "gatestats.cohort]': expected a non-empty one-line"),
        ("gatestats.outcome", {"stringValue": "complained"}, "expected passed, failed or infra_error"),
        ("gen_ai.request.model", {"boolValue": True}, "gen_ai.request.model]': expected a model name"),
    ],
)
def test_a_wrong_type_names_file_line_span_and_attribute(
    tmp_path: Path, key: str, value: dict[str, Any], message: str
) -> None:
    document = _document()
    _set(_root_of_first_trace(document), key, value)
    if key == "gen_ai.request.model":  # the response model comes first: remove it to reach the request model
        for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"]:
            span["attributes"] = [a for a in span["attributes"] if a["key"] != "gen_ai.response.model"]
    _refused(_write(tmp_path, document), "spans.json:1: field 'resourceSpans[0].scopeSpans[0].spans[2]", message)


def test_nan_duplicate_keys_and_bad_json_are_refused(tmp_path: Path) -> None:
    text = OTLP.read_text(encoding="utf-8").replace('"doubleValue": 2.5', '"doubleValue": NaN', 1)
    _refused(_write(tmp_path, text), "spans.json", "not valid JSON")
    text = OTLP.read_text(encoding="utf-8").replace('"name": "chat gpt-4o-mini",', '"name": "a", "name": "b",', 1)
    _refused(_write(tmp_path, text), "spans.json", "field 'name'", "duplicate")
    _refused(_write(tmp_path, '{"resourceSpans": [}'), "spans.json", "not valid JSON")
    _refused(_write(tmp_path, "\ufeff" + OTLP.read_text(encoding="utf-8")), "byte-order mark")


def test_an_attribute_given_twice_is_refused(tmp_path: Path) -> None:
    document = _document()
    root = _root_of_first_trace(document)
    root["attributes"].append({"key": "gatestats.accepted", "value": {"boolValue": False}})
    _refused(_write(tmp_path, document), "spans[2].attributes[", "attribute 'gatestats.accepted' is given twice")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("traceId", "not-hex", "traceId': expected a trace id of 16 bytes"),
        ("traceId", "0" * 32, "traceId': expected a trace id of 16 bytes, not all zero"),
        ("traceId", 42, "traceId': expected a trace id"),
        ("spanId", "abc\n", "spanId': expected a span id"),
        ("startTimeUnixNano", -5, "startTimeUnixNano': expected Unix nanoseconds"),
        ("endTimeUnixNano", "1.5e18", "endTimeUnixNano': expected Unix nanoseconds"),
        ("status", {"code": "BROKEN"}, "status.code': expected 0/1/2"),
        ("attributes", {"gatestats.accepted": True}, "attributes': expected a list of {key, value} objects"),
    ],
)
def test_a_malformed_span_is_refused(tmp_path: Path, field: str, value: Any, message: str) -> None:
    document = _document()
    _root_of_first_trace(document)[field] = value
    _refused(_write(tmp_path, document), f"field 'resourceSpans[0].scopeSpans[0].spans[2].{message}")


def test_a_hostile_trace_id_cannot_become_a_record_id(tmp_path: Path) -> None:
    document = _document()
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"][:3]:
        span["traceId"] = "../../etc/passwd\u0000"
    _refused(_write(tmp_path, document), "spans[0].traceId': expected a trace id of 16 bytes")


def test_a_trace_needs_one_root_span(tmp_path: Path) -> None:
    document = _document()
    root = _root_of_first_trace(document)
    root["parentSpanId"] = "00000000000000aa"
    _refused(_write(tmp_path, document), "trace a8d251aac404ca50eabf05d68e6e85cb", "no root span")
    document = _document()
    _span(document, 0).pop("parentSpanId")
    _refused(_write(tmp_path, document), "2 root spans: resourceSpans[0].scopeSpans[0].spans[0]")


def test_a_span_id_twice_is_refused(tmp_path: Path) -> None:
    document = _document()
    _span(document, 1)["spanId"] = _span(document, 0)["spanId"]
    _refused(_write(tmp_path, document), "spans[1].spanId'", "is also resourceSpans[0].scopeSpans[0].spans[0]")


def test_a_trace_without_genai_spans_is_refused(tmp_path: Path) -> None:
    document = _document()
    for span in document["resourceSpans"][0]["scopeSpans"][0]["spans"][:3]:
        span["attributes"] = [a for a in span["attributes"] if a["key"] != "gen_ai.operation.name"]
    _refused(_write(tmp_path, document), "has no GenAI span (gen_ai.operation.name)")


def test_fewer_unauthorized_actions_than_flagged_spans_is_refused(tmp_path: Path) -> None:
    document = _document()
    third_root = next(
        s
        for s in document["resourceSpans"][0]["scopeSpans"][0]["spans"]
        if s["traceId"] == "20cbcdc3abc79f730a11be883ba1d2a8" and "parentSpanId" not in s
    )
    _set(third_root, "gatestats.unauthorized_actions", {"intValue": "0"})
    _refused(_write(tmp_path, document), "0 is fewer than the 1 span(s) flagged gatestats.unauthorized = true")


def test_empty_and_foreign_files_are_refused(tmp_path: Path) -> None:
    _refused(_write(tmp_path, {"resourceSpans": []}), "no span found")
    _refused(_write(tmp_path, ""), "spans.json", "not valid JSON")
    _refused(_write(tmp_path, {"records": []}), "field 'resourceSpans': expected an OTLP/JSON object")
    _refused(_write(tmp_path, [1, 2]), "expected an OTLP/JSON object")
    (tmp_path / "empty").mkdir()
    _refused(tmp_path / "empty", "a directory without .json or .jsonl files")
    _refused(tmp_path / "missing.json", "no such OTLP/JSON spans file")


def test_the_collectors_json_lines_and_a_directory_are_read(tmp_path: Path) -> None:
    document = _document()
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    lines = []
    for part in (spans[:5], spans[5:]):  # two exports: the second trace's spans are in both
        line = copy.deepcopy(document)
        line["resourceSpans"][0]["scopeSpans"][0]["spans"] = part
        lines.append(json.dumps(line))
    path = _write(tmp_path, "\n".join(lines) + "\n", name="spans.jsonl")
    expected = import_otel_observations(OTLP, system="new").select(FIELDS[:-2]).to_dicts()
    assert import_otel_observations(path, system="new").select(FIELDS[:-2]).to_dicts() == expected
    directory = tmp_path / "exports"
    directory.mkdir()
    for number, line in enumerate(lines):
        (directory / f"export-{number}.json").write_text(line, encoding="utf-8")
    records = import_otel_observations(directory, system="new")
    assert records.select(FIELDS[:-2]).to_dicts() == expected
    bad = "\n".join([lines[0], '{"resourceSpans": [], "x": 1, "x": 2}'])
    _refused(_write(tmp_path, bad, name="bad.jsonl"), "bad.jsonl:2: field 'x'", "duplicate")


# -- gatestats-trace/1 ---------------------------------------------------------------------------


def _trace(trace_id: str = "prod-0001", **fields: Any) -> dict[str, Any]:
    return {
        "format": "gatestats-trace/1",
        "trace_id": trace_id,
        "request": "Refund order A-1009",
        "tool_calls": [{"name": "lookup_order", "arguments": {"order_id": "A-1009"}}],
        "output": "Done.",
        "outcome": "passed",
        "model": "support-model-2026-10",
        "cost": {"usd": 0.0123, "input_tokens": 2100, "output_tokens": 180},
        "started_at": "2026-11-28T10:12:03Z",
        **fields,
    }


def _traces(tmp_path: Path, *traces: dict[str, Any] | str) -> Path:
    directory = tmp_path / "traces"
    directory.mkdir(exist_ok=True)
    for number, trace in enumerate(traces):
        text = trace if isinstance(trace, str) else json.dumps(trace)
        (directory / f"t{number}.json").write_text(text, encoding="utf-8")
    return directory


def test_traces_become_one_observation_each(tmp_path: Path) -> None:
    directory = _traces(tmp_path, _trace(), _trace("prod-0002", outcome="failed", cost=None, started_at=None))
    records = import_trace_observations(directory, system="new")
    assert records.select(FIELDS[:1] + FIELDS[4:5] + FIELDS[9:10] + FIELDS[11:15]).to_dicts() == [
        {
            "record_id": "prod-0001",
            "outcome": "passed",
            "cost_usd": 0.0123,
            "tokens_input": 2100,
            "tokens_output": 180,
            "model_id": "support-model-2026-10",
            "started_at": "2026-11-28T10:12:03Z",
        },
        {
            "record_id": "prod-0002",
            "outcome": "failed",
            "cost_usd": None,
            "tokens_input": None,
            "tokens_output": None,
            "model_id": "support-model-2026-10",
            "started_at": None,
        },
    ]
    assert records.get_column("case_id").to_list() == ["prod-0001", "prod-0002"]
    assert "; t0.json (sha256 " in records.get_column("source")[0]
    example = Path(__file__).parents[2] / "examples" / "rollout" / "data" / "simulated-trace-pilot-1-0051.json"
    assert import_trace_observations(example, system="new").get_column("record_id").to_list() == ["pilot-1-0051"]


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        (_trace("prod\u00001"), "t0.json: field 'trace_id': control character U+0000"),
        (_trace(""), "t0.json: field 'trace_id': expected a non-empty string"),
        (_trace(7), "t0.json: field 'trace_id': expected a non-empty string"),
        (_trace(outcome="complained"), "field 'outcome': an observation needs one of passed, failed, infra_error"),
        (_trace(outcome=None), "field 'outcome': an observation needs one of"),
        (_trace(cost={"usd": "0.01"}), "field 'cost.usd': expected a number >= 0"),
        (_trace(cost={"input_tokens": 1.5}), "field 'cost.input_tokens': expected an integer >= 0"),
        (_trace(cost=[1]), "field 'cost': expected an object"),
        (_trace(model=3), "field 'model': expected a string"),
        (_trace(accepted=True), "field 'accepted': unknown field"),
        (_trace(format="gatestats-trace/2"), "field 'format': must be 'gatestats-trace/1'"),
        ('{"format": "gatestats-trace/1", "cost": {"usd": NaN}}', "t0.json"),
        ('{"trace_id": "a", "trace_id": "b"}', "field 'trace_id': duplicate key"),
        ("[]", "t0.json: field '<file>': expected a gatestats-trace/1 object"),
        (_trace(started_at="yesterday"), "started_at"),
    ],
)
def test_a_bad_trace_is_refused(tmp_path: Path, trace: dict[str, Any] | str, message: str) -> None:
    with pytest.raises(RecordFileError) as caught:
        import_trace_observations(_traces(tmp_path, trace), system="new")
    assert message in str(caught.value)


def test_two_files_of_one_trace_are_refused(tmp_path: Path) -> None:
    with pytest.raises(RecordFileError, match=r"t1.json: field 'trace_id': 'prod-0001' is also the trace of .*t0.json"):
        import_trace_observations(_traces(tmp_path, _trace(), _trace()), system="new")


def test_observations_fit_a_batch_of_the_watched_release(tmp_path: Path, verdict_path: Path) -> None:  # noqa: F811
    plan = tmp_path / "rollout.toml"
    plan.write_text(PLAN, encoding="utf-8")
    init_log(tmp_path / "W", plan_path=plan, verdict_path=verdict_path)
    batch = add_batch(
        tmp_path / "W", import_otel_observations(OTLP, system="candidate"), stage="shadow", plan_path=plan
    )
    assert batch.n_records == 4


def test_promote_reads_attributes_with_the_same_strict_reader(tmp_path: Path) -> None:
    from gatestats.golden import TraceError, read_trace

    document = _document()
    spans = document["resourceSpans"][0]["scopeSpans"][0]["spans"]
    del spans[3:]  # the first trace: promote reads one
    _root_of_first_trace(document)["attributes"].append({"key": "x.count", "value": {"intValue": "x"}})
    with pytest.raises(TraceError, match=r"spans.json: field 'span '[0-9a-f]+'.attributes\[\d+\].value.intValue'"):
        read_trace(_write(tmp_path, document))


def test_an_unset_attribute_value_is_absent(tmp_path: Path) -> None:
    document = _document()
    root = _root_of_first_trace(document)
    root["attributes"] = [a for a in root["attributes"] if a["key"] != "gatestats.accepted"]
    root["attributes"] += [{"key": "gatestats.accepted"}, {"key": "x.empty", "value": {}}]
    records = import_otel_observations(_write(tmp_path, document), system="new")
    assert records.get_column("accepted").to_list()[0] is None


@pytest.mark.parametrize(("start", "end"), [("0", "0"), ("1764842400000000000", "1764842399000000000")])
def test_a_root_span_needs_times_in_order(tmp_path: Path, start: str, end: str) -> None:
    document = _document()
    root = _root_of_first_trace(document)
    root["startTimeUnixNano"], root["endTimeUnixNano"] = start, end
    _refused(_write(tmp_path, document), "spans[2].endTimeUnixNano'", "needs a start time and an end time not before")


def test_a_fraction_of_a_second_is_kept(tmp_path: Path) -> None:
    document = _document()
    root = _root_of_first_trace(document)
    root["startTimeUnixNano"], root["endTimeUnixNano"] = "1764842400100000000", str(2**64 - 1)
    records = import_otel_observations(_write(tmp_path, document), system="new")
    assert records.select("started_at", "ended_at").row(0) == (
        "2025-12-04T10:00:00.1Z",
        "2554-07-21T23:34:33.709551615Z",
    )
