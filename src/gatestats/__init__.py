"""gatestats: decide, with statistics, whether a change to an AI agent may ship.

Public API (see the subpackages for details):

- :mod:`gatestats.records` — the run-record contract v1, pandera schema, readers/writers.
- :mod:`gatestats.importers` — records from any table and from τ-bench results.
- :mod:`gatestats.estimators` — pass@k and pass^k with case-level intervals.

``analyze`` and ``load_records`` are imported on first use (PEP 562), so that importing any
part of the package, the command line included, does not pay for the statistics stack.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from gatestats.errors import (
    GatestatsError,
    InsufficientEvidenceError,
    RecordFileError,
    RecordProblem,
)

if TYPE_CHECKING:
    from gatestats.estimators import analyze
    from gatestats.records import load_records

__version__ = "0.1.0"

__all__ = [
    "GatestatsError",
    "InsufficientEvidenceError",
    "RecordFileError",
    "RecordProblem",
    "__version__",
    "analyze",
    "load_records",
]

# Attribute -> the module that defines it, imported when the attribute is first read.
_LAZY = {"analyze": "gatestats.estimators", "load_records": "gatestats.records"}


def __getattr__(name: str) -> Any:
    """Import ``analyze`` and ``load_records`` on first access (PEP 562).

    Parameters
    ----------
    name
        The attribute read from the package.

    Returns
    -------
    Any
        The attribute.

    Raises
    ------
    AttributeError
        When ``name`` is not a public attribute of the package.
    """
    module = _LAZY.get(name)
    if module is None:
        msg = f"module 'gatestats' has no attribute {name!r}"
        raise AttributeError(msg)
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names, the lazy ones included.

    Returns
    -------
    list of str
        Sorted names.
    """
    return sorted({*globals(), *_LAZY})
