"""Read ``.env`` files (``KEY=value`` lines)."""

from __future__ import annotations


def parse_env(text: str) -> dict[str, str]:
    """The variables that the ``.env`` file ``text`` defines."""
    variables: dict[str, str] = {}
    for line in text.splitlines():
        if not line.strip():
            continue
        key, value = line.split("=")
        variables[key.strip()] = value.strip()
    return variables
