# ruff: noqa: PT009, PT027 - hidden tests run with the system python3 (unittest only)
import random
import unittest

from netretry import backoff_delay


class BackoffDelay(unittest.TestCase):
    def test_first_retries_double_from_base(self):
        self.assertEqual([backoff_delay(n) for n in (1, 2, 3, 4)], [0.5, 1.0, 2.0, 4.0])

    def test_capped_at_max_delay(self):
        self.assertEqual(backoff_delay(7), 30.0)  # 0.5 * 2**6 = 32 -> 30
        self.assertEqual(backoff_delay(10), 30.0)
        self.assertEqual(backoff_delay(6), 16.0)

    def test_huge_attempt_does_not_overflow(self):
        self.assertEqual(backoff_delay(1100), 30.0)
        self.assertEqual(backoff_delay(10**6, base=1.0, factor=3.0, max_delay=60.0), 60.0)

    def test_custom_parameters(self):
        self.assertEqual(backoff_delay(3, base=0.1, factor=3.0, max_delay=5.0), 0.1 * 3.0**2)

    def test_full_jitter_within_bounds(self):
        rng = random.Random(20240310)
        for attempt in (1, 3, 8, 2000):
            cap = min(30.0, 0.5 * 2.0 ** min(attempt - 1, 64))
            draws = [backoff_delay(attempt, jitter=True, rng=rng) for _ in range(300)]
            self.assertTrue(
                all(0.0 <= d <= cap for d in draws), f"attempt {attempt}: {min(draws)}..{max(draws)} > {cap}"
            )
            # full jitter spreads over the whole range, not only its upper half
            self.assertLess(min(draws), cap / 4, f"attempt {attempt}")

    def test_jitter_uses_the_given_rng(self):
        first = [backoff_delay(5, jitter=True, rng=random.Random(7)) for _ in range(3)]
        self.assertEqual(len(set(first)), 1)

    def test_attempt_must_be_positive(self):
        for attempt in (0, -3):
            with self.assertRaises(ValueError):
                backoff_delay(attempt)
