"""The gate's same-cases check compares each case's versions as sets, whatever the string hashes.

``_same_cases`` took ``dict(pairs)`` of each side's ``(case_id, case_version)`` set: a case at two
versions kept whichever version the set's iteration (string hashes, random per interpreter) gave last,
so a baseline at versions 1 and 2 against a candidate at 1 was blocked in some processes and passed as
"the same cases" in others (seen as a flaky oracle test under xdist, session 46). Both directions are
asked here, so the old code fails one of them in every process; a child interpreter per hash seed shows
the check no longer depends on it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from gatestats.gate import checks

ROOT = Path(__file__).resolve().parents[2]


def _statuses(base: set[tuple[str, str | None]], cand: set[tuple[str, str | None]]) -> list[tuple[str, str]]:
    return [(c.name, c.status) for c in checks._same_cases(base, cand)]


def test_a_case_at_two_versions_on_one_side_differs_from_either_version_on_the_other() -> None:
    two = {("a", "1"), ("a", "2"), ("b", None)}
    for one in ({("a", "1"), ("b", None)}, {("a", "2"), ("b", None)}):
        assert _statuses(two, one) == [("case_versions", "insufficient_evidence")]
        assert _statuses(one, two) == [("case_versions", "insufficient_evidence")]
    assert _statuses(two, set(two)) == [("same_cases", "ok")]
    assert _statuses({("a", None)}, {("a", "1")}) == [("case_versions", "insufficient_evidence")]
    missing = _statuses({("a", "1"), ("b", "1")}, {("a", "2")})
    assert missing == [("case_versions", "insufficient_evidence"), ("same_cases", "insufficient_evidence")]


_CHILD = """
import json
from gatestats.gate import checks
base = {(f"case-{i}", v) for i in range(40) for v in ("1", "2")}
cand = {(f"case-{i}", "2" if i % 3 else "1") for i in range(40)}
print(json.dumps([(c.name, c.status, c.detail) for c in checks._same_cases(base, cand)]))
"""


def test_the_check_is_the_same_under_every_string_hash_seed() -> None:
    seen = set()
    for seed in ("0", "1"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        done = subprocess.run(
            [sys.executable, "-c", _CHILD], env=env, cwd=ROOT, capture_output=True, text=True, check=True
        )
        seen.add(done.stdout)
    assert len(seen) == 1
    assert json.loads(seen.pop())[0][:2] == ["case_versions", "insufficient_evidence"]
