"""The proof's checksum check by cutting each line's checksum member out of the block (session 40).

Until session 40 the proof encoded the decoded records a second time without their checksums to get
each line's checksum input; now it cuts the members out of the block's bytes
(:func:`gatestats.records.canonical_block._checksums_ok`). The two must answer alike on every block
the proof reaches that step with (proved canonical, no backslash): :func:`_by_encoding` is the old
code, kept here as the reference, and both run on blocks whose checksums are right, changed, swapped,
missing, null, of another length or prefix, upper-case, stale, or whose values hold the member's text.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.records import canonical_block
from gatestats.records.canonical_block import _checksums_ok, _codec, _plain, proves_block
from gatestats_runner.contract import MAX_LINE_BYTES
from gatestats_runner.digests import canonical_json
from gatestats_runner.runsets import record_checksum
from tests.conftest import make_record
from tests.hypothesis_counts import examples


def _by_encoding(records: list[Any], encoder: msgspec.json.Encoder) -> bool:
    """The check as it was before session 40 (``canonical_block._checksums_ok`` at 60969b6), the reference."""
    prefix, text = "sha256:", 71
    try:
        named = [r.checksum for r in records]
        if set(map(len, named)) != {text}:
            return False
    except TypeError:
        return False
    joined, n = "".join(named), len(named)
    if any(joined[i::text] != char * n for i, char in enumerate(prefix)):
        return False
    for record in records:
        record.checksum = msgspec.UNSET
    stripped = encoder.encode_lines(records).split(b"\n")
    stripped.pop()
    if max(map(len, stripped)) + len(b',"checksum":""') + text > MAX_LINE_BYTES:
        return False
    sha256: Callable[[bytes], Any] = hashlib.sha256
    computed = b"".join([sha256(line).digest() for line in stripped]).hex()
    return computed == joined.replace(prefix, "")


def _record(i: int, case_id: str, failed_check: str | None) -> dict[str, Any]:
    outcome = "failed" if failed_check is not None else "passed"
    return make_record(
        record_id=f"r-{i}", trial=i, case_id=case_id, outcome=outcome, failed_check=failed_check, exit_code=0
    )


def _bad_checksum(record: dict[str, Any], how: str) -> dict[str, Any]:
    """``record`` sealed, then its checksum damaged as ``how`` says (``"none"``: left right)."""
    right = record_checksum(record)
    checksums: dict[str, Any] = {
        "none": right,
        "digit": right[:-1] + ("0" if right[-1] != "0" else "1"),
        "upper": right.upper().replace("SHA256:", "sha256:"),
        "prefix": "sha512:" + right[7:],
        "short": right[:-1],
        "long": right + "0",
        "null": None,
        "stale": right,
    }
    out = {**record, "checksum": checksums.get(how, right)}
    if how == "absent":
        del out["checksum"]
    if how == "stale":
        out["trial"] = record["trial"] + 1000
    return out


_HOW = ["none", "digit", "upper", "prefix", "short", "long", "null", "absent", "stale"]
# Values that hold the member's text (a quote would be escaped, which the proof leaves to the line pass).
_IDS = st.sampled_from(["c", ",checksum:sha256:", "checksum", "sha256:" + "a" * 64, ",", "é☃"])


def _both(lines: list[bytes]) -> tuple[bool, bool] | None:
    """The old and the new check on the block of ``lines`` (``None``: the proof would not reach the check)."""
    block = b"".join(lines)
    decoder, encoder = _codec()
    try:
        records = decoder.decode_lines(block)
    except (msgspec.MsgspecError, ValueError):
        return None
    if not _plain(block) or encoder.encode_lines(records) != block:
        return None
    return _by_encoding(decoder.decode_lines(block), encoder), _checksums_ok(decoder.decode_lines(block), block)


@settings(max_examples=examples(300), deadline=None)
@given(
    rows=st.lists(st.tuples(_IDS, st.none() | _IDS.filter(bool), st.sampled_from(_HOW)), min_size=1, max_size=6),
    swap=st.booleans(),
)
def test_cutting_the_member_answers_as_encoding_again(rows: list[tuple[str, str | None, str]], swap: bool) -> None:
    records = [_bad_checksum(_record(i, case_id, failed), how) for i, (case_id, failed, how) in enumerate(rows)]
    if swap and len(records) > 1 and "checksum" in records[0] and "checksum" in records[1]:
        records[0]["checksum"], records[1]["checksum"] = records[1]["checksum"], records[0]["checksum"]
    answers = _both([(canonical_json(r) + "\n").encode() for r in records])
    if answers is not None:
        old, new = answers
        assert new == old
        assert new == all(r.get("checksum") == record_checksum(r) for r in records)


@pytest.mark.parametrize("how", _HOW)
def test_each_kind_of_damage_alone_answers_alike(how: str) -> None:
    records = [_record(i, "c", None) for i in range(3)]
    records[1] = _bad_checksum(records[1], how)
    for i in (0, 2):
        records[i] = _bad_checksum(records[i], "none")
    lines = [(canonical_json(r) + "\n").encode() for r in records]
    answers = _both(lines)
    assert answers is not None
    assert answers == (how == "none", how == "none")
    assert (proves_block(b"".join(lines)) is not None) == (how == "none")


def test_the_member_text_is_taken_from_the_contract() -> None:
    assert canonical_block._MEMBER == b',"checksum":"sha256:'
    assert canonical_block._AFTER_DIGITS(b"d" * 64 + b'"rest') == b"rest"
