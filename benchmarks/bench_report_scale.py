"""Time `gatestats report VERDICT` of a large verdict (1M, 10M records) from two source trees, interleaved.

Issue 28, items 4-5. For each of ``--repeat`` rounds, in this order: the report from ``--before SRC``
(``SRC/src`` first on ``PYTHONPATH``, the same virtual environment; e.g. ``git archive <commit> src |
tar -x -C SRC``), then from this tree; each a child process in a fresh directory under ``--work``
(``gatestats report VERDICT --json --renderer jupyter``). Per run: exit status, wall time around the
child, CPU time (user + system) and peak RSS of the child and the descendants it waited for
(``os.wait4``: the Jupyter kernel and the reader's workers included), the render's own seconds
(``seconds_render`` of ``--json``), the 1-minute load average before and after, and the sha256 of
``report.html`` (equal when the two trees write the same page byte for byte). The verdict's record
files are read where the verdict names them (absolute paths: make the verdict with absolute
``--baseline``/``--candidate``).

Usage::

    git archive <commit> src | tar -x -C /tmp/before
    .venv/bin/python benchmarks/bench_report_scale.py VERDICT --before /tmp/before --repeat 2 --work /tmp/rs
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

GATESTATS = Path(sys.executable).with_name("gatestats")
ROOT = Path(__file__).resolve().parents[1]


def run(label: str, src: Path, verdict: Path, work: Path) -> dict[str, Any]:
    """One ``gatestats report`` from ``src`` in a fresh directory under ``work``; its measurements."""
    cwd = work / f"{label}-{time.time_ns()}"
    cwd.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": str(src / "src")}
    load0 = os.getloadavg()[0]
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    command = [str(GATESTATS), "report", str(verdict), "--json", "--renderer", "jupyter", "--out", str(cwd / "reports")]
    with (cwd / "stdout.txt").open("wb") as out, (cwd / "stderr.txt").open("wb") as err:
        process = subprocess.Popen(command, cwd=cwd, stdout=out, stderr=err, env=env)
        _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    row: dict[str, Any] = {
        "tree": label,
        "exit": os.waitstatus_to_exitcode(status),
        "wall_s": round(wall, 2),
        "cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "cpu_tree_s": round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 2),
        "peak_rss_mib": round(usage.ru_maxrss / 1024),
        "load_before": round(load0, 2),
        "load_after": round(os.getloadavg()[0], 2),
    }
    try:
        body = json.loads((cwd / "stdout.txt").read_text(encoding="utf-8"))
        row["seconds_render"] = round(float(body["seconds_render"]), 2)
        html = Path(body["html_path"])
        html = html if html.is_absolute() else cwd / html
        row["html_sha256"] = hashlib.sha256(html.read_bytes()).hexdigest()[:16]
        row["html_mib"] = round(html.stat().st_size / 2**20, 1)
    except (OSError, ValueError, KeyError) as exc:
        row["error"] = f"{type(exc).__name__}: {exc}"
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("verdict", type=Path)
    parser.add_argument("--before", type=Path, required=True, help="a source tree with src/ inside")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--work", type=Path, required=True, help="where each run's directory is made")
    parser.add_argument("--only", choices=("before", "after"), default=None, help="run one tree only")
    args = parser.parse_args()
    if not (args.before / "src" / "gatestats").is_dir():
        parser.error(f"--before {args.before}: no src/gatestats inside")
    verdict = args.verdict.resolve()
    rows = []
    for _ in range(args.repeat):
        for label, src in (("before", args.before), ("after", ROOT)):
            if args.only not in (None, label):
                continue
            row = run(label, src.resolve(), verdict, args.work)
            print(json.dumps(row), flush=True)
            rows.append(row)
    print("\n| tree | exit | CPU s | wall s | render s | peak RSS MiB | load | report.html sha256 |")
    print("|---|---:|---:|---:|---:|---:|---|---|")
    for r in rows:
        print(
            f"| {r['tree']} | {r['exit']} | {r['cpu_s']} | {r['wall_s']} | {r.get('seconds_render')} | "
            f"{r['peak_rss_mib']} | {r['load_before']} → {r['load_after']} | {r.get('html_sha256')} |"
        )


if __name__ == "__main__":
    main()
