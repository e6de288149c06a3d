# ruff: noqa: PT009 - the sandbox has the standard library only: unittest, whose assertEqual shows the diff
import unittest

from stats.central import median


class HiddenMedian(unittest.TestCase):
    def test_even_count_floats(self):
        # Score only: this message never reaches a reviser (HIDDEN-CHECK-OUTPUT median).
        self.assertEqual(median([1.0, 2.0]), 1.5, "HIDDEN-CHECK-OUTPUT median")
