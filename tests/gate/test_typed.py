"""The typed reader of verdict parts: one converter per kind of annotation, messages naming the field."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any, Literal

import pytest

from gatestats.gate._typed import TypedFieldError, build, to_json


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Inner:
    n: int


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Outer:
    name: str
    rate: float
    flag: bool
    side: Literal["baseline", "candidate"]
    maybe: str | None
    items: tuple[int, ...]
    table: Mapping[str, int]
    inner: _Inner
    raw: Any = None


_GOOD: dict[str, Any] = {
    "name": "a",
    "rate": 1,
    "flag": True,
    "side": "baseline",
    "maybe": None,
    "items": [1, 2],
    "table": {"x": 3},
    "inner": {"n": 4},
    "raw": {"any": [1]},
}


def test_build_converts_every_kind_and_to_json_keeps_declaration_order() -> None:
    built = build(_Outer, _GOOD)
    assert built == _Outer(
        name="a",
        rate=1.0,
        flag=True,
        side="baseline",
        maybe=None,
        items=(1, 2),
        table={"x": 3},
        inner=_Inner(n=4),
        raw={"any": [1]},
    )
    assert isinstance(built.rate, float)
    assert list(to_json(built)) == ["name", "rate", "flag", "side", "maybe", "items", "table", "inner", "raw"]
    assert to_json(built)["items"] == [1, 2]


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("name", 3, "field 'name': expected a string (got number 3)"),
        ("rate", float("inf"), "field 'rate': expected a number (got number inf)"),
        ("flag", 1, "field 'flag': expected a boolean (got number 1)"),
        ("side", "other", "field 'side': expected one of 'baseline', 'candidate' (got string 'other')"),
        ("maybe", 1, "field 'maybe': expected a string (got number 1)"),
        ("items", [1, True], "field 'items[1]': expected an integer in [0, 2^63) (got boolean True)"),
        ("items", "12", "field 'items': expected an array of an integer in [0, 2^63) (got string '12')"),
        ("table", [], "field 'table': expected an object (got array [])"),
        ("table", {"x": -1}, "field 'table.x': expected an integer in [0, 2^63) (got number -1)"),
        ("inner", {"n": None}, "field 'inner.n': expected an integer in [0, 2^63) (got null None)"),
    ],
)
def test_build_names_the_field_and_what_was_expected(field: str, value: object, message: str) -> None:
    with pytest.raises(TypedFieldError) as info:
        build(_Outer, {**_GOOD, field: value})
    assert str(info.value) == message


def test_build_refuses_missing_and_unknown_fields() -> None:
    missing = {k: v for k, v in _GOOD.items() if k != "name"}
    with pytest.raises(TypedFieldError, match=r"^field 'name': required field is missing$"):
        build(_Outer, missing)
    with pytest.raises(TypedFieldError, match=r"^field 'extra': unknown _Outer field"):
        build(_Outer, {**_GOOD, "extra": 1})


def test_an_unsupported_annotation_is_a_programming_error() -> None:
    @dataclasses.dataclass(frozen=True)
    class Odd:
        value: set[int]

    with pytest.raises(TypeError, match=r"field 'value': unsupported annotation"):
        build(Odd, {"value": [1]})


def test_record_file_and_registration_dicts_keep_their_json_key_order() -> None:
    from gatestats.gate.recordset import RecordFileDigest
    from gatestats.gate.registration import Registration

    file = RecordFileDigest(path="r.jsonl", digest="sha256:ab", size=3, checksums="verified", n_records=2)
    assert list(file.to_dict().items()) == [
        ("path", "r.jsonl"),
        ("digest", "sha256:ab"),
        ("size", 3),
        ("checksums", "verified"),
        ("n_records", 2),
    ]
    reg = Registration(
        run_set="runs/a", policy_digest="sha256:cd", registered_at="t0", first_record_at=None, origin="run"
    )
    assert list(reg.to_dict()) == ["run_set", "policy_digest", "registered_at", "first_record_at", "origin"]
