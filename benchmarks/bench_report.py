"""Benchmark the release report: 500 cases x 2 systems x 4 trials -> gate verdict -> report rendered offline.

The data (written once per ``--seed`` to ``benchmarks/_data/report_bench/``, git-ignored) are two
run sets as ``gatestats run`` writes them (manifest + ``records.jsonl``), with the policy registered
in the candidate's manifest before its first record:

- 500 cases, each with a difficulty ``theta ~ Beta(2, 0.8)``; the baseline passes a trial with
  probability ``theta``, the candidate with ``expit(logit(theta) + 0.3)``; 12 ``security`` cases
  (a severe slice) are easy (0.995); every case carries one of 6 other slices;
- about 1% ``resource_killed`` (bound ``wall_clock`` or ``memory``) and 0.5% ``infra_error``
  retried once as attempt 1;
- cost parts per attempt (model, tool, execution), machine seconds, start/end timestamps, and
  human review (3 reviewers, 5% of trials, 6-20 minutes, some overlapping);
- the policy: k = 4, a paired non-inferiority rule, a pass^4 floor, a pass@4 warn rule, a
  per-slice paired rule, ``max_cost_increase = 0.2`` (review rate 90 USD/h, 2,000 resamples).

Each run is its own subprocess (interpreter start-up and imports included, as a user sees it):
``load_policy`` + ``load_record_set`` x 2 + ``evaluate_gate`` + ``write_verdict`` (the gate), then
``build_release_report(verdict, renderer="jupyter")`` into a fresh ``--out`` (the report: data,
charts as SVG + PNG, the ``.qmd`` executed by a Jupyter kernel, the offline HTML page). The child
reports its phases; the parent measures the wall time around it and waits (up to ``--idle-wait``
seconds) for the machine to go quiet first. The target of the issue: <= 60 s on 2 cores.

Usage::

    .venv/bin/python benchmarks/bench_report.py                # 3 runs
    .venv/bin/python benchmarks/bench_report.py --repeat 1 --idle-wait 0

``--versus-notebook VERDICT`` (issue 28, item 4) measures instead ``gatestats report VERDICT``
against a trivial ``jupyter nbconvert --to html --execute`` of a one-cell notebook importing
polars, interleaved in one run (``--repeat`` rounds, default 5; each command a child process in a
fresh directory; CPU = user + system of the child and the descendants it waited for, the Jupyter
kernels included, from ``os.wait4``; wall around the child; the 1-minute load average before each
command). ``--before SRC`` adds the report of another source tree (``SRC/src`` put first on
``PYTHONPATH``, the same virtual environment; e.g. ``git archive <commit> src | tar -x -C SRC``)
to each round. The medians and the ratios to the trivial render are printed as a Markdown table::

    .venv/bin/python benchmarks/bench_report.py --versus-notebook build/demo/<stamp>/verdict.json --before /tmp/old
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

BENCH_DIR = Path(__file__).resolve().parent
DATA_DIR = BENCH_DIR / "_data" / "report_bench"
TARGET_S = 60.0
REGISTERED = "2026-11-01T08:00:00Z"
POLICY = """format = "gatestats-policy/1"
name = "bench-release"
version = "1"
k = 4
min_cases = 100
min_trials = 4
max_infra_error_rate = 0.05
on_insufficient_evidence = "block"
multiplicity = "holm"
severe_slices = ["security"]
max_cost_increase = 0.2

[baseline]
system = "baseline"

[candidate]
system = "candidate"
pins = { model_id = "model-new" }

[cost]
review_rate_usd_per_hour = 90.0
n_resamples = 2000

