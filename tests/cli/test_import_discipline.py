"""Each command imports only what it uses: ``--help`` and ``validate`` never pay for statistics or reports.

Every check runs the console script's body in a fresh interpreter and reads ``sys.modules`` at exit,
so a module-level import anywhere on the path (``gatestats/__init__``, ``gatestats.cli``, a command
module) is caught. Command lines checked alike share one interpreter, run one after another (``_BATCH``:
what is imported so far after each is a superset of what it imports alone, so a module none may import is
caught as in a fresh interpreter; session 42: 13 interpreters where there were 50). Issue 17: the statistics (scipy, statsmodels), the record schema (pandera, which
brings pandas, hypothesis and typeguard), the report stack (altair, nbconvert, nbclient, zmq, bs4)
and ray cost about 4 s of CPU before any command did anything.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import typer

from gatestats.cli import COMMANDS, app
from tests.cli.command_batch import run_batch
from tests.conftest import make_record

ROOT = Path(__file__).resolve().parents[2]

#: The report stack (and ray): no reading command imports it.
_REPORT_STACK = ("altair", "nbconvert", "nbclient", "zmq", "bs4", "great_tables", "ray")
#: pydantic: typer 0.29 coerced every parameter of the command it ran through a pydantic TypeAdapter
#: (≈0.1 s CPU at every start, issue 28 item 2); typer is pinned below 0.29 (pyproject.toml), and no
#: command's normal run imports pydantic (pandera, which needs it, explains a bad record only).
_TYPER_COERCION = ("pydantic", "pydantic_core")
#: What no ``--help`` may import (listed explicitly: a new heavy dependency is added here on purpose). Since session 48
#: that includes polars and numpy: a command's options are words and numbers (gatestats.vocabulary imports polars on
#: first use), and `analyze --help` cost 0.26 CPU-s with polars, about 0.1 s without.
HELP_FORBIDDEN = (
    *_REPORT_STACK,
    *("scipy", "statsmodels", "pandera", "pandas", "hypothesis", "typeguard"),
    *_TYPER_COERCION,
    *("polars", "numpy"),
)
#: What ``validate`` may not import: the report stack, the statistics and pydantic (pandera reports a bad record),
#: and rich (~30 ms): its one line is written as it is (typer.echo).
VALIDATE_FORBIDDEN = (*_REPORT_STACK, "scipy", "statsmodels", *_TYPER_COERCION, "rich")
#: What ``analyze`` may not import (issue 28): the report stack, the tables, the schema's explainer,
#: a labels file's TOML reader and scipy, which only a bootstrap interval or an
#: uncommon confidence level needs (the common levels' quantiles are stored: estimators/quantiles.py).
#: The last two stay last (a test of the uncommon level allows them).
ANALYZE_FORBIDDEN = (
    *_REPORT_STACK,
    *("vl_convert", "statsmodels", "pandera", "pandas", "matplotlib"),
    *_TYPER_COERCION,
    *("scipy", "tomllib"),
)
#: Submodules no reading command's normal run imports: scipy's array-API layer pulled these (issue 28).
ANALYZE_FORBIDDEN_SUBMODULES = ("numpy.f2py", "numpy.ma", "numpy.testing", "numpy.random")
#: What every other reading command may not import: the report stack and pydantic.
READING_FORBIDDEN = (*_REPORT_STACK, "vl_convert", *_TYPER_COERCION)

# The console script's body, then the top-level packages and the command modules it left in sys.modules.
_CHILD = """
import json, sys
sys.argv = ["gatestats", *sys.argv[1:]]
from gatestats.cli import main
try:
    main()
    code = 0
except SystemExit as exc:
    code = exc.code if isinstance(exc.code, int) else 1
