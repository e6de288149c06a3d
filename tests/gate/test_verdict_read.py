"""The one verdict reader: a real gate verdict reads back typed and unchanged; every edit is refused by name."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from gatestats.gate import Verdict, VerdictFileError, read_verdict, verdict_digest
from gatestats.gate.verdict import verdict_file_bytes
from tests.gate.test_gate import _gate, _outcomes, _setup


@pytest.fixture(scope="module")
def verdict_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("verdict")
    base = _outcomes(60, set(range(0, 60, 5)), trials=3)
    cand = _outcomes(60, set(range(0, 60, 7)), trials=3)
    policy, b, c = _setup(root, base=base, cand=cand, k=2, min_cases=10)
    out = root / "verdict.json"
    code, _, output = _gate(policy, b, c, "-o", str(out))
    assert code in {0, 10, 11, 12}, output
    return out


def _write(tmp_path: Path, body: dict[str, Any], *, redigest: bool = True) -> Path:
    if redigest:
        body["digest"] = verdict_digest(body)
    path = tmp_path / "edited.json"
    path.write_bytes(verdict_file_bytes(body))
    return path


def test_a_gate_verdict_reads_back_typed_and_unchanged(verdict_file: Path) -> None:
    read = read_verdict(verdict_file)
    body = json.loads(verdict_file.read_bytes())
    assert read.verdict.to_dict() == body  # every field typed, nothing lost or reordered
    assert read.raw == verdict_file.read_bytes()
    assert read.digest == body["digest"]
    v = read.verdict
    assert v.policy.k == 2
    assert v.baseline.files[0].digest.startswith("sha256:")
    assert {p.k for p in v.curves} == {1, 2, 3}  # k = 1..the most trials of any case
    assert {p.side for p in v.curves} == {"baseline", "candidate"}
    assert v.cost is not None
    assert v.cost.per_system is not None  # bound even without a cost rule


def test_an_old_verdict_without_curves_reads_with_empty_curves(verdict_file: Path, tmp_path: Path) -> None:
    body = json.loads(verdict_file.read_bytes())
    del body["curves"], body["slice_rates"]
    read = read_verdict(_write(tmp_path, body))
    assert read.verdict.curves == ()
    assert read.verdict.slice_rates == ()


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda b: b["baseline"]["files"][0].__setitem__("size", -1),
            "field 'baseline.files[0].size': expected an integer in [0, 2^63)",
        ),
        (
            lambda b: b["baseline"]["files"][0].__setitem__("size", True),
            "field 'baseline.files[0].size': expected an integer in [0, 2^63) (got boolean True)",
        ),
        (
            lambda b: b["policy"].__setitem__("confidence_level", "0.95"),
            "field 'policy.confidence_level': expected a number (got string '0.95')",
        ),
        (
            lambda b: b["rules"][0].__setitem__("decision", "PASS"),
            "field 'rules[0].decision': expected one of 'pass', 'warn', 'fail', 'insufficient_evidence'",
        ),
        (lambda b: b["candidate"].__setitem__("forged", 1), "field 'candidate.forged': unknown"),
        (lambda b: b["curves"][0].pop("k"), "field 'curves[0].k': required field is missing"),
        (
            lambda b: b["infra"]["candidate"].__setitem__("bounds", []),
            "field 'infra.candidate.bounds': expected an object",
        ),
        (lambda b: b.__setitem__("exit_code", 0 if b["verdict"] != "pass" else 11), "field 'exit_code'"),
        (lambda b: b["candidate"].__setitem__("files", []), "field 'candidate.files': expected a non-empty array"),
        (lambda b: b.__setitem__("format", "gatestats-verdict/2"), "field 'format': expected 'gatestats-verdict/1'"),
    ],
)
def test_every_wrong_field_is_refused_by_its_dotted_name(
    verdict_file: Path, tmp_path: Path, edit: Any, message: str
) -> None:
    body = copy.deepcopy(json.loads(verdict_file.read_bytes()))
    edit(body)
    path = _write(tmp_path, body)
    with pytest.raises(VerdictFileError, match=None) as info:
        read_verdict(path)
    assert message in str(info.value)
    assert str(info.value).startswith(f"{path}: ")


def test_an_edit_after_writing_is_refused_unless_the_caller_checks_digests_itself(
    verdict_file: Path, tmp_path: Path
) -> None:
    body = json.loads(verdict_file.read_bytes())
    body["verdict"], body["exit_code"] = "pass", 0
    path = _write(tmp_path, body, redigest=False)
    with pytest.raises(VerdictFileError, match="the verdict was edited after it was written"):
        read_verdict(path)
    assert read_verdict(path, check_digest=False).verdict.verdict == "pass"  # verify reports it as a check


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"format": "gatestats-verdict/1", "format": "x"}', "duplicate"),
        ('{"digest": NaN}', "NaN"),
        ("[" * 40 + "]" * 40, "nested deeper than 32 levels"),
        ("", "not valid JSON"),
    ],
)
def test_malformed_json_is_refused_with_the_file(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "v.json"
    path.write_text(text)
    with pytest.raises(VerdictFileError) as info:
        read_verdict(path)
    assert message in str(info.value)
    assert str(path) in str(info.value)


def test_from_dict_refuses_a_non_object() -> None:
    with pytest.raises(VerdictFileError, match="expected a verdict object"):
        Verdict.from_dict([1])  # type: ignore[arg-type]
