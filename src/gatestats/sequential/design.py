"""The sequential design: the policy's ``[sequential]`` table, read before the first trial.

A sequential gate runs cases in batches and reads its rules after every batch (see
docs/sequential.md). The design fixes, before execution, the most cases ever run (the fixed-size
design it replaces), the trials per case, the batch size, the confidence-sequence method and the
share of each rule's alpha spent on stopping for ``pass``.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal, TypeAlias, get_args

from gatestats._typing import JSONObject

__all__ = [
    "SEQUENTIAL_KEYS",
    "SEQUENTIAL_METHODS",
    "SequentialDesign",
    "SequentialMethod",
    "parse_sequential_table",
    "sequential_problems",
]

#: ``betting``: the hedged betting capital process (Waudby-Smith & Ramdas 2024, section 4);
#: ``empirical_bernstein``: the predictable plug-in empirical-Bernstein sequence (their section 3.2);
#: ``hoeffding``: the predictable plug-in Hoeffding sequence (their section 3.1).
SequentialMethod: TypeAlias = Literal["betting", "empirical_bernstein", "hoeffding"]
SEQUENTIAL_METHODS: Final[tuple[SequentialMethod, ...]] = get_args(SequentialMethod)

#: The keys of the ``[sequential]`` table, in the order the documentation lists them.
SEQUENTIAL_KEYS: Final[tuple[str, ...]] = ("max_cases", "trials", "batch_cases", "method", "alpha_pass_share")

#: Upper limits that keep a typo from becoming a run that never ends.
_MAX_CASES: Final = 10_000_000
_MAX_TRIALS: Final = 10_000


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialDesign:
    """A sequential design: at most ``max_cases`` cases, run ``batch_cases`` at a time.

    Parameters
    ----------
    max_cases
        The most cases ever run (the fixed-size design this replaces), ``>= 1``.
    trials
        Trials per case (every case of a batch gets all of them), ``>= 1``.
    batch_cases
        Cases per batch, ``1 <= batch_cases <= max_cases``; the last batch may be shorter.
    method
        The confidence sequence / e-process that decides each rule (:data:`SequentialMethod`).
    alpha_pass_share
        The share ``s`` of each rule's alpha spent on stopping for ``pass``, in (0, 1); the rest,
        ``1 - s``, is spent on stopping for ``fail``.

    Examples
    --------
    >>> SequentialDesign(max_cases=50, trials=3, batch_cases=20).checkpoints()
    (20, 40, 50)
    """

    max_cases: int
    trials: int
    batch_cases: int
    method: SequentialMethod = "betting"
    alpha_pass_share: float = 0.5

    def __post_init__(self) -> None:
        problems = _problems(self.to_dict())
        if problems:
            key, message = problems[0]
            msg = f"sequential design: key {key!r}: {message}"
            raise ValueError(msg)

    def checkpoints(self) -> tuple[int, ...]:
        """The cumulative number of cases at the end of each batch.

        Returns
        -------
        tuple[int, ...]
            ``batch_cases, 2 * batch_cases, ...``, ending with ``max_cases`` (the last batch may be
            shorter than the others).
        """
        full = tuple(range(self.batch_cases, self.max_cases + 1, self.batch_cases))
        return full if full and full[-1] == self.max_cases else (*full, self.max_cases)

    def to_dict(self) -> JSONObject:
        """JSON-ready form (as the verdict binds it).

        Returns
        -------
        JSONObject
            The five keys of the ``[sequential]`` table.
        """
        return asdict(self)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _int_problem(key: str, value: object, high: int) -> str | None:
    if not _is_int(value):
        return f"expected an integer (got {type(value).__name__} {value!r})"
    if not 1 <= value <= high:  # type: ignore[operator]
        return f"expected an integer in [1, {high}] (got {value!r})"
    return None


def _share_problem(value: object) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return f"expected a number in (0, 1) (got {type(value).__name__} {value!r})"
    if not (math.isfinite(value) and 0 < value < 1):
        return f"expected a number in (0, 1) (got {value!r})"
    return None


def _problems(table: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every problem of a ``[sequential]`` table, as ``(key, message)`` in key order."""
    found: list[tuple[str, str]] = [
        (key, f"unknown key (expected one of: {', '.join(SEQUENTIAL_KEYS)})")
        for key in table
        if key not in SEQUENTIAL_KEYS
    ]
    for key, high in (("max_cases", _MAX_CASES), ("trials", _MAX_TRIALS), ("batch_cases", _MAX_CASES)):
        if key not in table:
            found.append((key, "required key is missing"))
        elif (problem := _int_problem(key, table[key], high)) is not None:
            found.append((key, problem))
    batch, most = table.get("batch_cases"), table.get("max_cases")
    valid = not any(key in ("batch_cases", "max_cases") for key, _ in found)
    if valid and isinstance(batch, int) and isinstance(most, int) and batch > most:
        found.append(("batch_cases", f"must be at most max_cases = {most} (got {batch})"))
    method = table.get("method", "betting")
    if method not in SEQUENTIAL_METHODS:
        choices = ", ".join(repr(m) for m in SEQUENTIAL_METHODS)
        found.append(("method", f"expected one of {choices} (got {method!r})"))
    if (problem := _share_problem(table.get("alpha_pass_share", 0.5))) is not None:
        found.append(("alpha_pass_share", problem))
    return found


def sequential_problems(table: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every problem of a ``[sequential]`` table (the policy reader reports each with its line).

    Parameters
    ----------
    table
        The parsed TOML table.

    Returns
    -------
    list[tuple[str, str]]
        ``(key, message)`` pairs; empty when the table is a valid design.
    """
    return _problems(table)


def parse_sequential_table(table: Mapping[str, Any]) -> SequentialDesign:
    """Read a policy's ``[sequential]`` table.

    Parameters
    ----------
    table
        The parsed TOML table: ``max_cases``, ``trials``, ``batch_cases`` (required integers),
        ``method`` (default ``"betting"``), ``alpha_pass_share`` (default 0.5).

    Returns
    -------
    SequentialDesign
        The checked design.

    Raises
    ------
    ValueError
        A key is unknown, missing, of the wrong type or out of range; the message names the first
        such key (:func:`sequential_problems` lists them all).

    Examples
    --------
    >>> parse_sequential_table({"max_cases": 200, "trials": 3, "batch_cases": 20}).method
    'betting'
    >>> parse_sequential_table({"max_cases": 20, "trials": 3, "batch_cases": 40})
    Traceback (most recent call last):
    ValueError: sequential design: key 'batch_cases': must be at most max_cases = 20 (got 40)
    """
    if not isinstance(table, Mapping):
        msg = f"sequential design: expected a table (got {type(table).__name__} {table!r})"
        raise ValueError(msg)  # the policy reader maps ValueError to a PolicyError
    problems = _problems(table)
    if problems:
        key, message = problems[0]
        msg = f"sequential design: key {key!r}: {message}"
        raise ValueError(msg)
    return SequentialDesign(
        max_cases=table["max_cases"],
        trials=table["trials"],
        batch_cases=table["batch_cases"],
        method=table.get("method", "betting"),
        alpha_pass_share=float(table.get("alpha_pass_share", 0.5)),
    )
