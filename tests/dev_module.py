"""``dev.py`` (the README's set-up, demo and test commands) loaded as a module, a fresh copy per call.

A fresh copy: a test may replace one of its names (``subprocess``, ``VENV``) without the change reaching
another test's copy.
"""

from __future__ import annotations

import importlib.util
from types import ModuleType

from tests.conftest import ROOT


def load_dev(name: str = "gatestats_dev") -> ModuleType:
    """A new module object executing ``dev.py``, named ``name``."""
    spec = importlib.util.spec_from_file_location(name, ROOT / "dev.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
