"""Run records: the contract v1 (from the runner's JSON Schema), the pandera schema, readers and writers.

:data:`RECORD_SCHEMA` (pandera) is imported on first use: reading and validating records does
not import pandera unless a record fails a check.
"""

from typing import TYPE_CHECKING, Any

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
from gatestats.records.schema import validate_records

if TYPE_CHECKING:
    from gatestats.records.schema import RECORD_SCHEMA

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


def __getattr__(name: str) -> Any:
    if name == "RECORD_SCHEMA":
        from gatestats.records import schema  # noqa: PLC0415 - its RECORD_SCHEMA imports pandera on first use

        return schema.RECORD_SCHEMA
    msg = f"module {__name__!r} has no attribute {name!r}"
    raise AttributeError(msg)
