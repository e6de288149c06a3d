# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import csv
import io
import unittest

from exporter import to_csv

FIELDS = ["id", "name", "note"]


def read_back(text):
    return list(csv.reader(io.StringIO(text, newline="")))


class ToCsv(unittest.TestCase):
    def test_plain_rows_with_crlf(self):
        text = to_csv([{"id": 1, "name": "Ann", "note": "ok"}], FIELDS)
        self.assertEqual(text, "id,name,note\r\n1,Ann,ok\r\n")

    def test_comma_is_quoted(self):
        text = to_csv([{"id": 2, "name": "Smith, J", "note": ""}], FIELDS)
        self.assertEqual(text, 'id,name,note\r\n2,"Smith, J",\r\n')

    def test_quotes_are_doubled(self):
        text = to_csv([{"id": 3, "name": "Bo", "note": 'said "hi"'}], FIELDS)
        self.assertEqual(text, 'id,name,note\r\n3,Bo,"said ""hi"""\r\n')

    def test_line_breaks_are_quoted(self):
        text = to_csv([{"id": 4, "name": "Cy", "note": "line one\nline two\r\nthree"}], FIELDS)
        self.assertEqual(read_back(text)[1], ["4", "Cy", "line one\nline two\r\nthree"])

    def test_missing_and_none_are_empty(self):
        text = to_csv([{"id": 5, "name": None}], FIELDS)
        self.assertEqual(text, "id,name,note\r\n5,,\r\n")

    def test_round_trip(self):
        rows = [
            {"id": 6, "name": 'Mc"Q, "Jr."', "note": " leading and trailing "},
            {"id": 7, "name": "Żółć", "note": "tab\there, semi;colon"},
            {"id": 8, "name": "", "note": '""'},
        ]
        expected = [FIELDS] + [[str(r["id"]), r["name"], r["note"]] for r in rows]
        self.assertEqual(read_back(to_csv(rows, FIELDS)), expected)
