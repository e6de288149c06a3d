"""What crosses a file boundary, held to one set of rules (docs/integrity.md).

- :mod:`gatestats.io.limits` — the size, depth and name limits every input is held to;
- :mod:`gatestats.io.jsonfile` — JSON read through one door (size limit, strict decoder);
- :mod:`gatestats.io.digest` — the ``sha256:`` digests (the runner's one implementation);
- :mod:`gatestats.io.files` — files written once or atomically, build directories, the sweep of
  what a killed process left;
- :mod:`gatestats.io.text` — data shown to people: one line, invisible characters made visible;
- :mod:`gatestats.io.toml_lines` — the line of each TOML key (for errors) and the nesting scan run before
  :mod:`tomllib` (policies, rollout plans).

Tables (CSV, JSONL, Parquet that users bring) have their own reader: :mod:`gatestats.tables`.
"""
