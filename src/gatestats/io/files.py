"""Atomic file writes: a reader never sees a half-written file, and write-once files are never replaced.

- :func:`write_new_files`: several new files, created exclusively, all or none (the CLI's outputs).
- :func:`write_once`: one new file, created exclusively.
- :func:`rename_directory_once`: move a finished directory into place without replacing anything.
- :func:`write_atomic`: replace a file whole (for files that are meant to be rewritten).
- :func:`new_build_directory`: a hidden directory to build in, swept by the next build if its
  process is killed.

No litter after ``kill -9``: every temporary file (``.NAME.<hex>.tmp`` beside its target) and every
build directory (``PREFIX<hex>/``, with its lock file ``PREFIX<hex>.lock`` beside it) is locked by its
creator from the moment it can be seen (:func:`gatestats_runner.fsops.new_locked_file`); the next
writer of the same target, or the next build in the same place, removes those whose lock is free
(their creator is gone), never by PID (the runner's rule for its ``.creating`` directories).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gatestats_runner.fsops import abandoned, new_locked_file, rename_once

__all__ = [
    "BuildDirectory",
    "new_build_directory",
    "rename_directory_once",
    "sweep_builds",
    "sweep_temporaries",
    "write_atomic",
    "write_new_files",
    "write_once",
]

#: Move a finished directory into place without replacing anything (the runner's implementation).
rename_directory_once = rename_once

#: The random part of a temporary file's name: this module's (16 hex) or ``tempfile.mkstemp``'s (8
#: characters), which earlier versions used without a lock.
_RANDOM = r"(?:[0-9a-f]{16}|[a-z0-9_]{8})"


@dataclass(frozen=True, slots=True, kw_only=True)
class _Temporary:
    """A file locked from birth (a temporary file, a build's lock file), its lock held through ``fd``."""

    path: Path
    fd: int

    def close(self) -> None:
        """Remove the file's name (if still there), then drop the lock."""
        self.path.unlink(missing_ok=True)
        with contextlib.suppress(OSError):
            os.close(self.fd)


def _remove_abandoned(path: Path) -> bool:
    """Remove the file ``path`` if the process that locked it is gone (under its lock)."""
    fd = abandoned(path)
    if fd is None:
        return False
    try:
        path.unlink(missing_ok=True)
    finally:
        os.close(fd)
    return True


def sweep_temporaries(path: str | os.PathLike[str]) -> list[Path]:
    """Remove the temporary files of ``path`` (``.NAME.<random>.tmp`` beside it) whose writer is gone.

    Parameters
    ----------
    path
        A target file of this module's writers.

    Returns
    -------
    list of Path
        The temporary files removed (a live writer's are never touched: their lock is held).
    """
    target = Path(path)
    pattern = re.compile(re.escape(f".{target.name}.") + _RANDOM + r"\.tmp")
    try:
        names = [e.name for e in os.scandir(target.parent) if pattern.fullmatch(e.name)]
    except OSError:
        return []
    return [target.parent / n for n in sorted(names) if _remove_abandoned(target.parent / n)]


def _temporary(path: Path, data: bytes) -> _Temporary:
    """``data`` in an fsync'd, locked temporary file beside ``path`` (abandoned ones swept first)."""
    sweep_temporaries(path)
    fd, temp = new_locked_file(path.parent, f".{path.name}.", ".tmp")
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
        os.fchmod(fd, 0o644)
    except BaseException:
        _Temporary(path=temp, fd=fd).close()
        raise
    return _Temporary(path=temp, fd=fd)


@dataclass(frozen=True, slots=True, kw_only=True)
class BuildDirectory:
    """A hidden directory to build in, with the lock file beside it that shows its builder is alive."""

    path: Path
    lock: _Temporary

    def release(self) -> None:
        """Drop the lock file (after the directory was renamed into place or removed)."""
        self.lock.close()

    def discard(self) -> None:
        """Remove the directory, then drop the lock file."""
        shutil.rmtree(self.path, ignore_errors=True)
        self.release()


def sweep_builds(parent: str | os.PathLike[str], prefix: str) -> list[Path]:
    """Remove build directories ``PREFIX<hex>/`` in ``parent`` whose builder is gone (its lock file is free).

    A directory without its lock file is left alone: it cannot be judged (an earlier version's).

    Parameters
    ----------
    parent
        Where the builds are made.
    prefix
        Their names' prefix (``.building-``).

    Returns
    -------
    list of Path
        The directories (or lone lock files) removed.
    """
    root = Path(parent)
    pattern = re.compile(re.escape(prefix) + r"[0-9a-f]{16}\.lock")
    try:
        locks = sorted(e.name for e in os.scandir(root) if pattern.fullmatch(e.name))
    except OSError:
        return []
    removed: list[Path] = []
    for name in locks:
        fd = abandoned(root / name)
        if fd is None:
            continue
        try:
            build = root / name.removesuffix(".lock")
            if os.path.lexists(build):
                shutil.rmtree(build, ignore_errors=True)
            if not os.path.lexists(build):  # the lock goes only with its directory
                (root / name).unlink(missing_ok=True)
                removed.append(build)
        finally:
            os.close(fd)
    return removed


def new_build_directory(parent: str | os.PathLike[str], prefix: str) -> BuildDirectory:
    """A new hidden directory ``PARENT/PREFIX<hex>/`` to build in; abandoned ones are swept first.

    Its lock file ``PREFIX<hex>.lock`` (beside it, so it never enters what is built) is locked before
    the directory exists and until :meth:`BuildDirectory.release`, so :func:`sweep_builds` removes
    the directory only once its builder is gone.

    Parameters
    ----------
    parent
        Where to build (it must exist).
    prefix
        The directory's name prefix (``.building-``).

    Returns
    -------
    BuildDirectory
        The directory and its lock file (with the descriptor holding the lock).
    """
    root = Path(parent)
    sweep_builds(root, prefix)
    fd, lock = new_locked_file(root, prefix, ".lock")
    build = BuildDirectory(path=root / lock.name.removesuffix(".lock"), lock=_Temporary(path=lock, fd=fd))
    try:
        build.path.mkdir(mode=0o700)
    except BaseException:
        build.release()
        raise
    return build


def write_once(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` whole, only if ``path`` does not exist (a hard link cannot replace a file).

    Parameters
    ----------
    path
        The new file (its directory must exist).
    data
        Its bytes.

    Raises
    ------
    FileExistsError
        ``path`` exists, or appeared while writing.
    """
    temp = _temporary(path, data)
    try:
        os.link(temp.path, path)
    finally:
        temp.close()


def write_atomic(path: Path, data: bytes) -> None:
    """Write ``data`` to a temporary file beside ``path``, fsync it, then rename it over ``path``.

    Parameters
    ----------
    path
        The file to write or replace.
    data
        Its bytes.

    Raises
    ------
    OSError
        The file cannot be written (the temporary file is removed).
    """
    temp = _temporary(path, data)
    try:
        os.replace(temp.path, path)
    finally:
        temp.close()  # after the rename its name is gone; the lock is dropped


def _missing_parents(path: Path) -> list[Path]:
    """The ancestors of ``path`` that do not exist yet, outermost first (the nearest existing one must be a directory).

    Raises
    ------
    NotADirectoryError
        The nearest existing ancestor is not a directory.
    """
    missing: list[Path] = []
    for parent in path.parents:
        if parent.is_dir():
            break
        if os.path.lexists(parent):
            if parent.is_dir():  # made by another writer meanwhile
                break
            msg = f"{path}: cannot write here: {parent} is not a directory"
            raise NotADirectoryError(msg)
        missing.append(parent)
    return missing[::-1]


def _fsync_directory(directory: Path) -> None:
    """Make new directory entries durable (best effort: some file systems refuse to fsync a directory)."""
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def _append(path: Path, data: bytes) -> None:
    """Append ``data`` to ``path`` through one ``O_APPEND`` descriptor (the file is created when missing)."""
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o644)
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)


def _exists_message(target: Path) -> str:
    if target.is_dir():
        return f"{target}: is a directory; output files are never written over anything (choose a new path)"
    return f"{target}: already exists; output files are never overwritten (choose a new path)"


def _check_targets(targets: list[Path], appended: list[Path]) -> list[Path]:
    """Check every target before anything is written; return the directories to create, outermost first.

    Raises the errors of :func:`write_new_files` that can be told before writing.
    """
    seen: set[str] = set()
    for target in [*targets, *appended]:
        key = os.path.normcase(os.path.abspath(target))
        if key in seen:
            msg = f"{target}: named twice among the outputs (each output needs its own file)"
            raise ValueError(msg)
        seen.add(key)
    to_create: list[Path] = []
    for target in targets:
        sweep_temporaries(target)  # a killed writer's temporary file goes even when the path is taken
        if os.path.lexists(target):
            raise FileExistsError(_exists_message(target))
        to_create += [p for p in _missing_parents(target) if p not in to_create]
    for target in appended:
        if target.is_dir():
            msg = f"{target}: is a directory (expected a file to append to)"
            raise IsADirectoryError(msg)
        if not target.exists() and not target.parent.is_dir():
            msg = f"{target}: cannot append: no such directory {target.parent}"
            raise FileNotFoundError(msg)
    return to_create


def _make_directories(to_create: list[Path], made_dirs: list[Path]) -> None:
    """Create ``to_create`` in order, recording in ``made_dirs`` each one this call made."""
    for directory in to_create:
        try:
            directory.mkdir()
        except FileExistsError:
            if directory.is_dir():  # another writer made it: not ours to remove
                continue
            raise
        made_dirs.append(directory)


def _link_in_order(
    targets: list[Path], temporaries: list[_Temporary], linked: list[tuple[Path, os.stat_result]]
) -> None:
    """Hard-link each temporary file to its target, recording in ``linked`` each link made.

    Links are made in one global order (sorted absolute paths): of writers racing for the same
    files, the one that wins the first file wins them all, rather than each taking one and both
    giving up.
    """
    pairs = sorted(zip(targets, temporaries, strict=True), key=lambda pair: os.path.abspath(pair[0]))
    for target, temp in pairs:
        try:
            os.link(temp.path, target)
        except FileExistsError:
            raise FileExistsError(_exists_message(target)) from None
        linked.append((target, os.fstat(temp.fd)))


def _undo(linked: list[tuple[Path, os.stat_result]], made_dirs: list[Path]) -> None:
    """Remove the files this call linked (if still ours, not a newcomer's) and the directories it made."""
    for target, ours in reversed(linked):
        with contextlib.suppress(OSError):
            now = target.stat(follow_symlinks=False)
            if (now.st_dev, now.st_ino) == (ours.st_dev, ours.st_ino):
                target.unlink()
    for directory in reversed(made_dirs):
        with contextlib.suppress(OSError):
            directory.rmdir()


def write_new_files(
    outputs: Sequence[tuple[str | os.PathLike[str], bytes]],
    *,
    append: Sequence[tuple[str | os.PathLike[str], bytes]] = (),
) -> list[Path]:
    """Create every file of ``outputs`` exclusively, all or none; then append to the files of ``append``.

    Every target is checked before anything is written: the paths are distinct, no output target
    exists (a dangling symbolic link counts as existing), the nearest existing ancestor of each is a
    directory (missing parents are created), and each ``append`` target is a file or is missing from
    an existing directory. Each output's bytes go to an fsync'd temporary file beside it, which is
    then hard-linked to the target: a link never replaces a file, so of writers racing for the same
    paths exactly one wins (links are made in sorted path order). The ``append`` targets (e.g.
    GitHub's ``$GITHUB_STEP_SUMMARY``) come last, each through one ``O_APPEND`` descriptor. If any
    step fails, the files and directories this call created are removed and the error is raised (an
    append that already succeeded cannot be undone; a process killed between two links can leave
    the first file).

    Parameters
    ----------
    outputs
        ``(path, bytes)`` of each new file.
    append
        ``(path, bytes)`` of each file to append to (created when missing).

    Returns
    -------
    list of Path
        The created files, in the order given.

    Raises
    ------
    FileExistsError
        An output target exists or appeared while writing.
    NotADirectoryError
        A target's parent is not a directory.
    IsADirectoryError
        An ``append`` target is a directory.
    FileNotFoundError
        An ``append`` target's directory does not exist.
    ValueError
        Two targets name the same path.
    OSError
        Any other failure to write.

    Examples
    --------
    >>> import tempfile
    >>> folder = Path(tempfile.mkdtemp())
    >>> [p.name for p in write_new_files([(folder / "a.json", b"{}"), (folder / "b.md", b"# b")])]
    ['a.json', 'b.md']
    >>> write_new_files([(folder / "c.md", b"c"), (folder / "a.json", b"[]")])  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: .../a.json: already exists; output files are never overwritten (choose a new path)
    >>> (folder / "c.md").exists(), (folder / "a.json").read_bytes()
    (False, b'{}')
    >>> import shutil; shutil.rmtree(folder)
    """
    targets = [Path(path) for path, _ in outputs]
    appended = [Path(path) for path, _ in append]
    to_create = _check_targets(targets, appended)
    made_dirs: list[Path] = []
    temporaries: list[_Temporary] = []
    linked: list[tuple[Path, os.stat_result]] = []
    try:
        _make_directories(to_create, made_dirs)
        temporaries.extend(_temporary(target, data) for target, (_, data) in zip(targets, outputs, strict=True))
        _link_in_order(targets, temporaries, linked)
        for directory in {t.parent for t in targets}:
            _fsync_directory(directory)
        for target, (_, data) in zip(appended, append, strict=True):
            _append(target, data)
    except BaseException:
        _undo(linked, made_dirs)
        raise
    finally:
        for temp in temporaries:
            temp.close()
    return targets
