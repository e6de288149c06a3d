"""Importers: records from other harnesses, in the run-record contract v1 (sandbox fields left empty)."""

from gatestats.importers.inspect_ai import import_inspect
from gatestats.importers.observations import (
    OBSERVATION_ATTRIBUTES,
    TRACE_FORMAT,
    UNAUTHORIZED_FLAG,
    import_otel_observations,
    import_trace_observations,
)
from gatestats.importers.otlp import OtlpSpan, read_otlp_spans
from gatestats.importers.promptfoo import import_promptfoo
from gatestats.importers.swe_bench import import_swe_bench
from gatestats.importers.table import OUTCOME_VALUES, import_table, parse_mapping
from gatestats.importers.tau_bench import SUCCESS_TOLERANCE, import_tau_bench

__all__ = [
    "OBSERVATION_ATTRIBUTES",
    "OUTCOME_VALUES",
    "SUCCESS_TOLERANCE",
    "TRACE_FORMAT",
    "UNAUTHORIZED_FLAG",
    "OtlpSpan",
    "import_inspect",
    "import_otel_observations",
    "import_promptfoo",
    "import_swe_bench",
    "import_table",
    "import_tau_bench",
    "import_trace_observations",
    "parse_mapping",
    "read_otlp_spans",
]
