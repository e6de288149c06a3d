"""File-system operations both owners need: moving a finished directory into place, never replacing;
files locked from birth, and removing what a killed process left.

Standard library only (the runner's rule); public, so the release controller uses the same code.

What a killed process leaves (a half-built directory, a temporary file) is judged by a lock, never by
a PID (PIDs are reused, and a disk may be shared between machines): its creator holds an exclusive
``flock`` on a file from the moment a sweeper could see that file (:func:`new_locked_file`), and
the kernel drops the lock with the process. A sweeper that can take the lock (:func:`abandoned`)
knows the creator is gone, and removes what it left while it holds the lock. The runner's half-built
run sets (``.NAME.creating-PID-HEX/.lock``, :func:`gatestats_runner.runset.sweep_stale_builds`) follow
the same rule.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import fcntl
import os
import secrets
import stat
import sys
from pathlib import Path

__all__ = ["abandoned", "new_locked_file", "rename_once"]

_AT_FDCWD = -100
_RENAME_NOREPLACE = 1  # <linux/fs.h>


def _renameat2_noreplace(source: Path, target: Path) -> bool:
    """Linux ``renameat2(source, target, RENAME_NOREPLACE)``; False where the C library or file system lacks it."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # a C library without renameat2 (glibc < 2.28, some musl builds)
        return False
    renameat2.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint]
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(source), _AT_FDCWD, os.fsencode(target), _RENAME_NOREPLACE) == 0:
        return True
    code = ctypes.get_errno()
    if code in (errno.ENOSYS, errno.EINVAL):
        return False
    raise OSError(code, os.strerror(code), str(target))


def rename_once(source: Path, target: Path) -> None:
    """Rename the finished directory ``source`` to ``target``, which must not exist.

    A plain ``rename`` silently replaces an empty directory that appeared after a check; this uses
    Linux's ``renameat2(RENAME_NOREPLACE)`` where available and elsewhere checks first and turns the
    "directory not empty" of a lost race into :class:`FileExistsError`.

    Parameters
    ----------
    source
        The finished directory.
    target
        Its new name (on the same file system).

    Raises
    ------
    FileExistsError
        ``target`` exists, or appeared meanwhile.
    """
    try:
        done = _renameat2_noreplace(source, target)
        if not done and not os.path.lexists(target):
            os.rename(source, target)
            done = True
    except OSError as exc:
        if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
            raise
        done = False
    if not done:
        msg = f"{target}: already exists (it is never replaced)"
        raise FileExistsError(msg)


def _names_file(path: Path, fd: int) -> bool:
    """Whether ``path`` (not followed) is still the regular file open as ``fd``."""
    try:
        named, held = os.lstat(path), os.fstat(fd)
    except OSError:
        return False
    return stat.S_ISREG(held.st_mode) and (named.st_dev, named.st_ino) == (held.st_dev, held.st_ino)


def new_locked_file(directory: Path, prefix: str, suffix: str) -> tuple[int, Path]:
    """Create a new file ``DIRECTORY/PREFIX<16 hex>SUFFIX`` and hold an exclusive ``flock`` on it.

    The file is created exclusively, then locked; a sweeper that found it in the instant between
    (and so could lock and remove it) is told apart after the lock is taken: the name no longer
    names the file held, and another name is taken. So while the returned descriptor is open,
    :func:`abandoned` never returns the file; once its process is gone (``kill -9`` included), it does.

    Parameters
    ----------
    directory
        Where the file is created (it must exist).
    prefix, suffix
        The file's name around its random part.

    Returns
    -------
    tuple of (int, Path)
        The open descriptor (read-write, close-on-exec, the lock held) and the file's path.

    Raises
    ------
    OSError
        The file cannot be created or locked.
    """
    while True:
        path = directory / f"{prefix}{secrets.token_hex(8)}{suffix}"
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)  # waits only while a sweeper that found it unlocked holds it
        except BaseException:
            os.close(fd)
            raise
        if _names_file(path, fd):
            return fd, path
        os.close(fd)  # removed by a sweeper in that instant: take another name


def abandoned(path: Path) -> int | None:
    """A descriptor holding the lock of ``path`` when the process that locked it is gone, else None.

    The caller removes what the file stands for (the file itself, a directory beside it) while the
    descriptor is open, then closes it.

    Parameters
    ----------
    path
        A file made by :func:`new_locked_file` (a symbolic link or a non-regular file is never taken).

    Returns
    -------
    int or None
        The open descriptor with the lock held; None when the file is missing, not a regular file,
        still locked by a live process, or was replaced meanwhile.
    """
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)  # its creator is alive (or the lock cannot be taken here): leave it
        return None
    if not _names_file(path, fd):
        with contextlib.suppress(OSError):
            os.close(fd)
        return None
    return fd
