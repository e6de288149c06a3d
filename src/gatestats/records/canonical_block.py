"""A compiled proof that a block of runner-written JSONL lines passes the strict line pass.

The strict line pass (:func:`gatestats.records.lines.check_jsonl`) decodes every line with the
runner's strict decoder, checks it against the contract and recomputes its checksum from the
canonical JSON of the record: about 14 µs of Python a line. The runner (and ``gatestats import``)
writes every line in that canonical form (sorted keys, no whitespace, the checksum a member of the
line). :func:`proves_block` proves, for a whole block of such lines at once and in compiled code,
that every line would pass the line pass with its checksum verified; when it cannot prove it (any
line of another shape, any defect, anything it does not handle), it answers ``None`` and the
caller runs the line pass on that block, which names every problem as it always has. So the proof
only ever *accepts*; every refusal, and its message, comes from the line pass.

What the proof establishes for every line of a block, and how:

* the line is one JSON object of the contract's types at every depth, with no unknown and no
  missing field, ``outcome``/``bound``/grader/``split``/``layer``/``stage`` values of their enums,
  non-negative counts and costs, non-empty ids, integers within 64 bits, finite numbers, and the
  timestamps' pattern; and the contract's rules across fields (``bound`` set exactly when
  ``resource_killed``, a ``passed`` trial without ``failed_check`` or missing artifacts):
  ``msgspec`` decodes the block into structs built from the contract file (one tagged struct per
  outcome), which refuses anything else;
* the line *is* the canonical JSON of the decoded record, byte for byte: re-encoding the records
  with sorted keys gives the block back. This is what rules out duplicate keys (a re-encoded record
  has each key once), ``NaN``/``Infinity``/overflowing literals, a byte-order mark, whitespace,
  ``CRLF`` and blank lines, and it makes the line's bytes those the checksum is computed over. Two
  guards keep ``msgspec``'s encoder and the runner's (``json.dumps``) byte-identical where they can
  differ: a block with a backslash (an escaped character in a string) is not proved, nor one with
  a float that the two write differently: from ``1e16`` on (the decoder's float types stop below
  it) and from ``1e-9`` to below ``1e-4`` (msgspec writes ``0.00001`` and ``1e-7`` where Python
  writes ``1e-05`` and ``1e-07``): a block with a number above 0 and below ``1e-4`` is not proved.
  That guard reads the decoded values of the number fields (:func:`_numbers_ok`; every one is at the
  top level of the contract), as the bytes are proved to be msgspec's spelling of those values;
* the checksum: every record names one, ``sha256:`` and 64 characters; each line's checksum
  member is cut out of the block (what is left of the line is the canonical JSON of the record
  without its checksum, the runner's checksum input: exact because the block is proved canonical
  and has no backslash, so that text can be nothing else; :func:`_checksums_ok`) and the sha256 of
  each such line must be the one named (``hashlib`` over each line, the digests compared in one join);
* the rule across fields on costs (``cost_usd`` null when a cost part is set): on the canonical
  bytes, by a regular expression over the block, searched only when the block sets ``cost_usd``
  on some record and a part on some record (the number fields' values, read for the float guard,
  tell); and the calendar of every timestamp (a day its month has, a year from 0001): by a regular
  expression over the block (every timestamp whose day is 29-31 or whose year is 0000 is checked
  by the contract's own checker);
* the line is not longer than :data:`~gatestats_runner.contract.MAX_LINE_BYTES` and is UTF-8.

Nesting depth needs no check: the structs nest three levels. ``tests/records/test_canonical_block.py``
keeps the differential test (the line pass and this proof on hostile lines: the proof never accepts
a line the line pass refuses).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from operator import attrgetter, itemgetter, methodcaller
from typing import TYPE_CHECKING, Annotated, Any, Literal, get_args

from gatestats_runner.contract import (
    INT64_MAX,
    INT64_MIN,
    MAX_LINE_BYTES,
    PASSED,
    RESOURCE_KILLED,
    RFC3339_PATTERN,
    SchemaNode,
    load_schema,
    validate_field,
)
from gatestats_runner.runsets import CHECKSUM_FIELD

if TYPE_CHECKING:
    import msgspec

__all__ = ["VALUE_FIELDS", "BlockProof", "proof_started", "proved_values", "proves_block", "proves_spaced_block"]

#: The fields :func:`proved_values` reads: those of a string, number or boolean value, but the checksum
#: (the proof takes it out of the records to verify it).
VALUE_FIELDS = frozenset(
    name
    for name, spec in load_schema()["properties"].items()
    if name != CHECKSUM_FIELD
    and not {"array", "object"} & set([spec["type"]] if isinstance(spec["type"], str) else spec["type"])
)
#: Fields every record has (never left out of a line; null where the contract allows it).
_REQUIRED = frozenset(load_schema()["required"])
#: The length of a checksum (``sha256:`` and 64 hex digits), and the bytes its member adds to a line.
_PREFIX = "sha256:"
_CHECKSUM_TEXT = len(_PREFIX) + 64
_CHECKSUM_BYTES = len(b',"checksum":""') + _CHECKSUM_TEXT
#: A checksum member after another member of its line, up to its 64 digits (:func:`_checksums_ok`).
_MEMBER = b',"' + CHECKSUM_FIELD.encode() + b'":"' + _PREFIX.encode()
#: What follows a checksum member's start in its line: past its 64 digits and closing quote.
_AFTER_DIGITS = itemgetter(slice(_CHECKSUM_TEXT - len(_PREFIX) + 1, None))
#: A record's checksum, and the lowercase hex digest of a sha256 object (compiled loops over a block's lines).
_CHECKSUM_OF = attrgetter(CHECKSUM_FIELD)
_HEXDIGEST = methodcaller("hexdigest")
#: A cost part set and ``cost_usd`` set on one line (the parts sort before ``cost_usd``).
_COST_BOTH = re.compile(rb'"cost_(?:execution|model|tool)_usd":[^n][^\n]*"cost_usd":[^n]')
_COST_TOTAL = "cost_usd"
_COST_PARTS = frozenset({"cost_execution_usd", "cost_model_usd", "cost_tool_usd"})
#: Where Python and msgspec write a float differently (measured on 2 million floats of every
#: magnitude, ``tests/records/test_canonical_block.py`` keeps it): from ``1e16`` on (``1e+16`` and
#: ``1e16``), which the decoder refuses (a float of the proof's types is below it), and from ``1e-9``
#: to below ``1e-4`` (``1e-05``/``0.00001``, ``1e-07``/``1e-7``): a block with a float whose size is
#: above 0 and below :data:`_FLOAT_SMALL` is left to the line pass (:func:`_numbers_ok`, on the values).
_FLOAT_LIMIT = 1e16
_FLOAT_SMALL = 1e-4
#: A float where msgspec's spelling can differ (see above): ``0.0000`` or a digit before ``e-``.
_NEGATIVE_EXPONENT = re.compile(rb"e-(?<=[0-9]e-)")


def _number_fields() -> tuple[tuple[str, ...], bool]:
    """The record's fields of JSON type number (at the top level), and whether the contract nests any deeper."""

    def kinds(spec: SchemaNode) -> set[str]:
        kind = spec.get("type", [])
        return {kind} if isinstance(kind, str) else set(kind)

    def inner(spec: SchemaNode) -> list[SchemaNode]:
        return [*spec.get("properties", {}).values(), *([spec["items"]] if "items" in spec else [])]

    def nested(spec: SchemaNode) -> bool:
        return "number" in kinds(spec) or any(nested(item) for item in inner(spec))

    top = load_schema()["properties"]
    fields = tuple(name for name, spec in top.items() if "number" in kinds(spec))
    return fields, any(nested(item) for spec in top.values() for item in inner(spec))


