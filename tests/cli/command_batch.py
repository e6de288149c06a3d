"""Console-script command lines run one after another in one fresh interpreter, and what each did.

The script is ``gatestats``' own body (``gatestats.cli.main``) for each command line in turn, its stdout
to a file of its own. After each it records the exit code, the stdout, what is in ``sys.modules`` so far
(cumulative) and what that command line added (new), the garbage collections of each generation while
it ran, and the collector's thresholds after it. Used by tests/cli/test_import_discipline.py (what a
command imports) and tests/cli/test_gc_threshold.py (what the collector did): one interpreter instead of
one per command line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]

_BATCH = """
import gc, json, os, sys, tempfile
from gatestats.cli import main
results, seen = [], set(sys.modules)
for argv in json.loads(sys.argv[1]):
    sys.argv = ["gatestats", *argv]
    with tempfile.TemporaryFile("w+", encoding="utf-8") as out:
        sys.stdout.flush()
        saved = os.dup(1)
        os.dup2(out.fileno(), 1)
        before = [s["collections"] for s in gc.get_stats()]
        try:
            main()
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
        finally:
            after = [s["collections"] for s in gc.get_stats()]
            sys.stdout.flush()
            os.dup2(saved, 1)
            os.close(saved)
        out.seek(0)
        stdout = out.read()
    modules = set(sys.modules)
    results.append({
        "code": code, "stdout": stdout, "loaded": sorted({name.split(".")[0] for name in modules}),
        "commands": sorted(name for name in modules if name.startswith("gatestats.cli.") and "._" not in name),
        "modules": sorted(modules), "new": sorted(modules - seen),
        "collections": [a - b for a, b in zip(after, before)], "threshold": list(gc.get_threshold()),
    })
    seen = modules
print(json.dumps(results), file=sys.stderr)
"""


def run_batch(*argvs: tuple[str | Path, ...]) -> list[dict[str, Any]]:
    """Run ``gatestats ARGV`` for each argv, one after another in one fresh interpreter.

    Parameters
    ----------
    *argvs
        The command lines, without ``gatestats``.

    Returns
    -------
    list of dict
        One report per command line (see the module docstring), in order.
    """
    arguments = json.dumps([list(map(str, argv)) for argv in argvs])
    done = subprocess.run(  # stdin not a terminal: a command's width is the same in a terminal and under xdist
        [sys.executable, "-c", _BATCH, arguments],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    reports: list[dict[str, Any]] = json.loads(done.stderr.strip().splitlines()[-1])
    assert len(reports) == len(argvs)
    return reports
