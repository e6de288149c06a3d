# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import unittest

from slugs import slugify


class Slugify(unittest.TestCase):
    def test_accents_are_transliterated(self):
        self.assertEqual(slugify("Crème Brûlée"), "creme-brulee")
        self.assertEqual(slugify("Ça va? Très bien!"), "ca-va-tres-bien")

    def test_case_folding(self):
        self.assertEqual(slugify("Straße 5"), "strasse-5")

    def test_compatibility_forms(self):
        self.assertEqual(slugify("ﬁnal  draft"), "final-draft")
        self.assertEqual(slugify("Ｆｕｌｌｗｉｄｔｈ ①"), "fullwidth-1")

    def test_no_ascii_form_is_dropped(self):
        self.assertEqual(slugify("Tokyo 東京 guide"), "tokyo-guide")

    def test_empty_slug_becomes_untitled(self):
        self.assertEqual(slugify("東京"), "untitled")
        self.assertEqual(slugify(" -- "), "untitled")

    def test_ascii_unchanged(self):
        self.assertEqual(slugify("already-a-slug"), "already-a-slug")
        self.assertEqual(slugify("  Hello,  World! 2024 "), "hello-world-2024")
