"""``compare``'s one-trial path in Python numbers (paired/small.py) gives numpy's path's comparison, bit for bit.

Issue 28 item 2: ``gatestats compare`` with one trial per case computes without numpy while numpy is not loaded.
Here numpy is loaded, so each check calls both paths itself: :func:`small_comparison` and numpy's
``compare_pair(pair_cases(...))``. Every field of the two :class:`Comparison` objects is compared by its bits
(``repr`` of every float), the per-case differences too; outside the path :func:`small_comparison` must return
``None`` (numpy's path then answers, or raises, as before). tests/cli/test_compare_without_numpy.py checks the
command on the bundled data, byte for byte, and that it imports no numpy.
"""

from __future__ import annotations

import dataclasses
import json
import random
from typing import Any

import polars as pl
import pytest

from gatestats.paired import ComparisonOptions
from gatestats.paired.binomial import EXACT_MAX_TRIALS
from gatestats.paired.compare import compare_pair
from gatestats.paired.pairing import NoPairedCasesError, pair_cases
from gatestats.paired.small import small_comparison
from tests.simulations import reps

#: Random record sets compared between the two paths (an identity oracle, issue 28's rule: 30 in the suite, the
#: fewest at which the 14 breaks planted by h48-compare still fail this file; all 240 on demand).
COMPARISON_DRAWS = reps(suite=30, full=240)
#: Characters of the random case ids: upper before lower case, digits, punctuation, and non-ASCII ones whose
#: UTF-8 bytes and code points sort alike (polars sorts by the one, Python by the other).
_ID_CHARACTERS = "AZaz09-_.:é中😀Ωß"
_LEVELS = (0.5, 0.8, 0.9, 0.95, 0.99, 0.999)


def _bits(value: Any) -> str:
    """Every float of ``value`` by its bits (JSON with ``repr`` floats)."""
    return json.dumps(value, sort_keys=True, default=repr)


