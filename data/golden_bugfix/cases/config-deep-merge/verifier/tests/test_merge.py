# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import copy
import unittest

from confkit import deep_merge


class DeepMerge(unittest.TestCase):
    def test_nested_keys_survive(self):
        merged = deep_merge({"db": {"host": "db.internal", "port": 5432}}, {"db": {"port": 6543}})
        self.assertEqual(merged, {"db": {"host": "db.internal", "port": 6543}})

    def test_three_levels(self):
        base = {"a": {"b": {"c": 1, "d": 2}, "e": 3}}
        override = {"a": {"b": {"d": 20, "f": 30}}}
        self.assertEqual(deep_merge(base, override), {"a": {"b": {"c": 1, "d": 20, "f": 30}, "e": 3}})

    def test_inputs_are_not_modified(self):
        base = {"db": {"host": "h", "port": 1}, "tags": ["x"]}
        override = {"db": {"port": 2}, "debug": True}
        base_before, override_before = copy.deepcopy(base), copy.deepcopy(override)
        merged = deep_merge(base, override)
        self.assertEqual((base, override), (base_before, override_before))
        merged["db"]["host"] = "changed"
        merged["tags"].append("y")
        self.assertEqual((base, override), (base_before, override_before))

    def test_override_wins_for_non_dicts(self):
        base = {"tags": ["a", "b"], "db": {"host": "h"}, "level": "info"}
        override = {"tags": ["c"], "db": "sqlite:///x.db", "level": {"root": "debug"}}
        self.assertEqual(deep_merge(base, override), override)

    def test_key_order_base_first_then_new_keys(self):
        self.assertEqual(list(deep_merge({"name": "app"}, {"debug": True})), ["name", "debug"])
