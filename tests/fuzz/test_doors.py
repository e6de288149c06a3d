"""The doors' commands accept their unmutated inputs: a refusal in the fuzz suite is the mutant's doing.

Each door target's commands run on an untouched copy of its directory (as :func:`tests.fuzz.targets.run_target`
lays it out) and must do their normal work: promote writes the proposed case, ``run --baseline-sample``
its re-run, recovery and ``correct --resume`` exit 0 without touching the journal. ``drift`` exits 12
(insufficient evidence: two sampled cases, and the exact paired test needs six) — not 1, its exit for a
damaged run set.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from tests.fuzz import targets
from tests.fuzz.corpus import Corpus
from tests.fuzz.doors import DOOR_TARGETS
from tests.fuzz.targets import tree_bytes, tree_copy

#: The exit of each command on valid input (0 unless said).
EXPECTED_EXIT = {"drift (stored)": 12, "drift (re-run)": 12}


@pytest.mark.parametrize(("target", "command"), [(t.name, name) for t in DOOR_TARGETS for name in t.commands], ids=str)
def test_each_door_accepts_its_valid_input(target: str, command: str, corpus: Corpus, tmp_path: Path) -> None:
    door = next(t for t in DOOR_TARGETS if t.name == target)
    source: Path = getattr(corpus, str(door.folder))
    folder = tmp_path / source.name
    shutil.copytree(source, folder, symlinks=True)
    before = tree_bytes(folder)
    args, outputs = door.commands[command](tmp_path, folder / door.file, corpus)
    result = CliRunner().invoke(app, args)
    assert result.exit_code == EXPECTED_EXIT.get(command, 0), result.output
    if command.startswith("drift"):
        assert '"status": "insufficient_evidence"' in result.stdout
    assert all(p.exists() for p in outputs)  # promote's proposed case, run's re-run
    if not command.startswith("promote"):
        assert tree_bytes(folder) == before


def _entries(root: Path) -> dict[str, tuple[object, ...]]:
    """Every entry under ``root`` as copytree leaves it: a file's mode, modification time and bytes, a link's target."""
    found: dict[str, tuple[object, ...]] = {}
    for path in sorted(root.rglob("*")):
        name = path.relative_to(root).as_posix()
        if path.is_symlink():
            found[name] = ("link", os.readlink(path))
        elif path.is_dir():
            found[name] = ("dir",)
        else:
            st = path.stat()
            # Not the access time: the copy's is the source's when the process first read it, and reads move it.
            found[name] = ("file", st.st_mode, st.st_mtime_ns, path.read_bytes())
    return found


@pytest.mark.parametrize("folder", ["candidate", "stored", "rerun", "correction", "golden_run"])
def test_the_harness_copies_and_reads_a_directory_as_copytree_and_rglob(
    folder: str, corpus: Corpus, tmp_path: Path
) -> None:
    """The fuzz harness's string-path copy and scandir read (issue 28, item 3) against the standard library's."""
    source: Path = getattr(corpus, folder)
    shutil.copytree(source, tmp_path / "copytree", symlinks=True)
    tree_copy(source, tmp_path / "tree_copy")
    assert _entries(tmp_path / "tree_copy") == _entries(tmp_path / "copytree")
    tree = tmp_path / "links"  # every kind of entry rglob and is_file see: nested, links to a file and a folder
    shutil.copytree(source, tree / "nested" / "deeper", symlinks=True)
    (tree / "top.txt").write_bytes(b"top")
    (tree / "to-file").symlink_to(tree / "top.txt")
    (tree / "to-folder").symlink_to(tree / "nested")
    (tree / "dangling").symlink_to(tree / "missing")
    for root in (tree, tmp_path / "tree_copy"):
        expected = {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}
        assert list(tree_bytes(root).items()) == sorted(expected.items())


def _state(root: Path) -> dict[str, tuple[object, ...]]:
    """:func:`_entries` with every directory's mode and every file's access time (taken before the reads)."""
    stats = {p.relative_to(root).as_posix(): p.stat() for p in root.rglob("*") if not p.is_symlink()}
    found = _entries(root)
    for name, entry in found.items():
        if entry[0] == "dir":
            found[name] = ("dir", stats[name].st_mode)
        elif entry[0] == "file":
            found[name] = (*entry, stats[name].st_atime_ns)
    return found


def _damages(folder: Path, dirty: str) -> dict[str, object]:
    """What a command could leave in a folder without changing a byte of its files (tree_bytes cannot see it)."""
    file = next(p for p in sorted(folder.rglob("*")) if p.is_file() and not p.is_symlink() and p.name != dirty)
    damages = {
        "an empty directory": (folder / "left-behind").mkdir,
        "the folder's mode": lambda: folder.chmod(0o700),
        "a link": lambda: (folder / "to-file").symlink_to(file),
        "a file's mode": lambda: file.chmod(0o600),
        "a file's modification time": lambda: os.utime(file, ns=(0, 0)),
        "the mutated file's mode": lambda: (folder / dirty).chmod(0o600),
        "a file a link": lambda: (file.unlink(), file.symlink_to(folder / dirty)),
    }
    sub = next((p for p in sorted(folder.rglob("*")) if p.is_dir() and not p.is_symlink()), None)
    if sub is not None:  # the correction output's folders
        damages["a directory removed"] = lambda: shutil.rmtree(sub)
        damages["a directory's mode"] = lambda: sub.chmod(0o700)
    return damages


@pytest.mark.parametrize("folder", ["candidate", "correction"])
def test_a_folder_is_kept_for_the_next_mutant_only_as_a_fresh_copy(
    folder: str, corpus: Corpus, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A mutant's folder is moved on to the next mutant (issue 28, item 3) only when it is what tree_copy makes
    but for the mutated file, which is put back; the reads' access times are put back too."""
    monkeypatch.setattr(targets, "_SPARES", {})
    source: Path = getattr(corpus, folder)
    dirty = next(t.file for t in DOOR_TARGETS + targets.TARGETS if t.folder == folder)
    tree_copy(source, tmp_path / "fresh")
    fresh = _state(tmp_path / "fresh")
    for i, damage in enumerate(["", *_damages(tmp_path / "fresh", dirty)]):
        work = tmp_path / str(i)
        tree_copy(source, work)
        (work / dirty).write_bytes(b"a mutant")
        for path in work.rglob("*"):
            if path.is_file() and not path.is_symlink():
                os.utime(path, ns=(1, path.stat().st_mtime_ns))  # a read moved its access time
        if damage:
            _damages(work, dirty)[damage]()
        targets._keep_spare(source, work, dirty)
        kept = targets._SPARES.get(source) == work
        assert kept == (damage == ""), damage
        if kept:  # moved on to the next mutant's work folder: what tree_copy makes, access times included
            targets._copy_or_spare(source, tmp_path / "moved")
            assert not work.exists()
            assert targets._SPARES == {}
            assert _state(tmp_path / "moved") == fresh
        targets._SPARES.clear()
