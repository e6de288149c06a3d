# ruff: noqa: PT009, PT027 - hidden tests run with the system python3 (unittest only)
import unittest

from listing import paginate


class Paginate(unittest.TestCase):
    def test_partial_last_page_is_reachable(self):
        page = paginate(list(range(25)), page=3, per_page=10)
        self.assertEqual(page.items, [20, 21, 22, 23, 24])
        self.assertEqual(page.pages, 3)
        self.assertFalse(page.has_next)

    def test_page_before_the_partial_one_has_next(self):
        page = paginate(list(range(25)), page=2, per_page=10)
        self.assertEqual(page.items, list(range(10, 20)))
        self.assertTrue(page.has_next)
        self.assertTrue(page.has_previous)

    def test_exact_multiple_has_no_empty_page(self):
        self.assertEqual(paginate(list(range(20)), page=1, per_page=10).pages, 2)
        with self.assertRaises(ValueError):
            paginate(list(range(20)), page=3, per_page=10)

    def test_single_short_page(self):
        page = paginate(["a", "b", "c"], page=1, per_page=10)
        self.assertEqual((page.items, page.pages, page.has_next, page.has_previous), (["a", "b", "c"], 1, False, False))

    def test_empty_results_are_one_empty_page(self):
        page = paginate([], page=1, per_page=10)
        self.assertEqual((page.items, page.pages), ([], 1))

    def test_out_of_range_pages_raise(self):
        for bad in (0, -1, 4):
            with self.assertRaises(ValueError, msg=f"page={bad}"):
                paginate(list(range(25)), page=bad, per_page=10)

    def test_one_per_page(self):
        page = paginate(list("abcde"), page=5, per_page=1)
        self.assertEqual((page.items, page.pages), (["e"], 5))
