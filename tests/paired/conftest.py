"""Builders of paired run records for the tests of ``gatestats.paired``."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence

import polars as pl
import pytest

AsFrame = Callable[[pl.DataFrame], pl.DataFrame | pl.LazyFrame]
FRAME_KINDS: dict[str, AsFrame] = {"DataFrame": lambda frame: frame, "LazyFrame": lambda frame: frame.lazy()}

SCHEMA = {
    "system": pl.String,
    "case_id": pl.String,
    "case_version": pl.String,
    "case_group": pl.String,
    "trial": pl.Int64,
    "attempt": pl.Int64,
    "outcome": pl.String,
}


def table_records(a: int, b: int, c: int, d: int, *, baseline: str = "base", candidate: str = "cand") -> pl.DataFrame:
    """One trial per case: a both passed, b baseline only, c candidate only, d both failed."""
    cells = [(1, 1)] * a + [(1, 0)] * b + [(0, 1)] * c + [(0, 0)] * d
    rows = []
    for i, (xb, xc) in enumerate(cells):
        for system, x in ((baseline, xb), (candidate, xc)):
            rows.append((system, f"case-{i}", None, None, 0, 0, "passed" if x else "failed"))
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


def trial_records(
    outcomes: Mapping[str, Sequence[Sequence[int]]],
    *,
    groups: Sequence[str | None] | None = None,
    version: str | None = None,
) -> pl.DataFrame:
    """Several trials per case: ``outcomes[system][case] = [1, 0, ...]`` (1 passed, 0 failed, -1 infra)."""
    names = {1: "passed", 0: "failed", -1: "infra_error", 2: "resource_killed"}
    rows = []
    for system, cases in outcomes.items():
        for i, trials in enumerate(cases):
            group = None if groups is None else groups[i]
            for t, x in enumerate(trials):
                rows.append((system, f"case-{i}", version, group, t, 0, names[x]))
    return pl.DataFrame(rows, schema=SCHEMA, orient="row")


@pytest.fixture(params=sorted(FRAME_KINDS))
def as_frame(request: pytest.FixtureRequest) -> AsFrame:
    """Each frame-taking test runs with a DataFrame and with a LazyFrame."""
    return FRAME_KINDS[request.param]
