"""Pass iff the workspace's answer.txt holds the expected number (standard library only)."""

import os
import sys

EXPECTED = 6550
workspace = os.environ.get("GATESTATS_WORKSPACE", os.getcwd())
try:
    with open(os.path.join(workspace, "answer.txt"), encoding="utf-8") as handle:
        got = handle.read().strip()
except OSError as exc:
    sys.exit(f"no answer.txt: {exc}")
sys.exit(0 if got == str(EXPECTED) else f"expected {EXPECTED}, got {got!r}")
