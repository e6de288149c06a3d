"""Run records: the contract v1 (from the runner's JSON Schema), the pandera schema, readers and writers."""

from gatestats.records.contract import (
    BOUNDS,
    CONTRACT_VERSION,
    FIELDS,
    OUTCOMES,
    POLARS_SCHEMA,
    RECORD_KEY,
    REQUIRED_FIELDS,
)
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
    "load_record_files",
    "load_records",
    "read_record_file",
    "read_run_set",
    "record_format",
    "scan_records",
    "validate_records",
    "write_imported_run_set",
    "write_records_jsonl",
]