def _nested_names(spec: SchemaNode) -> set[str]:
    """The field names of every object nested (at any depth) in the schema node ``spec``'s values."""
    names: set[str] = set()
    for item in [*spec.get("properties", {}).values(), *([spec["items"]] if "items" in spec else [])]:
        names |= set(item.get("properties", {})) | _nested_names(item)
    return names


if CHECKSUM_FIELD in _nested_names(load_schema()):  # pragma: no cover - a contract nesting a checksum
    msg = f"an object nested in the contract has a {CHECKSUM_FIELD!r} field: the proof's checksum cut assumes none"
    raise RuntimeError(msg)
#: The number fields whose values :func:`_numbers_ok` reads; the bytes' guard runs too if the contract nests one.
_NUMBER_FIELDS, _NESTED_NUMBERS = _number_fields()
if not {_COST_TOTAL, *_COST_PARTS} <= set(_NUMBER_FIELDS):  # pragma: no cover - a contract whose costs moved
    msg = f"the contract's number fields {_NUMBER_FIELDS} lack a cost field the proof's cost rule reads"
    raise RuntimeError(msg)
#: A timestamp (every date-time field's name ends in ``_at``) whose day needs the calendar.
_CALENDAR = re.compile(rb'_at":"([0-9]{4}-[0-9]{2}-(?:29|30|31)[^"]*|0000-[^"]*)"')


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockProof:
    """What a proved block holds: its number of lines (each a record) and run set ids.

    ``records`` are the block's records as decoded by the proof (contract structs, one class per
    ``outcome``), in line order: :func:`proved_values` reads a field's values out of them.
    ``checksummed``: every line carries its verified checksum (:func:`proves_block`), or none does
    (:func:`proves_spaced_block`).
    """

    n_lines: int
    run_set_ids: frozenset[str]
    records: Sequence[Any] = ()
    checksummed: bool = True


