# ruff: noqa: PT009 - hidden tests run with the system python3 (unittest only)
import unittest

from logsafe import redact


class KeyValue(unittest.TestCase):
    def test_password_keeps_the_rest_of_the_line(self):
        self.assertEqual(redact("login password=hunter2 user=bob"), "login password=[REDACTED] user=bob")

    def test_any_letter_case(self):
        self.assertEqual(redact("PASSWORD=hunter2"), "PASSWORD=[REDACTED]")
        self.assertEqual(redact("Api_Key=abc123"), "Api_Key=[REDACTED]")

    def test_query_string(self):
        self.assertEqual(
            redact("GET /callback?code=ok&api_key=sk_live_51Hx&page=2"),
            "GET /callback?code=ok&api_key=[REDACTED]&page=2",
        )

    def test_compound_names(self):
        self.assertEqual(redact("retrying with access_token=ya29.a0Af"), "retrying with access_token=[REDACTED]")
        self.assertEqual(redact("client_secret=s3cr3t; scope=read"), "client_secret=[REDACTED]; scope=read")
        self.assertEqual(redact("apikey=k1,passwd=p2"), "apikey=[REDACTED],passwd=[REDACTED]")


class Json(unittest.TestCase):
    def test_string_value(self):
        self.assertEqual(
            redact('{"user": "bob", "password": "p@ss word"}'),
            '{"user": "bob", "password": "[REDACTED]"}',
        )

    def test_escaped_quote_inside_value(self):
        line = '{"Token":"ab\\"cd","n":1}'
        self.assertEqual(redact(line), '{"Token":"[REDACTED]","n":1}')


class Authorization(unittest.TestCase):
    def test_bearer(self):
        self.assertEqual(
            redact("Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxIn0.c2ln"),
            "Authorization: Bearer [REDACTED]",
        )

    def test_basic(self):
        self.assertEqual(redact("authorization: basic dXNlcjpwdw=="), "authorization: basic [REDACTED]")


class LeavesOtherTextAlone(unittest.TestCase):
    def test_not_secrets(self):
        for line in (
            "tokenizer=bpe user=bob",
            "status=200 path=/passwords/reset",
            "no credentials here",
            "basic plan, Bearer of news",
        ):
            self.assertEqual(redact(line), line)
