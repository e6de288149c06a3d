"""Configuration loading: defaults, config files and ``.env`` files, merged in layers."""

from confkit.envfile import parse_env
from confkit.merge import deep_merge

__all__ = ["deep_merge", "parse_env"]
