# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import unittest

from webhelpers import is_safe_redirect

HOST = "shop.example"


class IsSafeRedirect(unittest.TestCase):
    def test_local_paths_allowed(self):
        for target in ("/account", "/search?q=a%20b", "/orders/17#items", "/"):
            self.assertTrue(is_safe_redirect(target, HOST), target)

    def test_own_host_allowed(self):
        for target in ("https://shop.example/cart", "http://shop.example/", "https://SHOP.example/cart"):
            self.assertTrue(is_safe_redirect(target, HOST), target)

    def test_other_host_refused(self):
        for target in ("https://evil.example/", "https://shop.example.evil.example/", "HTTPS://evil.example/x"):
            self.assertFalse(is_safe_redirect(target, HOST), target)

    def test_scheme_relative_refused(self):
        for target in ("//evil.example/phish", "///evil.example", "/\\evil.example", "\\\\evil.example"):
            self.assertFalse(is_safe_redirect(target, HOST), target)

    def test_hidden_whitespace_refused(self):
        for target in ("/\t/evil.example", "/\n/evil.example", "\r//evil.example"):
            self.assertFalse(is_safe_redirect(target, HOST), repr(target))

    def test_userinfo_refused(self):
        self.assertFalse(is_safe_redirect("https://shop.example@evil.example/", HOST))
        self.assertFalse(is_safe_redirect("https://user:pw@shop.example/", HOST))

    def test_other_schemes_refused(self):
        for target in ("javascript:alert(1)", "JavaScript:alert(1)", "data:text/html,hi", "ftp://shop.example/"):
            self.assertFalse(is_safe_redirect(target, HOST), target)

    def test_empty_refused(self):
        self.assertFalse(is_safe_redirect("", HOST))
