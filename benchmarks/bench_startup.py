"""Start-up cost of the ``gatestats`` command line, as ratios to ``python -c "import polars"``.

    .venv/bin/python benchmarks/bench_startup.py [--before DIR] [--repeat 7]

Each command runs as a child process of this script, with the project's interpreter, and is
measured from outside: wall time around the child, CPU time (user + system) of the child alone
from ``os.wait4``. The commands are interleaved (repetition 1 of every command, then repetition
2, ...), so a change in machine load touches them all alike; medians are reported, and each
median is divided by the median of ``import polars`` measured in the same run. The machine load
(``os.getloadavg``) is recorded before and after.

The commands:

- ``import polars``: ``python -c "import polars"``, the floor any polars-based CLI pays;
- ``--help``: ``gatestats --help``;
- ``analyze --help``: ``gatestats analyze --help``;
- ``analyze``: ``gatestats analyze tau.jsonl --k 1,2,3,4 --seed 0`` on the bundled τ-bench
  airline results (50 tasks × 4 trials), imported once beforehand with ``gatestats import
  tau-bench`` as the README shows; ``analyze --json``: the same, printing JSON (no terminal tables);
- ``validate``: ``gatestats validate tau.jsonl``;
- the other reading commands, each on bundled data: ``compare`` (two SWE-bench Verified
  submissions, 500 shared cases), ``rank`` (three of them), ``cost tau.jsonl``, ``cases list``
  (the bundled golden set) and ``calibrate`` (the README's LLMBar example, without ``-o``).

Beside them, the import floors of ``analyze`` (what its imports cost at the least, whatever
gatestats does): ``python -c "import polars, numpy"`` (the analysis' arrays), ``+ typer,
rich.table`` (the command line), the same with BLAS asked for one thread (``one BLAS thread``:
``OPENBLAS_NUM_THREADS=1``, ``MKL_NUM_THREADS=1``, as ``gatestats.cli.main`` asks before numpy
loads, so the floor numpy costs a command), ``import polars, typer, rich.table`` (the floor of a
command without numpy), ``+ typer, pydantic, rich.table`` (the command line under typer
0.29, which imports pydantic to coerce every parameter of a command it runs; pyproject.toml pins
typer below 0.29), and for comparison ``+ scipy.special`` (what the estimators' quantiles cost
before issue 28 item 2 stored them) and ``+ scipy.stats`` (what ``compare``, ``rank`` and
``calibrate`` import).

``gatestats`` is run as the console script does (``from gatestats.cli import main; main()``) with
``PYTHONPATH`` naming the source tree, so ``--before DIR`` measures another checkout (for example
``git clone -q /work/main /tmp/startup_before``) with the same virtual environment, side by side;
``--variant NAME=DIR`` adds further checkouts (for example HEAD with one change applied).
``--before-python PATH`` runs the ``before`` tree with another interpreter (for example the
virtual environment of the checkout measured, when the lock file changed a dependency); the
floors and the other trees use this script's interpreter.
Before measuring, every tree's modules and its interpreter's site-packages (which ``dev.py``
installs without bytecode) are compiled to bytecode (``compileall``), as an installed package is:
with ``PYTHONDONTWRITEBYTECODE`` set (as on the machines these benchmarks ran on) an editable
checkout would otherwise compile every gatestats module from source at every start, ~0.1-0.2 s
of CPU that no installed copy pays (issue 28, item 2: the runs before 2026-12-04 17:10 UTC included
it, for ``before`` and ``after`` alike).
Prints a Markdown table; writes ``benchmarks/_data/startup_last_run.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TAU_RAW = ROOT / "data" / "tau_bench" / "raw" / "gpt-4o-airline.json"
# The console script's body (see .venv/bin/gatestats), run with the tree named by PYTHONPATH.
_CLI = "import sys; sys.argv[0] = 'gatestats'; from gatestats.cli import main; sys.exit(main())"

#: BLAS on one thread, as :func:`gatestats.cli.one_blas_thread` asks before numpy loads.
_ONE_BLAS_THREAD = {"OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
#: ``import polars`` (every ratio's denominator), then the import floors of ``analyze``: each name,
#: the modules it imports and what it adds to the environment.
_FLOORS: dict[str, tuple[str, dict[str, str]]] = {
    "import polars": ("polars", {}),
    "import polars, numpy": ("polars, numpy", {}),
    "import polars, numpy, typer, rich.table": ("polars, numpy, typer, rich.table", {}),
    "import polars, numpy, typer, rich.table (one BLAS thread)": ("polars, numpy, typer, rich.table", _ONE_BLAS_THREAD),
    "import polars, typer, rich.table": ("polars, typer, rich.table", {}),
    "import polars, numpy, typer, pydantic, rich.table": ("polars, numpy, typer, pydantic, rich.table", {}),
    "import polars, numpy, scipy.special": ("polars, numpy, scipy.special", {}),
    "import polars, numpy, scipy.stats": ("polars, numpy, scipy.stats", {}),
}
SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"
_SWE_A, _SWE_B, _SWE_C = "20240920_solver", "20240924_solver", "20241001_nfactorial"
LLMBAR = ROOT / "data" / "llmbar_judge_swap" / "judgments.csv"
_LLMBAR_MAP = (
    "item=item_idx,label=label,verdict=winner_original_order,verdict_swapped=winner_swapped_order,"
    "judge=evaluator,rubric=strategy"
)
#: The other reading commands, each on bundled data (``RECORDS`` is the imported τ-bench file).
_READING: dict[str, list[str]] = {
    "compare": ["compare", str(SWE), "--baseline", _SWE_A, "--candidate", _SWE_B],
    "rank": ["rank", str(SWE), "--systems", f"{_SWE_A},{_SWE_B},{_SWE_C}"],
    "cost": ["cost", "RECORDS"],
    "cases list": ["cases", "list", "--set", str(ROOT / "data" / "golden_bugfix" / "cases")],
    "calibrate": [
        "calibrate", str(LLMBAR), "--where", "subset=Processed/MT-Bench", "--where", "evaluator=GPT-4",
        "--where", "strategy=Vanilla_NoRules", "--map", _LLMBAR_MAP, "--positive", "1", "--kind", "pairwise",
    ],
}  # fmt: skip


def _child(argv: list[str], pythonpath: str | None, extra: dict[str, str] | None = None) -> tuple[float, float, int]:
    """Run one child (``extra`` added to its environment); return (wall s, CPU s of the child alone, exit code)."""
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    env.update(extra or {})
    start = time.perf_counter()
    process = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    wall = time.perf_counter() - start
    process.returncode = os.waitstatus_to_exitcode(status)
    return wall, usage.ru_utime + usage.ru_stime, process.returncode


def _commands(
    records: Path, trees: dict[str, Path], pythons: dict[str, str]
) -> list[tuple[str, str, list[str], str | None]]:
    """(variant, command name, argv, PYTHONPATH) for every measured child."""
    rows: list[tuple[str, str, list[str], str | None]] = [
        ("-", name, [sys.executable, "-c", f"import {modules}"], None) for name, (modules, _) in _FLOORS.items()
    ]
    for variant, tree in trees.items():
        python = pythons.get(variant, sys.executable)
        path = f"{tree / 'src'}{os.pathsep}{tree / 'runner'}"
        cli = [python, "-c", _CLI]
        analyze = [*cli, "analyze", str(records), "--k", "1,2,3,4", "--seed", "0"]
        rows += [
            (variant, "--help", [*cli, "--help"], path),
            (variant, "analyze --help", [*cli, "analyze", "--help"], path),
            (variant, "analyze", analyze, path),
            (variant, "analyze --json", [*analyze, "--json"], path),
            (variant, "validate", [*cli, "validate", str(records)], path),
        ]
        rows += [
            (variant, name, [*cli, *(str(records) if a == "RECORDS" else a for a in argv)], path)
            for name, argv in _READING.items()
        ]
    return rows


def _import_tau(directory: Path) -> Path:
    out = directory / "tau.jsonl"
    argv = [sys.executable, "-c", _CLI, "import", "tau-bench", str(TAU_RAW)]
    argv += ["--system", "tau-bench/gpt-4o-airline", "-o", str(out)]
    subprocess.run(argv, check=True, env={**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'runner'}"})
    return out


def _uptime() -> str:
    done = subprocess.run(["uptime"], capture_output=True, text=True, check=False)
    return done.stdout.strip()


def _table(results: dict[tuple[str, str], dict[str, list[float]]], repeat: int) -> str:
    floor = results[("-", "import polars")]
    floor_cpu, floor_wall = statistics.median(floor["cpu"]), statistics.median(floor["wall"])
    lines = [
        f"| variant | command | CPU, median of {repeat} | CPU ÷ import polars "
        f"| wall, median of {repeat} | wall ÷ import polars |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for (variant, name), series in results.items():
        cpu, wall = statistics.median(series["cpu"]), statistics.median(series["wall"])
        lines.append(
            f"| {variant} | `{name}` | {cpu:.2f} s | {cpu / floor_cpu:.2f}× | {wall:.2f} s | {wall / floor_wall:.2f}× |"
        )
    return "\n".join(lines)


def main() -> None:
    """Measure, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", type=Path, help="another checkout to measure beside this one")
    parser.add_argument("--before-python", help="the interpreter of the --before tree (default: this one)")
    parser.add_argument(
        "--variant", action="append", default=[], metavar="NAME=DIR", help="a further checkout to measure (repeatable)"
    )
    parser.add_argument("--repeat", type=int, default=7, help="interleaved repetitions (default 7)")
    parser.add_argument("--only", nargs="*", help="measure only these commands (names as in the table)")
    args = parser.parse_args()
    trees = {} if args.before is None else {"before": args.before.resolve()}
    for given in args.variant:
        name, _, directory = given.partition("=")
        trees[name] = Path(directory).resolve()
    trees["after"] = ROOT
    pythons = {"before": args.before_python} if args.before_python else {}
    for variant, tree in trees.items():  # bytecode, as an installed copy has it (see the module docstring)
        compile_with = pythons.get(variant, sys.executable)
        subprocess.run([compile_with, "-m", "compileall", "-q", str(tree / "src"), str(tree / "runner")], check=True)
        # dev.py's install compiles no bytecode (uv): the dependencies too, or `import polars` compiles at each start.
        site = subprocess.run(
            [compile_with, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
            capture_output=True, text=True, check=True,
        ).stdout.strip()  # fmt: skip
        subprocess.run([compile_with, "-m", "compileall", "-qq", site], check=False)  # a few packages ship bad .py
    with tempfile.TemporaryDirectory() as tmp:
        records = _import_tau(Path(tmp))
        chosen = _commands(records, trees, pythons)
        commands = [c for c in chosen if not args.only or c[1] in {"import polars", *args.only}]
        results: dict[tuple[str, str], dict[str, list[float]]] = {
            (variant, name): {"cpu": [], "wall": []} for variant, name, _, _ in commands
        }
        load_before, uptime_before = os.getloadavg(), _uptime()
        for _ in range(args.repeat):
            for variant, name, argv, path in commands:
                wall, cpu, code = _child(argv, path, _FLOORS[name][1] if variant == "-" else None)
                if code != 0:
                    msg = f"{variant} {name!r} exited with {code}: {argv}"
                    raise SystemExit(msg)
                results[(variant, name)]["cpu"].append(cpu)
                results[(variant, name)]["wall"].append(wall)
        load_after, uptime_after = os.getloadavg(), _uptime()
    print(f"uptime before: {uptime_before}")
    print(f"uptime after:  {uptime_after}")
    print(f"CPUs: {os.cpu_count()}; python {sys.version.split()[0]}")
    print(_table(results, args.repeat))
    out = ROOT / "benchmarks" / "_data" / "startup_last_run.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    payload = {
        "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "load_before": load_before,
        "load_after": load_after,
        "uptime_before": uptime_before,
        "uptime_after": uptime_after,
        "repeat": args.repeat,
        "trees": {k: str(v) for k, v in trees.items()},
        "pythons": {k: pythons.get(k, sys.executable) for k in trees},
        "results": [{"variant": v, "command": n, **series} for (v, n), series in results.items()],
    }
    out.write_text(json.dumps(payload, indent=2) + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
