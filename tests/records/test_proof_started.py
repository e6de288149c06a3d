"""A small file goes to the line pass until the proof has started in the process; then it is proved (issue 28).

The proof's start (msgspec's import, the decoder built: ~30 ms) is what makes the line pass the cheaper way to read a
file under ``lines._PROVE_FROM_LINES`` lines; once a process has paid it (a notebook, a test run, a gate over many run
sets), every block it reads is proved (~3-5 µs a line against ~25). The answer is the same either way (the proof only
accepts; tests/records/test_canonical_block.py keeps the differential test); what changes is that the kept columns come
from the proof. Checked in a fresh interpreter, where no proof has started.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from gatestats_runner.runsets import encode_record
from tests.conftest import ROOT, make_record

_CHILD = """
import dataclasses, json, sys
from gatestats.records.canonical_block import proof_started, proves_block
from gatestats.records.lines import check_jsonl

small, large = sys.argv[1], sys.argv[2]
found = {"started_at_first": proof_started()}
first = check_jsonl(small, keep=["outcome", "trial"])
found["first_proved"] = first.frame is not None
found["started_after_small"] = proof_started()
found["large_proved"] = proves_block(open(large, "rb").read()) is not None
found["started_after_large"] = proof_started()
second = check_jsonl(small, keep=["outcome", "trial"])
found["second_proved"] = second.frame is not None
found["same_check"] = dataclasses.replace(first, frame=None) == dataclasses.replace(second, frame=None)
found["columns"] = second.frame.select("outcome", "trial").to_dicts() if second.frame is not None else None
print(json.dumps(found))
"""


def test_a_small_file_is_proved_once_a_proof_has_started_and_read_the_same(tmp_path: Path) -> None:
    records = [make_record(case_id=f"c{i}", trial=i % 3, outcome="passed" if i % 2 else "failed") for i in range(12)]
    small = tmp_path / "small.jsonl"
    small.write_bytes(b"".join(encode_record(r) for r in records))
    large = tmp_path / "large.jsonl"
    large.write_bytes(b"".join(encode_record(make_record(case_id=f"d{i}")) for i in range(1_000)))
    child = subprocess.run(
        [sys.executable, "-c", _CHILD, str(small), str(large)], cwd=ROOT, capture_output=True, text=True, check=True
    )
    assert json.loads(child.stdout) == {
        "started_at_first": False,
        "first_proved": False,  # a small file in a fresh process: the line pass
        "started_after_small": False,
        "large_proved": True,
        "started_after_large": True,
        "second_proved": True,  # the same file once the proof has started: proved
        "same_check": True,
        "columns": [{"outcome": r["outcome"], "trial": r["trial"]} for r in records],
    }