def proved_values(proof: BlockProof, name: str) -> list[Any]:
    """The value of field ``name`` in each record of a proved block, in line order.

    Parameters
    ----------
    proof
        A block's proof.
    name
        One of :data:`VALUE_FIELDS` (a field whose value is a string, number or boolean).

    Returns
    -------
    list
        One value a record: ``None`` where the line has the field null or leaves it out (what
        ``polars.read_ndjson`` reads there).

    Raises
    ------
    ValueError
        ``name`` is not one of :data:`VALUE_FIELDS`.
    """
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    if name not in VALUE_FIELDS:
        msg = f"{name!r} is not a field whose values a proof keeps (one of {sorted(VALUE_FIELDS)})"
        raise ValueError(msg)
    if name == "outcome":  # the tag: the class of each record
        return list(map(_tags().__getitem__, map(attrgetter("__class__"), proof.records)))
    values = list(map(attrgetter(name), proof.records))
    if name in _REQUIRED:
        return values
    unset = msgspec.UNSET
    absent = values.count(unset)  # by identity first: cheap
    if absent == len(values):
        return [None] * absent
    if absent:
        return [None if value is unset else value for value in values]
    return values


def _scalar(spec: SchemaNode) -> Any:
    """The msgspec type of one non-null JSON Schema type of ``spec`` (constraints applied)."""
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    kind = next(k for k in kinds if k != "null")
    low = spec.get("minimum")
    if kind == "integer":
        return Annotated[
            int, msgspec.Meta(ge=max(INT64_MIN, INT64_MIN if low is None else math.ceil(low)), le=INT64_MAX)
        ]
    if kind == "number":  # a float from 1e16 on is left to the line pass (see _FLOAT_LIMIT)
        whole = Annotated[
            int, msgspec.Meta(ge=max(INT64_MIN, INT64_MIN if low is None else math.ceil(low)), le=INT64_MAX)
        ]
        limit = _FLOAT_LIMIT
        below = msgspec.Meta(gt=-limit, lt=limit) if low is None else msgspec.Meta(ge=low, lt=limit)
        return whole | Annotated[float, below]
    if kind == "boolean":
        return bool
    if kind == "array":
        return list[_value(spec["items"])]  # type: ignore[misc]
    if kind == "object":
        return _struct("Item", spec)
    meta: dict[str, Any] = {}
    if spec.get("minLength"):
        meta["min_length"] = spec["minLength"]
    if spec.get("format") == "date-time":
        meta["pattern"] = RFC3339_PATTERN
    return Annotated[str, msgspec.Meta(**meta)] if meta else str


