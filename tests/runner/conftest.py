"""Helpers for the runner's tests: build cases on disk, run one trial, find leftover processes."""

from __future__ import annotations

import json
import os
import shutil
import textwrap
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gatestats_runner._util import short_id
from gatestats_runner.case import load_case
from gatestats_runner.sandbox import Capabilities, detect_capabilities
from gatestats_runner.trial import TrialSpec, run_trial

HAVE_BWRAP = shutil.which("bwrap") is not None
IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0

needs_sandbox = pytest.mark.skipif(
    not (HAVE_BWRAP and IS_ROOT),
    reason="needs root and bubblewrap (.ci/run installs the Debian package 'bubblewrap')",
)


def write_case(
    root: Path,
    case_id: str,
    *,
    command: list[str] | None = None,
    script: str | None = None,
    limits: dict[str, Any] | None = None,
    artifacts: list[Any] | None = None,
    expected_exit: int = 0,
    snapshot: dict[str, str] | None = None,
    extra: dict[str, Any] | None = None,
) -> Path:
    """A case directory: ``script`` becomes /verifier/run.py, run with python3 unless ``command`` is given."""
    case = root / case_id
    (case / "snapshot").mkdir(parents=True)
    (case / "verifier").mkdir()
    (case / "request.md").write_text(f"request for {case_id}\n")
    for rel, text in (snapshot or {"README": "snapshot\n"}).items():
        path = case / "snapshot" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (case / "verifier" / "run.py").write_text(textwrap.dedent(script or "print('ok')\n"))
    body: dict[str, Any] = {
        "format": "gatestats-case/1",
        "contract": {
            "command": command or ["python3", "/verifier/run.py"],
            "expected_exit": expected_exit,
            "artifacts": artifacts or [],
            "limits": {
                "wall_clock_s": 20,
                "cpu_s": 20,
                "memory_mb": 256,
                "processes": 64,
                "disk_mb": 32,
                "output_mb": 4,
                **(limits or {}),
            },
        },
    }
    body.update(extra or {})
    (case / "case.json").write_text(json.dumps(body, indent=2))
    return case


@dataclass
class Trial:
    record: dict[str, Any]
    evidence: dict[str, Any]
    dir: Path

    def stdout(self) -> str:
        return (self.dir / "stdout").read_text(errors="replace")

    def stderr(self) -> str:
        return (self.dir / "stderr").read_text(errors="replace")


@pytest.fixture(scope="session")
def caps() -> Capabilities:
    return detect_capabilities("auto")


@pytest.fixture
def run_case(tmp_path: Path, caps: Capabilities, marker: str) -> Callable[..., Trial]:
    """Write a case and run one trial of it (no run set) with this machine's isolation.

    The default command is ``python3 /verifier/run.py MARKER``: every process of the trial carries
    the test's marker in its command line, and the ``marker`` fixture fails the test if one is
    still alive afterwards.
    """
    counter = iter(range(1000))

    def run(
        script: str | None = None,
        *,
        candidate: dict[str, str] | None = None,
        capabilities: Capabilities | None = None,
        **kwargs: Any,
    ) -> Trial:
        n = next(counter)
        kwargs.setdefault("command", ["python3", "/verifier/run.py", marker])
        case_dir = write_case(tmp_path / f"cases{n}", f"case{n}", script=script, **kwargs)
        layer = None
        if candidate is not None:
            layer = tmp_path / f"candidate{n}"
            for rel, text in candidate.items():
                path = layer / rel
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_text(text)
        spec = TrialSpec(
            case=load_case(case_dir),
            candidate_layer=layer,
            candidate_digest="sha256:test",
            trial=0,
            attempt=0,
            run_set_id=f"rs-test-{uuid.uuid4().hex}",
            record_base={"system": "test"},
            evidence_dir=tmp_path / f"evidence{n}",
            evidence_rel=f"trials/case{n}/t0000-a0",
            scratch=tmp_path / "scratch",
        )
        result = run_trial(spec, capabilities or caps)
        return Trial(record=result.record, evidence=result.evidence, dir=spec.evidence_dir)

    return run


def processes_with(marker: str) -> list[int]:
    """Pids of live processes whose command line contains ``marker`` (zombies excluded)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                cmdline = handle.read()
            with open(f"/proc/{entry}/stat", encoding="utf-8") as handle:
                state = handle.read().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if marker.encode() in cmdline and state != "Z":
            found.append(int(entry))
    return found


def cgroups_left(caps: Capabilities, run_set_id: str) -> list[str]:
    """The run set's trial cgroups still present in any hierarchy the runner uses."""
    prefix = f"gatestats-{short_id(run_set_id)}-"
    left = []
    cg = caps.cgroups
    for parent in {cg.memory, cg.pids, cg.unified, cg.cpuacct}:
        if parent is not None:
            left += [str(p) for p in parent.iterdir() if p.name.startswith(prefix)]
    return left


def mounts_under(path: Path) -> list[str]:
    root = os.path.realpath(path)
    with open("/proc/self/mountinfo", encoding="utf-8") as handle:
        return [line.split()[4] for line in handle if line.split()[4].startswith(root)]


def assert_no_leftovers(trial: Trial, caps: Capabilities, scratch: Path) -> None:
    assert trial.evidence.get("execution", {}).get("leftover_processes") in (False, None)
    assert cgroups_left(caps, trial.record["run_set_id"]) == []
    assert mounts_under(scratch) == []


@pytest.fixture
def marker() -> Iterator[str]:
    """A unique string to put in a hostile command line; no process may carry it after the trial."""
    value = f"gatestats-hostile-{uuid.uuid4().hex}"
    yield value
    assert processes_with(value) == [], f"leftover processes carry {value}"
