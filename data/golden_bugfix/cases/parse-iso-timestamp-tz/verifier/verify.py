# ruff: noqa: N802 - unittest.TestResult hooks are camelCase
"""Verifier of a golden_bugfix case: run the hidden tests in /verifier/tests against the workspace.

Writes ``reports/junit.xml`` (one ``testcase`` per test, with its ``failure``, ``error`` or
``skipped`` child) and ``reports/summary.json`` into the workspace, and exits 0 only when at least
one test ran and every test passed. Standard library only: the sandbox offers the system python3
and nothing else. Every case of the set ships this same file; the code under test is imported
afresh in this process, so each trial gets its own string-hash seed (PYTHONHASHSEED is not set).
"""

from __future__ import annotations

import json
import os
import sys
import time
import unittest
import xml.etree.ElementTree as ET
from typing import Any

VERIFIER = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.join(VERIFIER, "tests")
WORKSPACE = os.environ.get("GATESTATS_WORKSPACE") or os.getcwd()
CASE_ID = os.environ.get("GATESTATS_CASE_ID") or os.path.basename(os.path.dirname(VERIFIER))


class Collector(unittest.TestResult):
    """Every test's outcome, traceback and duration, in run order."""

    def __init__(self) -> None:
        super().__init__()
        self.outcomes: list[tuple[str, str, str, str | None, float]] = []
        self._started = time.perf_counter()

    def startTest(self, test: unittest.TestCase) -> None:
        self._started = time.perf_counter()
        super().startTest(test)

    def _record(self, test: unittest.TestCase, kind: str, detail: str | None = None) -> None:
        classname, _, name = test.id().rpartition(".")
        self.outcomes.append((classname, name, kind, detail, time.perf_counter() - self._started))
        print(f"{kind:7} {test.id()}", flush=True)

    def addSuccess(self, test: unittest.TestCase) -> None:
        super().addSuccess(test)
        self._record(test, "ok")

    def addFailure(self, test: unittest.TestCase, err: Any) -> None:
        super().addFailure(test, err)
        self._record(test, "failure", self.failures[-1][1])

    def addError(self, test: unittest.TestCase, err: Any) -> None:
        super().addError(test, err)
        self._record(test, "error", self.errors[-1][1])

    def addSkip(self, test: unittest.TestCase, reason: str) -> None:
        super().addSkip(test, reason)
        self._record(test, "skipped", reason)


def _junit(outcomes: list[tuple[str, str, str, str | None, float]], seconds: float) -> ET.ElementTree:
    bad = {kind: sum(1 for o in outcomes if o[2] == kind) for kind in ("failure", "error", "skipped")}
    suite = ET.Element(
        "testsuite",
        name=CASE_ID,
        tests=str(len(outcomes)),
        failures=str(bad["failure"]),
        errors=str(bad["error"]),
        skipped=str(bad["skipped"]),
        time=f"{seconds:.4f}",
    )
    for classname, name, kind, detail, duration in outcomes:
        case = ET.SubElement(suite, "testcase", classname=classname, name=name, time=f"{duration:.4f}")
        if kind != "ok":
            lines = (detail or kind).strip().splitlines() or [kind]
            child = ET.SubElement(case, kind, message=lines[-1][:500])
            child.text = detail
    return ET.ElementTree(suite)


def main() -> int:
    started = time.perf_counter()
    sys.path.insert(0, WORKSPACE)  # the code under test; the standard library is already imported
    suite = unittest.defaultTestLoader.discover(TESTS, top_level_dir=TESTS)
    result = Collector()
    suite.run(result)
    seconds = time.perf_counter() - started
    reports = os.path.join(WORKSPACE, "reports")
    os.makedirs(reports, exist_ok=True)
    _junit(result.outcomes, seconds).write(os.path.join(reports, "junit.xml"), encoding="utf-8", xml_declaration=True)
    failed = [f"{c}.{n}" for c, n, kind, _, _ in result.outcomes if kind in {"failure", "error"}]
    summary = {
        "case_id": CASE_ID,
        "tests": len(result.outcomes),
        "passed": sum(1 for o in result.outcomes if o[2] == "ok"),
        "failed": failed,
        "skipped": sum(1 for o in result.outcomes if o[2] == "skipped"),
        "seconds": round(seconds, 4),
        "python": sys.version.split()[0],
        "hash_randomization": bool(sys.flags.hash_randomization),
    }
    with open(os.path.join(reports, "summary.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle, indent=2)
        handle.write("\n")
    for classname, name, kind, detail, _ in result.outcomes:
        if kind in {"failure", "error"}:
            print(f"\n{kind.upper()}: {classname}.{name}\n{detail}", file=sys.stderr)
    ok = bool(result.outcomes) and not failed
    print(f"{summary['passed']} passed, {len(failed)} failed", flush=True)
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
