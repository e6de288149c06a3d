"""The byte test of the ``json.dumps`` proof, made cheaper, gives the old test's answer (issue 28 item 2, session 44).

:func:`~gatestats.records.canonical_block.spaced_as_canonical` answers whether a block is its canonical text
with one space after some separators. Until session 44 it was written as :func:`_old` below (kept word for word
as the oracle): two replaces of the whole block and two searches of the canonical text, ~20 ms of the 3.2 MB
SWE-bench file's proof. When the canonical text holds no space it now uses one ``translate`` and two counts.
Every test here compares the two on the same pair of texts: byte strings drawn over the bytes that matter
(separators, spaces, quotes, newlines), apart or the second made from the first, canonical texts with spaces put
in at random places, the bundled file's blocks and hostile ``json.dumps`` lines with their true canonical texts. tests/records/test_spaced_block.py
compares the whole reader with the line pass on hostile files.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import msgspec
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gatestats.records.canonical_block import proves_spaced_block, spaced_as_canonical
from tests.hypothesis_counts import draws, examples

ROOT = Path(__file__).resolve().parents[2]
SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"


def _old(block: bytes, canonical: bytes) -> bool:
    """The byte test as ``proves_spaced_block`` wrote it before session 44 (the oracle)."""
    return not (
        b", " in canonical or b": " in canonical or block.replace(b", ", b",").replace(b": ", b":") != canonical
    )


#: The bytes whose order the test reads: separators, a space, and what may stand next to them.
_BYTES = st.binary(max_size=60).map(lambda b: bytes(b',: a"\n{}\t'[x % 9] for x in b))


#: Two texts: drawn apart, or the second made from the first by taking out its spaces (the new way's ``translate``)
#: or its ``", "`` and ``": "`` pairs (the old way's replaces). Drawn apart only, the first was rarely the second
#: without its spaces: the session-44 break "the count check dropped" was missed in 9 of 20 runs at 400 and "the
#: ``": "`` count dropped" in 20 of 20 (session 48, h48-oracles). Now both, "``or`` for ``and``" and "the cheaper
#: way taken when the canonical text holds a space" each failed 60 of 60 runs at 400; at the inner loop's 100,
#: each 60 of 60 but the ``": "`` count, 44 of 60 (the next test catches that one).
_TWO_TEXTS = st.one_of(
    st.tuples(_BYTES, _BYTES),
    _BYTES.map(lambda b: (b, b.translate(None, b" "))),
    _BYTES.map(lambda b: (b, b.replace(b", ", b",").replace(b": ", b":"))),
)


@settings(max_examples=examples(400))
@given(_TWO_TEXTS)
def test_any_two_texts_get_the_old_answer(texts: tuple[bytes, bytes]) -> None:
    block, canonical = texts
    assert spaced_as_canonical(block, canonical) == _old(block, canonical)


#: Where a space is put: at a random place (``b""``) or after one of the block's ``,`` or ``:`` (session 47: put only at
#: random places, a single space after a ``:`` with no other stray space was drawn too rarely - the session-44 break
#: "the ``": "`` count dropped" was missed in 29 of 60 runs at 400 texts (h47-oracles); with these it failed 39 of 40).
_AFTER = st.sampled_from([b",", b":", b":", b""])


@settings(max_examples=examples(400))
@given(
    _BYTES.map(lambda b: b.replace(b" ", b"")),
    st.lists(st.tuples(st.integers(0, 80), st.sampled_from([b" ", b" ", b" ", b"  ", b"\t"]), _AFTER)),
)
def test_a_canonical_text_with_spaces_put_in_gets_the_old_answer(
    canonical: bytes, spaces: list[tuple[int, bytes, bytes]]
) -> None:
    block = canonical
    for wanted, space, after in spaces:
        separators = [i + 1 for i, byte in enumerate(block) if bytes([byte]) == after] if after else []
        at = separators[wanted % len(separators)] if separators else min(wanted, len(block))
        block = block[:at] + space + block[at:]
    assert spaced_as_canonical(block, canonical) == _old(block, canonical)


#: Random canonical texts drawn by the test below.
SPELLINGS = draws(3000)


def test_spaces_after_every_separator_or_one_more_anywhere() -> None:
    """Random canonical texts: the ``json.dumps`` spelling (true), and with one space moved or doubled (false)."""
    rng = random.Random(44)
    agreed = {True: 0, False: 0}
    for _ in range(SPELLINGS):
        canonical = bytes(rng.choice(b',:a"{}\n0') for _ in range(rng.randint(0, 40)))
        block = canonical.replace(b",", b", ").replace(b":", b": ")
        variants = [block]
        spaces = [i for i, byte in enumerate(block) if byte == 0x20]
        if spaces:
            i = rng.choice(spaces)
            variants += [block[:i] + block[i + 1 :], block[:i] + b"  " + block[i + 1 :]]
            j = rng.randrange(len(block) + 1)
            variants.append(
                block[:i] + block[i + 1 : j] + b" " + block[j:]
                if j > i
                else block[:j] + b" " + block[j:i] + block[i + 1 :]
            )
        for text in variants:
            answer = spaced_as_canonical(text, canonical)
            assert answer == _old(text, canonical)
            agreed[answer] += 1
    assert min(agreed.values()) > SPELLINGS // 10  # both answers were reached often


def _blocks(data: bytes, size: int) -> list[bytes]:
    blocks, start = [], 0
    while start < len(data):
        end = data.rfind(b"\n", start, start + size) + 1 or len(data)
        blocks.append(data[start:end])
        start = end
    return blocks


_ENCODER = msgspec.json.Encoder(order="sorted")


def _canonical(block: bytes) -> bytes:
    return _ENCODER.encode_lines([json.loads(line) for line in block.splitlines()])


def test_the_bundled_swe_bench_blocks_and_their_edits() -> None:
    """The file's blocks are proved both ways; a space taken out still is, a space doubled or made a tab is not."""
    rng = random.Random(7)
    for block in _blocks(SWE.read_bytes(), 1 << 17):
        canonical = _canonical(block)
        assert b" " not in canonical  # the cheaper way is the one taken
        assert spaced_as_canonical(block, canonical)
        assert _old(block, canonical)
        spaces = [i for i, byte in enumerate(block) if byte == 0x20]
        for i in rng.sample(spaces, min(6, len(spaces))):
            fewer = block[:i] + block[i + 1 :]
            assert spaced_as_canonical(fewer, canonical) is True
            assert _old(fewer, canonical) is True
            for edit in (
                block[:i] + b"  " + block[i + 1 :],
                block[:i] + b"\t" + block[i + 1 :],
                block[:i] + b"," + block[i:],
            ):
                assert spaced_as_canonical(edit, canonical) is False
                assert _old(edit, canonical) is False


