"""The compiled block proof of the JSONL line pass: it only ever accepts what the line pass accepts.

Every test compares the line pass as it is (blocks proved at once where they can be) with the line
pass alone (the proof switched off, every line decoded in Python: the reader before issue 28): the
same answer, accept or refuse, with the same problems (file, line, field, message) and the same
count. Hostile lines are written with their checksum recomputed over the record's canonical form
(the way an attacker who knows the format would), so that only the line pass's own rules can
refuse them.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatestats.errors import RecordFileError
from gatestats.records import lines
from gatestats.records.canonical_block import proves_block
from gatestats_runner.contract import MAX_LINE_BYTES
from gatestats_runner.digests import canonical_json
from gatestats_runner.runsets import encode_record, record_checksum
from tests.conftest import make_record
from tests.hypothesis_counts import examples
from tests.records.proofs import with_and_without_proofs, write_file

pytestmark = pytest.mark.usefixtures("prove_every_block")


def _runner_record(i: int, **overrides: Any) -> dict[str, Any]:
    record = make_record(
        record_id=f"r-{i}",
        trial=i,
        case_version="sha256:" + f"{i:064x}",
        graders=[{"name": "tests", "kind": "code", "verdict": "passed"}],
        slices=["security"],
        machine_seconds=1.5 + i,
        tokens_input=1200 + i,
        started_at="2026-12-01T10:00:00.000+00:00",
        ended_at="2026-12-01T10:00:01.5Z",
        artifacts=[{"path": "out/a.json", "digest": None, "bytes": 12}],
    )
    record.update(overrides)
    return record


def _good_lines(n: int = 5) -> list[bytes]:
    return [encode_record(_runner_record(i)) for i in range(n)]


def _sealed(text: str) -> bytes:
    """A line whose checksum is recomputed over the canonical form of what it decodes to (last key wins)."""
    record = json.loads(text)
    record.pop("checksum", None)
    checksum = record_checksum(record)
    return text.replace("}", f',"checksum":"{checksum}"}}', 1).encode() if text.startswith("{") else text.encode()


def test_a_runner_block_is_proved_and_reads_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    block = b"".join(_good_lines(50))
    proof = proves_block(block)
    assert proof is not None
    assert proof.n_lines == 50
    assert proof.run_set_ids == frozenset({"set-1"})
    fast, slow = with_and_without_proofs(write_file(tmp_path, block), monkeypatch)
    assert fast == slow
    assert fast[0] == "accepted"


def test_every_outcome_and_optional_shape_is_proved() -> None:
    records = [
        _runner_record(0, outcome="failed", failed_check="t::x", exit_code=1),
        _runner_record(1, outcome="resource_killed", bound="memory"),
        _runner_record(2, outcome="infra_error", split="test", layer="live", stage=None, accepted=True),
        _runner_record(3, cost_model_usd=0.0123, cost_tool_usd=0, cost_usd=None, review_minutes=0.0001),
        _runner_record(4, case_group=None, missing_artifacts=[], graders=None, artifacts=[{"path": "x"}]),
        _runner_record(5, cohort="é-ünïcode ☃", started_at="2024-02-29T23:59:60+01:00"),
    ]
    assert proves_block(b"".join(encode_record(r) for r in records)) is not None


# Each hostile line: the proof must not accept it; both passes must answer alike.
_HOSTILE: dict[str, bytes] = {
    "duplicate key deep in a nested object": _sealed(
        '{"attempt":0,"case_id":"c","graders":[{"kind":"code","kind":"judge","name":"g","verdict":"passed"}],'
        '"outcome":"passed","record_id":"r","run_set_id":"s","schema_version":1,"system":"b","trial":0}'
    ),
    "duplicate top-level key": _sealed(
        '{"attempt":0,"case_id":"c","outcome":"failed","outcome":"passed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'
    ),
    "NaN": b'{"attempt":0,"case_id":"c","cost_usd":NaN,"outcome":"passed","record_id":"r","run_set_id":"s",'
    b'"schema_version":1,"system":"b","trial":0}',
    "-Infinity": b'{"attempt":0,"case_id":"c","machine_seconds":-Infinity,"outcome":"passed","record_id":"r",'
    b'"run_set_id":"s","schema_version":1,"system":"b","trial":0}',
    "1e999": _sealed(
        '{"attempt":0,"case_id":"c","cost_usd":1e999,"outcome":"passed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'.replace("1e999", "1.0")
    ).replace(b'"cost_usd":1.0', b'"cost_usd":1e999'),
    "integer beyond 64 bits": _sealed(
        '{"attempt":0,"case_id":"c","outcome":"passed","record_id":"r","run_set_id":"s","schema_version":1,'
        '"system":"b","tokens_input":9223372036854775808,"trial":0}'
    ),
    "nested deeper than 32": b'{"attempt":0,"case_id":"c","outcome":"passed","record_id":"r","run_set_id":"s",'
    b'"schema_version":1,"slices":' + b"[" * 40 + b"]" * 40 + b',"system":"b","trial":0}',
    "nested 100,000 levels (msgspec's own recursion limit)": b'{"attempt":0,"slices":'
    + b"[" * 100_000
    + b"]" * 100_000
    + b"}",
    "byte-order mark": b"\xef\xbb\xbf" + _good_lines(1)[0].rstrip(b"\n"),
    "not UTF-8": _good_lines(1)[0].rstrip(b"\n").replace(b'"baseline"', b'"base\xfflne"'),
    "CRLF": _good_lines(1)[0].rstrip(b"\n") + b"\r",
    "whitespace": _good_lines(1)[0].rstrip(b"\n").replace(b'"attempt":0', b'"attempt": 0'),
    "edited line": _good_lines(1)[0].rstrip(b"\n").replace(b'"outcome":"passed"', b'"outcome":"failed"'),
    "checksum in upper case": _good_lines(1)[0].rstrip(b"\n").upper().replace(b'"CHECKSUM"', b'"checksum"'),
    "checksum with a character more": _good_lines(1)[0]
    .rstrip(b"\n")
    .replace(b'"checksum":"sha256:', b'"checksum":"sha256:0'),
    "checksum null": _good_lines(1)[0].rstrip(b"\n").split(b',"checksum":')[0]
    + b',"checksum":null,'
    + _good_lines(1)[0].rstrip(b"\n").split(b',"checksum":')[1].split(b'",', 1)[1],
    "exponent float, sealed over msgspec's form": b"",  # filled below
    "tiny float, sealed over msgspec's form": b"",  # filled below
    "unknown field": _sealed(
        '{"attempt":0,"case_id":"c","colour":"red","outcome":"passed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'
    ),
    "1.0 for an integer": _sealed(
        '{"attempt":0,"case_id":"c","outcome":"passed","record_id":"r","run_set_id":"s","schema_version":1,'
        '"system":"b","trial":1.0}'
    ),
    "string for a number": _sealed(
        '{"attempt":0,"case_id":"c","cost_usd":"12","outcome":"passed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'
    ),
    "cost_usd beside a part": encode_record(_runner_record(0)).replace(
        b'"case_id"', b'"cost_model_usd":0.5,"cost_usd":0.25,"case_id"'
    ),
    "resource_killed without bound": _sealed(
        '{"attempt":0,"case_id":"c","outcome":"resource_killed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'
    ),
    "passed with a failed check": _sealed(
        '{"attempt":0,"case_id":"c","failed_check":"t","outcome":"passed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'
    ),
    "February 30": _sealed(
        '{"attempt":0,"case_id":"c","outcome":"passed","record_id":"r","run_set_id":"s","schema_version":1,'
        '"started_at":"2024-02-30T00:00:00Z","system":"b","trial":0}'
    ),
    "year 0000": _sealed(
        '{"attempt":0,"case_id":"c","ended_at":"0000-01-01T00:00:00Z","outcome":"passed","record_id":"r",'
        '"run_set_id":"s","schema_version":1,"system":"b","trial":0}'
    ),
    "negative cost": _sealed(
        '{"attempt":0,"case_id":"c","cost_usd":-1,"outcome":"passed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'
    ),
    "empty case id": _sealed(
        '{"attempt":0,"case_id":"","outcome":"passed","record_id":"r","run_set_id":"s","schema_version":1,'
        '"system":"b","trial":0}'
    ),
    "escaped character": _sealed(
        '{"attempt":0,"case_id":"c\\u0041","outcome":"passed","record_id":"r","run_set_id":"s",'
        '"schema_version":1,"system":"b","trial":0}'
    ),
}


#: Lines of another shape that the line pass accepts (the proof leaves them to it): a CRLF line end,
#: whitespace, an escaped character, each with the checksum of its canonical form.
_ACCEPTED = {"CRLF", "whitespace", "escaped character"}


def _sealed_over(text: str) -> bytes:
    """``text`` with a checksum of its own bytes (the form msgspec writes), not of Python's canonical form."""
    digest = "sha256:" + hashlib.sha256(text.encode()).hexdigest()
    return text.replace('"case_id":"c",', f'"case_id":"c","checksum":"{digest}",').encode()


