"""Near-duplicates: normalisation, shingles, and MinHash against exact Jaccard."""

from __future__ import annotations

import numpy as np

from gatestats.golden.neardup import exact_jaccard, features, find_twins, minhash, minhash_jaccard, normalise


def _pair(shared: int, only: int) -> tuple[set[str], set[str]]:
    """Two sets with ``shared`` common items and ``only`` items each of their own: J = shared / (shared + 2 only)."""
    common = {f"c{i}" for i in range(shared)}
    return common | {f"a{i}" for i in range(only)}, common | {f"b{i}" for i in range(only)}


def test_minhash_estimates_exact_jaccard_within_four_standard_errors() -> None:
    # The estimate is a mean of 128 Bernoulli(J) indicators (Broder 1997): sd = sqrt(J(1-J)/128) <= 0.045.
    errors = []
    for shared, only in [(100, 0), (90, 5), (60, 20), (50, 50), (30, 60), (10, 100), (0, 80)]:
        a, b = _pair(shared, only)
        exact = exact_jaccard(a, b)
        estimate = minhash_jaccard(minhash(a), minhash(b))
        assert abs(estimate - exact) <= 4 * np.sqrt(max(exact * (1 - exact), 1e-9) / 128) + 1e-12, (shared, only)
        errors.append(abs(estimate - exact))
    assert exact_jaccard(*_pair(50, 50)) == 1 / 3
    assert float(np.mean(errors)) < 0.04


def test_minhash_is_deterministic_and_seeded() -> None:
    items = {f"x{i}" for i in range(40)}
    assert np.array_equal(minhash(items), minhash(sorted(items, reverse=True) * 2))
    assert not np.array_equal(minhash(items, seed=1), minhash(items))
    assert minhash_jaccard(minhash(set()), minhash(set())) == 1.0


def test_digits_are_normalised_so_a_35_and_a_41_day_order_look_alike() -> None:
    assert (
        normalise("Delivered 41 days ago") == normalise("delivered 35  DAYS ago") == ["delivered", "0", "days", "ago"]
    )


def test_find_twins_keeps_only_cases_above_the_threshold_best_first() -> None:
    def feats(request: str) -> frozenset[str]:
        return features(request=request, tool_calls=[{"name": "issue_refund", "arguments": {"id": 1}}], snapshot={})

    new = feats("refund order 41 days after delivery under the 30 day policy please")
    others = {
        "near": (
            feats("refund order 35 days after delivery under the 30 day policy please"),
            "development",
            "approved",
        ),
        "far": (
            features(request="slugify collapses runs of separators", tool_calls=[], snapshot={}),
            "test",
            "approved",
        ),
    }
    (twin,) = find_twins(new, others)
    assert (twin.case_id, twin.split, twin.jaccard) == ("near", "development", 1.0)
