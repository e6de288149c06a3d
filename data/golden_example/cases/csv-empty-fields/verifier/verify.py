# ruff: noqa: N802 - unittest.TestResult hooks are camelCase
"""Run the hidden tests in /verifier/tests against the workspace; write JUnit XML and a JSON summary.

Standard library only (the sandbox has the system python3 and nothing else). Exit 0 iff every test passed.
"""

import json
import os
import sys
import time
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = os.environ.get("GATESTATS_WORKSPACE", os.getcwd())
sys.path.insert(0, WORKSPACE)


class Recorder(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cases = []
        self._start = 0.0

    def startTest(self, test):
        self._start = time.monotonic()
        super().startTest(test)

    def _add(self, test, kind, detail=None):
        self.cases.append((test, kind, detail, time.monotonic() - self._start))

    def addSuccess(self, test):
        super().addSuccess(test)
        self._add(test, "ok")

    def addFailure(self, test, err):
        super().addFailure(test, err)
        self._add(test, "failure", self._exc_info_to_string(err, test))

    def addError(self, test, err):
        super().addError(test, err)
        self._add(test, "error", self._exc_info_to_string(err, test))

    def addSkip(self, test, reason):
        super().addSkip(test, reason)
        self._add(test, "skipped", reason)


def main() -> int:
    suite = unittest.defaultTestLoader.discover(os.path.join(HERE, "tests"), top_level_dir=os.path.join(HERE, "tests"))
    result = unittest.TextTestRunner(resultclass=Recorder, verbosity=2, stream=sys.stderr).run(suite)
    root = ET.Element("testsuite", name="verifier", tests=str(len(result.cases)))
    for test, kind, detail, seconds in result.cases:
        cls, _, name = test.id().rpartition(".")
        case = ET.SubElement(root, "testcase", classname=cls, name=name, time=f"{seconds:.4f}")
        if kind in {"failure", "error", "skipped"}:
            lines = (detail or kind).strip().splitlines()
            message = next((ln for ln in lines if ln.startswith(("AssertionError", "Error", "Exception"))), lines[-1])
            child = ET.SubElement(case, kind, message=message)
            child.text = detail
    os.makedirs(os.path.join(WORKSPACE, "reports"), exist_ok=True)
    ET.ElementTree(root).write(os.path.join(WORKSPACE, "reports", "junit.xml"), encoding="utf-8", xml_declaration=True)
    summary = {"tests": result.testsRun, "failures": len(result.failures), "errors": len(result.errors)}
    with open(os.path.join(WORKSPACE, "reports", "summary.json"), "w", encoding="utf-8") as handle:
        json.dump(summary, handle)
    return 0 if result.wasSuccessful() else 1


if __name__ == "__main__":
    raise SystemExit(main())
