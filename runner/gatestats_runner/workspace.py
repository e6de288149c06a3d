"""A fresh workspace per trial, made from the case snapshot and the candidate, disposed after the verdict.

Three ways, best first:

``overlay``
    A tmpfs of the trial's disk size holds the writable layer (``upper``), overlayfs's ``work``
    directory and the sandbox's ``/tmp``; the merged view stacks it over the candidate and the
    snapshot, which are never copied or written. About 3 ms, and the tmpfs size caps the disk.
``tmpfs-copy``
    Root, but overlayfs is missing or refused: the same size-limited tmpfs, with the snapshot and
    then the candidate copied into it. The disk is capped; the copy costs time per file.
``dir-copy``
    No root: a copy into a private directory (the run set puts it on ``/dev/shm``, a tmpfs, when
    it can). The disk is **not** capped, and the run set records it.

Mounts are made in the runner's mount namespace under a scratch directory that is bind-mounted on
itself and made private (so the mounts do not propagate into other namespaces); a runner killed
mid-trial leaves them, and :func:`sweep_mounts` removes them on the next start.
"""

from __future__ import annotations

import contextlib
import ctypes
import errno
import os
import shutil
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

__all__ = [
    "Workspace",
    "WorkspaceError",
    "WorkspaceMode",
    "create_workspace",
    "make_private_scratch",
    "mount_supported",
    "open_in_workspace",
    "release_private_scratch",
    "remove_in_workspace",
    "sweep_mounts",
]

WorkspaceMode = Literal["overlay", "tmpfs-copy", "dir-copy"]
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18
_MS_NOSUID = 2
_MS_NODEV = 4
_MNT_DETACH = 2
_libc: ctypes.CDLL | None = None


class WorkspaceError(OSError):
    """The workspace could not be made or was lost (an environment failure, never the candidate's)."""


def _lib() -> ctypes.CDLL:
    global _libc  # noqa: PLW0603 - one handle per process
    if _libc is None:
        _libc = ctypes.CDLL(None, use_errno=True)
    return _libc


def _mount(source: str, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    lib = _lib()
    rc = lib.mount(
        source.encode(),
        target.encode(),
        None if fstype is None else fstype.encode(),
        ctypes.c_ulong(flags),
        None if data is None else data.encode(),
    )
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"mount {fstype or 'bind'} on {target}: {os.strerror(err)}")


def _umount(target: str) -> None:
    if _lib().umount2(target.encode(), _MNT_DETACH) != 0:
        err = ctypes.get_errno()
        if err not in {errno.EINVAL, errno.ENOENT}:
            raise OSError(err, f"umount {target}: {os.strerror(err)}")


def mount_supported() -> bool:
    """Whether this process may mount (root on Linux).

    Returns
    -------
    bool
        True for root on Linux.
    """
    return os.name == "posix" and os.geteuid() == 0 and Path("/proc/self/mountinfo").exists()


def overlay_supported() -> bool:
    """Whether the kernel offers overlayfs (it is listed in ``/proc/filesystems``).

    Returns
    -------
    bool
        True when it does.
    """
    try:
        with open("/proc/filesystems", encoding="utf-8") as handle:
            return any(line.split()[-1] == "overlay" for line in handle if line.strip())
    except OSError:
        return False


def make_private_scratch(scratch: Path) -> bool:
    """Bind ``scratch`` on itself and make it private; False if that is not possible (no root).

    Parameters
    ----------
    scratch
        The run set's scratch directory (created).

    Returns
    -------
    bool
        True when the private bind is in place.
    """
    scratch.mkdir(parents=True, exist_ok=True)
    if not mount_supported():
        return False
    try:
        if not os.path.ismount(scratch):
            _mount(str(scratch), str(scratch), None, _MS_BIND, None)
        _mount("none", str(scratch), None, _MS_PRIVATE | _MS_REC, None)
    except OSError:
        return False
    return True


def release_private_scratch(scratch: Path) -> None:
    """Unmount whatever is left under ``scratch`` and the scratch bind itself, then remove it.

    Parameters
    ----------
    scratch
        The run set's scratch directory.
    """
    sweep_mounts(scratch, include_root=True)
    shutil.rmtree(scratch, ignore_errors=True)


