"""The run-record contract: one source of truth, a stdlib checker that agrees with jsonschema."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import jsonschema
import polars as pl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.records import POLARS_SCHEMA, RECORD_SCHEMA
from gatestats_runner import contract
from tests.conftest import ROOT, make_record
from tests.hypothesis_counts import examples

RUNNER = ROOT / "runner" / "gatestats_runner"
# Keywords the stdlib checker implements; the contract may use nothing else (plus annotations).
IMPLEMENTED = {
    "type",
    "enum",
    "const",
    "required",
    "additionalProperties",
    "properties",
    "items",
    "minLength",
    "minimum",
    "format",
}
ANNOTATIONS = {"$schema", "$id", "title", "description"}


def _keywords(node: Any, found: set[str]) -> None:
    if isinstance(node, dict):
        for key, value in node.items():
            found.add(key)
            if key == "properties":
                for sub in value.values():
                    _keywords(sub, found)
            elif key in ("items",):
                _keywords(value, found)


def test_contract_uses_only_keywords_the_stdlib_checker_implements() -> None:
    found: set[str] = set()
    _keywords(contract.load_schema(), found)
    assert found - IMPLEMENTED - ANNOTATIONS == set()


def test_contract_file_is_a_valid_draft_2020_12_schema() -> None:
    jsonschema.Draft202012Validator.check_schema(contract.load_schema())


def test_polars_and_pandera_schemas_have_exactly_the_contract_fields() -> None:
    assert tuple(POLARS_SCHEMA) == contract.FIELDS
    assert tuple(RECORD_SCHEMA.columns) == contract.FIELDS
    assert POLARS_SCHEMA["trial"] == pl.Int64
    assert POLARS_SCHEMA["slices"] == pl.List(pl.String)


def test_the_run_record_type_has_exactly_the_contract_fields_in_order() -> None:
    # RunRecord is what mypy checks the runner's records against: a field added to the contract
    # file and not to the type (or the reverse) would let a record go unchecked.
    assert tuple(contract.RunRecord.__annotations__) == contract.FIELDS
    assert contract.RunRecord.__required_keys__ == frozenset()  # the contract decides what is required
    nullable = {k for k, v in contract.load_schema()["properties"].items() if "null" in v["type"]}
    optional = {k for k, v in contract.RunRecord.__annotations__.items() if v.__forward_arg__.endswith("| None")}
    assert optional == nullable


def test_runner_imports_only_the_standard_library() -> None:
    stdlib = set(sys.stdlib_module_names)
    for path in RUNNER.rglob("*.py"):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                top = name.split(".")[0]
                assert top in stdlib or top == "gatestats_runner", f"{path.name} imports {name}"


def test_runner_contract_loads_without_gatestats_installed(tmp_path: Path) -> None:
    # A fresh interpreter with only runner/ on the path (no site-packages): stdlib alone suffices.
    code = "import gatestats_runner.contract as c; print(len(c.FIELDS), c.OUTCOMES[0])"
    out = subprocess.run(
        [sys.executable, "-S", "-c", code],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT / "runner")},
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout.split() == [str(len(contract.FIELDS)), "passed"]


def test_minimal_record_is_valid() -> None:
    assert contract.validate_record(make_record()) == []


@pytest.mark.parametrize(
    ("overrides", "field", "message"),
    [
        (
            {"outcome": "crashed"},
            "outcome",
            "must be one of 'passed', 'failed', 'resource_killed', 'infra_error' (got 'crashed')",
        ),
        ({"trial": -1}, "trial", "must be >= 0 (got -1)"),
        ({"trial": "0"}, "trial", "expected integer (got str '0')"),
        ({"trial": True}, "trial", "expected integer (got bool True)"),
        ({"case_id": ""}, "case_id", "must not be empty (got '')"),
        ({"schema_version": 2}, "schema_version", "must be 1 (got 2)"),
        ({"colour": "red"}, "colour", "unknown field"),
        (
            {"started_at": "2024-05-01 10:00"},
            "started_at",
            "expected an RFC 3339 timestamp with offset (got '2024-05-01 10:00')",
        ),
        (
            {"outcome": "resource_killed"},
            "bound",
            "required when outcome is 'resource_killed' (got null)",
        ),
        ({"bound": "cpu"}, "bound", "must be null unless outcome is 'resource_killed' (got 'cpu')"),
        (
            {"cost_usd": 1.0, "cost_model_usd": 0.5},
            "cost_usd",
            "must be null when cost_model_usd, cost_tool_usd or cost_execution_usd is set",
        ),
        (
            {"graders": [{"name": "g", "kind": "oracle", "verdict": "passed"}]},
            "graders[0].kind",
            "must be one of 'code', 'judge' (got 'oracle')",
        ),
    ],
)
def test_violation_names_field_and_says_expected_and_got(overrides: dict[str, Any], field: str, message: str) -> None:
    violations = contract.validate_record(make_record(**overrides))
    assert [(v.field, v.message) for v in violations] == [(field, message)]


def test_missing_required_field_is_named() -> None:
    record = make_record()
    del record["outcome"]
    assert [str(v) for v in contract.validate_record(record)] == ["field 'outcome': required field is missing"]


_values = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 3),
    st.floats(allow_nan=False, allow_infinity=False, width=32),
    st.sampled_from(
        [
            "",
            "x",
            "passed",
            "failed",
            "resource_killed",
            "infra_error",
            "cpu",
            "2024-01-01T00:00:00Z",
        ]
    ),
    st.lists(st.sampled_from(["a", 1]), max_size=2),
)


def _nesting_walk(text: str, limit: int) -> bool:
    """What :func:`contract._nests_within` must answer, walked character by character as :func:`contract._too_deep`:
    the brackets outside strings never deeper than ``limit``, never closed before opened, all closed at the end."""
    depth = 0
    in_string = escaped = False
    for char in text:
        if in_string:
            escaped, in_string = (False, True) if escaped else (char == "\\", char != '"')
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            if depth > limit:
                return False
        elif char in "]}":
            depth -= 1
            if depth < 0:
                return False
    return depth == 0


@settings(max_examples=examples(400))
@given(st.text(alphabet=st.sampled_from('[]{}"\\ a\né中'), max_size=60), st.integers(min_value=0, max_value=6))
def test_nesting_is_proved_within_the_limit_exactly_when_the_walk_stays_within_it(text: str, limit: int) -> None:
    # The fast proof (strings cut out, brackets deleted in pairs) against the character walk, on text full of quotes,
    # escapes, unterminated strings and multi-byte characters; where it proves nothing, _too_deep's walk decides.
    proved = contract._nests_within(text.encode(), limit)
    assert proved == _nesting_walk(text, limit)
    if proved:
        assert contract._too_deep(text, limit) is None


@pytest.mark.parametrize(
    ("text", "limit", "proved"),
    [
        ("[" * 32 + "]" * 32, 32, True),
        ("[" * 33 + "]" * 33, 32, False),
        ("[[][[]]]{}", 3, True),
        ("[[][[]]]{}", 2, False),
        ('["]]]", "\\"", "[[[["]', 1, True),
        ('["\\\\"]]', 1, False),  # an escaped backslash ends in the string's last quote: the second ] closes nothing
        ('"unterminated [[[[', 0, True),
        ("]" * 40 + "[" * 40, 32, False),  # never deeper than 32 by the walk, but not proved: _too_deep decides
    ],
)
def test_nesting_proof_at_its_edges(text: str, limit: int, proved: bool) -> None:
    assert contract._nests_within(text.encode(), limit) is proved


def test_the_bundled_tau_bench_file_is_proved_within_the_depth_limit() -> None:
    raw = (ROOT / "data" / "tau_bench" / "raw" / "gpt-4o-airline.json").read_bytes()
    assert raw.count(b"[") + raw.count(b"{") > contract.MAX_DEPTH  # the walk would otherwise not be asked
    assert contract._nests_within(raw, contract.MAX_DEPTH)
    assert contract._too_deep(raw.decode(), contract.MAX_DEPTH) is None


@given(
    st.dictionaries(st.sampled_from([*contract.FIELDS, "unknown"]), _values, max_size=6),
    st.booleans(),
)
def test_stdlib_checker_agrees_with_jsonschema(overrides: dict[str, Any], drop_outcome: bool) -> None:
    record = make_record(**overrides)
    if drop_outcome:
        record.pop("outcome", None)
    validator = jsonschema.Draft202012Validator(contract.load_schema(), format_checker=jsonschema.FormatChecker())
    reference_ok = validator.is_valid(record)
    violations = contract.validate_record(record)
    cross_field = {"bound", "cost_usd", "failed_check", "missing_artifacts"}  # rules across fields, beyond the schema
    # jsonschema checks "format" only with optional packages; the RFC 3339 rule is tested above.
    # Deliberately stricter than JSON Schema: an integer written as 1.0 is refused (no reader may coerce).
    stricter = [v for v in violations if v.message.startswith("expected integer") and "(got float" in v.message]
    schema_violations = [
        v for v in violations if v.field not in cross_field and "RFC 3339" not in v.message and v not in stricter
    ]
    if reference_ok:
        assert schema_violations == []
    else:
        assert violations, json.dumps(record, default=str)


@pytest.mark.parametrize(
    ("value", "message"),
    [
        (1.0, "expected integer (got float 1.0)"),
        (2**63, "integer out of the 64-bit range (got 19 digits)"),
        (-(2**63) - 1, "integer out of the 64-bit range (got 19 digits)"),
    ],
)
def test_integers_are_written_as_64_bit_integers(value: object, message: str) -> None:
    assert [str(v) for v in contract.validate_record(make_record(trial=value))] == [f"field 'trial': {message}"]


@pytest.mark.parametrize("value", [float("nan"), float("inf"), float("-inf")])
def test_numbers_must_be_finite(value: float) -> None:
    assert [str(v) for v in contract.validate_record(make_record(cost_usd=value))] == [
        f"field 'cost_usd': expected a finite number (got {value!r})"
    ]


@pytest.mark.parametrize(
    ("raw", "field", "message"),
    [
        (b'{"outcome": "passed", "outcome": "failed"}', "outcome", "duplicate key 'outcome'"),
        (b'{"graders": [{"name": "a", "name": "b"}]}', "name", "duplicate key 'name'"),
        (b'{"cost_usd": NaN}', "<line>", "NaN is not a JSON number"),
        (b'{"cost_usd": Infinity}', "<line>", "Infinity is not a JSON number"),
        (b'{"cost_usd": 1e999}', "<line>", "overflows a 64-bit float"),
        (b'{"trial": 99999999999999999999999}', "<line>", "out of the 64-bit range"),
        (b'{"slices": ' + b"[" * 3000 + b"]" * 3000 + b"}", "<line>", "nested deeper than 32 levels"),
        (b'\xef\xbb\xbf{"trial": 0}', "<line>", "byte-order mark"),
        (b'{"case_id": "\xff"}', "<line>", "not valid UTF-8 at byte 13"),
        (b'["not", "an", "object"]', "<line>", "expected a JSON object (got list)"),
        (b'{"a": 1', "<line>", "not valid JSON"),
        (b"x" * (contract.MAX_LINE_BYTES + 1), "<line>", "longer than the limit"),
    ],
)
def test_decode_line_refuses_what_readers_disagree_on(raw: bytes, field: str, message: str) -> None:
    record, violation = contract.decode_line(raw)
    assert record is None
    assert violation is not None
    assert violation.field == field
    assert message in violation.message


def test_decode_line_keeps_brackets_inside_strings() -> None:
    text = '{"failed_check": "' + "[" * 100 + '"}'
    assert contract.decode_line(text.encode()) == ({"failed_check": "[" * 100}, None)


@given(
    st.dictionaries(st.sampled_from([*contract.FIELDS, "unknown"]), _values, max_size=6),
    st.booleans(),
)
def test_compiled_check_agrees_with_the_reference_checker(overrides: dict[str, Any], drop_outcome: bool) -> None:
    record = make_record(**overrides)
    if drop_outcome:
        record.pop("outcome", None)
    assert contract._record_ok(record) == (contract._explain(record) == [])


@pytest.mark.parametrize(
    "nested",
    [
        {"graders": [{"name": "t", "kind": "code", "verdict": "maybe"}]},
        {"graders": [{"name": "", "kind": "code", "verdict": "passed"}]},
        {"graders": [{"kind": "code", "verdict": "passed"}]},
        {"graders": [{"name": "t", "kind": "llm", "verdict": "passed"}]},
        {"artifacts": [{"digest": None}]},
        {"artifacts": [{"path": "a", "bytes": -1}]},
        {"slices": [None]},
        {"slices": [["deep"]]},
        {"missing_artifacts": [1]},
        {"started_at": "2026-01-01 10:00:00"},
        {"started_at": "2026-01-01T10:00:00"},
        {"schema_version": True},
    ],
)
def test_nested_and_format_violations_are_caught_by_both_checkers(nested: dict[str, Any]) -> None:
    record = make_record(**nested)
    assert not contract._record_ok(record)
    assert contract.validate_record(record) != []
