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
from hypothesis import given
from hypothesis import strategies as st

from gatestats.records import POLARS_SCHEMA, RECORD_SCHEMA
from gatestats_runner import contract
from tests.conftest import ROOT, make_record

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
    cross_field = {"bound", "cost_usd"}
    # jsonschema checks "format" only with optional packages; the RFC 3339 rule is tested above.
    schema_violations = [v for v in violations if v.field not in cross_field and "RFC 3339" not in v.message]
    if reference_ok:
        assert schema_violations == []
    else:
        assert violations, json.dumps(record, default=str)
