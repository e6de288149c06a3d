"""Parse one CSV row."""


def parse_row(line: str) -> list[str]:
    fields: list[str] = []
    current = ""
    quoted = False
    for ch in line:
        if ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            fields.append(current)
            current = ""
        else:
            current += ch
    fields.append(current)
    return [f for f in fields if f]  # drops empty fields
