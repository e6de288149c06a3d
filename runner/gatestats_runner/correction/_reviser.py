"""Calling the reviser (the user's command) and judging what it left behind.

The reviser runs in its own directory ``rNN/`` holding ``request.md``, ``candidate/`` (a copy of
the failed candidate), ``feedback/`` (the package) and an empty ``output/``. It must write the
revised candidate into ``output/`` and may report its spend in ``spend.json``. Everything else in
its directory must be left as it was. Each way of failing is a classified stop with a reason.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import shutil
import signal
import stat
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gatestats_runner.digests import tree_digest

__all__ = ["ReviserResult", "call_reviser", "prepare_workdir"]

OUTPUT = "output"
SPEND = "spend.json"
LOGS = ("reviser.stdout", "reviser.stderr")
_POLL_SECONDS = 0.02


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviserResult:
    """How the call ended: ``stop`` is None when ``output/`` holds a usable revision."""

    stop: str | None
    detail: str
    wall_seconds: float
    machine_seconds: float | None
    usd: float | None
    exit_code: int | None
    output_digest: str | None


def prepare_workdir(workdir: Path, *, request: str | None, candidate: Path, feedback: Path) -> dict[str, Path]:
    """Lay out the reviser's directory; returns the paths it is told about.

    Parameters
    ----------
    workdir
        The reviser's directory (new).
    request
        The case's request (``request.md``; empty when the case has none).
    candidate
        The candidate that failed (copied to ``candidate/``; an empty directory when there is none).
    feedback
        The feedback package (copied to ``feedback/``).

    Returns
    -------
    dict
        ``request``, ``candidate``, ``feedback`` (its ``feedback.json``), ``output`` and ``spend``.
    """
    workdir.mkdir(parents=True)
    (workdir / "request.md").write_text(request or "", encoding="utf-8")
    if candidate.is_dir():
        shutil.copytree(candidate, workdir / "candidate", symlinks=True)
    else:
        (workdir / "candidate").mkdir()
    shutil.copytree(feedback, workdir / "feedback", symlinks=True)
    (workdir / OUTPUT).mkdir()
    return {
        "request": workdir / "request.md",
        "candidate": workdir / "candidate",
        "feedback": workdir / "feedback" / "feedback.json",
        "output": workdir / OUTPUT,
        "spend": workdir / SPEND,
    }


def _outside_digest(workdir: Path) -> str:
    """Digest of the reviser's directory without what it may write."""
    lines = []
    for entry in sorted(os.listdir(workdir)):
        if entry in {OUTPUT, SPEND, *LOGS}:
            continue
        path = workdir / entry
        lines.append(f"{entry} {tree_digest(path) if path.is_dir() and not path.is_symlink() else _entry_key(path)}")
    return "\n".join(lines)


def _entry_key(path: Path) -> str:
    st = os.lstat(path)
    if stat.S_ISREG(st.st_mode):
        return f"f {path.read_bytes().hex()}"
    return f"o {stat.S_IFMT(st.st_mode):o} {os.readlink(path) if stat.S_ISLNK(st.st_mode) else ''}"


def _output_problem(output: Path) -> str | None:
    """A symlink or special file in the output (a candidate holds files only), or an output that is not a directory."""
    if output.is_symlink() or not output.is_dir():
        return f"{output} was replaced by something that is not a directory"
    for dirpath, dirnames, filenames in os.walk(output, followlinks=False):
        for name in dirnames + filenames:
            path = Path(dirpath) / name
            mode = os.lstat(path).st_mode
            if stat.S_ISLNK(mode):
                return f"{path} is a symlink (to {os.readlink(path)!r}); a revised candidate holds files only"
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                return f"{path} is not a regular file or directory"
    return None


def _spend(path: Path) -> tuple[float | None, str | None]:
    if not path.exists():
        return None, None
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError, RecursionError) as exc:
        return None, f"{path}: not valid JSON ({exc or type(exc).__name__})"
    usd = value.get("usd") if isinstance(value, dict) else None
    ok = isinstance(usd, int | float) and not isinstance(usd, bool) and math.isfinite(usd) and usd >= 0
    if not ok:
        return None, f'{path}: field "usd": expected a number >= 0 (got {usd!r})'
    return float(usd), None  # type: ignore[arg-type]


def _tail(path: Path, chars: int = 400) -> str:
    try:
        text = path.read_bytes()[-chars:].decode("utf-8", errors="replace").strip()
    except OSError:
        return ""
    return text.splitlines()[-1] if text else ""


