"""Reading a 200 MB runner record file strictly: `gatestats validate`, before and after, in one run.

    .venv/bin/python benchmarks/bench_validate.py [--mb 200] [--before REV | --before-src DIR] [--repeat 2] [--analyze]

Writes a runner-like ``records.jsonl`` of about ``--mb`` MB (checksummed canonical lines, as the
runner writes them), and a copy whose last line is torn. Then runs ``gatestats validate`` (and,
with ``--analyze``, ``gatestats analyze``) on each, as a child process, with the source of this
checkout ("after") and with the source of git revision ``--before`` ("before": ``git archive`` of
its ``src/`` and ``runner/`` into a temporary directory, run with the same virtual environment;
or an existing copy given with ``--before-src``). The runs are interleaved (before, after,
before, after, ...) so that the load of a shared machine hits both alike. For each run: wall
time, CPU time (user + system of the child alone) and peak RSS (``ru_maxrss`` from
``os.wait4``); the load average is printed beside the table. Compare the ratios measured here
side by side, not absolute times across runs. Prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "runner"))

from gatestats_runner.store import encode_record  # noqa: E402


def _record(i: int) -> dict[str, object]:
    case = f"case-{i // 10:06d}"
    return {
        "schema_version": 1,
        "record_id": f"rec-{i:09d}",
        "run_set_id": "rs-20261201T000000Z-bench000",
        "system": "candidate",
        "case_id": case,
        "case_version": "sha256:" + f"{i // 10:064x}",
        "trial": i % 10,
        "attempt": 0,
        "candidate_digest": "sha256:" + "b" * 64,
        "system_digest": "sha256:" + "c" * 64,
        "model_id": "model-2026-11",
        "prompt_version": "prompt-v7",
        "outcome": "passed" if i % 3 else "failed",
        "exit_code": 0 if i % 3 else 1,
        "failed_check": None if i % 3 else "tests/test_fix.py::test_edge FAILED",
        "graders": [{"name": "hidden-tests", "kind": "code", "verdict": "passed" if i % 3 else "failed"}],
        "slices": ["security"] if i % 7 == 0 else [],
        "cost_usd": 0.0123,
        "tokens_input": 1200,
        "tokens_output": 340,
        "machine_seconds": 1.5,
        "started_at": "2026-12-01T10:00:00.000+00:00",
        "ended_at": "2026-12-01T10:00:01.500+00:00",
        "stdout_path": f"trials/{case}/t{i % 10:04d}-a0/stdout",
        "stdout_digest": "sha256:" + "d" * 64,
        "stderr_path": f"trials/{case}/t{i % 10:04d}-a0/stderr",
        "stderr_digest": "sha256:" + "e" * 64,
        "source": "gatestats-runner 0.1.0",
    }


def _write(path: Path, megabytes: int) -> int:
    target = megabytes * 1_000_000
    written = n = 0
    with path.open("wb") as handle:
        while written < target:
            line = encode_record(_record(n))
            handle.write(line)
            written += len(line)
            n += 1
    return n


def _child(python: str, pythonpath: str, args: list[str]) -> dict[str, float | int]:
    env = {**os.environ, "PYTHONPATH": pythonpath}
    start = time.perf_counter()
    process = subprocess.Popen(
        [python, "-c", "from gatestats.cli import main; main()", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    assert process.stderr is not None
    stderr = process.stderr.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    return {
        "exit": os.waitstatus_to_exitcode(status),
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_mib": usage.ru_maxrss / 1024,
        "stderr_bytes": len(stderr),
    }


def _before_source(options: argparse.Namespace, work: Path) -> Path:
    """The "before" source: ``--before-src``, or ``git archive`` of ``--before`` (read-only for the repository)."""
    if options.before_src is not None:
        return Path(options.before_src).resolve()
    target = work / "before"
    target.mkdir()
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", options.before, "src", "runner"], check=True, capture_output=True
    )
    subprocess.run(["tar", "-x", "-C", str(target)], input=archive.stdout, check=True)
    return target


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--before", default="44de6d1", help="git revision to compare with")
    parser.add_argument("--before-src", default=None, help="a copy with src/ and runner/ to compare with instead")
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--analyze", action="store_true", help="also time `gatestats analyze FILE --k 1,2,3`")
    options = parser.parse_args()
    python = sys.executable
    with tempfile.TemporaryDirectory(prefix="gatestats-bench-validate-") as tmp:
        work = Path(tmp)
        good = work / "records.jsonl"
        n = _write(good, options.mb)
        size_mb = good.stat().st_size / 1e6
        torn = work / "torn.jsonl"
        shutil.copyfile(good, torn)
        with torn.open("r+b") as handle:
            handle.truncate(good.stat().st_size - 40)
        before = _before_source(options, work)
        label_before = f"before ({options.before_src or options.before})"
        sources = {
            label_before: f"{before / 'src'}:{before / 'runner'}",
            "after (this checkout)": f"{ROOT / 'src'}:{ROOT / 'runner'}",
        }
        commands = [("validate", []), *([("analyze", ["--k", "1,2,3"])] if options.analyze else [])]
        runs: dict[tuple[str, str, str], list[dict[str, float | int]]] = {}
        load = [os.getloadavg()[0]]
        for _ in range(options.repeat):
            for command, extra in commands:
                for name, file in (("valid file", good), ("torn last line", torn)):
                    for label, path in sources.items():
                        result = _child(python, path, [command, str(file), *extra])
                        runs.setdefault((label, command, name), []).append(result)
                        load.append(os.getloadavg()[0])
    print(f"file: {n:,} records, {size_mb:.0f} MB; best of {options.repeat} interleaved runs; peak: largest run")
    print(f"1-minute load average during the runs: {min(load):.1f} to {max(load):.1f}\n")
    print("| source | command | input | exit | wall (s) | CPU (s) | peak RSS (MiB) |")
    print("|---|---|---|---:|---:|---:|---:|")
    for (label, command, name), results in runs.items():
        best = min(results, key=lambda r: r["wall_s"])
        peak = max(r["peak_mib"] for r in results)
        cpu = min(r["cpu_s"] for r in results)
        print(f"| {label} | {command} | {name} | {best['exit']} | {best['wall_s']:.1f} | {cpu:.1f} | {peak:.0f} |")
    print(json.dumps({"records": n}))


if __name__ == "__main__":
    main()