def _value(spec: SchemaNode) -> Any:
    """The msgspec type of a schema node: enums and constants as literals, null where the schema allows it."""
    kinds = spec["type"] if isinstance(spec["type"], list) else [spec["type"]]
    if "const" in spec:
        kind: Any = Literal[spec["const"]]
    elif "enum" in spec:
        kind = Literal[tuple(v for v in spec["enum"] if v is not None)]
    else:
        kind = _scalar(spec)
    return kind | None if "null" in kinds else kind


def _fields(spec: SchemaNode, overrides: dict[str, Any]) -> list[tuple[str, Any] | tuple[str, Any, Any]]:
    """Struct fields: required ones without default; optional ones absent (UNSET) unless given."""
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    required = set(spec.get("required", ()))
    fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
    for name, item in spec["properties"].items():
        kind = overrides.get(name, _value(item))
        if name in required:
            fields.append((name, kind))
        else:
            fields.append((name, kind | msgspec.UnsetType, msgspec.UNSET))
    return fields


def _struct(name: str, spec: SchemaNode, overrides: dict[str, Any] | None = None, **options: Any) -> Any:
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    return msgspec.defstruct(
        name, _fields(spec, overrides or {}), kw_only=True, forbid_unknown_fields=True, gc=False, **options
    )


@cache
def _codec() -> tuple[msgspec.json.Decoder[Any], msgspec.json.Encoder]:
    """A decoder of one record per outcome (the rules across fields as types), and the sorted encoder."""
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    schema = load_schema()
    properties = dict(schema["properties"])
    outcome = properties.pop("outcome")
    rest: SchemaNode = {
        **schema,
        "properties": properties,
        "required": [f for f in schema["required"] if f != "outcome"],
    }
    if not {PASSED, RESOURCE_KILLED} <= set(outcome["enum"]):  # pragma: no cover - a contract without them
        msg = f"the contract's outcomes {outcome['enum']} lack {PASSED!r} or {RESOURCE_KILLED!r}"
        raise RuntimeError(msg)
    bounds: Any = Literal[tuple(b for b in properties["bound"]["enum"] if b is not None)]
    variants = []
    for value in outcome["enum"]:
        if value is None:
            continue
        overrides: dict[str, Any] = {"bound": bounds if value == RESOURCE_KILLED else None}
        if value == PASSED:
            overrides["failed_check"] = None
            overrides["missing_artifacts"] = Annotated[list[str], msgspec.Meta(max_length=0)] | None
        fields = _fields(rest, overrides)
        if value == RESOURCE_KILLED:  # bound required and set
            fields = [("bound", bounds) if f[0] == "bound" else f for f in fields]
        variants.append(
            msgspec.defstruct(
                f"Record_{value}",
                fields,
                kw_only=True,
                forbid_unknown_fields=True,
                gc=False,
                tag_field="outcome",
                tag=value,
            )
        )
    union: Any = variants[0]
    for variant in variants[1:]:
        union = union | variant
    return msgspec.json.Decoder(union), msgspec.json.Encoder(order="sorted")


