"""Write records.jsonl (gatestats record contract v1) from resolved_matrix.csv; standard library only.

One record per (submission, instance): ``outcome`` is ``passed`` when the instance is in the
submission's ``resolved`` list (1 in the matrix), else ``failed`` (0: unresolved, no patch, or no
logs, as the leaderboard scores them). Run from anywhere: ``python3 data/swe_bench_verified/make_records.py``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main() -> None:
    """Read the matrix, write the records (sorted by submission, then instance order)."""
    with (HERE / "resolved_matrix.csv").open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    instances = rows[0][1:]
    lines = []
    for row in rows[1:]:
        system, values = row[0], row[1:]
        if len(values) != len(instances) or set(values) - {"0", "1"}:
            msg = f"resolved_matrix.csv: row {system!r} has {len(values)} values, not {len(instances)} zeros and ones"
            raise SystemExit(msg)
        for instance, value in zip(instances, values, strict=True):
            record = {
                "schema_version": 1,
                "record_id": f"{system}/{instance}",
                "run_set_id": "swe-bench-verified-leaderboard",
                "system": system,
                "case_id": instance,
                "trial": 0,
                "attempt": 0,
                "outcome": "passed" if value == "1" else "failed",
            }
            lines.append(json.dumps(record, sort_keys=True))
    (HERE / "records.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
