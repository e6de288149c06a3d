"""``encode_record`` against its code before session 47, kept verbatim here: the same line or the same error.

Session 47 made the runner's per-record work cheaper (``gatestats import table`` writes every record through it):
one canonical encoding per record instead of two, null fields answered once per schema by the compiled contract
check, the canonical encoder built once. The lines, their checksums (so the run set's seal) and the error a bad
record raises must not change: every record below goes through the old code and the new, including hostile values
(unicode, control characters, lone surrogates, huge integers, NaN, nested values, unknown and non-string keys, a
checksum field, null observation fields) and records that break the contract.
"""

from __future__ import annotations

import json
import string
from collections.abc import Mapping
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats_runner import contract, digests, store
from gatestats_runner.contract import _COST_PARTS, _items_pred, _Pred, _value_preds, load_schema
from gatestats_runner.store import CHECKSUM_FIELD, RunSetError, encode_record
from tests.conftest import make_record
from tests.hypothesis_counts import examples

# ---- the code before session 47, verbatim (only renamed) -------------------------------------------------------


def _old_canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def _old_digest_json(value: Any) -> str:
    return digests.digest_bytes(_old_canonical_json(value).encode("utf-8"))


def _old_compile(schema: Any) -> _Pred:
    """One predicate for a schema: the conjunction of its rules' predicates."""
    preds = _value_preds(schema)
    if "items" in schema:
        preds.append(_items_pred(_old_compile(schema["items"])))
    if "properties" in schema:
        preds.append(_old_compile_object(schema))
    if len(preds) == 1:
        return preds[0]
    first, *rest = preds

    def ok(value: Any) -> bool:
        if not first(value):
            return False
        for pred in rest:  # noqa: SIM110 - verbatim
            if not pred(value):
                return False
        return True

    return ok


def _old_compile_object(schema: Any) -> _Pred:
    props = {name: _old_compile(spec) for name, spec in schema["properties"].items()}
    required = frozenset(schema.get("required", ()))
    closed = schema.get("additionalProperties") is False

    def ok(value: Any) -> bool:
        if not isinstance(value, dict):
            return True  # the type predicate answers for non-objects
        if not required <= value.keys() or (closed and not value.keys() <= props.keys()):
            return False
        for name, item in value.items():
            pred = props.get(name)
            if pred is not None and not pred(item):
                return False
        return True

    return ok


_OLD_COMPILED = _old_compile_object(load_schema())


def _old_record_ok(record: Any) -> bool:
    if type(record) is not dict or not _OLD_COMPILED(record):
        return False
    outcome, bound = record.get("outcome"), record.get("bound")
    if (outcome == "resource_killed") != (bound is not None):
        return False
    if outcome == "passed" and (record.get("failed_check") is not None or record.get("missing_artifacts")):
        return False
    return record.get("cost_usd") is None or all(record.get(part) is None for part in _COST_PARTS)


def _old_validate_record(record: Any) -> list[contract.ContractViolation]:
    if _old_record_ok(record):
        return []
    return contract._explain(record)


def _old_record_checksum(record: Mapping[str, object]) -> str:
    return _old_digest_json({k: v for k, v in record.items() if k != CHECKSUM_FIELD})


def _old_violations(record: Mapping[str, object]) -> list[str]:
    body = record if CHECKSUM_FIELD in contract.FIELDS else {k: v for k, v in record.items() if k != CHECKSUM_FIELD}
    return [str(v) for v in _old_validate_record(body)]


def _old_encode_record(record: Mapping[str, object]) -> bytes:
    body = {
        k: v for k, v in record.items() if k != CHECKSUM_FIELD and not (v is None and k in contract.OBSERVATION_FIELDS)
    }
    problems = _old_violations(body)
    if problems:
        msg = f"record {body.get('record_id')!r} breaks the run-record contract: " + "; ".join(problems)
        raise RunSetError(msg)
    body[CHECKSUM_FIELD] = _old_record_checksum(body)
    return (_old_canonical_json(body) + "\n").encode("utf-8")


# ---- the comparison ----------------------------------------------------------------------------------------------


def _outcome(encode: Any, record: Mapping[str, object]) -> tuple[str, object]:
    """What ``encode`` did with ``record``: its line, or its error's type and message."""
    try:
        return ("line", encode(record))
    except (RunSetError, ValueError, TypeError, UnicodeError) as exc:
        return (type(exc).__name__, str(exc))


def _assert_same(record: Mapping[str, object]) -> tuple[str, object]:
    old = _outcome(_old_encode_record, record)
    assert _outcome(encode_record, record) == old, record
    return old


