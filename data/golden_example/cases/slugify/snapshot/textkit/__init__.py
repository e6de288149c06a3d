"""Text helpers."""


def slugify(text: str) -> str:
    return "".join(ch if ch.isalnum() else "-" for ch in text.lower())
