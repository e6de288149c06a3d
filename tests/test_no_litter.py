"""No litter after ``kill -9`` (issue 24, item 6): temporary files and build directories are locked from
birth and swept by the next writer once their process is gone, judged by the lock, never by a PID.

Each test kills a real process (``kill -9`` of a child that made the file and then waits) and checks
what the next writer removes, and that a live writer's files are never touched.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gatestats.io.files import new_build_directory, sweep_builds, sweep_temporaries, write_new_files, write_once
from gatestats_runner.fsops import abandoned, new_locked_file

HOLD = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from gatestats.io import files as _files
    kind, where = sys.argv[1], Path(sys.argv[2])
    if kind == "temp":
        held = _files._temporary(where, b"half a verdict")
        print(held.path, flush=True)
    else:
        held = _files.new_build_directory(where, ".building-")
        (held.path / "report.qmd").write_text("half a report")
        print(held.path, flush=True)
    time.sleep(600)
    """
)


def _holder(kind: str, where: Path) -> tuple[subprocess.Popen[str], Path]:
    """A child that made a temporary file (``temp``) or a build directory (``build``) and waits; and its path."""
    proc = subprocess.Popen(
        [sys.executable, "-c", HOLD, kind, str(where)], stdout=subprocess.PIPE, text=True, start_new_session=True
    )
    assert proc.stdout is not None
    line = proc.stdout.readline().strip()
    assert line, "the child made nothing"
    return proc, Path(line)


def _kill(proc: subprocess.Popen[str]) -> None:
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(timeout=30)


def test_a_killed_writers_temporary_file_is_swept_by_the_next_writer_a_live_ones_never(tmp_path: Path) -> None:
    target = tmp_path / "verdict.json"
    live, live_temp = _holder("temp", target)
    dead, dead_temp = _holder("temp", target)
    try:
        _kill(dead)
        assert dead_temp.exists()
        assert live_temp.exists()
        assert dead_temp.name.startswith(".verdict.json.")
        assert dead_temp.name.endswith(".tmp")
        write_once(target, b"{}")
        assert target.read_bytes() == b"{}"
        assert not dead_temp.exists()  # its writer is gone: removed under its lock
        assert live_temp.exists()  # its writer holds the lock: untouched
    finally:
        _kill(live)
    assert sweep_temporaries(target) == [live_temp]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verdict.json"]


def test_a_taken_output_path_still_sweeps_its_temporary_files(tmp_path: Path) -> None:
    target = tmp_path / "verdict.json"
    target.write_bytes(b"{}")
    dead, temp = _holder("temp", target)  # killed between the link and the unlink: both are there
    _kill(dead)
    with pytest.raises(FileExistsError):
        write_new_files([(target, b"[]")])
    assert not temp.exists()
    assert target.read_bytes() == b"{}"


def test_a_killed_builds_directory_and_lock_are_swept_a_live_ones_never(tmp_path: Path) -> None:
    live, live_dir = _holder("build", tmp_path)
    dead, dead_dir = _holder("build", tmp_path)
    try:
        _kill(dead)
        assert (dead_dir / "report.qmd").exists()
        assert dead_dir.with_name(dead_dir.name + ".lock").exists()  # the lock is beside, never inside
        assert not (dead_dir / ".lock").exists()
        mine = new_build_directory(tmp_path, ".building-")  # the next build sweeps first
        assert not dead_dir.exists()
        assert not dead_dir.with_name(dead_dir.name + ".lock").exists()
        assert (live_dir / "report.qmd").exists()
        mine.discard()
    finally:
        _kill(live)
    assert sweep_builds(tmp_path, ".building-") == [live_dir]
    assert list(tmp_path.iterdir()) == []


def test_what_cannot_be_judged_or_is_a_link_is_left_alone(tmp_path: Path) -> None:
    legacy = tmp_path / ".building-abcdefgh"  # an earlier version's build: no lock file to judge it by
    legacy.mkdir()
    outside = tmp_path / "outside.txt"
    outside.write_text("keep")
    link = tmp_path / ".verdict.json.0123456789abcdef.tmp"
    link.symlink_to(outside)
    lock_link = tmp_path / ".building-0123456789abcdef.lock"
    lock_link.symlink_to(outside)
    assert sweep_builds(tmp_path, ".building-") == []
    assert sweep_temporaries(tmp_path / "verdict.json") == []
    assert legacy.is_dir()
    assert link.is_symlink()
    assert lock_link.is_symlink()
    assert outside.read_text() == "keep"


def test_a_locked_file_is_never_abandoned_while_its_descriptor_is_open(tmp_path: Path) -> None:
    fd, path = new_locked_file(tmp_path, ".x.", ".tmp")
    try:
        assert abandoned(path) is None
    finally:
        os.close(fd)
    taken = abandoned(path)
    assert taken is not None
    os.close(taken)
    assert abandoned(tmp_path / "missing") is None


def test_a_gate_refused_for_its_taken_verdict_path_sweeps_every_outputs_temporary_file(tmp_path: Path) -> None:
    # A gate killed between its links (session 41, the kill -9 loop over gate -o): the verdict is linked, the summary's
    # and JUnit's temporary files are left. The next gate to the same paths is refused for the verdict (exit 2) and
    # still removes all three outputs' abandoned temporaries (it swept only the verdict's: the others stayed).
    from typer.testing import CliRunner

    from gatestats.cli import app

    outputs = {option: tmp_path / f"verdict{suffix}" for option, suffix in (("-o", ".json"), ("--markdown", ".md"), ("--junit", ".xml"))}  # fmt: skip
    outputs["-o"].write_bytes(b"{}")
    left = []
    for path in outputs.values():
        fd, temp = new_locked_file(tmp_path, f".{path.name}.", ".tmp")
        os.close(fd)  # its writer is gone
        left.append(temp)
    args = [
        "gate",
        "--policy",
        str(tmp_path / "policy.toml"),
        "--baseline",
        str(tmp_path),
        "--candidate",
        str(tmp_path),
    ]
    result = CliRunner().invoke(app, [*args, *(str(a) for pair in outputs.items() for a in pair)])
    assert result.exit_code == 2, result.output
    assert "a verdict file already exists there" in result.output
    assert [p for p in left if p.exists()] == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["verdict.json"]
