# ruff: noqa: PT009 - the sandbox has the standard library only: unittest, whose assertEqual shows the diff
import unittest

from names.initials import initials


class HiddenInitials(unittest.TestCase):
    def test_extra_spaces(self):
        # Score only: this message never reaches a reviser (HIDDEN-CHECK-OUTPUT initials).
        self.assertEqual(initials("  grace   brewster hopper "), "GBH", "HIDDEN-CHECK-OUTPUT initials")
