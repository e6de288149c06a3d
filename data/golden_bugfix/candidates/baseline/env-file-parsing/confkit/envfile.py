"""Read ``.env`` files (``KEY=value`` lines)."""

from __future__ import annotations


def parse_env(text: str) -> dict[str, str]:
    """The variables that the ``.env`` file ``text`` defines."""
    variables: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        line = line.removeprefix("export ")
        if "=" not in line:
            msg = f"line {number}: expected KEY=value (got {raw!r})"
            raise ValueError(msg)
        key, value = line.split("=", 1)
        value = value.strip()
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
            value = value[1:-1]
        variables[key.strip()] = value
    return variables
