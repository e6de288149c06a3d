# ruff: noqa: PT009 - the sandbox has the standard library only: unittest, whose assertEqual shows the diff
import unittest

from stats.central import median


class PublicMedian(unittest.TestCase):
    def test_odd_count(self):
        self.assertEqual(median([3, 1, 2]), 2)

    def test_even_count(self):
        self.assertEqual(median([4, 1, 3, 2]), 2.5)