def proof_started() -> bool:
    """Whether a block was proved in this process before: msgspec is imported and the decoder built.

    The proof's start (~30 ms, mostly msgspec's import) is what makes the line pass cheaper on a small file; once it is
    paid, a block of any size costs less proved (~3-5 µs a line against the line pass's ~25, issue 28), so a
    long-lived process (a notebook, a test run, a gate over many run sets) proves every block it reads.

    Returns
    -------
    bool
        True once :func:`proves_block` or :func:`proves_spaced_block` has built its decoder in this process.
    """
    return _codec.cache_info().currsize > 0


@cache
def _unset() -> Any:
    """``msgspec.UNSET`` (msgspec imported when a block is first proved)."""
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    return msgspec.UNSET


@cache
def _tags() -> dict[type, str]:
    """The ``outcome`` of each record class of the decoder (its tag)."""
    return {variant: variant.__struct_config__.tag for variant in get_args(_codec()[0].type)}


def _calendar_ok(block: bytes) -> bool:
    """Every timestamp of ``block`` whose day or year needs the calendar names a real day."""
    return not any(validate_field("started_at", stamp.decode("utf-8")) for stamp in set(_CALENDAR.findall(block)))


def _numbers_ok(records: list[Any], block: bytes) -> bool:
    """No number is a float above 0 and below :data:`_FLOAT_SMALL`, and no record sets ``cost_usd`` beside a part.

    The block is already proved canonical (each float spelled as msgspec writes its value), so the
    value decides whether Python writes it alike. One field at a time, in compiled loops: the
    smallest value when every record has a number, else the distinct values (null and absent
    ones are not numbers). Cheaper than searching the block's bytes (0.37 µs a line) for
    ``0.0000`` and a digit before ``e-``, which the ids of many files hold. The cost rule needs a
    look at the bytes (:data:`_COST_BOTH`) only when the block sets ``cost_usd`` on some record and
    a cost part on some record (0.14 µs a line when searched on every block).
    """
    unset = _unset()
    set_somewhere = set()
    for name in _NUMBER_FIELDS:
        values = list(map(attrgetter(name), records))
        try:
            if min(values) >= _FLOAT_SMALL:
                set_somewhere.add(name)
                continue
        except TypeError:  # null or absent values among them (or every one)
            absent = values.count(unset)
            if absent == len(values) or absent + values.count(None) == len(values):
                continue  # absent or null on every record (counted by identity first: cheap)
        set_somewhere.add(name)
        if any(value.__class__ is float and 0 < abs(value) < _FLOAT_SMALL for value in set(values)):
            return False
    if _COST_TOTAL in set_somewhere and not set_somewhere.isdisjoint(_COST_PARTS):
        return _COST_BOTH.search(block) is None
    return True


def _checksums_ok(records: list[Any], block: bytes) -> bool:
    """Every record names a ``sha256:`` checksum, the digest of its canonical JSON without it.

    ``block`` is already proved the canonical JSON of ``records`` (re-encoded byte for byte) and
    free of backslashes, so a string value holds no ``"`` and the text :data:`_MEMBER`
    (``,"checksum":"sha256:``) can only be a record's own checksum member (no object nested in
    the contract has a ``checksum`` field: checked on import), at most once a line. When the
    block holds it exactly once a record, cutting each member out (its 64 digits and closing
    quote follow: every checksum named is 71 characters) gives each line without its checksum:
    the canonical JSON of the record without it, the runner's checksum input. Each such line
    is hashed and every name must be ``sha256:`` and its line's digest (one comparison of the
    joined texts a block); the lines also prove that none is longer than the limit. A block
    where the member is missing from a line or first in its object is not proved (the line
    pass decides).

    This cut costs 0.93 µs a line where encoding the records again without their checksums and
    splitting the text cost 1.11 µs (session 40, 1M runner lines); session 37's cut, line by line
    in Python, had cost 1.33 µs.
    """
    named = list(map(_CHECKSUM_OF, records))
    try:
        if set(map(len, named)) != {_CHECKSUM_TEXT}:
            return False
    except TypeError:  # a record without a checksum (absent or null)
        return False
    parts = block.split(_MEMBER)
    if len(parts) != len(named) + 1:
        return False
    joined = b"".join([parts[0], *map(_AFTER_DIGITS, parts[1:])])
    # The pieces and the joined text are freed as soon as they are used: held to the end, their pages
    # were given back and faulted in again block after block (3x the page faults at 1M lines).
    del parts
    stripped = joined.split(b"\n")
    del joined
    stripped.pop()  # after the last newline
    if max(map(len, stripped)) + _CHECKSUM_BYTES > MAX_LINE_BYTES:
        return False
    sha256: Callable[[bytes], Any] = hashlib.sha256
    return _PREFIX + _PREFIX.join(map(_HEXDIGEST, map(sha256, stripped))) == "".join(named)


