"""The doubling-then-bisection search behind every "about N cases are needed"."""

from __future__ import annotations

from gatestats.paired.search import fewest


def test_fewest_finds_the_first_size_that_suffices_from_start() -> None:
    calls: list[int] = []

    def ok(m: int) -> bool:
        calls.append(m)
        return m >= 37

    assert fewest(ok, 5, limit=1000) == 37
    assert calls[:4] == [5, 10, 20, 40]  # doubling from the start, then bisection below 40


def test_fewest_returns_start_when_start_already_suffices() -> None:
    assert fewest(lambda m: m >= 3, 12, limit=1000) == 12
    assert fewest(lambda m: True, 0, limit=1000) == 1


def test_fewest_gives_up_past_the_limit() -> None:
    assert fewest(lambda m: m >= 5000, 1, limit=1000) is None
    assert fewest(lambda m: m >= 1024, 1, limit=1024) == 1024