def sweep_mounts(scratch: Path, *, include_root: bool = False) -> int:
    """Lazily unmount every mount under ``scratch`` (deepest first); return how many.

    Parameters
    ----------
    scratch
        The directory whose mounts are removed.
    include_root
        Unmount ``scratch`` itself too.

    Returns
    -------
    int
        How many mounts were removed.
    """
    root = os.path.realpath(scratch)
    points: list[str] = []
    try:
        with open("/proc/self/mountinfo", encoding="utf-8") as handle:
            for line in handle:
                fields = line.split()
                point = fields[4].replace("\\040", " ")
                if point.startswith(root + "/") or (include_root and point == root):
                    points.append(point)
    except OSError:
        return 0
    count = 0
    for point in sorted(set(points), key=len, reverse=True):
        with contextlib.suppress(OSError):
            _umount(point)
            count += 1
    return count


@dataclass(slots=True, kw_only=True)
class Workspace:
    """One trial's workspace: ``root`` is what the sandbox sees as /workspace, ``tmp`` as /tmp.

    ``shm`` (the sandbox's /dev/shm) lives beside them, so everything the candidate may write
    counts against the one disk bound.
    """

    mode: WorkspaceMode
    base: Path
    root: Path
    tmp: Path
    disk_capped: bool

    @property
    def shm(self) -> Path:
        return self.base / "shm"

    mounts: list[str]

    def disk_free(self) -> tuple[int, int] | None:
        """(free bytes, free inodes) of the size-limited tmpfs, or None when the disk is not capped.

        Returns
        -------
        tuple of int or None
            Free bytes and free inodes.
        """
        if not self.disk_capped:
            return None
        try:
            st = os.statvfs(self.base)
        except OSError:
            return None
        return st.f_bavail * st.f_frsize, st.f_favail

    def intact(self) -> bool:
        """False when the workspace was lost (unmounted or removed) while the trial ran.

        Returns
        -------
        bool
            True while the workspace is still there.
        """
        if not self.root.is_dir():
            return False
        return all(os.path.ismount(m) for m in self.mounts)

    def dispose(self) -> None:
        """Unmount and delete everything (lazy unmount: a busy mount still disappears)."""
        for point in reversed(self.mounts):
            with contextlib.suppress(OSError):
                _umount(point)
        self.mounts.clear()
        shutil.rmtree(self.base, ignore_errors=True)


def _copy_layers(layers: list[Path], dest: Path) -> None:
    """Copy the bottom layer first so upper layers (the candidate) replace its files."""
    for layer in reversed(layers):
        if layer.is_dir():
            shutil.copytree(layer, dest, symlinks=True, dirs_exist_ok=True)


def _escape_layer(path: Path) -> str | None:
    text = str(path)
    return None if any(ch in text for ch in ":,\\\n") else text