def _plain(block: bytes) -> bool:
    """Whole UTF-8 lines without what the proof leaves to the line pass (escapes)."""
    if not block.endswith(b"\n") or b"\\" in block:
        return False
    if _NESTED_NUMBERS and (b"0.0000" in block or _NEGATIVE_EXPONENT.search(block)):  # pragma: no cover - v1 nests none
        return False
    if block.isascii():
        return True
    try:
        block.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def proves_block(block: bytes) -> BlockProof | None:
    """Prove that every line of ``block`` passes the strict line pass with a verified checksum.

    Parameters
    ----------
    block
        Whole lines, each ending with a newline.

    Returns
    -------
    BlockProof or None
        The number of lines and their run set ids; ``None`` when the proof does not hold for
        some line (the line pass then decides, and names what is wrong).
    """
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    if not _plain(block):
        return None
    decoder, encoder = _codec()
    try:
        records = decoder.decode_lines(block)
    except (msgspec.MsgspecError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    if encoder.encode_lines(records) != block or not _calendar_ok(block) or not _numbers_ok(records, block):
        return None
    run_set_ids = frozenset([r.run_set_id for r in records])
    if not _checksums_ok(records, block):
        return None
    return BlockProof(n_lines=len(records), run_set_ids=run_set_ids, records=records)


#: A separator and the space after it, as ``json.dumps`` writes them by default (``", "``, ``": "``).
_SPACED_COMMA, _SPACED_COLON = b", ", b": "


#: A key's closing quote, its colon and the space ``json.dumps`` writes after it.
_SPACED_KEY = b'": '


def spaced(block: bytes) -> bool:
    """Whether ``block`` looks like ``json.dumps``'s default spelling (a space after a key's ``:``): which proof to try.

    Only a choice of proof, never an answer. A line the canonical proof accepts holds no ``": `` (a key's colon
    has no space after it, and a string holding ``"`` is escaped, which neither proof accepts), so a runner block
    goes to :func:`proves_block` even when its strings hold ``": "`` (an error message, a check's name): looking
    for ``": "`` alone sent such a block to :func:`proves_spaced_block`, which cannot prove it, and so to the line
    pass.
    """
    end = block.find(b"\n")
    return block.find(_SPACED_KEY, 0, end if end >= 0 else len(block)) >= 0


def spaced_as_canonical(block: bytes, canonical: bytes) -> bool:
    """Whether ``block`` is ``canonical`` with one space after some of its separators: the byte test of
    :func:`proves_spaced_block`.

    The test: ``canonical`` holds neither ``", "`` nor ``": "``, and ``block`` with each ``", "`` made
    ``","`` and then each ``": "`` made ``":"`` is ``canonical``. Two bytes replaces of the whole
    block, and two searches of ``canonical`` for pairs of bytes it holds at every separator, cost
    ~20 ms of the 42 ms proof of the bundled 3.2 MB SWE-bench file (issue 28 item 2). When
    ``canonical`` holds no space at all (no string of the block holds one: the usual case), the
    same answer comes from cheaper passes: ``block`` without its spaces is ``canonical`` (one
    ``translate``), and every space of ``block`` follows a ``,`` or a ``:`` (its spaces, the
    bytes dropped, are as many as its ``", "`` and ``": "``): ~9 ms. Equal because, ``canonical``
    holding no space, the replaces give ``canonical`` exactly when they take out every space, that
    is when each space follows a ``,`` or ``:`` (a space after a space or after another byte
    survives both replaces, and a taken-out space never puts a ``:`` before another space), and
    then they take out what ``translate`` takes out. Otherwise the test runs as written. Both ways
    are compared on hostile blocks in tests/records/test_spaced_as_canonical.py.

    Parameters
    ----------
    block
        Whole lines, as read.
    canonical
        The block's records encoded again, with sorted keys and no spaces between tokens.

    Returns
    -------
    bool
        Whether the byte test holds.
    """
    if b" " not in canonical:
        squeezed = block.translate(None, b" ")
        return squeezed == canonical and len(block) - len(squeezed) == block.count(_SPACED_COMMA) + block.count(
            _SPACED_COLON
        )
    return (
        _SPACED_COMMA not in canonical
        and _SPACED_COLON not in canonical
        and block.replace(_SPACED_COMMA, b",").replace(_SPACED_COLON, b":") == canonical
    )


def proves_spaced_block(block: bytes) -> BlockProof | None:
    """Prove that every line of ``block`` passes the strict line pass, for lines without checksums written by
    ``json.dumps(record, sort_keys=True)`` (the default separators ``", "`` and ``": "``).

    Files of records from other tools (the bundled SWE-bench Verified leaderboard, for one) are often
    written so. The proof is :func:`proves_block`'s without the checksum: ``msgspec`` decodes the block
    into the contract's structs (every type, enum, minimum, pattern and rule across fields as types),
    and the records encoded again with sorted keys (the canonical text ``C``) must be the block with the
    one space after every ``", "`` and ``": "`` taken out, byte for byte, while ``C`` itself holds no
    ``", "`` nor ``": "``. Then every space taken out stood between two tokens, not inside a string (a
    string of the block with such a space would be decoded with it and written with it in ``C``), and no
    other byte differs (two spaces would leave one behind, which ``C`` does not hold): the block is ``C``
    with a space after some separators, the same tokens, so the same values under any JSON reader, and
    what rules out duplicate keys, ``NaN``/``Infinity``/overflowing literals, a byte-order mark, other
    whitespace, ``CRLF`` and blank lines for ``C`` rules them out for the block. The calendar and the
    cost rule are read on ``C``; no line may be longer than
    :data:`~gatestats_runner.contract.MAX_LINE_BYTES` and no record may name a checksum (such a line is
    left to the line pass, which verifies it).

    Parameters
    ----------
    block
        Whole lines, each ending with a newline.

    Returns
    -------
    BlockProof or None
        The number of lines and their run set ids (``checksummed`` false: no line has a checksum);
        ``None`` when the proof does not hold for some line (the line pass then decides).
    """
    import msgspec  # noqa: PLC0415 - ~30 ms of import: only when a block is worth proving

    if not _plain(block):
        return None
    decoder, encoder = _codec()
    try:
        records = decoder.decode_lines(block)
    except (msgspec.MsgspecError, UnicodeDecodeError, ValueError, RecursionError):
        return None
    canonical = encoder.encode_lines(records)
    if (
        not spaced_as_canonical(block, canonical)
        or set(map(_CHECKSUM_OF, records)) - {_unset()}  # a checksum (or null) named: the line pass verifies it
        or (len(block) > MAX_LINE_BYTES and max(map(len, block.split(b"\n"))) > MAX_LINE_BYTES)
        or not _calendar_ok(canonical)
        or not _numbers_ok(records, canonical)
    ):
        return None
    return BlockProof(
        n_lines=len(records),
        run_set_ids=frozenset([r.run_set_id for r in records]),
        records=records,
        checksummed=False,
    )
