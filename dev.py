#!/usr/bin/env python3
"""Set up gatestats from its lock file and run the main job or the test suite.

Standard library only: this is what a fresh machine with nothing but ``python3``
runs first.

    python3 dev.py demo   # set up, then run the main job on bundled data: runner, gate, report
    python3 dev.py test   # set up, then lint, type-check and run the whole test suite
    python3 dev.py test --fast   # the inner loop: lint, then every test but the slow ones (no simulations),
                                 # property tests on a quarter of their examples

The virtual environment lives in ``.venv/``; it is (re)installed from
``requirements.lock`` (every package pinned with its hash) whenever the lock file
changes. pip (from the standard library's ``ensurepip``) installs one package, uv,
pinned with its hashes in ``requirements-uv.lock``; uv installs ``requirements.lock``
with ``--require-hashes`` and compiles no bytecode (uv's default): each module is
compiled when first imported, and only the modules something imports.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import venv
from datetime import UTC, datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
LOCK = ROOT / "requirements.lock"
UV_LOCK = ROOT / "requirements-uv.lock"
STAMP = VENV / ".gatestats-lock-digest"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
PY = BIN / "python"
PYTEST_NO_TESTS_COLLECTED = 5


def _run(*args: str | os.PathLike[str], **kwargs: object) -> None:
    print("+", " ".join(str(a) for a in args), flush=True)
    completed = subprocess.run([str(a) for a in args], check=False, **kwargs)  # type: ignore[call-overload]
    if completed.returncode != 0:
        raise SystemExit(completed.returncode)


def uv_bootstrap_command(python: os.PathLike[str] | str) -> list[str | os.PathLike[str]]:
    """pip installs uv into the environment of ``python``, only as pinned with hashes in ``requirements-uv.lock``."""
    pip = [python, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    return [*pip, "install", "--quiet", "--require-hashes", "--no-deps", "-r", UV_LOCK]


def uv_install(uv: os.PathLike[str] | str, python: os.PathLike[str] | str) -> list[str | os.PathLike[str]]:
    """uv installing into the environment of ``python``, trusting the platform's certificate store as pip does.

    ``--system-certs``: without it uv trusts only its own bundled roots (or ``SSL_CERT_FILE``), so behind a
    proxy whose authority is in the system's store (this project's CI machine) every download fails with
    "invalid peer certificate: UnknownIssuer" where pip, which reads the system's store, succeeds.
    """
    return [uv, "pip", "install", "--quiet", "--system-certs", "--python", python]


def lock_install_command(
    uv: os.PathLike[str] | str, python: os.PathLike[str] | str, lock: os.PathLike[str] | str = LOCK
) -> list[str | os.PathLike[str]]:
    """uv installs ``lock`` into the environment of ``python``: every package pinned with its hash, nothing else."""
    return [*uv_install(uv, python), "--require-hashes", "--no-deps", "-r", lock]


def setup() -> None:
    """Create ``.venv`` and install the locked dependencies plus gatestats (editable)."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py runs before anything checks the version
        raise SystemExit(f"gatestats needs Python 3.11 or newer (got {sys.version.split()[0]})")
    digest = hashlib.sha256(
        LOCK.read_bytes() + UV_LOCK.read_bytes() + (ROOT / "pyproject.toml").read_bytes()
    ).hexdigest()
    if STAMP.exists() and STAMP.read_text().strip() == digest and PY.exists():
        return
    if VENV.exists():
        shutil.rmtree(VENV)
    print(f"+ creating {VENV.relative_to(ROOT)}", flush=True)
    venv.EnvBuilder(with_pip=True).create(VENV)
    _run(*uv_bootstrap_command(PY))
    uv = BIN / "uv"
    _run(*lock_install_command(uv, PY))
    _run(*uv_install(uv, PY), "--no-deps", "--no-build-isolation", "--editable", ROOT)
    STAMP.write_text(digest + "\n")


#: The main job's verdicts are answers, not errors: pass 0, warn 10, fail 11, insufficient evidence 12.
VERDICT_EXITS = {0: "pass", 10: "warn", 11: "fail", 12: "insufficient_evidence"}


