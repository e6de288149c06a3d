"""Version numbers of our releases."""

from versions.semver import compare, is_newer

__all__ = ["compare", "is_newer"]
