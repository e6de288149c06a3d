"""What the block proof checks on the decoded values, not the bytes: small floats, and the key hashes.

A float msgspec writes otherwise than Python (above 0 and below ``1e-4``) is found by its value,
whatever the other records of the block hold there (a number, null, nothing); text that merely
looks like such a float (an id ``case-1e-5``) no longer sends a block to the line pass. The key
hash of a record does not depend on the block it is in: a key field absent or null hashes alike
whether the block's other records set it, leave it null, or leave it out.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import zlib
from pathlib import Path
from typing import Any

import msgspec
import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.records import lines
from gatestats.records.canonical_block import _codec, proves_block
from gatestats.records.lines import KEY_HASH, _key_hashes, check_jsonl
from gatestats_runner.contract import RECORD_KEY
from gatestats_runner.runsets import encode_record, record_checksum
from tests.conftest import make_record

pytestmark = pytest.mark.usefixtures("prove_every_block")


def _line(i: int, **overrides: Any) -> bytes:
    """A runner line (Python's canonical JSON, its checksum)."""
    return encode_record(_record(i, **overrides))


def _record(i: int, **overrides: Any) -> dict[str, Any]:
    record = make_record(record_id=f"r-{i}", case_id=f"case-{i}", trial=i, machine_seconds=1.5 + i)
    for name, value in overrides.items():
        if value is _ABSENT:
            record.pop(name, None)
        else:
            record[name] = value
    return record


def _msgspec_line(i: int, **overrides: Any) -> bytes:
    """A line in msgspec's canonical form, sealed over those bytes: what the proof must not accept for a small float."""
    record = _record(i, **overrides)
    record.pop("checksum", None)
    record["checksum"] = "sha256:" + hashlib.sha256(msgspec.json.encode(record, order="sorted")).hexdigest()
    return msgspec.json.encode(record, order="sorted") + b"\n"


_ABSENT = object()


@pytest.mark.parametrize("others", [1.5, 0, 0.0, None, _ABSENT], ids=["float", "int 0", "float 0", "null", "absent"])
@pytest.mark.parametrize("tiny", [1e-5, 3.25e-7, 9.99e-5, 1e-12])
def test_a_small_float_is_found_whatever_the_other_records_hold(others: Any, tiny: float) -> None:
    block = b"".join([*(_line(i, machine_seconds=others) for i in range(5)), _msgspec_line(9, machine_seconds=tiny)])
    assert proves_block(block) is None
    honest = b"".join([*(_line(i, machine_seconds=others) for i in range(5)), _msgspec_line(9, machine_seconds=0.5)])
    assert proves_block(honest) is not None


@pytest.mark.parametrize("field", ["cost_usd", "cost_tool_usd", "review_minutes"])
def test_a_small_float_in_any_number_field_is_left_to_the_line_pass(field: str, tmp_path: Path) -> None:
    extra = {"cost_usd": None} if field == "cost_tool_usd" else {}
    block = b"".join([_line(0, **extra), _msgspec_line(1, **{field: 5e-5, **extra}), _line(2, **extra)])
    assert b"0.00005" in block
    assert proves_block(block) is None
    path = tmp_path / "r.jsonl"
    path.write_bytes(block)
    with pytest.raises(RecordFileError, match=":2: field 'checksum': checksum does not match"):
        check_jsonl(path)  # sealed over msgspec's spelling, not the runner's: the line pass refuses it
    honest = b"".join([_line(0, **extra), _line(1, **{field: 5e-5, **extra}), _line(2, **extra)])
    path.write_bytes(honest)
    assert check_jsonl(path).n_records == 3  # the runner's spelling: accepted, by the line pass


def test_text_that_looks_like_a_small_float_is_proved() -> None:
    """Ids holding ``0.0000`` or a digit before ``e-`` sent a block to the line pass; the value guard does not."""
    block = b"".join(_line(i, case_id=f"case-1e-{i}", record_id=f"r-0.0000{i}") for i in range(4))
    assert b"1e-" in block
    assert b"0.0000" in block
    assert proves_block(block) is not None


def _decoded(block: bytes) -> list[Any]:
    return list(_codec()[0].decode_lines(block))


@pytest.mark.parametrize("portable", [False, True], ids=["seeded", "portable"])
def test_a_key_hashes_alike_whatever_its_block_holds_in_the_other_records(portable: bool) -> None:
    """``case_version`` absent or null hashes alike, in a block where every record, some, or none set it."""
    key = RECORD_KEY
    assert "case_version" in key
    target_absent = _line(7, case_version=_ABSENT)
    target_null = _line(7, case_version=None)
    shapes = {
        "all absent": [_line(i, case_version=_ABSENT) for i in range(3)],
        "all null": [_line(i, case_version=None) for i in range(3)],
        "all set": [_line(i, case_version=f"v{i}") for i in range(3)],
        "mixed": [_line(0, case_version="v"), _line(1, case_version=None), _line(2, case_version=_ABSENT)],
        "other systems": [_line(i, system=f"s{i}", case_version=f"v{i}") for i in range(3)],
        "alone": [],
    }
    hashes = set()
    for rows in shapes.values():
        for target in (target_absent, target_null):
            block = b"".join([*rows, target])
            assert proves_block(block) is not None
            hashes.add(_key_hashes(_decoded(block), key, portable=portable)[-1])
    assert len(hashes) == 1
    for other in (_line(7, case_version="v7"), _line(7, case_version=_ABSENT, system="other")):
        assert _key_hashes(_decoded(other), key, portable=portable)[0] not in hashes


def test_portable_key_hashes_of_every_shape_match_the_tuple_of_checksums() -> None:
    """Portable: each string of the key as its CRC-32 and Adler-32, null and absent as the marker twice."""
    rows = [_line(0, case_version="v"), _line(1, case_version=None), _line(2, case_version=_ABSENT), _line(3)]
    rows += [_line(4, system="sé", case_id="ü-4")]
    records = _decoded(b"".join(rows))
    expected = []
    for record in records:
        values: list[Any] = []
        for name in RECORD_KEY:
            value = getattr(record, name)
            if isinstance(value, str):
                values += [zlib.crc32(value.encode()), zlib.adler32(value.encode())]
            elif value is None or value is msgspec.UNSET:
                values += [(), ()]
            else:
                values.append(value)
        expected.append(hash(tuple(values)))
    assert _key_hashes(records, RECORD_KEY, portable=True) == expected
    one = _decoded(_line(9))
    assert _key_hashes(one, ("system", "case_group"), portable=True) == [
        hash((zlib.crc32(one[0].system.encode()), zlib.adler32(one[0].system.encode()), (), ()))
    ]  # one record: every field repeated, a null string field as the marker twice


_HASHES_IN_A_PROCESS = """
import json, sys
from gatestats.records.canonical_block import _codec
from gatestats.records.lines import _key_hashes
from gatestats_runner.contract import RECORD_KEY
records = list(_codec()[0].decode_lines(sys.stdin.buffer.read()))
print(json.dumps([_key_hashes(records, RECORD_KEY, portable=p) for p in (True, False)]))
"""


def test_portable_key_hashes_are_alike_in_processes_of_other_hash_seeds() -> None:
    """What lets the parent of a shared pass prove blocks beside its workers: the seed changes nothing."""
    block = b"".join([_line(i, case_version=None if i % 3 else f"v{i}", system=f"s{i % 2}") for i in range(12)])
    answers = []
    for seed in ("1", "2"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _HASHES_IN_A_PROCESS], input=block, env=env, capture_output=True, check=True
        )
        answers.append(json.loads(done.stdout))
    assert answers[0][0] == answers[1][0]  # portable: alike
    assert answers[0][1] != answers[1][1]  # Python's seeded hash of strings: not (what the test could miss)


