"""Run records: the contract v1 (from the runner's JSON Schema), the pandera schema, readers and writers.

The names are imported on first use (PEP 562, :func:`gatestats._lazy.lazy_names`): importing the
package loads none of its modules, so a worker process of the line pass
(:mod:`gatestats.records.parallel`) imports the block checker without polars.
:data:`RECORD_SCHEMA` (pandera) is imported on first use too: reading and validating records never
imports pandera, not even to explain a record that fails a check.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.records.contract import (
        BOUNDS,
        CONTRACT_VERSION,
        FIELDS,
        OUTCOMES,
        POLARS_SCHEMA,
        RECORD_KEY,
        REQUIRED_FIELDS,
    )
    from gatestats.records.evidence import evidence_file, read_record_evidence
    from gatestats.records.imported_run_set import write_imported_run_set
    from gatestats.records.io import (
        RecordFileInfo,
        load_record_files,
        load_records,
        read_record_file,
        read_run_set,
        record_format,
        scan_records,
        write_records_jsonl,
    )
    from gatestats.records.schema import RECORD_SCHEMA, validate_records

__all__ = [
    "BOUNDS",
    "CONTRACT_VERSION",
    "FIELDS",
    "OUTCOMES",
    "POLARS_SCHEMA",
    "RECORD_KEY",
    "RECORD_SCHEMA",
    "REQUIRED_FIELDS",
    "RecordFileInfo",
    "evidence_file",
    "load_record_files",
    "load_records",
    "read_record_evidence",
    "read_record_file",
    "read_run_set",
    "record_format",
    "scan_records",
    "validate_records",
    "write_imported_run_set",
    "write_records_jsonl",
]
#: The module (under this package) of each name in ``__all__``, imported on first use.
_HOMES: Final = {
    **dict.fromkeys(
        ("BOUNDS", "CONTRACT_VERSION", "FIELDS", "OUTCOMES", "POLARS_SCHEMA", "RECORD_KEY", "REQUIRED_FIELDS"),
        "contract",
    ),
    **dict.fromkeys(("evidence_file", "read_record_evidence"), "evidence"),
    "write_imported_run_set": "imported_run_set",
    **dict.fromkeys(
        (
            "RecordFileInfo",
            "load_record_files",
            "load_records",
            "read_record_file",
            "read_run_set",
            "record_format",
            "scan_records",
            "write_records_jsonl",
        ),
        "io",
    ),
    **dict.fromkeys(("RECORD_SCHEMA", "validate_records"), "schema"),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
