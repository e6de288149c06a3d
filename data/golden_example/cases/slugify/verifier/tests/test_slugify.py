# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import unittest

from textkit import slugify


class Slugify(unittest.TestCase):
    def test_collapses_runs(self):
        self.assertEqual(slugify("Hello,  World!"), "hello-world")

    def test_already_slug(self):
        self.assertEqual(slugify("abc-def"), "abc-def")

    def test_trims(self):
        self.assertEqual(slugify("  spaced out  "), "spaced-out")
