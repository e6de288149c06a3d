"""Mechanical checks of declared artifacts and a mechanically selected excerpt of the diagnostic.

Nothing here judges the candidate's semantics: a check asks whether a file parses, how many test
cases a JUnit report holds and how many failed, whether an archive has the required members.
The excerpt is chosen by fixed rules (failed JUnit test cases first, else the tail of standard
error, else of standard output), never by a model.
"""

from __future__ import annotations

import json
import tarfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path

from gatestats_runner.case import ArtifactRule

__all__ = ["CheckResult", "check_artifact", "excerpt", "junit_cases", "junit_failures", "tail"]

EXCERPT_CHARS = 2000
EXCERPT_LINES = 20


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckResult:
    """Outcome of one structural check; ``message`` says what was expected and what was found."""

    ok: bool
    message: str


def _junit(path: Path, rule: ArtifactRule) -> CheckResult:
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError) as exc:
        return CheckResult(ok=False, message=f"{rule.path}: not a parseable JUnit XML report ({exc})")
    if root.tag not in {"testsuites", "testsuite"}:
        return CheckResult(
            ok=False, message=f"{rule.path}: root element must be testsuites or testsuite (got {root.tag})"
        )
    cases = list(root.iter("testcase"))
    skipped = sum(1 for c in cases if c.find("skipped") is not None)
    failed = sum(1 for c in cases if c.find("failure") is not None or c.find("error") is not None)
    executed = len(cases) - skipped
    summary = f"{executed} executed, {failed} failed or errored, {skipped} skipped"
    if executed < rule.min_tests:
        return CheckResult(ok=False, message=f"{rule.path}: expected >= {rule.min_tests} executed tests ({summary})")
    if failed > rule.max_failures:
        return CheckResult(ok=False, message=f"{rule.path}: expected <= {rule.max_failures} failures ({summary})")
    return CheckResult(ok=True, message=f"{rule.path}: {summary}")


def _tar(path: Path, rule: ArtifactRule) -> CheckResult:
    try:
        with tarfile.open(path, "r:*") as archive:
            names = {name.removeprefix("./").rstrip("/") for name in archive.getnames()}
    except (tarfile.TarError, OSError, EOFError) as exc:
        return CheckResult(ok=False, message=f"{rule.path}: not a readable tar archive ({exc})")
    missing = [m for m in rule.members if m.removeprefix("./").rstrip("/") not in names]
    if missing:
        return CheckResult(ok=False, message=f"{rule.path}: archive lacks {', '.join(missing)}")
    return CheckResult(ok=True, message=f"{rule.path}: {len(names)} members, all required present")


def check_artifact(path: Path, rule: ArtifactRule) -> CheckResult:
    """Run the rule's structural check on the runner's copy of an existing, non-empty artifact.

    Parameters
    ----------
    path
        The runner's copy of the artifact.
    rule
        The contract's rule for it (``json``, ``junit``, ``tar`` or existence only).

    Returns
    -------
    CheckResult
        Whether it passed, and a message naming the artifact.
    """
    if rule.check == "json":
        try:
            json.loads(path.read_bytes())
        except (ValueError, OSError, RecursionError) as exc:  # a candidate's artifact: nested too deep fails the check
            return CheckResult(ok=False, message=f"{rule.path}: does not parse as JSON ({exc})")
        return CheckResult(ok=True, message=f"{rule.path}: valid JSON")
    if rule.check == "junit":
        return _junit(path, rule)
    if rule.check == "tar":
        return _tar(path, rule)
    return CheckResult(ok=True, message=f"{rule.path}: exists and is non-empty")


def junit_cases(path: Path) -> list[tuple[str, str, str]]:
    """Every failed or errored test case of a JUnit report: ``(classname.name, first message line, failure text)``.

    Parameters
    ----------
    path
        The JUnit XML file.

    Returns
    -------
    list of tuple of str
        In file order; empty when the file cannot be read or parsed. The message line is the
        ``message`` attribute's, else the failure text's, else the element's tag.
    """
    try:
        root = ET.parse(path).getroot()
    except (ET.ParseError, OSError):
        return []
    found: list[tuple[str, str, str]] = []
    for case in root.iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is None:
            continue
        name = ".".join(p for p in (case.get("classname"), case.get("name")) if p)
        text = (problem.text or "").strip()
        lines = (problem.get("message") or text or problem.tag).strip().splitlines()
        found.append((name, lines[0] if lines else problem.tag, text))
    return found


def junit_failures(path: Path, limit: int = 5) -> list[str]:
    """``classname.name: message`` of the first failed or errored test cases of a JUnit report.

    Parameters
    ----------
    path
        The JUnit XML file.
    limit
        At most this many test cases.

    Returns
    -------
    list of str
        One line per test case (see :func:`junit_cases`).
    """
    return [f"{name}: {message}" for name, message, _ in junit_cases(path)[:limit]]


def tail(path: Path | None, lines: int = EXCERPT_LINES, chars: int = EXCERPT_CHARS) -> str:
    """The last ``lines`` non-empty lines of a text file, at most ``chars`` characters (read from the end).

    Parameters
    ----------
    path
        The text file (``None``: no file).
    lines
        At most this many lines.
    chars
        At most this many characters.

    Returns
    -------
    str
        The lines joined by newlines; empty when there is no file or it cannot be read.
    """
    if path is None:
        return ""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, 2)
            size = handle.tell()
            handle.seek(max(0, size - 64 * 1024))
            data = handle.read()
    except OSError:
        return ""
    text = data.decode("utf-8", errors="replace")
    kept = [line for line in text.splitlines() if line.strip()][-lines:]
    out = "\n".join(kept)
    return out[-chars:]


def excerpt(*, headline: str, stderr: Path | None, stdout: Path | None, junit: list[Path]) -> str:
    """The diagnostic given to a correction step: the failed check, then JUnit failures or the output's tail.

    Parameters
    ----------
    headline
        The first line: what failed.
    stderr, stdout
        The trial's output files; stdout's tail is used only when stderr has none.
    junit
        The trial's JUnit reports (their failures replace the output's tail).

    Returns
    -------
    str
        The excerpt, at most ``EXCERPT_CHARS`` characters after the headline.
    """
    parts = [headline]
    failures = [f for report in junit for f in junit_failures(report)]
    if failures:
        parts.append("failed tests:\n" + "\n".join(failures))
    else:
        err = tail(stderr)
        if err:
            parts.append("stderr (last lines):\n" + err)
        else:
            out = tail(stdout)
            if out:
                parts.append("stdout (last lines):\n" + out)
    return "\n".join(parts)[: EXCERPT_CHARS + len(headline) + 1]
