"""Importers: records from other harnesses, in the run-record contract v1 (sandbox fields left empty).

The names are imported on first use (:func:`gatestats._lazy.lazy_names`): ``gatestats import table`` loads the
table importer alone, and a module that needs one importer (the golden set's traces read the observations) does not
load the others (issue 28 item 2: Inspect's, OTLP's, promptfoo's, SWE-bench's and τ-bench's readers were loaded by
every command that read one of them).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
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

#: The module (under this package) of each name in ``__all__``, imported on first use.
_HOMES: Final = {
    "import_inspect": "inspect_ai",
    "OBSERVATION_ATTRIBUTES": "observations",
    "TRACE_FORMAT": "observations",
    "UNAUTHORIZED_FLAG": "observations",
    "import_otel_observations": "observations",
    "import_trace_observations": "observations",
    "OtlpSpan": "otlp",
    "read_otlp_spans": "otlp",
    "import_promptfoo": "promptfoo",
    "import_swe_bench": "swe_bench",
    "OUTCOME_VALUES": "table",
    "import_table": "table",
    "parse_mapping": "table",
    "SUCCESS_TOLERANCE": "tau_bench",
    "import_tau_bench": "tau_bench",
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
