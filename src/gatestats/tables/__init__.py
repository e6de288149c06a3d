"""The one reader of the tables users bring (``import table``, ``calibrate``, ``--map``).

One level per question, each used by the next:

- :mod:`gatestats.tables.csvfile` — strict CSV: every row with its physical line, every defect
  with its line (the standard library's ``csv`` in strict mode);
- :mod:`gatestats.tables.inputs` — CSV, JSONL or Parquet into typed cells, each with where it is
  (:func:`~gatestats.tables.inputs.read_input_table`, :func:`~gatestats.tables.inputs.typed_cell`);
- :mod:`gatestats.tables.cells` — the list cells and labels of a record table (``slices``,
  ``graders``, ``grader:NAME``, ``trial_label``);
- :mod:`gatestats.tables.mapping` — ``--map FIELD=COLUMN,...``, the one parser of column mappings.

The importers (:mod:`gatestats.importers.table`) and the judge inputs
(:mod:`gatestats.judges.inputs`, :mod:`gatestats.judges.rated_inputs`) read through it; record
files (run sets, JSONL/Parquet/CSV records) are read by :mod:`gatestats.records`.
"""
