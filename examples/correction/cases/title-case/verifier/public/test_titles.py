# ruff: noqa: PT009 - the sandbox has the standard library only: unittest, whose assertEqual shows the diff
import unittest

from textkit.titles import titlecase


class PublicTitlecase(unittest.TestCase):
    def test_simple_words(self):
        self.assertEqual(titlecase("hello world"), "Hello World")

    def test_contraction_stays_one_word(self):
        self.assertEqual(
            titlecase("don't stop"),
            "Don't Stop",
            "defect: apostrophe-split (a contraction was split into two words at its apostrophe)",
        )