def _wait(proc: subprocess.Popen[bytes], deadline: float) -> tuple[int | None, Any]:
    """Wait for the reviser (its rusage through wait4); on the deadline kill its process group, return None."""
    while True:
        pid, status, usage = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(status)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # what it left running in its group stops writing now
            return proc.returncode, usage
        if time.monotonic() >= deadline:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            _, status, usage = os.wait4(proc.pid, 0)
            proc.returncode = os.waitstatus_to_exitcode(status)
            return None, usage
        time.sleep(_POLL_SECONDS)


def call_reviser(
    argv: tuple[str, ...],
    workdir: Path,
    paths: dict[str, Path],
    *,
    env: dict[str, str],
    timeout: float,
    budget_limited: bool,
    ancestors: dict[str, int],
) -> ReviserResult:
    """Run the reviser once and classify the result.

    ``ancestors`` maps the digest of the parent and every earlier candidate to its round: a
    revision with one of those digests is ``reviser_same_bytes``. ``budget_limited`` says the
    timeout was cut to the seconds left in the budget (a kill is then ``budget_seconds``).

    Parameters
    ----------
    argv
        The reviser's command line.
    workdir, paths
        Its directory and the paths in it (:func:`prepare_workdir`).
    env
        Its whole environment.
    timeout
        Seconds before its process group is killed.
    budget_limited, ancestors
        As above.

    Returns
    -------
    ReviserResult
        The stop (None for a usable revision), why, the spend and the revision's digest.
    """
    before = _outside_digest(workdir)
    started = time.monotonic()
    with open(workdir / LOGS[0], "wb") as out, open(workdir / LOGS[1], "wb") as err:
        try:
            proc = subprocess.Popen(  # the user's own command, by design
                list(argv),
                cwd=workdir,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
                close_fds=True,
            )
        except OSError as exc:
            return _result("reviser_crashed", f"the reviser could not be started: {exc}", started, None, None, None)
        code, usage = _wait(proc, started + timeout)
    machine = usage.ru_utime + usage.ru_stime if usage is not None else None
    usd, spend_problem = _spend(paths["spend"])

    stop, detail = _exit_problem(code, workdir, timeout=timeout, budget_limited=budget_limited)
    if stop is None and spend_problem is not None:
        stop, detail = "reviser_crashed", spend_problem
    digest = None
    if stop is None:
        stop, detail, digest = _revision_problem(workdir, before, paths["output"], ancestors)
    return _result(stop, detail, started, machine, usd, code, digest)


def _exit_problem(code: int | None, workdir: Path, *, timeout: float, budget_limited: bool) -> tuple[str | None, str]:
    """The stop a killed or failing reviser earns: ``(None, "")`` when it exited 0."""
    if code is None:
        if budget_limited:
            return "budget_seconds", f"the reviser was stopped after {timeout:.1f} s: the time budget ran out"
        return "reviser_timeout", f"the reviser did not finish within {timeout:g} s (its process group was killed)"
    if code != 0:
        last = _tail(workdir / LOGS[1])
        return "reviser_crashed", f"the reviser exited with status {code}" + (f": {last}" if last else "")
    return None, ""


def _revision_problem(
    workdir: Path, before: str, output: Path, ancestors: dict[str, int]
) -> tuple[str | None, str, str | None]:
    """``(stop, detail, digest)`` of what a reviser that exited 0 left: stray writes, nothing, old bytes, a revision."""
    if _outside_digest(workdir) != before:
        return (
            "reviser_wrote_outside",
            f"the reviser changed files in {workdir} outside output/ (request.md, candidate/ or feedback/)",
            None,
        )
    problem = _output_problem(output)
    if problem is not None:
        return "reviser_wrote_outside", problem, None
    if not any(output.rglob("*")):
        return "reviser_wrote_nothing", "the reviser exited 0 but output/ is empty", None
    digest = tree_digest(output)
    if digest in ancestors:
        return (
            "reviser_same_bytes",
            f"the revision has the bytes of the round {ancestors[digest]} candidate ({digest[:19]}…)",
            digest,
        )
    return None, "revised", digest


def _result(
    stop: str | None,
    detail: str,
    started: float,
    machine: float | None,
    usd: float | None,
    code: int | None,
    digest: str | None = None,
) -> ReviserResult:
    return ReviserResult(
        stop=stop,
        detail=detail,
        wall_seconds=round(time.monotonic() - started, 6),
        machine_seconds=None if machine is None else round(machine, 6),
        usd=usd,
        exit_code=code,
        output_digest=digest,
    )
