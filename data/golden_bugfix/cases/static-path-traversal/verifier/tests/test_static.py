# ruff: noqa: PT009, PT027 - hidden tests run with the system python3 (unittest only)
import os
import shutil
import tempfile
import unittest
from pathlib import Path

from webhelpers import ForbiddenError, resolve_static


class ResolveStatic(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.base = Path(tempfile.mkdtemp(prefix="static-")).resolve()
        cls.root = cls.base / "public"
        (cls.root / "css").mkdir(parents=True)
        (cls.root / "img").mkdir()
        (cls.root / "css" / "site.css").write_text("body {}\n")
        (cls.root / "img" / "logo dark.png").write_bytes(b"png")
        (cls.base / "secret.txt").write_text("db password\n")
        os.symlink(cls.base, cls.root / "escape")

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.base)

    def resolved(self, url_path):
        return Path(resolve_static(self.root, url_path)).resolve()

    def test_plain_file(self):
        self.assertEqual(self.resolved("css/site.css"), self.root / "css" / "site.css")

    def test_leading_slash_and_encoded_space(self):
        self.assertEqual(self.resolved("/img/logo%20dark.png"), self.root / "img" / "logo dark.png")

    def test_parent_traversal(self):
        for url_path in ("../secret.txt", "css/../../secret.txt", "/../secret.txt"):
            with self.assertRaises(ForbiddenError, msg=url_path):
                resolve_static(self.root, url_path)

    def test_percent_encoded_traversal(self):
        for url_path in ("%2e%2e/secret.txt", "%2E%2E%2Fsecret.txt", "css/%2e%2e/%2e%2e/secret.txt", "..%2fsecret.txt"):
            with self.assertRaises(ForbiddenError, msg=url_path):
                resolve_static(self.root, url_path)

    def test_encoded_absolute_path_stays_inside(self):
        # Refusing it and mapping it below the root are both safe; reaching the real file is not.
        url_path = "%2F" + str(self.base / "secret.txt").lstrip("/").replace("/", "%2F")
        try:
            target = self.resolved(url_path)
        except ForbiddenError:
            return
        self.assertTrue(target.is_relative_to(self.root), f"{url_path} -> {target}")

    def test_backslash_traversal(self):
        for url_path in ("..\\secret.txt", "css\\..\\..\\secret.txt", "%5c..%5csecret.txt"):
            with self.assertRaises(ForbiddenError, msg=url_path):
                resolve_static(self.root, url_path)

    def test_symlink_out_of_root(self):
        with self.assertRaises(ForbiddenError):
            resolve_static(self.root, "escape/secret.txt")
