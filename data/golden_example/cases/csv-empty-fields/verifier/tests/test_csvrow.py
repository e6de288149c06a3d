# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import unittest

from csvrow import parse_row


class ParseRow(unittest.TestCase):
    def test_plain(self):
        self.assertEqual(parse_row("a,b,c"), ["a", "b", "c"])

    def test_empty_field_keeps_position(self):
        self.assertEqual(parse_row("a,,c"), ["a", "", "c"])

    def test_trailing_empty_field(self):
        self.assertEqual(parse_row("a,b,"), ["a", "b", ""])

    def test_quoted_comma(self):
        self.assertEqual(parse_row('"x,y",z'), ["x,y", "z"])
