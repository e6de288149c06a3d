def median(values):
    """The median of a non-empty list of numbers."""
    ordered = sorted(values)
    return ordered[len(ordered) // 2 - (1 - len(ordered) % 2)]
