# ruff: noqa: PT009, PT027 - hidden tests run with the system python3 (unittest only)
import unittest
from datetime import UTC, datetime, timedelta

from events import parse_timestamp


class ParseTimestamp(unittest.TestCase):
    def assert_utc(self, value, expected):
        self.assertIsNotNone(value.tzinfo, f"{value!r} is naive")
        self.assertEqual(value.utcoffset(), timedelta(0), f"{value!r} is not in UTC")
        self.assertEqual(value, expected)

    def test_positive_offset(self):
        self.assert_utc(parse_timestamp("2024-03-10T12:00:00+02:00"), datetime(2024, 3, 10, 10, 0, tzinfo=UTC))

    def test_negative_offset_with_fraction(self):
        self.assert_utc(
            parse_timestamp("2024-03-10T12:00:00.250-05:00"), datetime(2024, 3, 10, 17, 0, 0, 250000, tzinfo=UTC)
        )

    def test_offset_crossing_midnight(self):
        self.assert_utc(parse_timestamp("2024-03-01T01:30:00+05:30"), datetime(2024, 2, 29, 20, 0, tzinfo=UTC))

    def test_zulu(self):
        self.assert_utc(parse_timestamp("2024-03-10T12:00:00Z"), datetime(2024, 3, 10, 12, 0, tzinfo=UTC))

    def test_no_offset_means_utc(self):
        self.assert_utc(parse_timestamp(" 2024-03-10T12:00:00 "), datetime(2024, 3, 10, 12, 0, tzinfo=UTC))

    def test_comparable_with_now(self):
        self.assertLess(parse_timestamp("2001-01-01T00:00:00+01:00"), datetime.now(UTC))

    def test_garbage_raises_value_error(self):
        for text in ("yesterday", "", "2024-13-01T00:00:00Z"):
            with self.assertRaises(ValueError, msg=repr(text)):
                parse_timestamp(text)
