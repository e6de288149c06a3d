"""hello."""

GREETING = "hello"
