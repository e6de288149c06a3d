import re


def titlecase(text):
    """Capitalise every word of ``text``."""
    return re.sub(r"[A-Za-z]+", lambda m: m.group(0).capitalize(), text)
