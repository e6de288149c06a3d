"""A resealed malformed copy of a runner JSONL file: one line broken *and* its checksum recomputed.

    .venv/bin/python benchmarks/make_malformed.py /work/bigdata/h45/r10m.jsonl --line 3350043

Writes ``FILE.malformed.jsonl``: a copy of ``FILE`` in which line ``--line`` (1-based) has its
``outcome`` upper-cased (``passed`` -> ``PASSED``: not one of the contract's values) and its
``checksum`` recomputed the runner's way (:func:`gatestats_runner.store.record_checksum`), so that the
checksum matches the changed line: only the strict reader's value check can refuse it (docs/integrity.md).
The line keeps its length (same bytes but the outcome's case and the digest), so the copy is patched in
place and a 3 GB file needs no 3 GB in memory. Session 42 made this copy with a script in /tmp.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from gatestats_runner.digests import canonical_json  # noqa: E402
from gatestats_runner.store import CHECKSUM_FIELD, record_checksum  # noqa: E402


def malformed_copy(path: Path, line_number: int) -> Path:
    """Write ``path``'s copy with line ``line_number``'s outcome upper-cased and resealed; return it."""
    with path.open("rb") as handle:
        for _ in range(line_number - 1):
            handle.readline()
        start = handle.tell()
        line = handle.readline()
    record = json.loads(line)
    record["outcome"] = str(record["outcome"]).upper()
    record.pop(CHECKSUM_FIELD)
    record[CHECKSUM_FIELD] = record_checksum(record)
    patch = (canonical_json(record) + "\n").encode("utf-8")
    if len(patch) != len(line):
        msg = f"line {line_number}: the patched line is {len(patch)} bytes, the original {len(line)}"
        raise SystemExit(msg)
    target = path.with_suffix(".malformed.jsonl")
    shutil.copyfile(path, target)
    with target.open("r+b") as handle:
        handle.seek(start)
        handle.write(patch)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("file", type=Path)
    parser.add_argument("--line", type=int, required=True, help="1-based number of the line to break")
    options = parser.parse_args()
    print(malformed_copy(options.file, options.line))


if __name__ == "__main__":
    main()
