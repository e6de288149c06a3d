"""Console-script command lines run one after another in one fresh interpreter, and what each did.

The script is ``gatestats``' own body (``gatestats.cli.main``) for each command line in turn, its stdout
to a file of its own. After each it records the exit code, the stdout, what is in ``sys.modules`` so far
(cumulative) and what that command line added (new), the garbage collections of each generation while
it ran, and the collector's thresholds after it. Used by tests/cli/test_import_discipline.py (what a
command imports), tests/cli/test_gc_threshold.py (what the collector did) and the two tests of commands without
numpy (:func:`assert_numpy_free_and_numpys_output`): one interpreter instead of one per command line.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
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


def assert_numpy_free_and_numpys_output(
    command_lines: Sequence[tuple[str | Path, ...]], loader: tuple[str | Path, ...]
) -> None:
    """The command lines, run alone, import no numpy and print what they print after ``loader`` loaded numpy.

    A command with a path in Python numbers while numpy is not loaded (``analyze``: estimators/small.py;
    ``compare``: paired/small.py) must print numpy's path's bytes: the lines run in one fresh interpreter alone,
    then in another after ``loader`` (a command line that imports numpy), where each takes numpy's path.

    Parameters
    ----------
    command_lines
        The command lines, without ``gatestats``.
    loader
        A command line that loads numpy.
    """
    alone = run_batch(*command_lines)
    loaded, *after = run_batch(loader, *command_lines)
    assert "numpy" in loaded["loaded"]
    assert alone[-1]["code"] == 0
    assert "numpy" not in alone[-1]["loaded"]  # after every command line (what is loaded only grows)
    for line, floats, numpy in zip(command_lines, alone, after, strict=True):
        assert floats["code"] == numpy["code"] == 0, line
        assert floats["stdout"] == numpy["stdout"], line
        assert floats["stdout"].strip(), line