_HOSTILE_TEXT = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        st.sampled_from([*string.whitespace, "\x00", "\x1f", "\x7f", '"', "\\", "\u2028", "\ufeff", "é", "😀"]),
        st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF),  # lone surrogates: not encodable
    ),
    max_size=12,
)
_SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**63 - 2, max_value=2**70),
    st.floats(),  # NaN and the infinities included
    _HOSTILE_TEXT,
    st.sampled_from(["passed", "failed", "resource_killed", "infra_error", "cpu", "2024-01-01T00:00:00Z", "code"]),
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(["name", "kind", "verdict", "path", "digest", "bytes", "x"]) | _HOSTILE_TEXT,
            inner,
            max_size=3,
        )
    ),
    max_leaves=8,
)
_KEYS = st.one_of(
    st.sampled_from([*contract.FIELDS, CHECKSUM_FIELD, *contract.OBSERVATION_FIELDS]),
    _HOSTILE_TEXT,
    st.integers(-2, 2),  # a non-string key: an unknown field
)
_GRADER = st.fixed_dictionaries(
    {
        "name": _HOSTILE_TEXT,
        "kind": st.sampled_from(["code", "judge", "llm"]),
        "verdict": st.sampled_from(["passed", "failed", "unparseable", "maybe", None]),
    },
)
#: Valid-looking values of the nested fields, so that good records with nested values are common, not only bad ones.
_NESTED = st.fixed_dictionaries(
    {},
    optional={
        "graders": st.lists(_GRADER, max_size=3),
        "slices": st.lists(_HOSTILE_TEXT, max_size=3),
        "artifacts": st.lists(
            st.fixed_dictionaries({"path": _HOSTILE_TEXT, "bytes": st.integers(-1, 10**6)}), max_size=2
        ),
        "source": _HOSTILE_TEXT,
        "case_id": _HOSTILE_TEXT,
        "record_id": _HOSTILE_TEXT,
        "cost_usd": st.floats(min_value=0, max_value=1e6),
        "tokens_input": st.integers(0, 2**63 - 1),
        "stage": st.sampled_from([None, *contract.STAGES, "nowhere"]),
        "cohort": st.none() | _HOSTILE_TEXT,
        "accepted": st.none() | st.booleans(),
        "checksum": st.none() | _HOSTILE_TEXT,
    },
)


@settings(max_examples=examples(400))
@given(_NESTED, st.dictionaries(_KEYS, _VALUES, max_size=5), st.sampled_from(["", "nulls", "drop"]))
def test_encode_record_writes_the_old_line_or_raises_the_old_error(
    nested: dict[str, Any], overrides: dict[Any, Any], shape: str
) -> None:
    record: dict[Any, Any] = make_record(**nested)
    if shape == "nulls":  # an imported record: every field of the contract present, most of them null
        record = dict.fromkeys(contract.FIELDS) | record
    record.update(overrides)
    if shape == "drop":
        record.pop("outcome", None)
    _assert_same(record)


@settings(max_examples=examples(200))
@given(_NESTED, st.booleans())
def test_a_valid_record_with_hostile_values_is_written_byte_for_byte_as_before(
    nested: dict[str, Any], all_fields: bool
) -> None:
    record = make_record(**nested)
    if all_fields:
        record = dict.fromkeys(contract.FIELDS) | record
    kind, line = _assert_same(record)
    if kind == "line":  # the line decodes to the record, and its checksum is the record's
        assert isinstance(line, bytes)
        decoded = json.loads(line)
        assert decoded[CHECKSUM_FIELD] == store.record_checksum(decoded)


@settings(max_examples=examples(200))
@given(
    st.dictionaries(
        st.sampled_from([*contract.FIELDS, "a", "checksum0", "checksul", "z"]) | _HOSTILE_TEXT, _VALUES, max_size=6
    )
)
def test_the_line_of_any_body_is_the_old_canonical_json_with_its_checksum(body: dict[str, Any]) -> None:
    # any string keys, either half empty or both: the old line is the canonical JSON of the body and its checksum
    body.pop(CHECKSUM_FIELD, None)
    try:
        old: tuple[str, object] = (
            "line",
            (_old_canonical_json(body | {CHECKSUM_FIELD: _old_record_checksum(body)}) + "\n").encode("utf-8"),
        )
    except (ValueError, TypeError, UnicodeError) as exc:
        old = (type(exc).__name__, str(exc))
    assert _outcome(store._checksummed_line, body) == old


@pytest.mark.parametrize(
    "record",
    [
        make_record(),
        dict.fromkeys(contract.FIELDS) | make_record(),  # as `import table` builds them
        {name: None for name in contract.FIELDS if name < CHECKSUM_FIELD} | make_record(),
        {"attempt": 0, "bound": None, "case_id": "c"},  # only fields before the checksum's name (a bad record)
        {"trial": 0, "system": "s"},  # only fields after it (a bad record)
        {},
        make_record(checksum="sha256:" + "0" * 64),  # a stale checksum is replaced
        make_record(outcome="crashed", trial=-1, unknown=1),
        make_record(cost_usd=float("nan")),
        make_record(trial=2**64),
        make_record(case_id="\ud800"),  # valid, then not UTF-8 encodable
        make_record(source='tab\tnul\x00 quote" backslash\\ 𝔘𝔫𝔦𝔠𝔬𝔡𝔢'),
        make_record(graders=[{"name": "é", "kind": "code", "verdict": "passed", "x": [1, {"y": None}]}]),
        make_record(**{"stage": None, "cohort": None, "accepted": None}),
        {**make_record(), 1: "non-string key"},
    ],
)
def test_the_edge_records_are_written_or_refused_as_before(record: dict[str, Any]) -> None:
    _assert_same(record)


def test_the_canonical_encoder_is_the_old_dumps() -> None:
    value = {"b": [1, 2.5, None, True, "é\x00"], "a": {"z": -(2**80), "y": "😀"}}
    assert digests.canonical_json(value) == _old_canonical_json(value)
    for bad in (float("nan"), {"x": float("inf")}, {1j: 1}, {"s": {1}}):
        with pytest.raises((ValueError, TypeError)) as new:
            digests.canonical_json(bad)
        with pytest.raises((ValueError, TypeError)) as old:
            _old_canonical_json(bad)
        assert (type(new.value), str(new.value)) == (type(old.value), str(old.value))