def create_workspace(
    base: Path,
    layers: list[Path],
    *,
    disk_bytes: int,
    inodes: int,
    prefer: WorkspaceMode = "overlay",
) -> Workspace:
    """Make a fresh workspace at ``base`` from ``layers`` (top first: candidate, then snapshot).

    Parameters
    ----------
    base
        Where the workspace is made (must not exist).
    layers
        The read-only layers, top first.
    disk_bytes, inodes
        The size and inode bound of the tmpfs (overlay and tmpfs-copy modes).
    prefer
        ``"overlay"`` (an overlayfs on a tmpfs), ``"tmpfs-copy"`` (layers copied into a tmpfs) or
        ``"dir-copy"`` (a plain directory: no disk bound). Overlay falls back to tmpfs-copy when
        overlayfs cannot be mounted; without root the workspace is always dir-copy.

    Returns
    -------
    Workspace
        Its root, the mode used and whether the disk is capped.

    Raises
    ------
    WorkspaceError
        Nothing could be made (disk full, permissions): the trial is an ``infra_error``.
    """
    try:
        base.mkdir(parents=True)
    except OSError as exc:
        raise WorkspaceError(exc.errno, f"workspace {base}: {exc.strerror}") from None
    mounts: list[str] = []
    existing = [layer for layer in layers if layer.is_dir()]
    try:
        if prefer != "dir-copy" and mount_supported():
            size = max(disk_bytes, 1 << 20)
            _mount(
                "gatestats-ws", str(base), "tmpfs", _MS_NOSUID | _MS_NODEV, f"size={size},nr_inodes={inodes},mode=0755"
            )
            mounts.append(str(base))
            root, tmp = base / "merged", base / "tmp"
            root.mkdir()
            for shared in (tmp, base / "shm"):
                shared.mkdir()
                os.chmod(shared, 0o1777)
            escaped = [_escape_layer(layer) for layer in existing]
            if prefer == "overlay" and existing and all(escaped) and overlay_supported():
                (base / "upper").mkdir()
                (base / "work").mkdir()
                try:
                    lower = ":".join(e for e in escaped if e)
                    options = f"lowerdir={lower},upperdir={base / 'upper'},workdir={base / 'work'}"
                    _mount("gatestats-ov", str(root), "overlay", _MS_NOSUID | _MS_NODEV, options)
                    mounts.append(str(root))
                    return Workspace(mode="overlay", base=base, root=root, tmp=tmp, disk_capped=True, mounts=mounts)
                except OSError:
                    shutil.rmtree(base / "upper", ignore_errors=True)
                    shutil.rmtree(base / "work", ignore_errors=True)
            _copy_layers(existing, root)
            return Workspace(mode="tmpfs-copy", base=base, root=root, tmp=tmp, disk_capped=True, mounts=mounts)
        root, tmp = base / "merged", base / "tmp"
        root.mkdir()
        for shared in (tmp, base / "shm"):
            shared.mkdir()
            os.chmod(shared, 0o1777)
        _copy_layers(existing, root)
        return Workspace(mode="dir-copy", base=base, root=root, tmp=tmp, disk_capped=False, mounts=mounts)
    except OSError as exc:
        for point in reversed(mounts):
            with contextlib.suppress(OSError):
                _umount(point)
        shutil.rmtree(base, ignore_errors=True)
        raise WorkspaceError(exc.errno or errno.EIO, f"workspace {base}: {exc}") from None


def _open_parent(root: Path, rel: str) -> tuple[int, str] | None:
    """Open the directory holding ``rel`` without following any symlink; None if a component is not a directory."""
    parts = rel.split("/")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    try:
        for part in parts[:-1]:
            nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=fd)
            os.close(fd)
            fd = nxt
    except OSError:
        os.close(fd)
        return None
    return fd, parts[-1]


def open_in_workspace(root: Path, rel: str) -> int | None:
    """Open a regular file of the workspace for reading, never following a symlink; None if there is none.

    The candidate controls the workspace: an artifact that is a symlink (to ``/etc/shadow`` say), a
    FIFO, a device or a directory is treated as missing, so the runner never reads outside it.

    Parameters
    ----------
    root
        The workspace root.
    rel
        A relative path inside it.

    Returns
    -------
    int or None
        A read-only file descriptor (the caller closes it), or None.
    """
    opened = _open_parent(root, rel)
    if opened is None:
        return None
    dir_fd, name = opened
    try:
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
    except OSError:
        return None
    finally:
        os.close(dir_fd)
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        return None
    os.set_blocking(fd, True)
    return fd


def remove_in_workspace(root: Path, rel: str) -> None:
    """Delete ``rel`` from the workspace (file, link or tree) without following symlinks.

    Parameters
    ----------
    root
        The workspace root.
    rel
        A relative path inside it (nothing happens when it does not exist).
    """
    opened = _open_parent(root, rel)
    if opened is None:
        return
    dir_fd, name = opened
    try:
        st = os.lstat(name, dir_fd=dir_fd)
        if stat.S_ISDIR(st.st_mode):
            shutil.rmtree(name, dir_fd=dir_fd)
        else:
            os.unlink(name, dir_fd=dir_fd)
    except FileNotFoundError:
        pass
    finally:
        os.close(dir_fd)
