"""gatestats: decide, with statistics, whether a change to an AI agent may ship.

Public API (see the subpackages for details):

- :mod:`gatestats.records` — the run-record contract v1, pandera schema, readers/writers.
- :mod:`gatestats.importers` — records from any table and from τ-bench results.
- :mod:`gatestats.estimators` — pass@k and pass^k with case-level intervals.
"""

from gatestats.errors import (
    GatestatsError,
    InsufficientEvidenceError,
    RecordFileError,
    RecordProblem,
)
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