#: ``json.dumps`` lines whose canonical text holds a space or a separator pair in a string, or whose spacing is not json.dumps'.
_HOSTILE = [
    b'{"a": "x, y", "b": 1}',
    b'{"a": "x: y", "b": 1}',
    b'{"a": "x y", "b": 1}',
    b'{"a": "x,y", "b": "1:2"}',
    b'{"a":  1, "b": 2}',
    b'{"a": 1,  "b": 2}',
    b'{"a" : 1, "b": 2}',
    b' {"a": 1, "b": 2}',
    b'{"a": 1, "b": 2} ',
    b'{"a": 1,"b": 2}',
    b'{"a":1, "b":2}',
    b'{"a": [1, 2], "b": {"c": 3}}',
    b'{"a": [1 , 2]}',
    b'{"a": " "}',
    b'{"a": ", "}',
]


@pytest.mark.parametrize("line", _HOSTILE)
def test_hostile_lines_with_their_canonical_text(line: bytes) -> None:
    block = line + b"\n"
    canonical = _canonical(block)
    assert spaced_as_canonical(block, canonical) == _old(block, canonical)
    for other in (block.replace(b" ", b""), block.replace(b", ", b",  "), block + block):
        assert spaced_as_canonical(other, canonical) == _old(other, canonical)


def test_the_proof_still_refuses_a_space_out_of_place() -> None:
    """End to end: a ``json.dumps`` block is proved, the same block with a space before a colon is not."""
    good = b"".join(
        json.dumps({"attempt": 0, "case_id": f"c{i}", "outcome": "passed", "record_id": f"r{i}", "run_set_id": "rs",
                    "schema_version": 1, "system": "s", "trial": 0}, sort_keys=True).encode() + b"\n"
        for i in range(50)
    )  # fmt: skip
    assert proves_spaced_block(good) is not None
    assert proves_spaced_block(good.replace(b'"trial": 0', b'"trial" :0', 1)) is None
    assert proves_spaced_block(good.replace(b'"trial": 0', b'"trial":  0', 1)) is None