def test_key_hashes_of_every_shape_match_the_tuple_hash() -> None:
    """The compiled per-field shortcut gives Python's hash of the key tuple (null and absent as the marker)."""
    rows = [_line(0, case_version="v"), _line(1, case_version=None), _line(2, case_version=_ABSENT), _line(3)]
    records = _decoded(b"".join(rows))
    expected = []
    for record in records:
        values = []
        for name in RECORD_KEY:
            value = getattr(record, name)
            values.append(() if value is None or value is msgspec.UNSET else value)
        expected.append(hash(tuple(values)))
    assert _key_hashes(records, RECORD_KEY) == expected
    assert _key_hashes(records, ("case_group",)) == [hash(((),))] * 4  # null on every record


@pytest.mark.parametrize("keep", [(), ("system", "outcome"), (*RECORD_KEY, "outcome")], ids=["none", "some", "all"])
def test_a_repeated_key_in_blocks_of_other_shapes_repeats_its_hash(
    keep: tuple[str, ...], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hashed in Python block by block (key not kept) or by polars in the whole frame (key kept)."""
    monkeypatch.setattr(lines, "_BLOCK_BYTES", 2048)
    first = [_line(i, case_version=_ABSENT) for i in range(20)]
    second = [_line(100 + i, case_version=None if i % 2 else "v") for i in range(20)]
    path = tmp_path / "r.jsonl"
    path.write_bytes(b"".join([*first, *second, _line(5, case_version=None, record_id="again")]))
    check = check_jsonl(path, keep=keep, key=RECORD_KEY)
    assert check.frame is not None
    assert check.frame.columns == [*keep, KEY_HASH]
    hashes = check.frame.get_column(KEY_HASH)
    assert hashes.n_unique() == hashes.len() - 1
    assert hashes[5] == hashes[-1]
    if set(RECORD_KEY) <= set(keep):  # the reader's own hash of the key
        frame = check.frame.with_columns(pl.struct(RECORD_KEY).hash(seed=0).alias("expected"))
        assert (frame.get_column(KEY_HASH) == frame.get_column("expected")).all()


def test_the_float_fields_are_every_number_field_of_the_contract() -> None:
    from gatestats.records import canonical_block
    from gatestats_runner.contract import load_schema

    numbers = {
        name
        for name, spec in load_schema()["properties"].items()
        if "number" in ([spec["type"]] if isinstance(spec["type"], str) else spec["type"])
    }
    assert set(canonical_block._NUMBER_FIELDS) == numbers
    assert canonical_block._NESTED_NUMBERS is False
    assert json.loads(_line(0))["machine_seconds"] == 1.5


@pytest.mark.parametrize(
    "values", [["a", "", "b"], ["x"], [""], ["", ""], ["é", "ü\u2028"], ["a", None], [1, 2], [None, None], [True]]
)
def test_a_column_sent_by_a_worker_reads_back_the_same(values: list[Any]) -> None:
    """Strings travel joined by newlines and polars splits them back; other columns travel as lists."""
    from gatestats.records.block_worker import _joined

    sent = _joined(values)
    assert isinstance(sent, str) == all(isinstance(v, str) for v in values)
    name = "trial" if isinstance(values[0], int) and not isinstance(values[0], bool) else "case_group"
    name = "accepted" if isinstance(values[0], bool) else name
    frames = lines._Frames((name,), ())
    frames.add_values([sent], None)
    assert frames.frame().to_series().to_list() == values
    assert frames.frame().schema == {name: lines_schema()[name]}


def lines_schema() -> Any:
    from gatestats.records.contract import POLARS_SCHEMA

    return POLARS_SCHEMA


def test_a_string_with_a_newline_travels_as_a_list() -> None:
    from gatestats.records.block_worker import _joined

    assert _joined(["a\nb", "c"]) == ["a\nb", "c"]


def _cost_line(i: int, **costs: Any) -> bytes:
    """A line setting these costs, sealed over its canonical form (only the contract's cost rule can refuse it)."""
    record = _record(i, **costs)
    record.pop("checksum", None)
    record["checksum"] = record_checksum(record)  # encode_record would refuse a record that breaks the rule
    return json.dumps(record, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode() + b"\n"


@pytest.mark.parametrize("part", ["cost_model_usd", "cost_tool_usd", "cost_execution_usd"])
@pytest.mark.parametrize(
    "others",
    [{}, {"cost_usd": 1.5}, {"cost_usd": None, "cost_model_usd": 0.5}, {"cost_usd": 0}],
    ids=["no costs", "totals", "parts", "zero totals"],
)
def test_cost_usd_beside_a_part_is_never_proved(part: str, others: dict[str, Any], tmp_path: Path) -> None:
    """The rule across fields is searched in the bytes whenever the block sets a total and a part anywhere."""
    bad = _cost_line(3, **{part: 0.25, "cost_usd": 0.75})
    rows = [_cost_line(i, **others) for i in range(3)]
    block = b"".join([*rows, bad])
    assert proves_block(block) is None
    path = tmp_path / "r.jsonl"
    path.write_bytes(block)
    with pytest.raises(RecordFileError, match=r":4: field 'cost_usd'"):
        check_jsonl(path)
    assert proves_block(b"".join(rows)) is not None


def test_totals_on_some_lines_and_parts_on_others_are_proved() -> None:
    block = b"".join([_cost_line(0, cost_usd=1.5), _cost_line(1, cost_usd=None, cost_model_usd=0.5, cost_tool_usd=0)])
    assert proves_block(block) is not None


def test_the_cost_fields_are_number_fields() -> None:
    from gatestats.records import canonical_block

    assert {canonical_block._COST_TOTAL, *canonical_block._COST_PARTS} <= set(canonical_block._NUMBER_FIELDS)


def test_texts_and_lists_of_blocks_make_one_column_in_order() -> None:
    """Blocks from workers (texts, split once at the end) and in-process blocks (lists) interleave in line order."""
    frames = lines._Frames(("system", "trial"), ("system", "case_id"))
    blocks = [("a\nb", [0, 1]), (["c"], [2]), ("d", [3]), ("e\n\nf", [4, 5, 6]), (["g", "h"], [7, 8])]
    for names, trials in blocks:
        frames.add_values([names, trials], [hash(t) for t in trials])
    frame = frames.frame()
    assert frame.columns == ["system", "trial", KEY_HASH]
    assert frame.get_column("system").to_list() == ["a", "b", "c", "d", "e", "", "f", "g", "h"]
    assert frame.get_column("trial").to_list() == list(range(9))
    assert frame.get_column(KEY_HASH).to_list() == [hash(t) for t in range(9)]


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [(b"\x01", b"\\u0001"), (b"\x1f", b"\\u001f"), (b"\x7f", b"\\u007f"), (b"\t", b"\\t"), (b"\x00", b"\\u0000")],
)
def test_control_characters_in_an_id_are_never_proved_and_both_passes_agree(
    raw: bytes, escaped: bytes, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A raw control character in a string is not JSON; an escaped one goes to the line pass, which decides."""
    good = [_line(i) for i in range(4)]
    record = _record(9, case_id="case-X")
    record.pop("checksum", None)
    record["checksum"] = record_checksum({**record, "case_id": "case-" + escaped.decode("unicode_escape")})
    text = json.dumps(record, sort_keys=True, separators=(",", ":")).encode()
    for spelling in (raw, escaped):
        line = text.replace(b"case-X", b"case-" + spelling) + b"\n"
        block = b"".join([*good[:2], line, *good[2:]])
        if spelling != b"\x7f":  # DEL is not a control character to JSON: only the escape test applies
            assert proves_block(block) is None
        path = tmp_path / "r.jsonl"
        path.write_bytes(block)
        answers = []
        for prove in (True, False):
            with monkeypatch.context() as patch:
                if not prove:
                    patch.setattr(lines, "proves_block", lambda block: None)
                try:
                    answers.append(("accepted", check_jsonl(path).n_records))
                except RecordFileError as exc:
                    answers.append(("refused", tuple(str(p) for p in exc.problems)))
        assert answers[0] == answers[1]
        if spelling == raw and raw not in (b"\x7f",):
            assert answers[0][0] == "refused"