def demo() -> None:
    """The main job on bundled data, runner to report.

    The bundled golden set (12 small Python bug-fix tasks, ``data/golden_bugfix``) is run for the
    released agent's patches (baseline) and the new agent's (candidate), 4 trials per case in the
    sandbox; the candidate's run set gets the gate policy registered before its first trial; the
    gate decides; the release report is rendered under ``reports/``. Then the correction loop
    (``examples/correction``) and the sequential variant (``examples/sequential``): both agents in
    batches until the gate's decision is made, stopping before the fixed-size design's last case,
    then its gate and release report (:func:`sequential_demo`).
    """
    system_tools(("bubblewrap",))
    gatestats = BIN / "gatestats"
    golden = ROOT / "data" / "golden_bugfix"
    policy = golden / "policy.toml"
    work = ROOT / "build" / "demo" / datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    work.mkdir(parents=True)
    systems = {
        "baseline": ("bugfix-agent-2026-08", "fix-prompt-v6", ()),
        "candidate": ("bugfix-agent-2026-11", "fix-prompt-v7", ("--policy", policy)),
    }
    for system, (model, prompt, extra) in systems.items():
        print(f"== run: {system} ({model}, {prompt}) on {golden / 'cases'}, 4 trials per case", flush=True)
        _run(
            gatestats, "run", golden / "cases",
            "--candidate", golden / "candidates" / system,
            "--trials", "4", "--out", work / system, "--system", system,
            "--model-id", model, "--prompt-version", prompt, *extra,
        )  # fmt: skip
    verdict = work / "verdict.json"
    print(f"== gate: {policy}", flush=True)
    gate = subprocess.run(
        [
            str(gatestats), "gate", "--policy", str(policy),
            "--baseline", str(work / "baseline"), "--candidate", str(work / "candidate"),
            "-o", str(verdict), "--markdown", str(work / "verdict.md"), "--junit", str(work / "gate-junit.xml"),
        ],
        check=False,
    )  # fmt: skip
    if gate.returncode not in VERDICT_EXITS:
        raise SystemExit(gate.returncode)
    print("== report", flush=True)
    _run(gatestats, "report", verdict, "--out", ROOT / "reports")
    example = ROOT / "examples" / "correction"
    print("== correct: a failure, its feedback, a revision under a new identity (examples/correction)", flush=True)
    _run(
        gatestats, "correct", example / "cases", "--candidate", example / "candidate",
        "--reviser", f"{PY} {example / 'reviser.py'}", "--out", work / "correction",
    )  # fmt: skip
    sequential_demo(gatestats, work / "sequential", ROOT / "reports")
    rollout_demo(gatestats, work / "rollout", work / "sequential" / "verdict.json", ROOT / "reports")
    print(f"\nverdict: {VERDICT_EXITS[gate.returncode]} (gatestats gate exit {gate.returncode}); files in {work}")


def sequential_demo(gatestats: Path, out: Path, reports: Path) -> None:
    """The main job's sequential variant (``examples/sequential``): run until decided, gate, report.

    Both agents run in batches of the policy's ``[sequential]`` design into ``out/baseline`` and
    ``out/candidate`` until the gate's decision is made; ``gatestats gate`` then writes
    ``out/verdict.json`` and ``out/verdict.md`` (printing the stop: each rule's e-values against
    their levels, the trials saved), and ``gatestats report`` renders that verdict's release report
    (with its "Sequential run" section) under ``reports``. The last lines say where they are.
    """
    sequential = ROOT / "examples" / "sequential"
    policy = sequential / "policy.toml"
    print("== sequential: both agents in batches until the gate is decided (examples/sequential)", flush=True)
    _run(
        gatestats, "run", sequential / "cases", "--until-decided", "--policy", policy,
        "--baseline", sequential / "candidates" / "baseline", "--candidate", sequential / "candidates" / "candidate",
        "--out", out,
    )  # fmt: skip
    print(f"== gate: {policy}", flush=True)
    verdict = out / "verdict.json"
    gate = subprocess.run(
        [
            str(gatestats), "gate", "--policy", str(policy), "--baseline", str(out / "baseline"),
            "--candidate", str(out / "candidate"), "-o", str(verdict), "--markdown", str(out / "verdict.md"),
        ],
        check=False,
    )  # fmt: skip
    if gate.returncode not in VERDICT_EXITS:
        raise SystemExit(gate.returncode)
    print("== report: the sequential verdict", flush=True)
    _run(gatestats, "report", verdict, "--out", reports)
    print(
        f"sequential verdict: {VERDICT_EXITS[gate.returncode]} (gatestats gate exit {gate.returncode}); "
        f"verdict {verdict}, summary {out / 'verdict.md'}",
        flush=True,
    )


