"""Run the public tests, then the hidden tests, against /workspace; one JUnit report for each.

Standard library only (the sandbox has the system python3). Exit 0 iff every test of both passed.
reports/public.xml is a deployable channel (the agent could run these tests itself);
reports/hidden.xml, stdout and stderr are hidden: they decide the outcome, never reach a reviser.
"""

import os
import sys
import unittest
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
WORKSPACE = os.environ.get("GATESTATS_WORKSPACE", os.getcwd())
sys.path.insert(0, WORKSPACE)


class Recorder(unittest.TextTestResult):
    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.cases = []

    def addSuccess(self, test):  # noqa: N802 - unittest hook
        super().addSuccess(test)
        self.cases.append((test, "ok", None))

    def addFailure(self, test, err):  # noqa: N802 - unittest hook
        super().addFailure(test, err)
        self.cases.append((test, "failure", self._exc_info_to_string(err, test)))

    def addError(self, test, err):  # noqa: N802 - unittest hook
        super().addError(test, err)
        self.cases.append((test, "error", self._exc_info_to_string(err, test)))


def run(kind):
    suite = unittest.defaultTestLoader.discover(os.path.join(HERE, kind), top_level_dir=os.path.join(HERE, kind))
    result = unittest.TextTestRunner(resultclass=Recorder, verbosity=2, stream=sys.stderr).run(suite)
    root = ET.Element("testsuite", name=kind, tests=str(len(result.cases)))
    for test, outcome, detail in result.cases:
        cls, _, name = test.id().rpartition(".")
        case = ET.SubElement(root, "testcase", classname=cls, name=name)
        if outcome != "ok":
            lines = detail.strip().splitlines()
            ET.SubElement(case, outcome, message=lines[-1]).text = detail
    os.makedirs(os.path.join(WORKSPACE, "reports"), exist_ok=True)
    ET.ElementTree(root).write(os.path.join(WORKSPACE, "reports", f"{kind}.xml"), encoding="utf-8")
    return result.wasSuccessful()


if __name__ == "__main__":
    public = run("public")
    hidden = run("hidden")
    raise SystemExit(0 if public and hidden else 1)