[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = 0.03

[[rules]]
name = "reliability floor"
metric = "pass_hat_k"
threshold = 0.4

[[rules]]
name = "capability"
metric = "pass_at_k"
threshold = 0.8
action = "warn"

[[rules]]
name = "billing non-inferior"
metric = "pass_rate"
slice = "billing"
test = "paired"
margin = 0.05
"""
SLICES = ("billing", "search", "auth", "export", "ui", "api")


def _iso(seconds: float) -> str:
    return (
        (dt.datetime(2026, 11, 1, 9, tzinfo=dt.UTC) + dt.timedelta(seconds=seconds)).isoformat().replace("+00:00", "Z")
    )


def _sealed(*run_sets: Path) -> bool:
    """Whether each run set has records sealed in its manifest (data of an older benchmark are rewritten)."""
    manifests = [r / "manifest.json" for r in run_sets]
    return all(m.is_file() and "records_seal" in json.loads(m.read_text(encoding="utf-8")) for m in manifests)


def make_data(root: Path, *, cases: int, trials: int, seed: int) -> tuple[Path, Path, Path]:
    """Write the policy and the two run sets under ``root`` (once; reused when present)."""
    import hashlib

    import numpy as np

    from gatestats_runner.store import encode_record, seal_records

    policy_path, base, cand = root / "policy.toml", root / "baseline", root / "candidate"
    if _sealed(base, cand):
        return policy_path, base, cand
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    policy_path.write_text(POLICY, encoding="utf-8")
    digest = "sha256:" + hashlib.sha256(policy_path.read_bytes()).hexdigest()
    rng = np.random.default_rng(seed)
    theta = rng.beta(2.0, 0.8, size=cases)
    security = set(range(0, cases, max(1, cases // 12))[:12])
    case_ids = [f"case-{i:04d}" for i in range(cases)]
    versions = {c: "v-" + hashlib.sha1(c.encode()).hexdigest()[:10] for c in case_ids}
    for system, shift, path in (("baseline", 0.0, base), ("candidate", 0.3, cand)):
        path.mkdir()
        records: list[dict[str, Any]] = []
        clock = 0.0
        for i, case in enumerate(case_ids):
            p = 0.995 if i in security else 1 / (1 + np.exp(-(np.log(theta[i] / (1 - theta[i] + 1e-9)) + shift)))
            slices = ["security"] if i in security else [SLICES[i % len(SLICES)]]
            for trial in range(trials):
                attempts = 2 if rng.random() < 0.005 else 1
                for attempt in range(attempts):
                    u = rng.random()
                    if attempt < attempts - 1:
                        outcome, bound = "infra_error", None
                    elif u < 0.01:
                        outcome, bound = "resource_killed", ("wall_clock" if rng.random() < 0.5 else "memory")
                    else:
                        outcome, bound = ("passed" if rng.random() < p else "failed"), None
                    seconds = float(rng.gamma(4.0, 15.0))
                    record: dict[str, Any] = {
                        "schema_version": 1,
                        "record_id": f"{system}-{case}-{trial}-{attempt}",
                        "run_set_id": f"rs-{system}",
                        "system": system,
                        "case_id": case,
                        "case_version": versions[case],
                        "trial": trial,
                        "attempt": attempt,
                        "outcome": outcome,
                        "bound": bound,
                        "model_id": "model-new" if system == "candidate" else "model-old",
                        "prompt_version": "p-7" if system == "candidate" else "p-6",
                        "system_digest": f"sd-{system}",
                        "task_set_version": "cs-bench-1",
                        "slices": slices,
                        "cost_model_usd": round(float(rng.lognormal(-4.0, 0.5)), 6),
                        "cost_tool_usd": round(float(rng.lognormal(-6.0, 0.5)), 6),
                        "cost_execution_usd": round(seconds / 3600 * 0.4, 6),
                        "machine_seconds": round(seconds, 3),
                        "started_at": _iso(clock),
                        "ended_at": _iso(clock + seconds),
                    }
                    if outcome == "passed" and rng.random() < 0.05:
                        start = clock + seconds + float(rng.uniform(0, 600))
                        record["reviewer"] = f"reviewer-{int(rng.integers(3))}"
                        record["review_started_at"] = _iso(start)
                        record["review_ended_at"] = _iso(start + float(rng.uniform(360, 1200)))
                    records.append(record)
                    clock += seconds / 2
        (path / "records.jsonl").write_bytes(b"".join(encode_record(r) for r in records))  # checksummed lines
        manifest = {
            "format": "gatestats-run-set/1",
            "run_set_id": f"rs-{system}",
            "complete": True,
            "case_set_version": "cs-bench-1",
            "cases": [{"case_id": c, "case_version": versions[c]} for c in case_ids],
            "trials": trials,
            "system": system,
            "policy_digest": digest if system == "candidate" else None,
            "policy_registered_at": REGISTERED if system == "candidate" else None,
            "records_seal": seal_records(path),  # as the runner seals a complete run set
        }
        (path / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return policy_path, base, cand


def _child(root: Path, out: Path, report_path: Path) -> None:
    t0 = time.perf_counter()
    from gatestats.gate import evaluate_gate, load_policy, load_record_set, write_verdict
    from gatestats.report.release import build_release_report

    t1 = time.perf_counter()
    policy = load_policy(root / "policy.toml")
    verdict = evaluate_gate(policy, load_record_set(root / "baseline"), load_record_set(root / "candidate"))
    verdict_path = write_verdict(verdict, out / "verdict.json")
    t2 = time.perf_counter()
    report = build_release_report(verdict_path, out=out / "reports", renderer="jupyter")
    t3 = time.perf_counter()
    n_records = sum(1 for _ in (root / "candidate" / "records.jsonl").open()) + sum(
        1 for _ in (root / "baseline" / "records.jsonl").open()
    )
    result = {
        "imports_s": t1 - t0,
        "gate_s": t2 - t1,
        "report_s": t3 - t2,
        "report_render_s": report.seconds_render,
        "verdict": verdict.verdict,
        "records": n_records,
        "renderer": f"{report.renderer} ({report.renderer_version})",
        "html_bytes": report.html_path.stat().st_size,
        "charts": list(report.charts),
    }
    report_path.write_text(json.dumps(result), encoding="utf-8")


def _busy(seconds: float = 1.0) -> float:
    """Share of the CPUs busy over ``seconds`` (from /proc/stat)."""

    def sample() -> tuple[int, int]:
        fields = [int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:]]
        return fields[3] + fields[4], sum(fields)

    idle0, total0 = sample()
    time.sleep(seconds)
    idle1, total1 = sample()
    return 1.0 - (idle1 - idle0) / max(1, total1 - total0)


def _wait_for_idle(limit: float) -> float:
    deadline = time.monotonic() + limit
    busy = _busy()
    while busy > 0.25 and time.monotonic() < deadline:
        busy = _busy(2.0)
    return busy


TRIVIAL_CELL = "import polars as pl\n\npl.DataFrame({'a': [1, 2, 3]})"


def _timed(command: list[str], cwd: Path, env: dict[str, str] | None = None) -> dict[str, float]:
    """Run ``command`` in ``cwd``; its wall time, CPU (user + system, waited-for descendants included), load before."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    process = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - started
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{' '.join(command)} failed with status {os.waitstatus_to_exitcode(status)}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "load": load}


