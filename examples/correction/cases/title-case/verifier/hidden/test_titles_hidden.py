# ruff: noqa: PT009 - the sandbox has the standard library only: unittest, whose assertEqual shows the diff
import unittest

from textkit.titles import titlecase


class HiddenTitlecase(unittest.TestCase):
    def test_mixed_case_and_contractions(self):
        # Score only: this message never reaches a reviser (HIDDEN-CHECK-OUTPUT title-case).
        self.assertEqual(titlecase("iT's A dOG's LIFE"), "It's A Dog's Life", "HIDDEN-CHECK-OUTPUT title-case")
