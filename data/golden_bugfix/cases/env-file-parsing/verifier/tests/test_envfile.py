# ruff: noqa: PT009, PT027 - hidden tests run with the system python3 (unittest only)
import unittest

from confkit import parse_env


class ParseEnv(unittest.TestCase):
    def test_equals_sign_in_value(self):
        self.assertEqual(
            parse_env("DATABASE_URL=postgres://app:pw@db/app?sslmode=require\n"),
            {"DATABASE_URL": "postgres://app:pw@db/app?sslmode=require"},
        )

    def test_comments_blank_lines_and_export(self):
        text = "# settings\n\nexport DEBUG=1\n   # indented comment\nNAME = app \n"
        self.assertEqual(parse_env(text), {"DEBUG": "1", "NAME": "app"})

    def test_double_quotes_and_escapes(self):
        text = 'GREETING="hello world # not a comment"\nMOTD="line one\\nline two\\t\\"quoted\\" \\\\ end"\n'
        self.assertEqual(
            parse_env(text),
            {"GREETING": "hello world # not a comment", "MOTD": 'line one\nline two\t"quoted" \\ end'},
        )

    def test_single_quotes_are_literal(self):
        self.assertEqual(parse_env("PATTERN='a\\nb $HOME'\n"), {"PATTERN": "a\\nb $HOME"})

    def test_inline_comment_in_unquoted_value(self):
        self.assertEqual(parse_env("PORT=8080 # default\nPASSWORD=p#ss\n"), {"PORT": "8080", "PASSWORD": "p#ss"})

    def test_empty_value(self):
        self.assertEqual(parse_env('EMPTY=\nQUOTED=""\n'), {"EMPTY": "", "QUOTED": ""})

    def test_line_without_equals_names_its_number(self):
        with self.assertRaisesRegex(ValueError, "line 3"):
            parse_env("A=1\n\nnot a setting\n")