loaded = sorted({name.split(".")[0] for name in sys.modules})
commands = sorted(name for name in sys.modules if name.startswith("gatestats.cli.") and "._" not in name)
modules = sorted(sys.modules)
print(json.dumps({"code": code, "loaded": loaded, "commands": commands, "modules": modules}), file=sys.stderr)
"""


def _run(*args: str | Path) -> dict[str, Any]:
    """Run ``gatestats ARGS`` in a fresh interpreter; its exit code and what it imported."""
    done = subprocess.run(
        [sys.executable, "-c", _CHILD, *map(str, args)], capture_output=True, text=True, cwd=ROOT, check=False
    )
    report: dict[str, Any] = json.loads(done.stderr.strip().splitlines()[-1])
    report["stdout"] = done.stdout
    return report


# Several command lines in one interpreter, one after another (run_batch, tests/cli/command_batch.py; issue 28: a
# fresh interpreter per command line
# was ~0.3 CPU-s each, 18 CPU-s for this file). Each command line's stdout goes to a file of its own; after each,
# what is in sys.modules *so far* (cumulative) and what that command line added (new). A check that a module
# is NOT imported is read on the cumulative set: it holds for every command line of the batch exactly when it
# holds for each in a fresh interpreter (a module a command imports is in the cumulative set after it, and
# nothing leaves sys.modules). A check that a module IS imported is read on what the command line added, and
# only where the command lines before it are checked not to have imported it (so it was imported by this one).


def _heavy(report: dict[str, Any], forbidden: tuple[str, ...]) -> list[str]:
    return [name for name in forbidden if name in report["loaded"]]


def test_help_imports_no_command_and_no_heavy_module() -> None:
    report = _run("--help")
    assert report["code"] == 0
    assert "Commands:" in report["stdout"]
    assert _heavy(report, HELP_FORBIDDEN) == []
    assert report["commands"] == []  # the listing comes from COMMANDS, no command module is imported


@pytest.mark.parametrize("order", ["forward", "reverse"])
def test_command_help_imports_no_heavy_module_and_no_other_commands_module(order: str) -> None:
    # Every command's --help in one interpreter (see _BATCH), in both orders. After each, the command modules
    # loaded are exactly those of the commands run so far: a command whose module imports another command's
    # module is caught in the order where it comes first (so in one of the two), a heavy import at once.
    names = list(COMMANDS) if order == "forward" else list(reversed(COMMANDS))
    reports = run_batch(*((name, "--help") for name in names))
    for at, (name, report) in enumerate(zip(names, reports, strict=True)):
        assert report["code"] == 0, name
        assert "Usage: gatestats" in report["stdout"], name
        assert _heavy(report, HELP_FORBIDDEN) == [], name
        assert report["commands"] == sorted(COMMANDS[n].module for n in names[: at + 1]), (name, report["new"])


def _small_records(path: Path) -> Path:
    rows = [
        make_record(
            record_id=f"r{case}-{trial}", case_id=f"c{case}", trial=trial, outcome="passed" if trial else "failed"
        )
        for case in range(3)
        for trial in range(2)
    ]
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def test_validate_and_analyze_import_no_statistics_and_no_report_stack(tmp_path: Path) -> None:
    # One interpreter for validate and analyze's command lines (see _BATCH). validate comes first, so its
    # command modules are a fresh interpreter's; the uncommon level comes last, so the scipy it adds is its own.
    from gatestats.estimators.intervals import CLT_FROM_CASES

    small = _small_records(tmp_path / "small.jsonl")
    clt = tmp_path / "clt.jsonl"
    rows = [
        make_record(record_id=f"r{case}", case_id=f"c{case}", outcome="passed" if case % 3 else "failed")
        for case in range(CLT_FROM_CASES)
    ]
    clt.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    out = tmp_path / "out.json"
    levels = ("0.8", "0.9", "0.99")
    # An int, a float, a str, a repeatable str and a Path option, coerced by typer in this process:
    # none may bring pydantic (typer 0.29 built a pydantic TypeAdapter for each; pyproject.toml pins below).
    coerced = ("analyze", small, "--json", "--seed", "3", "--confidence-level", "0.9", "--by", "system")
    validate, as_json, terminal, typed, *common, with_clt, uncommon = run_batch(
        ("validate", small),
        # Three cases: Wilson intervals, whose t quantile at 95% comes from the stored table.
        ("analyze", small, "--k", "1,2", "--json"),
        ("analyze", small, "--k", "1,2", "--format=terminal"),
        (*coerced, "--label", "baseline=b", "--output", out),
        *(("analyze", small, "--json", "--confidence-level", level) for level in levels),
        ("analyze", clt, "--json"),
        # The rare paths (an uncommon level, the bootstrap) still ask scipy for their quantiles.
        ("analyze", small, "--json", "--confidence-level", "0.975"),
    )
    assert validate["code"] == 0
    assert validate["stdout"].startswith("ok: 6 records in 1 file(s)")
    assert _heavy(validate, VALIDATE_FORBIDDEN) == []
    assert validate["commands"] == ["gatestats.cli.validate"]

    for report in (as_json, terminal):
        assert report["code"] == 0
        assert _heavy(report, ANALYZE_FORBIDDEN) == []
        assert [name for name in ANALYZE_FORBIDDEN_SUBMODULES if name in report["modules"]] == []
    assert json.loads(as_json["stdout"])["systems"][0]["k"]["1"]["pass_at_k"]["method"] == "wilson"

    assert typed["code"] == 0
    assert json.loads(out.read_text(encoding="utf-8"))["confidence_level"] == 0.9
    assert "typer" in typed["loaded"]  # the check sees what the command line loaded
    assert _heavy(typed, _TYPER_COERCION) == []

    for level, report in zip(levels, common, strict=True):
        assert report["code"] == 0, level
        assert json.loads(report["stdout"])["confidence_level"] == float(level)
        assert _heavy(report, ("scipy",)) == [], level

    assert with_clt["code"] == 0
    assert json.loads(with_clt["stdout"])["systems"][0]["n_cases"] == CLT_FROM_CASES
    assert _heavy(with_clt, (*ANALYZE_FORBIDDEN, "scipy")) == []

    assert uncommon["code"] == 0
    assert "scipy" in {name.split(".")[0] for name in uncommon["new"]}  # imported by this command line
    assert _heavy(uncommon, ANALYZE_FORBIDDEN[:-2]) == []


def test_unknown_command_is_refused_with_a_suggestion_without_importing_commands() -> None:
    report = _run("analyz")
    assert report["code"] == 2
    assert report["commands"] == []


@pytest.mark.parametrize("name", list(COMMANDS))
def test_written_out_summary_is_the_first_paragraph_of_the_commands_help(name: str) -> None:
    command = typer.main.get_command(app).commands[name]  # type: ignore[attr-defined]
    first = (command.help or "").split("\f")[0].strip().split("\n\n")[0]
    assert COMMANDS[name].summary == " ".join(first.split())


def test_registration_envelope_name_matches_the_attestation_package() -> None:
    from gatestats.attest import REGISTRATION_ENVELOPE
    from gatestats.cli import policy

    assert policy.REGISTRATION_ENVELOPE == REGISTRATION_ENVELOPE


def test_package_attributes_resolve_on_first_use() -> None:
    import gatestats
    from gatestats.estimators import analyze
    from gatestats.records import load_records

    assert gatestats.analyze is analyze
    assert gatestats.load_records is load_records
    assert {"analyze", "load_records"} <= set(dir(gatestats))
    with pytest.raises(AttributeError, match="module 'gatestats' has no attribute 'nope'"):
        _ = gatestats.nope  # type: ignore[attr-defined]


#: Packages whose names are imported on first use (PEP 562), and what importing the package alone
#: must not load (issue 28, item 4: the report reads a verdict; ``import gatestats.gate`` loaded the
#: engine, the judges, the golden store and scipy, 1.12 CPU-s).
LAZY_PACKAGES = ("gatestats.gate", "gatestats.sequential", "gatestats.golden", "gatestats.records")
LAZY_FORBIDDEN = ("scipy", "statsmodels", "pandas", "gatestats.gate.engine", "gatestats.judges", "gatestats.importers")


def test_importing_the_gate_sequential_and_golden_packages_loads_no_submodule_and_no_scipy() -> None:
    # Then (session 48) the importers: the package loads none, one importer loads itself alone (gatestats import table).
    code = (
        "import importlib, json, sys\n"
        f"for name in {LAZY_PACKAGES!r}: importlib.import_module(name)\n"
        f"subs = [m for m in sys.modules if m.startswith({tuple(p + '.' for p in LAZY_PACKAGES)!r})]\n"
        f"forbidden = [m for m in {LAZY_FORBIDDEN!r} if m in sys.modules]\n"
        "importers = []\n"
        "for name in ('gatestats.importers', 'gatestats.importers.table'):\n"
        "    importlib.import_module(name)\n"
        "    importers.append(sorted(m for m in sys.modules if m.startswith('gatestats.importers.')))\n"
        "print(json.dumps([subs, forbidden, importers]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == [[], [], [[], ["gatestats.importers._common", "gatestats.importers.table"]]]


def test_reading_a_verdict_loads_no_scipy_engine_or_judges() -> None:
    code = (
        "import json, sys\n"
        "from gatestats.gate import VerdictFile, read_verdict, load_record_set\n"
        "from gatestats.gate.bindings import SideBinding\n"
        "from gatestats.vocabulary import NO_SLICE\n"
        "from gatestats.vocabulary import UNCLASSIFIED\n"
        f"print(json.dumps([m for m in {LAZY_FORBIDDEN!r} if m in sys.modules]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == []


#: What ``gatestats report`` may not import: it reads a verdict and two record sets (issue 28, item 4:
#: ``import gatestats.gate`` cost 1.12 CPU-s in the report's process, scipy ≈ 0.7 s of it).
REPORT_FORBIDDEN = (
    *LAZY_FORBIDDEN,
    "gatestats.gate.families",
    "gatestats.sequential.monitor",
    "gatestats.sequential.eprocess",
    "gatestats.sequential.compare_layers",
    "gatestats.golden.checks",
    "gatestats.golden.store",
    # numpy (and its BLAS threads, ≈ 0.1 CPU-s): the report reads and draws; nothing it computes needs
    # arrays (session 36: it came only through gate.summaries → golden.trends → estimators for one constant)
    "numpy",
    "gatestats.estimators",
    "gatestats.gate.summaries",
    # Altair (and narwhals, which it brings): its import and chart building were ≈ 0.3 CPU-s of the
    # report's process (session 37); the charts are Vega-Lite specs written as dicts, drawn by vl-convert
    # (tests/report/test_chart_specs.py: the JSON Altair made of the same tables)
    "altair",
    "narwhals",
)


def test_report_imports_no_scipy_engine_judges_or_golden_store(tmp_path: Path) -> None:
    from tests.report.scenarios import make_one_trial_verdict

    verdict = make_one_trial_verdict(tmp_path / "gate")
    report = _run("report", verdict, "--out", tmp_path / "reports", "--renderer", "jupyter")
    assert report["code"] == 0
    assert "report.html" in report["stdout"]
    assert "gatestats.gate.verdict" in report["modules"]  # the check sees the modules the report loaded
    assert [name for name in REPORT_FORBIDDEN if name in report["modules"]] == []


#: Packages whose names are resolved on first use (PEP 562): the four above, and since session 40 ``paired`` and
#: ``judges``. Since session 49 none binds a name at import, ``estimators`` neither: a name that is also its module's
#: name (``paired.compare``) is kept from the submodule by the package's class (tests/test_lazy_packages.py).
LAZY_NAME_PACKAGES = (
    *LAZY_PACKAGES,
    *("gatestats.paired", "gatestats.judges", "gatestats.publish", "gatestats.cost", "gatestats.importers"),
    "gatestats.estimators",
)


@pytest.mark.parametrize("package", LAZY_NAME_PACKAGES)
def test_lazy_package_names_are_its_modules_objects(package: str) -> None:
    import importlib

    module = importlib.import_module(package)
    homes: dict[str, str] = module._HOMES
    assert set(homes) == set(module.__all__)
    assert len(module.__all__) == len(set(module.__all__))
    for name, home_name in homes.items():
        home = importlib.import_module(f"{package}.{home_name}")
        assert getattr(module, name) is getattr(home, name), name
    assert not set(module.__all__) & set(vars(module))  # resolved by __getattr__, every module imported by now
    assert set(module.__all__) <= set(dir(module))
    with pytest.raises(AttributeError, match=f"module '{package}' has no attribute 'nope'"):
        _ = module.nope
    namespace: dict[str, Any] = {}
    exec(f"from {package} import *", namespace)  # the star import reads __all__ through __getattr__
    assert set(module.__all__) <= set(namespace)


def test_every_command_module_is_listed() -> None:
    modules = {
        f"gatestats.cli.{path.stem}"
        for path in (ROOT / "src" / "gatestats" / "cli").glob("*.py")
        if not path.stem.startswith("_")
    }
    assert {command.module for command in COMMANDS.values()} == modules


#: The bundled SWE-bench Verified submissions that benchmarks/bench_startup.py compares.
_SWE = ROOT / "data" / "swe_bench_verified" / "records.jsonl"
_SWE_PAIR = ("--baseline", "20240920_solver", "--candidate", "20240924_solver")


_LLMBAR = ROOT / "data" / "llmbar_judge_swap" / "judgments.csv"
#: compare, rank and calibrate as benchmarks/bench_startup.py runs them (issue 28 item 2).
_DEFAULT_PATHS = {
    "compare": ("compare", _SWE, *_SWE_PAIR),
    "rank": ("rank", _SWE, "--systems", "20240920_solver,20240924_solver,20241001_nfactorial"),
    "calibrate": (
        "calibrate",
        _LLMBAR,
        *("--where", "subset=Processed/MT-Bench", "--where", "evaluator=GPT-4", "--where", "strategy=Vanilla_NoRules"),
        "--map=item=item_idx,label=label,verdict=winner_original_order,verdict_swapped=winner_swapped_order,"
        "judge=evaluator,rubric=strategy",
        *("--positive", "1", "--kind", "pairwise"),
    ),
}


#: The other reading commands on a file of two systems (the first pair of calibrate's is the bundled LLMBar file).
_OTHER_READING = (
    ("compare", "RECORDS", "--baseline", "a", "--candidate", "b", "--json"),
    ("rank", "RECORDS", "--json"),
    ("cost", "RECORDS", "--json"),
    ("cases", "list", "--set", str(ROOT / "data" / "golden_bugfix" / "cases")),
    (
        "calibrate",
        str(_LLMBAR),
        *("--where", "subset=Processed/MT-Bench", "--where", "evaluator=GPT-4"),
        *("--where", "strategy=Vanilla_NoRules", "--positive", "1", "--kind", "pairwise", "--json"),
        "--map=item=item_idx,label=label,verdict=winner_original_order,verdict_swapped=winner_swapped_order",
    ),
)


def _write(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def _pairs(path: Path) -> Path:
    """Two systems on 30 cases."""
    rows = [
        make_record(
            record_id=f"{s}{case}", system=s, case_id=f"c{case}", outcome="passed" if (case + i) % 3 else "failed"
        )
        for i, s in enumerate("ab")
        for case in range(30)
    ]
    return _write(path, rows)


def test_cost_imports_no_paired_tests_and_no_scipy(tmp_path: Path) -> None:
    # gatestats cost never pairs cases: gatestats.paired (every test, scipy.stats) stays out (issue 28).
    # Its BCa ranks come from the standard library's normal distribution (scipy's only on a rank's
    # edge, tests/cost/test_bca_levels.py): 40 cases give an interval (and bounds, with missing costs).
    # One interpreter for the three command lines (see _BATCH).
    costs = {
        missing: _write(
            tmp_path / f"costs-{missing}.jsonl",
            [
                make_record(
                    record_id=f"r{case}", case_id=f"c{case}", cost_usd=None if case < missing else 0.01 * (case + 1)
                )
                for case in range(40)
            ],
        )
        for missing in (0, 3)
    }
    *reports, pairs = run_batch(
        *(("cost", path, "--json") for path in costs.values()), ("cost", _pairs(tmp_path / "pairs.jsonl"), "--json")
    )
    for missing, report in zip(costs, reports, strict=True):
        assert report["code"] == 0, report["stdout"]
        (group,) = json.loads(report["stdout"])["groups"]
        interval = group["missing_costs"]["cost_per_accepted"] if missing else group["cost_per_accepted"]
        assert interval["ci_low"] is not None  # the BCa interval was computed
        assert [m for m in report["modules"] if m.startswith("gatestats.paired")] == []
        assert _heavy(report, ("scipy",)) == []
    assert pairs["code"] == 0, pairs["stdout"]
    assert _heavy(pairs, READING_FORBIDDEN) == []


def test_compare_rank_calibrate_cases_import_only_what_their_paths_need(tmp_path: Path) -> None:
    # One interpreter for these command lines (see _BATCH), the strictest checks first: the default paths
    # (no scipy), then compare with a margin (which imports scipy: the lines before it are checked not to
    # have), then the rest (no report stack, no pydantic).
    records = _pairs(tmp_path / "pairs.jsonl")
    defaults = [(command, fmt) for command in _DEFAULT_PATHS for fmt in ("--json", "--format=terminal")]
    margin = ("compare", records, "--baseline", "a", "--candidate", "b", "--json", "--margin", "0.05")
    other = [tuple(str(records) if a == "RECORDS" else a for a in argv) for argv in _OTHER_READING if argv[0] != "cost"]
    reports = run_batch(*((*_DEFAULT_PATHS[command], fmt) for command, fmt in defaults), margin, *other)
    # Issue 28 item 2: the exact binomial (gatestats.paired.binomial), Brent's method in Python
    # (paired.roots), z stored or by statistics.NormalDist, the Clopper-Pearson bounds in doubles,
    # normal tails by math.erfc, average ranks without rankdata.
    for (command, fmt), report in zip(defaults, reports[: len(defaults)], strict=True):
        assert report["code"] == 0, (command, fmt, report["stdout"])
        if fmt == "--json":
            assert json.loads(report["stdout"]), command  # the command answered in full
        assert _heavy(report, ("scipy", *READING_FORBIDDEN)) == [], (command, fmt)
        # Session 41: nor numpy.ma, which polars imports to build a Series from a numpy array (passk.per_case_values
        # builds its columns from lists), nor the other submodules analyze keeps out.
        assert [name for name in ANALYZE_FORBIDDEN_SUBMODULES if name in report["modules"]] == [], (command, fmt)

    # The paths the default does not take keep their scipy (here the non-inferiority test's), imported when they
    # run through gatestats._lazy.lazy_module: the stand-in must still reach scipy and answer.
    with_margin = reports[len(defaults)]
    assert with_margin["code"] == 0, with_margin["stdout"]
    assert json.loads(with_margin["stdout"])["noninferiority"] is not None
    assert "scipy.special" in with_margin["new"]  # imported by this command line

    for argv, report in zip(other, reports[len(defaults) + 1 :], strict=True):
        assert report["code"] == 0, (argv[0], report["stdout"])
        assert _heavy(report, READING_FORBIDDEN) == [], argv[0]


def test_importing_paired_and_judges_loads_no_scipy_and_the_names_still_resolve() -> None:
    # Session 40: both packages resolve their names on first use (compare, resolution and weighted_kappa, whose
    # modules share their names, are imported with the package); their modules read scipy through lazy_module.
    code = (
        "import json, sys\nimport gatestats.paired as p, gatestats.judges as j\n"
        "before = 'scipy' in sys.modules\n"
        "kinds = [type(p.compare).__name__, type(p.resolution).__name__, type(j.weighted_kappa).__name__,\n"
        "         type(p.mcnemar_test).__name__, type(j.calibrate).__name__]\n"
        "import gatestats.paired.compare, gatestats.judges.weighted_kappa\n"
        "kinds.append(type(p.compare).__name__)\n"
        "print(json.dumps([before, kinds]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=True)
    assert json.loads(done.stdout) == [False, ["function"] * 6]


@pytest.mark.parametrize("command", ["compare", "rank"])
def test_compare_and_rank_read_the_proved_swe_bench_file_once(command: str) -> None:
    # Session 41: the bundled SWE-bench file (json.dumps's spelling, no checksums) is proved block by block
    # (records.canonical_block.proves_spaced_block) and compare/rank name the columns they read
    # (cli._where.paired_columns), so its columns come from the proof: polars never parses the file.
    code = (
        "import json, sys\n"
        "import polars as pl\n"
        "calls = []\n"
        "for name in ('read_ndjson', 'scan_ndjson'):\n"
        "    real = getattr(pl, name)\n"
        "    def spy(*a, _real=real, _name=name, **k):\n"
        "        calls.append(_name)\n"
        "        return _real(*a, **k)\n"
        "    setattr(pl, name, spy)\n"
        "sys.argv = ['gatestats', *sys.argv[1:]]\n"
        "from gatestats.cli import main\n"
        "try:\n"
        "    main()\n"
        "except SystemExit as exc:\n"
        "    assert not exc.code, exc.code\n"
        "print(json.dumps([calls, [m for m in sys.modules if m == 'msgspec']]), file=sys.stderr)\n"
    )
    argv = [*map(str, _DEFAULT_PATHS[command]), "--json"]
    done = subprocess.run([sys.executable, "-c", code, *argv], capture_output=True, text=True, cwd=ROOT, check=True)
    calls, proved = json.loads(done.stderr.strip().splitlines()[-1])
    assert proved == ["msgspec"]  # the proof ran
    assert "read_ndjson" not in calls  # the whole-file read did not


#: Modules a reading command loads only when it needs them (issue 28 item 2, session 42): the strict CSV reader
#: (a JSONL file never needs it), the published-table renderer (analyze's terminal tables and every JSON answer
#: do without it), the charts (only ``--plot``) and the gate's cost ratio (only ``gate``).
_CSV_READER = ("gatestats.tables.csvfile", "gatestats.tables.inputs")
_CHARTS = ("gatestats.publish.charts", "gatestats.paired.charts_frame", "gatestats.estimators.charts_frame")
_ON_DEMAND: dict[str, tuple[str | Path, ...]] = {
    "analyze": ("analyze", "RECORDS", "--k", "1,2"),
    "analyze --json": ("analyze", "RECORDS", "--k", "1,2", "--json"),
    "validate": ("validate", "RECORDS"),
    "cost": ("cost", "RECORDS"),
    "cost --json": ("cost", "RECORDS", "--json"),
    "compare": _DEFAULT_PATHS["compare"],
    "compare --json": (*_DEFAULT_PATHS["compare"], "--json"),
    "rank": _DEFAULT_PATHS["rank"],
    "rank --json": (*_DEFAULT_PATHS["rank"], "--json"),
    "calibrate": _DEFAULT_PATHS["calibrate"],
    "cases list": ("cases", "list", "--set", ROOT / "data" / "golden_bugfix" / "cases"),
}
_CALIBRATE_ON_DEMAND = (
    "gatestats.records.io",
    "gatestats.judges.covariates",
    "gatestats.paired.multiplicity",
    "gatestats.cli._calibrate_classes",
    "gatestats.cli._calibrate_covariates",
)
_NOT_LOADED: dict[str, tuple[str, ...]] = {
    "analyze": (*_CSV_READER, *_CHARTS, "gatestats.publish.formats", "gatestats.cost"),
    "validate": (*_CSV_READER, *_CHARTS, "gatestats.publish.formats", "gatestats.estimators"),
    "cost": (*_CSV_READER, *_CHARTS, "gatestats.cost.ratio"),
    # estimators.intervals: the clustered SE (numpy's) only for the clt interval, never with one trial per case
    # (session 48: paired.trials imports it on first use).
    # numpy: compare of one pair with one trial per case computes in Python numbers (session 48: paired/small.py;
    # tests/cli/test_compare_without_numpy.py checks its output against numpy's path).
    "compare": (*_CSV_READER, *_CHARTS, "gatestats.estimators.intervals", "numpy"),
    # numpy: rank with one trial per case and Holm or Bonferroni computes in Python numbers (session 49:
    # paired/small_family.py; tests/cli/test_rank_without_numpy.py checks its output against numpy's path).
    "rank": (*_CSV_READER, *_CHARTS, "gatestats.estimators.intervals", "numpy"),
    # It reads a CSV of judgments. Session 48: the record reader (records.io names a defect's line only), the
    # covariate tests and the renderers of the multi-class mode, --correct and --by-covariate load when asked.
    # Session 49: nor the analysis and the paired comparison (the estimators' and paired's __init__ imported them),
    # nor numpy (its Wilson intervals, 2x2 kappa and sign test in floats: tests/judges/test_stats_without_numpy.py).
    "calibrate": (*_CHARTS, *_CALIBRATE_ON_DEMAND, "gatestats.estimators.analyze", "gatestats.paired.compare", "numpy"),
    "cases": ("numpy",),  # session 48: only the near-duplicate search (promote, approve) computes with arrays
}


#: The command lines above in four interpreters (see ``_BATCH``: a module none may load is read on what is loaded so
#: far). ``validate`` comes first: it may not load ``gatestats.estimators``, which ``analyze`` does; ``cases list``
#: last, after lines that load no numpy either (the CSV reader it loads is forbidden to analyze); ``cost`` and the
#: paired commands each in their own, so one's legitimate imports never stand in the other's check.
_ON_DEMAND_BATCHES = (
    ("validate", "analyze", "analyze --json", "cases list"),
    ("cost", "cost --json"),
    ("compare", "compare --json", "rank", "rank --json"),
    ("calibrate",),
)


@pytest.mark.parametrize("batch", _ON_DEMAND_BATCHES, ids=lambda batch: batch[0])
def test_reading_commands_load_the_csv_reader_renderer_charts_and_ratio_on_demand_only(
    tmp_path: Path, batch: tuple[str, ...]
) -> None:
    records = _small_records(tmp_path / "small.jsonl")
    reports = run_batch(*(tuple(records if a == "RECORDS" else a for a in _ON_DEMAND[name]) for name in batch))
    for name, report in zip(batch, reports, strict=True):
        assert report["code"] == 0, (name, report["stdout"])
        if name.endswith("--json"):
            assert json.loads(report["stdout"]), name  # the command answered in full
        forbidden = _NOT_LOADED[name.split(maxsplit=1)[0]]
        loaded = report["modules"]
        assert [m for m in forbidden if m in loaded or any(x.startswith(f"{m}.") for x in loaded)] == [], name


def test_every_on_demand_command_line_is_checked() -> None:
    assert sorted(name for batch in _ON_DEMAND_BATCHES for name in batch) == sorted(_ON_DEMAND)