def _fields(result: Any) -> dict[str, Any]:
    """Every field of a comparison, the nested results as dicts, the per-case differences as a list."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(result):
        value = getattr(result, f.name)
        if f.name == "_diffs":
            value = [float(x) for x in value]
        elif dataclasses.is_dataclass(value):
            value = {g.name: repr(getattr(value, g.name)) for g in dataclasses.fields(value)}
        out[f.name] = repr(value) if isinstance(value, float) else value
    return out


def _frame(cells: dict[str, dict[str, str]], **extra: Any) -> pl.DataFrame:
    """Records: system -> case id -> outcome, one trial each (``extra``: more columns, the same on every record)."""
    rows = [
        {"system": system, "case_id": case, "trial": 0, "attempt": 0, "outcome": outcome}
        for system, cases in cells.items()
        for case, outcome in cases.items()
    ]
    frame = pl.DataFrame(rows, schema={"system": pl.String, "case_id": pl.String, "trial": pl.Int64,
                                       "attempt": pl.Int64, "outcome": pl.String})  # fmt: skip
    return frame.with_columns(
        case_version=pl.lit(extra.get("case_version"), dtype=pl.String),
        case_group=pl.lit(extra.get("case_group"), dtype=pl.String),
    )


def _both(frame: pl.DataFrame | pl.LazyFrame, options: ComparisonOptions, **how: Any) -> tuple[Any, Any]:
    """(floats path, numpy's path) on ``frame``; each a Comparison or the exception it raised."""
    settings = {"metric": "pass_hat_k", "k": 1, "shared_versions_only": False, "system_column": "system", **how}
    outcomes = []
    for path in ("floats", "numpy"):
        try:
            if path == "floats":
                outcomes.append(small_comparison(frame, ("A", "B"), options, **settings))
            else:
                paired = pair_cases(frame, baseline="A", candidate="B", **settings)
                outcomes.append(compare_pair(paired, options))
        except (ValueError, TypeError) as error:
            outcomes.append(error)
    return outcomes[0], outcomes[1]


def _as_json(result: Any) -> str:
    """``to_dict()`` by its bits, or the error it raised (both paths share the one computing the reference methods:
    the transformed Wilson odds ratio divides by zero at b = 0, one-sided, level 0.5, before this change too)."""
    try:
        return _bits(result.to_dict())
    except ArithmeticError as error:
        return f"{type(error).__name__}: {error}"


def _assert_same(floats: Any, numpy: Any) -> None:
    if isinstance(numpy, Exception):
        assert type(floats) is type(numpy)
        assert str(floats) == str(numpy)
        return
    assert floats is not None, "the floats path refused a comparison it offers"
    assert type(floats._diffs) is tuple  # each path ran
    assert numpy._diffs is not None
    assert _bits(_fields(floats)) == _bits(_fields(numpy))
    assert _as_json(floats) == _as_json(numpy)
    assert floats == numpy


def _random_id(rng: random.Random) -> str:
    return "".join(rng.choice(_ID_CHARACTERS) for _ in range(rng.randint(1, 4)))


def _random_cells(rng: random.Random) -> dict[str, dict[str, str]]:
    """Two systems A, B (and sometimes a third) on 1-80 cases: shared, or run by one side only."""
    cases = sorted({_random_id(rng) for _ in range(rng.randint(1, 80))})
    p_a, p_b, shared = rng.random(), rng.random(), rng.choice((1.0, 0.9, 0.6))
    cells: dict[str, dict[str, str]] = {"A": {}, "B": {}, "C": {}}
    for case in cases:
        sides = ("A", "B") if rng.random() < shared else (rng.choice(("A", "B")),)
        for side in sides:
            cells[side][case] = "passed" if rng.random() < (p_a if side == "A" else p_b) else "failed"
        if rng.random() < 0.2:
            cells["C"][case] = "passed"
    return cells


def _random_options(rng: random.Random) -> ComparisonOptions:
    alternative = rng.choice(("two-sided", "two-sided", "less", "greater"))
    return ComparisonOptions(
        alternative=alternative,
        confidence_level=rng.choice((*_LEVELS, round(rng.uniform(0.5, 0.999), 4))),
        test=rng.choice(("auto", "midp", "exact")),  # midp one-sided: refused by both, with the same message
        interval=rng.choice(("auto", "tango", "scas", "newcombe")),
        alpha=rng.choice((None, None, 0.05, 0.01, round(rng.uniform(0.001, 0.5), 4))),
        seed=rng.randint(0, 10),
    )


@pytest.mark.parametrize("seed", range(COMPARISON_DRAWS))
def test_the_floats_path_gives_numpys_comparison_bit_for_bit(seed: int) -> None:
    rng = random.Random(seed)
    frame = _frame(_random_cells(rng))
    options = _random_options(rng)
    metric = rng.choice(("pass_hat_k", "pass_at_k"))
    floats, numpy = _both(frame.lazy() if seed % 2 else frame, options, metric=metric)
    _assert_same(floats, numpy)


def _table(a: int, b: int, c: int, d: int) -> dict[str, dict[str, str]]:
    """A's and B's outcomes on a + b + c + d cases: both passed, A only, B only, neither."""
    cells: dict[str, dict[str, str]] = {"A": {}, "B": {}}
    for i, (x, y) in enumerate([(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d):
        cells["A"][f"case-{i:05d}"] = "passed" if x else "failed"
        cells["B"][f"case-{i:05d}"] = "passed" if y else "failed"
    return cells


@pytest.mark.parametrize(
    "table",
    [
        (5, 0, 0, 7),  # no discordant case
        (0, 6, 9, 0),  # every case discordant
        (0, 0, 1, 0),  # one case
        (1, 0, 0, 0),  # one case, concordant
        (3, 4, 4, 3),  # b = c
        (0, 0, 0, 9),  # all failed
        (9, 0, 0, 0),  # all passed
        (1, 1, 7, 12),  # Bentur et al. (2009)
        (0, 30, 0, 0),  # the candidate loses every case
    ],
)
@pytest.mark.parametrize("alternative", ["two-sided", "less", "greater"])
@pytest.mark.parametrize("interval", ["auto", "tango", "scas", "newcombe"])
def test_the_floats_path_gives_numpys_comparison_at_the_edges(
    table: tuple[int, int, int, int], alternative: str, interval: str
) -> None:
    for test in ("auto", "midp", "exact"):
        options = ComparisonOptions(alternative=alternative, interval=interval, test=test)  # type: ignore[arg-type]
        _assert_same(*_both(_frame(_table(*table)), options))


def test_the_floats_path_refuses_what_it_does_not_offer() -> None:
    cells = _table(3, 2, 5, 4)
    plain = _frame(cells)
    two_trials = pl.concat([plain, plain.with_columns(trial=pl.lit(1, dtype=pl.Int64))])
    infra = plain.with_columns(outcome=pl.when(pl.col("case_id") == "case-00000").then(pl.lit("infra_error"))
                               .otherwise(pl.col("outcome")))  # fmt: skip
    refused: list[tuple[Any, ComparisonOptions, dict[str, Any]]] = [
        (_frame(cells, case_version="v1"), ComparisonOptions(), {}),
        (_frame(cells, case_group="g"), ComparisonOptions(), {}),
        (two_trials, ComparisonOptions(), {}),
        (infra, ComparisonOptions(), {}),  # a case without a valid trial: n = 0
        (plain, ComparisonOptions(margin=0.1), {}),
        (plain, ComparisonOptions(test="permutation"), {}),
        (plain, ComparisonOptions(interval="bootstrap"), {}),
        (plain, ComparisonOptions(interval="clt"), {}),
        (plain, ComparisonOptions(), {"k": 2}),
        (plain, ComparisonOptions(), {"shared_versions_only": True}),
    ]
    for frame, options, how in refused:  # numpy's path answers these as before (the paired suite's tests)
        settings = {"metric": "pass_hat_k", "k": 1, "shared_versions_only": False, "system_column": "system", **how}
        assert small_comparison(frame, ("A", "B"), options, **settings) is None, (options, how)


def test_the_floats_path_leaves_every_refusal_to_numpys_path() -> None:
    # No shared case, a system without records, both systems the same, k not an int: None here, numpy's error there.
    apart = _frame({"A": {"x": "passed"}, "B": {"y": "failed"}})
    with pytest.raises(NoPairedCasesError):
        pair_cases(apart, baseline="A", candidate="B")
    table = _frame(_table(1, 1, 1, 1))
    cases: list[tuple[pl.DataFrame, tuple[str, str], Any]] = [
        (apart, ("A", "B"), 1),
        (_frame({"A": {"x": "passed"}}), ("A", "B"), 1),
        (table, ("A", "A"), 1),
        (table, ("A", "B"), True),
        (table, ("A", "B"), 1.0),
    ]
    for frame, systems, k in cases:
        found = small_comparison(
            frame, systems, ComparisonOptions(), metric="pass_hat_k", k=k, shared_versions_only=False,
            system_column="system",
        )  # fmt: skip
        assert found is None, (systems, k)


def test_more_discordant_cases_than_the_exact_binomial_takes_go_to_numpys_path() -> None:
    # Above EXACT_MAX_TRIALS discordant units numpy's path asks scipy's binom; the floats path steps aside.
    frame = _frame(_table(0, EXACT_MAX_TRIALS // 2 + 1, EXACT_MAX_TRIALS // 2, 0))
    floats = small_comparison(frame, ("A", "B"), ComparisonOptions(), metric="pass_hat_k", k=1,
                              shared_versions_only=False, system_column="system")  # fmt: skip
    assert floats is None
    at_most = _frame(_table(0, EXACT_MAX_TRIALS // 2, EXACT_MAX_TRIALS // 2, 1))
    _assert_same(*_both(at_most, ComparisonOptions()))
