"""Hypothesis example counts: the whole suite's, and the inner loop's smaller share of them.

The whole suite (``python3 dev.py test``, CI) runs every property test at the count written beside it:
``@settings(max_examples=examples(300))`` is 300 examples. The inner loop (``python3 dev.py test --fast``)
loads the profile :data:`FAST_PROFILE` (``--hypothesis-profile gatestats-fast``), under which every count is a
quarter of the suite's, never below :data:`FLOOR` (a count already below it is kept). No property test is
skipped in either: each still runs, on fewer examples in the inner loop.

Hand-written random loops follow the same rule through :func:`draws`: a test that loops over seeds, random
gates or draws states its whole-suite count as ``draws(n)`` (``range(draws(40))``, ``GATE_DRAWS =
draws(reps(...))``); the whole suite runs ``n``, the inner loop a quarter of it, never below the floor the test
states (``draws(16, floor=10)``; :data:`FLOOR` when it states none). A minimum the test computes from its count
("at least 60 rows per 24 draws") is scaled to the count it runs.
"""

from __future__ import annotations

from hypothesis import HealthCheck, settings

#: The profile of the whole suite (loaded by tests/conftest.py): deadlines off (wall-clock deadlines are
#: flaky on a loaded 2-core machine), hypothesis' default count of 100 examples where a test states none.
SUITE_PROFILE = "gatestats"
#: The inner loop's profile: the same, at a quarter of the examples.
FAST_PROFILE = "gatestats-fast"
#: The examples of a test that states no count, in the whole suite (hypothesis' default).
SUITE_EXAMPLES = 100
#: ... and in the inner loop.
FAST_EXAMPLES = 25
#: The fewest examples the inner loop runs of a property stated at this many or more.
FLOOR = 10

settings.register_profile(
    SUITE_PROFILE, deadline=None, suppress_health_check=[HealthCheck.too_slow], max_examples=SUITE_EXAMPLES
)
settings.register_profile(FAST_PROFILE, parent=settings.get_profile(SUITE_PROFILE), max_examples=FAST_EXAMPLES)


def _share(count: int, floor: int, profile: settings | None) -> int:
    """``count`` under the suite's profile; otherwise ``count`` times the loaded profile's share, at least ``floor``."""
    if count < 1:
        raise ValueError(f"a count is at least 1, got {count}")
    active = settings.default if profile is None else profile
    if active.max_examples >= SUITE_EXAMPLES:
        return count
    return max(min(count, floor), round(count * active.max_examples / SUITE_EXAMPLES))


def examples(count: int, profile: settings | None = None) -> int:
    """``count`` examples under the suite's profile; ``count`` scaled by the loaded profile's share otherwise.

    ``profile`` defaults to the loaded one (``settings.default``), read when the test module is imported,
    which is after pytest has loaded ``--hypothesis-profile``.

    >>> examples(300, settings.get_profile(SUITE_PROFILE)), examples(300, settings.get_profile(FAST_PROFILE))
    (300, 75)
    >>> examples(20, settings.get_profile(FAST_PROFILE)), examples(6, settings.get_profile(FAST_PROFILE))
    (10, 6)
    """
    return _share(count, FLOOR, profile)


def draws(count: int, *, floor: int = FLOOR, profile: settings | None = None) -> int:
    """The draws of a hand-written random loop (seeds, random gates): ``count`` in the whole suite, a quarter of it
    in the inner loop (the same share as :func:`examples`), never below ``floor`` (a count below it is kept).

    ``profile`` defaults to the loaded one, as for :func:`examples`. The first ``draws(n)`` seeds of the suite's
    ``n`` are run: the inner loop's draws are a prefix of the suite's.

    >>> suite, fast = settings.get_profile(SUITE_PROFILE), settings.get_profile(FAST_PROFILE)
    >>> draws(40, profile=suite), draws(40, profile=fast), draws(16, profile=fast), draws(16, floor=6, profile=fast)
    (40, 10, 10, 6)
    >>> draws(300, floor=20, profile=fast), draws(5, profile=fast)
    (75, 5)
    """
    if floor < 1:
        raise ValueError(f"a floor is at least 1, got {floor}")
    return _share(count, floor, profile)