_BODY = '{{"attempt":0,"case_id":"c",{field},"outcome":"passed","record_id":"r","run_set_id":"s","schema_version":1,"system":"b","trial":0}}'
_HOSTILE["exponent float, sealed over msgspec's form"] = _sealed_over(_BODY.format(field='"cost_usd":1e16'))
_HOSTILE["tiny float, sealed over msgspec's form"] = _sealed_over(_BODY.format(field='"cost_usd":0.00001'))
# Canonical, its checksum right: only the contract's minimum of 0 refuses it (the proofs' bound let every negative
# integer through until session 41; "negative cost" above is not canonical, so it never reached the proof).
_HOSTILE["negative integer cost, sealed over msgspec's form"] = _sealed_over(_BODY.format(field='"cost_usd":-1'))


@pytest.mark.parametrize("name", sorted(_HOSTILE))
@pytest.mark.parametrize("where", ["middle", "last"])
def test_a_hostile_line_is_never_proved_and_both_passes_agree(
    name: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = _good_lines(4)
    hostile = _HOSTILE[name] + b"\n"
    data = b"".join([*good[:2], hostile, *good[2:]]) if where == "middle" else b"".join([*good, hostile])
    assert proves_block(data) is None
    assert proves_block(hostile) is None
    fast, slow = with_and_without_proofs(write_file(tmp_path, data), monkeypatch)
    assert fast == slow
    assert fast[0] == ("accepted" if name in _ACCEPTED else "refused"), fast


def test_a_torn_last_line_is_named_after_proved_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "_BLOCK_BYTES", 4096)  # many blocks before the torn line
    data = b"".join(_good_lines(200)) + b'{"attempt":0,"case_id":"torn-'
    fast, slow = with_and_without_proofs(write_file(tmp_path, data), monkeypatch)
    assert fast == slow
    assert fast[0] == "refused"
    assert "201: field '<line>': torn last line" in fast[2][0]


