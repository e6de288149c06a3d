# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import itertools
import unittest

from versions import compare, is_newer

# The precedence example of Semantic Versioning 2.0.0, section 11.4, in ascending order.
SPEC_ORDER = [
    "1.0.0-alpha",
    "1.0.0-alpha.1",
    "1.0.0-alpha.beta",
    "1.0.0-beta",
    "1.0.0-beta.2",
    "1.0.0-beta.11",
    "1.0.0-rc.1",
    "1.0.0",
]


class Compare(unittest.TestCase):
    def test_numeric_parts(self):
        self.assertEqual(compare("1.10.0", "1.9.0"), 1)
        self.assertEqual(compare("1.9.0", "1.10.0"), -1)
        self.assertEqual(compare("10.0.0", "9.99.99"), 1)

    def test_equal_versions(self):
        self.assertEqual(compare("1.2.3", "1.2.3"), 0)
        self.assertEqual(compare("v1.2.3", "1.2.3"), 0)

    def test_prerelease_before_release(self):
        self.assertEqual(compare("2.0.0-rc.1", "2.0.0"), -1)
        self.assertEqual(compare("2.0.0", "2.0.0-rc.1"), 1)

    def test_numeric_prerelease_identifiers(self):
        self.assertEqual(compare("1.0.0-rc.2", "1.0.0-rc.10"), -1)

    def test_spec_precedence_chain(self):
        for older, newer in itertools.pairwise(SPEC_ORDER):
            self.assertEqual(compare(older, newer), -1, f"{older} < {newer}")
            self.assertEqual(compare(newer, older), 1, f"{newer} > {older}")

    def test_build_metadata_ignored(self):
        self.assertEqual(compare("1.0.0+build.7", "1.0.0+build.8"), 0)
        self.assertEqual(compare("1.0.0-rc.1+exp.sha.5114f85", "1.0.0-rc.1"), 0)


class IsNewer(unittest.TestCase):
    def test_update_offered(self):
        self.assertTrue(is_newer("1.10.0", "1.9.3"))
        self.assertTrue(is_newer("2.0.0", "2.0.0-rc.1"))

    def test_no_downgrade_offered(self):
        self.assertFalse(is_newer("1.9.0", "1.10.0"))
        self.assertFalse(is_newer("1.2.3", "1.2.3"))
