def initials(name):
    """The upper-case first letter of every word of ``name``."""
    return "".join(word[0].upper() for word in name.split())
