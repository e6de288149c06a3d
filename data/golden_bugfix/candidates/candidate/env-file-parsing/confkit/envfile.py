"""Read ``.env`` files (``KEY=value`` lines)."""

from __future__ import annotations

import shlex


def parse_env(text: str) -> dict[str, str]:
    """The variables that the ``.env`` file ``text`` defines (quotes and comments as in a shell)."""
    variables: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ").lstrip()
        key, sep, value = line.partition("=")
        if not sep:
            msg = f"line {number}: expected KEY=value (got {raw!r})"
            raise ValueError(msg)
        words = shlex.split(value, comments=True)
        variables[key.strip()] = " ".join(words)
    return variables