def rollout_demo(gatestats: Path, out: Path, verdict: Path, reports: Path) -> None:
    """After the gate (``examples/rollout``): the sequential example's release in shadow, then pilot, rolled back.

    ``gatestats watch init`` registers the rollout plan beside the passing verdict before any
    observation; three batches of simulated shadow traffic let the shadow stage advance (exit 20);
    three pilot batches and, a week later, the late labels of escaped defects roll the pilot back
    (exit 21) with the trigger's evidence; one escaped defect's trace becomes a proposed case
    (``gatestats promote``, never approved here); ``gatestats report --watch`` builds the release's
    next report version with its "After the gate" section.
    """
    example = ROOT / "examples" / "rollout"
    data = example / "data"
    watch = out / "watch"
    columns = (
        "case_id=request_id,outcome=outcome,accepted=accepted,review_minutes=review_minutes,"
        "unauthorized_actions=unauthorized_actions,cost_usd=cost_usd,cohort=cohort,started_at=started_at,ended_at=ended_at"
    )
    print("== after the gate: the sequential release in shadow, then pilot (examples/rollout)", flush=True)
    _run(gatestats, "watch", "init", watch, "--plan", example / "rollout.toml", "--verdict", verdict)
    expected = {"shadow": 20, "pilot": 21}  # shadow advances; the pilot rolls back once the labels arrive
    for stage, code in expected.items():
        for number in (1, 2, 3):
            table = data / f"simulated-{stage}-{number}.csv"
            _run(
                gatestats,
                "watch",
                "observe",
                watch,
                table,
                "--stage",
                stage,
                "--map",
                columns,
                "--id-column",
                "request_id",
            )
        if stage == "pilot":
            _run(gatestats, "watch", "label", watch, data / "simulated-labels.csv")
        status = subprocess.run([str(gatestats), "watch", "status", str(watch)], check=False)
        if status.returncode != code:
            raise SystemExit(f"watch status of the {stage}: exit {status.returncode}, expected {code}")
    _run(
        gatestats, "promote", data / "simulated-trace-pilot-1-0051.json", "--set", out / "golden",
        "--case-id", "escaped-pilot-1-0051", "--failure-class", "escaped_defect", "--severity", "high",
        "--split", "development", "--expect", example / "escaped-expect.json", "--by", "dev.py demo",
        "--why", "escaped defect: production record pilot-1-0051 (watch batch 0004), found 2026-11-13",
    )  # fmt: skip
    print("== report: the sequential verdict, with the rollout after the gate", flush=True)
    _run(gatestats, "report", verdict, "--out", reports, "--watch", watch)
    print(f"rollout: shadow advanced, pilot rolled back (gatestats watch status exit 21); log {watch}", flush=True)


def system_tools(packages: tuple[str, ...] = ("bubblewrap", "chromium")) -> None:
    """Install the system tools the tests need when we can (root with apt-get): bubblewrap for the
    sandbox runner, chromium for the offline browser test of rendered reports."""
    if not shutil.which("apt-get") or os.geteuid() != 0:
        return
    commands = {"bubblewrap": "bwrap", "chromium": "chromium"}
    missing = [package for package in packages if not shutil.which(commands[package])]
    if not missing:
        return
    env = {**os.environ, "DEBIAN_FRONTEND": "noninteractive"}
    _run("apt-get", "update", "-qq", env=env)
    _run("apt-get", "install", "-y", "-qq", *missing, env=env)


def test() -> None:
    """Lint, type-check, then run every test (slow ones included).

    ``--fast``: the inner loop. Lint (no type check), then every test except those marked ``slow``
    (the statistical simulations, marked ``simulation`` and so ``slow`` too, and the long end-to-end
    tests), each property test on a quarter of its hypothesis examples (at least 10: the profile
    ``gatestats-fast``, tests/hypothesis_counts.py) and each hand-written random loop on a quarter of its
    draws (``draws(n)``, same file); CI runs the whole suite at the full counts.
    """
    args = sys.argv[2:]
    fast = "--fast" in args
    args = [a for a in args if a != "--fast"]
    system_tools()
    _run(BIN / "ruff", "check", ".", cwd=ROOT)
    _run(BIN / "ruff", "format", "--check", ".", cwd=ROOT)
    if not fast:
        _run(BIN / "mypy", cwd=ROOT)
    # The inner loop runs every property test on a quarter of its hypothesis examples (tests/hypothesis_counts.py);
    # the whole suite runs the counts written beside each test.
    selection = ["-m", "not slow", "--hypothesis-profile", "gatestats-fast"] if fast else []
    completed = subprocess.run(
        [str(PY), "-m", "pytest", "-n", "2", "--durations=15", *selection, *args], cwd=ROOT, check=False
    )
    if completed.returncode == PYTEST_NO_TESTS_COLLECTED:
        print("pytest ran no test: that is a failure", file=sys.stderr)
        raise SystemExit(1)
    raise SystemExit(completed.returncode)


def main() -> None:
    commands = {"setup": setup, "demo": demo, "test": test}
    if len(sys.argv) < 2 or sys.argv[1] not in commands:
        raise SystemExit(f"usage: python3 dev.py {{{'|'.join(commands)}}} [pytest args]")
    # Bytecode is cached (``__pycache__/``, git-ignored) even where the shell says not to: nothing is compiled at
    # install time, and the demo and the suite start hundreds of interpreters (CLI children, notebook kernels), each
    # compiling gatestats and its dependencies again without it; the pytest workers' assertion rewrites are kept too.
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    setup()
    if sys.argv[1] != "setup":
        commands[sys.argv[1]]()


if __name__ == "__main__":
    main()