def versus_notebook(verdict: Path, *, repeat: int, before: Path | None) -> None:
    """``gatestats report`` on ``verdict`` against a trivial notebook render, interleaved (see the docstring)."""
    import nbformat

    bindir = Path(sys.executable).parent
    verdict = verdict.resolve()
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = {
        "trivial nbconvert": (
            [
                str(bindir / "jupyter"),
                "nbconvert",
                "--to",
                "html",
                "--execute",
                "trivial.ipynb",
                "--log-level",
                "ERROR",
            ],
            None,
        ),
        "report": ([str(bindir / "gatestats"), "report", str(verdict), "--out", "reports"], None),
    }
    if before is not None:
        env = {**os.environ, "PYTHONPATH": str((before / "src").resolve())}
        commands["report (before)"] = (commands["report"][0], env)
    notebook = nbformat.v4.new_notebook()  # type: ignore[no-untyped-call]
    notebook.cells.append(nbformat.v4.new_code_cell(TRIVIAL_CELL))  # type: ignore[no-untyped-call]
    notebook.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    runs: dict[str, list[dict[str, float]]] = {name: [] for name in commands}
    print(f"load average before: {os.getloadavg()}")
    for round_ in range(1, repeat + 1):
        for name, (command, env) in commands.items():
            with tempfile.TemporaryDirectory(prefix="bench-report-nb-") as tmp:
                nbformat.write(notebook, Path(tmp) / "trivial.ipynb")  # type: ignore[no-untyped-call]
                run = _timed(command, Path(tmp), env)
            runs[name].append(run)
            print(
                f"round {round_} {name}: cpu {run['cpu_s']:.2f} s, wall {run['wall_s']:.2f} s, load {run['load']:.2f}"
            )
    print(f"load average after: {os.getloadavg()}")
    trivial = {k: statistics.median(r[k] for r in runs["trivial nbconvert"]) for k in ("cpu_s", "wall_s")}
    lines = [
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}; {os.cpu_count()} CPUs, "
        f"python {platform.python_version()}",
        f"- verdict: {verdict}; {repeat} rounds, interleaved",
        "",
        "| command | CPU s (median) | CPU s (each round) | wall s (median) | wall s (each round) "
        "| CPU ratio | wall ratio |",
        "|---|---:|---|---:|---|---:|---:|",
    ]
    for name, rows in runs.items():
        cpu = statistics.median(r["cpu_s"] for r in rows)
        wall = statistics.median(r["wall_s"] for r in rows)
        each_cpu = ", ".join(f"{r['cpu_s']:.2f}" for r in rows)
        each_wall = ", ".join(f"{r['wall_s']:.2f}" for r in rows)
        lines.append(
            f"| {name} | {cpu:.2f} | {each_cpu} | {wall:.2f} | {each_wall} | {cpu / trivial['cpu_s']:.2f} | "
            f"{wall / trivial['wall_s']:.2f} |"
        )
    loads = [r["load"] for rows in runs.values() for r in rows]
    lines += ["", f"1-minute load average before the commands: {min(loads):.2f}-{max(loads):.2f}"]
    print("\n".join(lines))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=500)
    parser.add_argument("--trials", type=int, default=4)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--idle-wait", type=float, default=120.0)
    parser.add_argument("--versus-notebook", type=Path, default=None, metavar="VERDICT")
    parser.add_argument("--before", type=Path, default=None, metavar="SRC")
    parser.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--report", type=Path, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.before is not None and not (args.before / "src" / "gatestats").is_dir():
        # without this check PYTHONPATH named nothing and the "before" row silently ran today's code
        parser.error(f"--before: {args.before} has no src/gatestats (give the tree's root, not its src/)")
    if args.child:
        _child(args.data, args.out, args.report)
        return
    if args.versus_notebook is not None:
        versus_notebook(args.versus_notebook, repeat=args.repeat, before=args.before)
        return
    root = DATA_DIR / f"c{args.cases}-t{args.trials}-s{args.seed}"
    start = time.perf_counter()
    make_data(root, cases=args.cases, trials=args.trials, seed=args.seed)
    print(f"data: {root} ({time.perf_counter() - start:.1f} s)")
    runs = []
    for _ in range(args.repeat):
        busy = _wait_for_idle(args.idle_wait) if args.idle_wait > 0 else _busy()
        with tempfile.TemporaryDirectory(prefix="bench-report-") as tmp:
            report_path = Path(tmp) / "child.json"
            command = [
                sys.executable,
                __file__,
                "--child",
                "--data",
                str(root),
                "--out",
                tmp,
                "--report",
                str(report_path),
            ]
            t0 = time.perf_counter()
            process = subprocess.Popen(command)
            _, status, usage = os.wait4(process.pid, 0)
            wall = time.perf_counter() - t0
            if os.waitstatus_to_exitcode(status) != 0:
                sys.exit(f"the child failed with status {os.waitstatus_to_exitcode(status)}")
            child = json.loads(report_path.read_text())
        run = {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime, "busy_before": busy, **child}
        runs.append(run)
        print(json.dumps(run))
    import polars as pl

    walls = [r["wall_s"] for r in runs]
    best = min(walls)
    lines = [
        f"- date: {dt.datetime.now(dt.UTC):%Y-%m-%d %H:%M UTC}; {os.cpu_count()} CPUs, {platform.platform()}, "
        f"python {platform.python_version()}, polars {pl.__version__}",
        f"- data: {args.cases} cases x 2 systems x {args.trials} trials = {runs[0]['records']} records "
        f"(seed {args.seed}); verdict `{runs[0]['verdict']}`; renderer {runs[0]['renderer']}; "
        f"page {runs[0]['html_bytes'] / 1024:.0f} KiB; charts {', '.join(runs[0]['charts'])}",
        "",
        "| run | wall s | CPU s | imports s | gate s | report s | of which render s | CPUs busy before |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for i, r in enumerate(runs, 1):
        lines.append(
            f"| {i} | {r['wall_s']:.2f} | {r['cpu_s']:.2f} | {r['imports_s']:.2f} | {r['gate_s']:.2f} | "
            f"{r['report_s']:.2f} | {r['report_render_s']:.2f} | {r['busy_before']:.0%} |"
        )
    verdict = "met" if best <= TARGET_S else "MISSED"
    lines += [
        "",
        f"Best wall time {best:.2f} s, median {statistics.median(walls):.2f} s: target <= {TARGET_S:.0f} s {verdict}.",
    ]
    text = "\n".join(lines)
    print(text)
    (BENCH_DIR / "_data" / "report_last_run.md").write_text(text + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
