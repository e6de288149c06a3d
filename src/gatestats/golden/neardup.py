"""Near-duplicate cases: normalised features, word shingles, MinHash and exact Jaccard.

A case's features are its request text, its tool calls and its starting snapshot, normalised (lower
case, whitespace collapsed, every run of digits replaced by ``0``) so that the same failure on a
35-day and a 41-day order look alike. Each part becomes word 3-shingles with a prefix naming the
part. A MinHash signature (Broder 1997) shortlists candidates cheaply; the exact Jaccard index of
the shingle sets decides, so the decision is exact and deterministic.

The signature uses no random generator: each shingle is hashed once with BLAKE2b into two 64-bit
words ``h1, h2``; hash function ``i`` is the SplitMix64 finaliser of ``h1 + i * h2 + seed``
(double hashing, Kirsch and Mitzenmacher 2006), computed for all ``i`` at once with numpy.

References
----------
Broder, A. Z. (1997). On the resemblance and containment of documents. Compression and Complexity
of Sequences, 21-29.
Kirsch, A., & Mitzenmacher, M. (2006). Less hashing, same performance: building a better Bloom
filter. ESA 2006, LNCS 4168, 456-467.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from gatestats._lazy import lazy_module
from gatestats._typing import JSONObject
from gatestats.errors import RecordFileError
from gatestats.io.jsonfile import parse_json_document

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt
else:
    # numpy on first use (issue 28 item 2): only the signatures need it, and the store imports this module for
    # its features and twins, so `gatestats cases list` (stale, retire ...) loaded numpy (~0.08 CPU-s) for nothing.
    np = lazy_module("numpy")

__all__ = [
    "DEFAULT_THRESHOLD",
    "NUM_PERM",
    "Twin",
    "exact_jaccard",
    "features",
    "find_twins",
    "minhash",
    "minhash_jaccard",
    "normalise",
    "shingles",
]

NUM_PERM = 128
DEFAULT_THRESHOLD = 0.5
#: The MinHash estimate may undershoot; candidates within this margin are checked exactly.
_SHORTLIST_MARGIN = 0.15
_DIGITS = re.compile(r"\d+")
_WORD = re.compile(r"[a-z0-9_]+")
_MASK = (1 << 64) - 1


def normalise(text: str) -> list[str]:
    """Lower-case words with every digit run replaced by ``0``.

    Parameters
    ----------
    text
        Any text.

    Returns
    -------
    list of str
        The words in order.

    Examples
    --------
    >>> normalise("Order A-1009 was delivered 41 days ago.")
    ['order', 'a', '0', 'was', 'delivered', '0', 'days', 'ago']
    """
    return _WORD.findall(_DIGITS.sub("0", text.lower()))


def shingles(words: Sequence[str], *, k: int = 3, prefix: str = "") -> set[str]:
    """The set of ``k``-word shingles of ``words`` (the whole sequence when shorter than ``k``).

    Parameters
    ----------
    words
        The words in order.
    k
        Words per shingle.
    prefix
        Put before each shingle (which feature it comes from).

    Returns
    -------
    set of str
        The shingles.

    Examples
    --------
    >>> sorted(shingles(["a", "b", "c", "d"], k=3, prefix="r:"))
    ['r:a b c', 'r:b c d']
    """
    if not words:
        return set()
    if len(words) <= k:
        return {prefix + " ".join(words)}
    return {prefix + " ".join(words[i : i + k]) for i in range(len(words) - k + 1)}


def _flatten(value: Any, path: str = "") -> Iterable[tuple[str, str]]:
    if isinstance(value, dict):
        for key in sorted(value):
            yield from _flatten(value[key], f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        for item in value:
            yield from _flatten(item, f"{path}[]")
    else:
        yield path, str(value)


def features(
    *, request: str, tool_calls: Sequence[Mapping[str, Any]], snapshot: Mapping[str, bytes | str]
) -> frozenset[str]:
    """The shingle set of a case: request words (``r:``), tool calls (``t:``), snapshot (``s:``).

    A tool call contributes its name and one token per argument (key and normalised value); a JSON
    snapshot file one token per leaf (path and normalised value); any other file its word shingles.

    Parameters
    ----------
    request
        The user's request.
    tool_calls
        The tool calls, each with ``name`` and ``arguments``.
    snapshot
        Relative path to file content.

    Returns
    -------
    frozenset of str
        The shingles.
    """
    out = set(shingles(normalise(request), prefix="r:"))
    for call in tool_calls:
        name = str(call.get("name"))
        out.add(f"t:{name}")
        arguments = call.get("arguments") or {}
        for path, value in _flatten(arguments):
            out.add(f"t:{name}.{path}={' '.join(normalise(value))}")
    for file_name, content in sorted(snapshot.items()):
        text = content.decode("utf-8", errors="replace") if isinstance(content, bytes) else content
        try:
            parsed = parse_json_document(text.encode("utf-8", errors="replace"), source=file_name)
        except RecordFileError:  # not strict JSON, or nested too deep: read as text
            out |= shingles(normalise(text), prefix=f"s:{file_name}:")
            continue
        for path, value in _flatten(parsed):
            out.add(f"s:{file_name}:{path}={' '.join(normalise(value))}")
    return frozenset(out)


def exact_jaccard(a: Iterable[str], b: Iterable[str]) -> float:
    """``|A ∩ B| / |A ∪ B|``; two empty sets are identical (1.0).

    Parameters
    ----------
    a, b
        The two sets.

    Returns
    -------
    float
        In [0, 1].

    Examples
    --------
    >>> exact_jaccard({"x", "y"}, {"y", "z"})
    0.3333333333333333
    """
    sa, sb = set(a), set(b)
    union = sa | sb
    return 1.0 if not union else len(sa & sb) / len(union)


def _splitmix64(x: npt.NDArray[np.uint64]) -> npt.NDArray[np.uint64]:
    x = x + np.uint64(0x9E3779B97F4A7C15)
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def minhash(items: Iterable[str], *, num_perm: int = NUM_PERM, seed: int = 0) -> npt.NDArray[np.uint64]:
    """MinHash signature of a set of strings: ``num_perm`` minima, one per hash function.

    The empty set's signature is all ``2**64 - 1``.

    Parameters
    ----------
    items
        The set.
    num_perm
        The number of hash functions.
    seed
        Chooses the hash functions (the same seed for signatures that are compared).

    Returns
    -------
    numpy.ndarray of uint64
        The signature.

    Raises
    ------
    ValueError
        ``num_perm`` is not positive.
    """
    values = sorted(set(items))
    if num_perm < 1:
        msg = f"num_perm must be positive (got {num_perm})"
        raise ValueError(msg)
    if not values:
        return np.full(num_perm, np.uint64(_MASK), dtype=np.uint64)
    h = np.array(
        [np.frombuffer(hashlib.blake2b(v.encode("utf-8"), digest_size=16).digest(), dtype="<u8") for v in values],
        dtype=np.uint64,
    )
    h1, h2 = h[:, :1], h[:, 1:] | np.uint64(1)
    index = np.arange(num_perm, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        mixed = _splitmix64(h1 + index * h2 + np.uint64(seed & _MASK))
    return np.asarray(mixed.min(axis=0), dtype=np.uint64)


def minhash_jaccard(a: npt.NDArray[np.uint64], b: npt.NDArray[np.uint64]) -> float:
    """The MinHash estimate of Jaccard: the share of equal signature positions.

    Parameters
    ----------
    a, b
        Two signatures made with the same ``num_perm`` and seed.

    Returns
    -------
    float
        In [0, 1].

    Raises
    ------
    ValueError
        The signatures differ in length.
    """
    if a.shape != b.shape:
        msg = f"signatures differ in length ({a.shape[0]} and {b.shape[0]})"
        raise ValueError(msg)
    return float(np.mean(a == b))


@dataclass(frozen=True, slots=True, kw_only=True)
class Twin:
    """A near-duplicate found for a new case: the other case, its split, and the similarity."""

    case_id: str
    split: str
    status: str
    jaccard: float
    minhash_estimate: float

    def to_dict(self) -> JSONObject:
        """The twin as JSON (similarities rounded to 4 places).

        Returns
        -------
        dict
            ``case_id``, ``split``, ``status``, ``jaccard`` and ``minhash_estimate``.
        """
        return {
            "case_id": self.case_id,
            "split": self.split,
            "status": self.status,
            "jaccard": round(self.jaccard, 4),
            "minhash_estimate": round(self.minhash_estimate, 4),
        }


def find_twins(
    new: frozenset[str],
    others: Mapping[str, tuple[frozenset[str], str, str]],
    *,
    threshold: float = DEFAULT_THRESHOLD,
) -> tuple[Twin, ...]:
    """Cases among ``others`` (id -> (features, split, status)) whose Jaccard with ``new`` ≥ ``threshold``.

    Sorted by similarity, highest first, then by id.

    Parameters
    ----------
    new
        The new case's features (:func:`features`).
    others
        The cases to compare with.
    threshold
        The least exact Jaccard similarity of a twin, in (0, 1].

    Returns
    -------
    tuple of Twin
        The twins.

    Raises
    ------
    ValueError
        ``threshold`` is outside (0, 1].
    """
    if not 0.0 < threshold <= 1.0:
        msg = f"threshold must lie in (0, 1] (got {threshold})"
        raise ValueError(msg)
    signature = minhash(new)
    found = []
    for case_id, (feats, split, status) in sorted(others.items()):
        estimate = minhash_jaccard(signature, minhash(feats))
        if estimate < threshold - _SHORTLIST_MARGIN:
            continue
        jaccard = exact_jaccard(new, feats)
        if jaccard >= threshold:
            found.append(Twin(case_id=case_id, split=split, status=status, jaccard=jaccard, minhash_estimate=estimate))
    return tuple(sorted(found, key=lambda t: (-t.jaccard, t.case_id)))
