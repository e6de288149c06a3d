# ruff: noqa: PT009 - the sandbox has the standard library only: unittest, whose assertEqual shows the diff
import unittest

from names.initials import initials


class PublicInitials(unittest.TestCase):
    def test_two_words(self):
        self.assertEqual(initials("ada lovelace"), "AL")
