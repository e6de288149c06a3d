"""File-system operations both owners need: moving a finished directory into place, never replacing.

Standard library only (the runner's rule); public, so the release controller uses the same code.
"""

from __future__ import annotations

import ctypes
import errno
import os
import sys
from pathlib import Path

__all__ = ["rename_once"]

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
