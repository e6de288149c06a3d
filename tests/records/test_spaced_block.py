"""The proof of blocks written by ``json.dumps(record, sort_keys=True)`` without checksums (issue 28 item 2).

Files of records from other tools (the bundled SWE-bench Verified leaderboard: 12,500 lines) are often
written with ``json.dumps``'s default separators and no checksum. Until session 41 every such line went
through the line pass in Python (≈ 10 µs a line); :func:`~gatestats.records.canonical_block.proves_spaced_block`
proves a block of them at once. As for the canonical proof (tests/records/test_canonical_block.py), every
test compares the reader as it is with the line pass alone (both proofs switched off): the same answer,
accept or refuse, the same problems and count, the same lines, digest and checksum status.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gatestats.errors import RecordFileError
from gatestats.records import lines, read_record_file
from gatestats.records.canonical_block import proves_block, proves_spaced_block, spaced
from gatestats.records.lines import check_jsonl
from gatestats_runner.contract import MAX_LINE_BYTES
from gatestats_runner.runsets import encode_record, record_checksum
from tests.conftest import make_record
from tests.hypothesis_counts import examples
from tests.records.proofs import with_and_without_proofs, write_file

ROOT = Path(__file__).resolve().parents[2]
SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"


pytestmark = pytest.mark.usefixtures("prove_every_block")


def _record(i: int, **overrides: Any) -> dict[str, Any]:
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
    record.pop("checksum", None)
    record.update(overrides)
    return record


def _spaced(record: dict[str, Any]) -> bytes:
    """``record`` as ``json.dumps(record, sort_keys=True)`` writes it, with its newline."""
    return json.dumps(record, sort_keys=True).encode() + b"\n"


def _good_lines(n: int = 5) -> list[bytes]:
    return [_spaced(_record(i)) for i in range(n)]


def test_a_json_dumps_block_is_proved_and_reads_as_before(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    block = b"".join(_good_lines(50))
    assert spaced(block)
    assert proves_block(block) is None  # no checksum: the canonical proof does not hold
    proof = proves_spaced_block(block)
    assert proof is not None
    assert (proof.n_lines, proof.run_set_ids, proof.checksummed) == (50, frozenset({"set-1"}), False)
    fast, slow = with_and_without_proofs(write_file(tmp_path, block), monkeypatch)
    assert fast == slow
    assert fast[0] == "accepted"
    assert fast[2] == "none"


def test_every_block_of_the_bundled_swe_bench_file_is_proved_and_read_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lines, "_PROVE_FROM_LINES", 1000)  # the reader as it is
    proved: list[bool] = []
    real = lines.proves_spaced_block

    def spy(block: bytes) -> Any:
        proof = real(block)
        proved.append(proof is not None)
        return proof

    monkeypatch.setattr(lines, "proves_spaced_block", spy)
    fast = check_jsonl(SWE, keep=("system", "case_id", "outcome"), key=("system", "case_id"))
    assert proved
    assert all(proved)
    assert fast.frame is not None  # read once: the kept columns come from the proof
    assert (fast.n_records, fast.checksums) == (12_500, "none")
    frame, _ = read_record_file(SWE, columns=("system", "case_id", "case_version", "trial", "attempt", "outcome"))
    with monkeypatch.context() as patch:
        patch.setattr(lines, "proves_spaced_block", lambda block: None)
        slow = check_jsonl(SWE)
        slow_frame, _ = read_record_file(
            SWE, columns=("system", "case_id", "case_version", "trial", "attempt", "outcome")
        )
    assert (fast.digest, fast.lines, fast.run_set_ids) == (slow.digest, slow.lines, slow.run_set_ids)
    assert frame.equals(slow_frame)
    assert frame.schema == slow_frame.schema


def _with(line: bytes, old: bytes, new: bytes) -> bytes:
    assert old in line, (old, line)
    return line.replace(old, new, 1)


_LINE = _good_lines(1)[0].rstrip(b"\n")
_BARE = _spaced(
    {"attempt": 0, "case_id": "c", "outcome": "passed", "record_id": "r", "run_set_id": "s", "schema_version": 1,
     "system": "b", "trial": 0}
).rstrip(b"\n")  # fmt: skip
#: Lines in json.dumps's spelling that the line pass refuses (or accepts: :data:`_ACCEPTED`); none may be proved.
_HOSTILE: dict[str, bytes] = {
    "duplicate key": _with(_BARE, b'"attempt": 0', b'"attempt": 0, "attempt": 1'),
    "duplicate key in a grader": _with(_LINE, b'"kind": "code"', b'"kind": "code", "kind": "model"'),
    "NaN": _with(_LINE, b'"machine_seconds": 1.5', b'"machine_seconds": NaN'),
    "Infinity": _with(_LINE, b'"machine_seconds": 1.5', b'"machine_seconds": Infinity'),
    "1e999": _with(_LINE, b'"machine_seconds": 1.5', b'"machine_seconds": 1e999'),
    "integer beyond 64 bits": _with(_LINE, b'"tokens_input": 1200', b'"tokens_input": 99999999999999999999'),
    "deep nesting": _with(_BARE, b'"case_id": "c"', b'"case_id": "c", "x": ' + b"[" * 40 + b"]" * 40),
    "byte-order mark": b"\xef\xbb\xbf" + _BARE,
    "not UTF-8": _with(_BARE, b'"system": "b"', b'"system": "b\xff"'),
    "CRLF": _BARE + b"\r",
    "two spaces": _with(_BARE, b'"attempt": 0,', b'"attempt":  0,'),
    "a tab": _with(_BARE, b'"attempt": 0,', b'"attempt":\t0,'),
    "no space after a colon": _with(_BARE, b'"attempt": 0,', b'"attempt":0,'),
    "a space before a comma": _with(_BARE, b'"attempt": 0,', b'"attempt": 0 ,'),
    "keys not sorted": _with(_BARE, b'{"attempt": 0, "case_id": "c"', b'{"case_id": "c", "attempt": 0'),
    "a comma and space in a string": _with(_BARE, b'"case_id": "c"', b'"case_id": "c, d"'),
    "a colon and space in a string": _with(_BARE, b'"case_id": "c"', b'"case_id": "c: d"'),
    "escaped character": _with(_BARE, b'"case_id": "c"', b'"case_id": "c\\u0041"'),
    "unknown field": _with(_BARE, b'"case_id": "c"', b'"case_id": "c", "colour": "red"'),
    "1.0 for an integer": _with(_BARE, b'"trial": 0', b'"trial": 1.0'),
    "string for a number": _with(_BARE, b'"case_id": "c"', b'"case_id": "c", "cost_usd": "12"'),
    "cost_usd beside a part": _with(
        _BARE, b'"case_id": "c"', b'"case_id": "c", "cost_model_usd": 0.5, "cost_usd": 0.25'
    ),
    "resource_killed without bound": _with(_BARE, b'"passed"', b'"resource_killed"'),
    "passed with a failed check": _with(_BARE, b'"case_id": "c"', b'"case_id": "c", "failed_check": "t"'),
    "February 30": _with(_LINE, b'"2026-12-01T10:00:00.000', b'"2024-02-30T10:00:00.000'),
    "year 0000": _with(_LINE, b'"2026-12-01T10:00:01.5Z"', b'"0000-12-01T10:00:01.5Z"'),
    "negative cost": _with(_BARE, b'"case_id": "c"', b'"case_id": "c", "cost_usd": -1'),
    "empty case id": _with(_BARE, b'"case_id": "c"', b'"case_id": ""'),
    "missing field": _with(_BARE, b'"attempt": 0, ', b""),
    "a checksum (wrong)": _with(
        _BARE, b'"case_id": "c", ', b'"case_id": "c", "checksum": "sha256:' + b"0" * 64 + b'", '
    ),
    "a checksum (right)": _with(
        _BARE,
        b'"case_id": "c", ',
        b'"case_id": "c", "checksum": "' + record_checksum(json.loads(_BARE)).encode() + b'", ',
    ),
    "checksum null": _with(_BARE, b'"case_id": "c", ', b'"case_id": "c", "checksum": null, '),
    "not an object": b'["attempt", 0]',
}
#: Lines the proof may accept: the canonical tokens with a space after some separators only (the same values).
_PROVABLE = {"no space after a colon"}
#: Lines of another shape the line pass accepts (the proof leaves them to it, or proves them: :data:`_PROVABLE`).
_ACCEPTED = {
    "two spaces",
    "a tab",
    "no space after a colon",
    "a space before a comma",
    "keys not sorted",
    "a comma and space in a string",
    "a colon and space in a string",
    "escaped character",
    "a checksum (right)",
    "CRLF",
    "checksum null",
}


@pytest.mark.parametrize("name", sorted(_HOSTILE))
@pytest.mark.parametrize("where", ["first", "middle", "last"])
def test_a_hostile_line_is_never_proved_and_both_passes_agree(
    name: str, where: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = _good_lines(4)
    hostile = _HOSTILE[name] + b"\n"
    at = {"first": 0, "middle": 2, "last": 4}[where]
    data = b"".join([*good[:at], hostile, *good[at:]])
    if name not in _PROVABLE:
        assert proves_spaced_block(data) is None
        assert proves_spaced_block(hostile) is None
    fast, slow = with_and_without_proofs(write_file(tmp_path, data), monkeypatch)
    assert fast == slow
    expected = "accepted" if name in _ACCEPTED else "refused"
    if name == "a checksum (right)":  # one line checksummed, the others not: the mixed file is refused
        expected = "refused"
    assert fast[0] == expected, fast


def test_a_blank_line_and_a_torn_last_line_are_left_to_the_line_pass(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = _good_lines(4)
    with_blank = b"".join([*good[:2], b"\n", *good[2:]])
    assert proves_spaced_block(with_blank) is None
    fast, slow = with_and_without_proofs(write_file(tmp_path, with_blank), monkeypatch)
    assert fast == slow
    assert fast[0] == "accepted"
    assert fast[4] == (1, 2, 4, 5)
    fast, slow = with_and_without_proofs(
        write_file(tmp_path, b"".join(good) + b'{"attempt": 0, "case_id": "torn-', "t.jsonl"), monkeypatch
    )
    assert fast == slow
    assert "5: field '<line>': torn last line" in fast[2][0]


def test_proved_blocks_without_checksums_and_a_checksummed_block_make_a_mixed_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Blocks of 4 KiB: the spaced blocks proved, the runner block proved, and the mix refused as the line pass does.
    monkeypatch.setattr(lines, "_BLOCK_BYTES", 4096)
    runner = [encode_record({**_record(100 + i), "record_id": f"k-{i}"}) for i in range(30)]
    data = b"".join([*_good_lines(60), *runner, *[_spaced(_record(200 + i)) for i in range(60)]])
    fast, slow = with_and_without_proofs(write_file(tmp_path, data), monkeypatch)
    assert fast == slow
    assert fast[0] == "refused"
    assert fast[1] == 120
    assert "1: field 'checksum': no checksum, but 30 other line(s)" in fast[2][0]


def test_a_line_longer_than_the_limit_is_not_proved(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    base = _spaced(_record(0, outcome="failed", failed_check=""))
    room = MAX_LINE_BYTES - (len(base) - 1)
    at_limit = _spaced(_record(0, outcome="failed", failed_check="y" * room))
    over = _spaced(_record(0, outcome="failed", failed_check="y" * (room + 1)))
    assert len(at_limit) - 1 == MAX_LINE_BYTES
    assert proves_spaced_block(at_limit) is not None
    assert proves_spaced_block(over) is None
    for line, answer in ((at_limit, "accepted"), (over, "refused")):
        fast, slow = with_and_without_proofs(write_file(tmp_path, b"".join([*_good_lines(2), line])), monkeypatch)
        assert fast == slow
        assert fast[0] == answer


# --- the differential test: hostile variations of json.dumps lines ------------------------------

_FLOATS = st.floats(min_value=0, allow_nan=False, allow_infinity=False) | st.sampled_from(
    [0.0, -0.0, 1e-4, 9.99e-5, 1e-5, 1e15, 1e16, 1.5e16, 123.456, 5e-324]
)
_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)
_RECORDS = st.builds(
    _record,
    st.integers(0, 1000),
    cost_usd=st.none() | _FLOATS,
    machine_seconds=_FLOATS,
    cohort=st.none() | _TEXT.filter(bool),
    failed_check=st.none(),
    case_group=st.none() | _TEXT,
    case_id=_TEXT.filter(bool) | st.sampled_from(["a, b", "a: b", "a,b", "a:b", "a ,b"]),
    started_at=st.sampled_from(
        ["2024-02-29T00:00:00Z", "2023-02-29T00:00:00Z", "2024-04-31T00:00:00+01:00", "2024-01-31T23:59:60.5z"]
    ),
)


def _mutations(line: bytes) -> st.SearchStrategy[bytes]:
    body = line.rstrip(b"\n")
    at = st.integers(0, len(body))
    return st.one_of(
        st.just(body),
        st.builds(lambda i, b: body[:i] + bytes([b]) + body[i + 1 :], at, st.integers(0, 255)),
        st.builds(
            lambda i, s: body[:i] + s + body[i:], at, st.sampled_from([b" ", b"\\", b"NaN", b"e", b"0", b",", b", "])
        ),
        st.builds(lambda i: body[:i] + body[i + 1 :], at),
        st.builds(lambda i: body[:i] + body[i:].replace(b", ", b', "trial": 0, ', 1), at),
        st.builds(lambda i: body[:i] + body[i:].replace(b": ", b":", 1), at),
    )


@settings(max_examples=examples(200), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_differential_the_proof_never_accepts_what_the_line_pass_refuses(
    data: st.DataObject, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    records = data.draw(st.lists(_RECORDS, min_size=1, max_size=4))
    good = [_spaced(r) for r in records]
    index = data.draw(st.integers(0, len(good) - 1))
    good[index] = data.draw(_mutations(good[index])) + b"\n"
    block = b"".join(good)
    path = write_file(tmp_path, block, "d.jsonl")
    fast, slow = with_and_without_proofs(path, monkeypatch)
    assert fast == slow
    if proves_spaced_block(block) is not None:
        assert slow[0] == "accepted"
        assert slow[2] == "none"


def test_the_kept_columns_of_a_proved_file_are_those_polars_reads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rows = [
        _record(i, cost_usd=None if i % 3 else 0.25 * i, case_group=None if i % 2 else "g", case_id=f"c, {i % 7}")
        for i in range(40)
    ]
    path = write_file(tmp_path, b"".join(_spaced(r) for r in rows[:20]) + b"".join(_spaced(r) for r in rows[20:]))
    monkeypatch.setattr(lines, "_BLOCK_BYTES", 4096)
    columns = ("system", "case_id", "case_version", "case_group", "trial", "attempt", "outcome", "cost_usd")
    check = check_jsonl(path, keep=columns, key=("system", "case_id", "case_version", "trial", "attempt"))
    assert check.frame is None  # "c, 0" holds ", ": those blocks are left to the line pass, then polars reads
    plain = [_record(i, cost_usd=None if i % 3 else 0.25 * i, case_group=None if i % 2 else "g") for i in range(40)]
    path = write_file(tmp_path, b"".join(_spaced(r) for r in plain), "p.jsonl")
    check = check_jsonl(path, keep=columns, key=("system", "case_id", "case_version", "trial", "attempt"))
    assert check.frame is not None
    proved, _ = read_record_file(path, columns=columns)
    with monkeypatch.context() as patch:
        patch.setattr(lines, "proves_spaced_block", lambda block: None)
        read, _ = read_record_file(path, columns=columns)
    assert proved.equals(read)
    assert proved.schema == read.schema


# --- a negative integer where the contract's minimum is 0 (found in session 41) -----------------

#: Every field of the contract with a minimum, as a record setting it to a negative integer (the line pass refuses).
_NEGATIVE = {
    "trial": {"trial": -1},
    "attempt": {"attempt": -1},
    "cost_usd": {"cost_usd": -1},
    "cost_model_usd": {"cost_model_usd": -2},
    "cost_tool_usd": {"cost_tool_usd": -1},
    "cost_execution_usd": {"cost_execution_usd": -1},
    "tokens_input": {"tokens_input": -1},
    "tokens_output": {"tokens_output": -7},
    "machine_seconds": {"machine_seconds": -3},
    "artifacts[].bytes": {"artifacts": [{"path": "out/a.json", "digest": None, "bytes": -1}]},
    "correction_round": {"correction_round": -1},
    "review_minutes": {"review_minutes": -1},
    "unauthorized_actions": {"unauthorized_actions": -1},
}


def test_every_field_with_a_minimum_is_listed() -> None:
    from gatestats_runner.contract import load_schema

    found: list[str] = []

    def walk(spec: Any, path: str) -> None:
        for name, item in spec.get("properties", {}).items():
            if "minimum" in item:
                found.append(path + name)
            walk(item, path + name + ".")
            if "items" in item:
                walk(item["items"], path + name + "[].")

    walk(load_schema(), "")
    assert sorted(found) == sorted(_NEGATIVE)


@pytest.mark.parametrize("name", sorted(_NEGATIVE))
def test_a_negative_integer_below_a_minimum_of_0_is_proved_by_neither_proof(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Until session 41 the proofs' integer bound was ``int(minimum or INT64_MIN)``: a minimum of 0 let every
    # negative integer through (a runner-canonical line with "cost_usd":-1 and its checksum was accepted).
    record = _record(7, **_NEGATIVE[name])
    canonical = (
        encode_record(_record(1))
        + (
            json.dumps({**record, "checksum": record_checksum(record)}, sort_keys=True, separators=(",", ":")) + "\n"
        ).encode()
    )
    spaced_lines = _spaced(_record(1)) + _spaced(record)
    assert proves_block(canonical) is None
    assert proves_spaced_block(spaced_lines) is None
    for data in (canonical, spaced_lines):
        fast, slow = with_and_without_proofs(write_file(tmp_path, data), monkeypatch)
        assert fast == slow
        assert fast[0] == "refused"
        assert f"field '{name.split('[', maxsplit=1)[0]}" in fast[2][0]


@pytest.mark.parametrize("mixed", [False, True])
def test_workers_give_the_same_answer_on_json_dumps_blocks(
    mixed: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The workers of a large file prove their blocks with the same code (block_worker.answer calls _Scan.block):
    # the lines without a checksum, the frame's columns and, with a runner block among them, the refusal agree.
    monkeypatch.setattr(lines, "PARALLEL_FROM_BYTES", 0)
    monkeypatch.setattr(lines, "_BLOCK_BYTES", 4096)
    rows = [_spaced(_record(i)) for i in range(120)]
    if mixed:
        rows[70:75] = [encode_record({**_record(500 + i), "record_id": f"k-{i}"}) for i in range(5)]
    path = write_file(tmp_path, b"".join(rows))
    keep = ("system", "case_id", "trial", "outcome")
    answers = []
    for workers in (1, 2):
        try:
            check = check_jsonl(
                path, keep=keep, key=("system", "case_id", "case_version", "trial", "attempt"), workers=workers
            )
        except RecordFileError as exc:
            answers.append(("refused", exc.total, tuple(str(p) for p in exc.problems)))
            continue
        assert check.frame is not None
        answers.append(
            ("accepted", check.n_records, check.checksums, check.digest, check.frame.drop("__key_hash").rows())
        )
    assert answers[0] == answers[1]
    assert answers[0][0] == ("refused" if mixed else "accepted")


def test_a_runner_block_whose_strings_hold_a_colon_and_a_space_is_proved_by_the_canonical_proof(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A runner-written line whose string holds ": " (a check named "tests: unit") is canonical: the block goes to
    # proves_block and is proved at once. Choosing the proof by ": " alone sent it to proves_spaced_block, which
    # cannot prove a checksummed line, and so the whole block to the line pass (right answer, the slow path).
    runner = b"".join(
        encode_record({**_record(i, outcome="failed", failed_check="tests: unit"), "record_id": f"k-{i}"})
        for i in range(20)
    )
    assert b": " in runner.split(b"\n", 1)[0]
    assert not spaced(runner)
    assert spaced(b"".join(_good_lines(3)))
    tried: list[str] = []
    monkeypatch.setattr(lines, "proves_block", _counting(tried, "canonical", lines.proves_block))
    monkeypatch.setattr(lines, "proves_spaced_block", _counting(tried, "spaced", lines.proves_spaced_block))
    monkeypatch.setattr(lines, "_check_line", _counting(tried, "line", lines._check_line))
    path = tmp_path / "runner.jsonl"
    path.write_bytes(runner)
    check = check_jsonl(path)
    assert (check.n_records, check.checksums) == (20, "verified")
    assert tried == ["canonical"]  # proved at once: no line checked one by one


def _counting(tried: list[str], name: str, function: Any) -> Any:
    def counted(*args: Any, **kwargs: Any) -> Any:
        tried.append(name)
        return function(*args, **kwargs)

    return counted