def test_a_complete_last_line_without_newline_is_accepted_as_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = b"".join(_good_lines(3))[:-1]
    fast, slow = with_and_without_proofs(write_file(tmp_path, data), monkeypatch)
    assert fast == slow
    assert fast[0] == "accepted"


def test_an_edited_line_deep_in_a_large_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "_BLOCK_BYTES", 8192)
    good = _good_lines(400)
    good[333] = good[333].replace(b'"tokens_input":1533', b'"tokens_input":1534')
    fast, slow = with_and_without_proofs(write_file(tmp_path, b"".join(good)), monkeypatch)
    assert fast == slow
    assert fast[2] == (
        f"{tmp_path / 'r.jsonl'}:334: field 'checksum': checksum does not match the line: "
        "the record was changed after it was written",
    )


def test_a_line_longer_than_the_limit_is_not_proved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    long = encode_record(_runner_record(0, outcome="failed", failed_check="x" * MAX_LINE_BYTES))
    assert proves_block(long) is None
    fast, slow = with_and_without_proofs(write_file(tmp_path, b"".join([*_good_lines(2), long])), monkeypatch)
    assert fast == slow
    assert "longer than the limit" in fast[2][0]


def test_a_line_just_under_the_limit_is_proved_and_accepted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = encode_record(_runner_record(0, outcome="failed", failed_check=""))
    room = MAX_LINE_BYTES - (len(base) - 1)
    line = encode_record(_runner_record(0, outcome="failed", failed_check="y" * room))
    assert len(line) - 1 == MAX_LINE_BYTES
    assert proves_block(line) is not None
    fast, slow = with_and_without_proofs(write_file(tmp_path, line), monkeypatch)
    assert fast == slow
    assert fast[0] == "accepted"


def test_a_file_without_checksums_is_read_by_the_line_pass(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    data = b"".join(json.dumps(make_record(record_id=f"r{i}", trial=i)).encode() + b"\n" for i in range(5))
    assert proves_block(data) is None
    fast, slow = with_and_without_proofs(write_file(tmp_path, data), monkeypatch)
    assert fast == slow
    assert fast[2] == "none"


# --- the differential test: hostile variations of runner lines ---------------------------------

_FLOATS = st.floats(min_value=0, allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 1e-4, 9.99e-5, 1e-5, 1e15, 1e16, 1.5e16, 123.456, 5e-324]
)
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_RECORDS = st.builds(
    _runner_record,
    st.integers(0, 1000),
    cost_usd=st.none() | _FLOATS,
    machine_seconds=_FLOATS,
    cohort=st.none() | _TEXT.filter(bool),
    failed_check=st.none(),
    case_group=st.none() | _TEXT,
    started_at=st.sampled_from(
        ["2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2024-04-31T00:00:00+01:00", "2024-01-31T23:59:60.5z"]
    ),
)


def _canonical_line(record: dict[str, Any]) -> bytes:
    """The runner's line for ``record`` without the runner's contract check (a bad timestamp stays)."""
    return (canonical_json({**record, "checksum": record_checksum(record)}) + "\n").encode()


def _mutations(line: bytes) -> st.SearchStrategy[bytes]:
    body = line.rstrip(b"\n")
    at = st.integers(0, len(body))
    return st.one_of(
        st.just(body),
        st.builds(lambda i, b: body[:i] + bytes([b]) + body[i + 1 :], at, st.integers(0, 255)),
        st.builds(lambda i, s: body[:i] + s + body[i:], at, st.sampled_from([b" ", b"\\", b"NaN", b"e", b"0", b","])),
        st.builds(lambda i: body[:i] + body[i + 1 :], at),
        st.builds(lambda i: body[:i] + body[i:].replace(b",", b',"trial":0,', 1), at),
    )


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_differential_the_proof_never_accepts_what_the_line_pass_refuses(
    data: st.DataObject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = data.draw(st.lists(_RECORDS, min_size=1, max_size=4))
    good = [_canonical_line(r) for r in records]
    index = data.draw(st.integers(0, len(good) - 1))
    good[index] = data.draw(_mutations(good[index])) + b"\n"
    block = b"".join(good)
    path = write_file(tmp_path, block, "d.jsonl")
    fast, slow = with_and_without_proofs(path, monkeypatch)
    assert fast == slow
    if proves_block(block) is not None:
        assert slow[0] == "accepted"
        assert slow[2] == "verified"


def _float_line(value: float) -> bytes:
    """A runner line with ``machine_seconds`` written as msgspec writes ``value``, sealed over those bytes."""
    import msgspec

    text = msgspec.json.encode(value).decode()
    return _sealed_over(_BODY.format(field=f'"machine_seconds":{text}')) + b"\n"


@pytest.mark.parametrize("value", [1e-5, 5.5e-5, 9.99e-5, 1e-6, 3.25e-7, 1e-9, 1e16, 1.5e16, 2.5e20])
def test_a_float_msgspec_writes_otherwise_than_python_is_left_to_the_line_pass(value: float) -> None:
    import msgspec

    assert msgspec.json.encode(value).decode() != json.dumps(value)
    assert proves_block(_float_line(value)) is None


@settings(max_examples=examples(300), deadline=None)
@given(value=st.floats(min_value=0, allow_nan=False, allow_infinity=False))
def test_the_float_guard_misses_no_float_msgspec_writes_otherwise(value: float) -> None:
    """Any float: either msgspec and Python write it alike, or the proof leaves its line to the line pass."""
    import msgspec

    if msgspec.json.encode(value).decode() != json.dumps(value):
        assert proves_block(_float_line(value)) is None


@pytest.mark.parametrize("value", [0.0, 1e-4, 0.5, 1e15, 9.999e15, 123.456])
def test_a_float_both_write_alike_is_proved(value: float) -> None:
    line = _float_line(value)
    body = json.loads(line)
    body.pop("checksum")
    assert proves_block(encode_record(body)) is not None


@pytest.mark.parametrize(
    "name",
    [
        "duplicate key deep in a nested object",
        "NaN",
        "1e999",
        "exponent float, sealed over msgspec's form",
        "negative integer cost, sealed over msgspec's form",
    ],
)
def test_a_resealed_malformed_run_set_is_still_refused(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A malformed line, its checksum and the run set's seal recomputed: the line pass still refuses it."""
    from gatestats.records import read_run_set
    from gatestats_runner.store import MANIFEST_FORMAT, seal_records

    good = _good_lines(6)
    hostile = _HOSTILE[name].replace(b'"run_set_id":"s"', b'"run_set_id":"set-1"')
    (tmp_path / "records.jsonl").write_bytes(b"".join([*good[:3], hostile + b"\n", *good[3:]]))
    manifest = {"format": MANIFEST_FORMAT, "run_set_id": "set-1", "complete": True}
    manifest["records_seal"] = seal_records(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")

    def refusal() -> list[str]:
        with pytest.raises(RecordFileError) as exc:
            read_run_set(tmp_path)
        return [str(p) for p in exc.value.problems]

    fast = refusal()
    with monkeypatch.context() as patch:
        patch.setattr(lines, "proves_block", lambda block: None)
        assert refusal() == fast
    assert fast[0].startswith(f"{tmp_path / 'records.jsonl'}:4: field ")


def test_a_small_file_is_read_without_importing_msgspec(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Under a block and 1,000 lines the line pass is cheaper than the proof's start (importing msgspec)."""
    import subprocess
    import sys

    monkeypatch.undo()
    path = write_file(tmp_path, b"".join(_good_lines(200)))
    code = f"import sys; from gatestats.records.lines import check_jsonl; check_jsonl({str(path)!r}); print('msgspec' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
