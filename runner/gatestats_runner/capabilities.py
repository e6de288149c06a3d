"""What this machine offers the runner: bubblewrap, root, cgroups, overlayfs — and what that enforces.

Detected once per run set (two short bubblewrap probes, a walk of /etc for files that are not
world-readable). :meth:`Capabilities.enforcement` is what the run-set manifest records: every
bound either ``enforced`` with its mechanism or ``not_enforced`` with the reason, so a record is
never read as bounded by something that was not there.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import stat
import subprocess
from dataclasses import dataclass
from typing import Literal

from gatestats_runner._util import JSONObject
from gatestats_runner.cgroups import CgroupSupport, detect_cgroups
from gatestats_runner.workspace import WorkspaceMode, mount_supported, overlay_supported

__all__ = ["Capabilities", "Isolation", "SandboxError", "bwrap_base", "detect_capabilities"]

Isolation = Literal["auto", "bwrap", "none"]
_SYSTEM_DIRS = ("bin", "sbin", "lib", "lib32", "lib64", "libx32")
#: The sandbox's uid 0 maps to the host's root, and the kernel lets the global root uid write any
#: 0644 sysctl by file mode alone (drop_caches, core_pattern, ...): /proc/sys and its kin are
#: bound read-only (their values still follow the sandbox's own namespaces), the rest is masked.
_PROC_READ_ONLY = ("sys", "fs", "irq", "bus", "sysrq-trigger")
_PROC_MASKED = ("acpi", "asound", "kcore", "keys", "kmsg", "latency_stats", "sched_debug", "scsi", "timer_list")


class SandboxError(RuntimeError):
    """Isolation that was required (``--isolation bwrap``) is not available here."""


@dataclass(frozen=True, slots=True, kw_only=True)
class Capabilities:
    """What this machine offers the runner, detected once per run set."""

    isolation: Literal["bwrap", "none"]
    bwrap: str | None
    bwrap_version: str | None
    bwrap_userns: bool
    root: bool
    cgroups: CgroupSupport
    workspace_mode: WorkspaceMode
    fsize_unit: int
    etc_masks: tuple[tuple[str, bool], ...] = ()
    proc_args: tuple[str, ...] = ()
    system_links: tuple[tuple[str, str | None], ...] = ()
    notes: tuple[str, ...] = ()

    def enforcement(self) -> dict[str, dict[str, str]]:
        """What the runner enforces on this machine, and what it cannot, each with how or why.

        Returns
        -------
        dict
            ``{"enforced": {limit: mechanism}, "not_enforced": {limit: reason}}`` for the manifest.
        """
        enforced: dict[str, str] = {"wall_clock": f"runner timer, then {self._killer()}"}
        missing: dict[str, str] = {}
        cg = self.cgroups
        if cg.cpu_accounting:
            enforced["cpu"] = (
                f"{cg.cpu_accounting} (whole tree, runner kill) + RLIMIT_CPU per process at twice the bound + 1 s"
            )
        else:
            missing["cpu"] = "no cgroup CPU accounting: RLIMIT_CPU bounds each process, not the whole tree"
        if cg.memory is not None:
            enforced["memory"] = "cgroup v2 memory.max" if cg.memory_v2 else "cgroup v1 memory.limit_in_bytes"
        else:
            missing["memory"] = "no writable memory cgroup"
        if cg.pids is not None:
            enforced["processes"] = "cgroup v2 pids.max" if cg.pids_v2 else "cgroup v1 pids.max"
        else:
            missing["processes"] = "no writable pids cgroup"
        if self.workspace_mode in {"overlay", "tmpfs-copy"}:
            enforced["disk"] = f"size-limited tmpfs ({self.workspace_mode}) + RLIMIT_FSIZE"
        else:
            missing["disk"] = "no root to mount a size-limited tmpfs: the workspace is a plain directory"
        enforced["output"] = "runner watch of stdout+stderr size + RLIMIT_FSIZE (SIGXFSZ)"
        enforced["open_files"] = "RLIMIT_NOFILE"
        self._isolation_enforcement(enforced, missing)
        return {"enforced": enforced, "not_enforced": missing}

    def _killer(self) -> str:
        """How the runner kills a trial's process tree."""
        cg = self.cgroups
        killer = "cgroup.kill" if cg.unified_kill else "SIGKILL to every process of the cgroups"
        if self.isolation == "bwrap":
            killer += " + PID namespace teardown"
        elif cg.pids is None and cg.memory is None and cg.unified is None:
            killer = "SIGKILL to the process group (a daemon that calls setsid escapes)"
        return killer

    def _isolation_enforcement(self, enforced: dict[str, str], missing: dict[str, str]) -> None:
        """Add network, filesystem and environment: by bubblewrap, or not at all on the host."""
        if self.isolation == "bwrap":
            enforced["network"] = "bwrap --unshare-net (loopback only, in a new namespace)"
            enforced["filesystem"] = (
                "bwrap: read-only root, /usr, /etc (non-world-readable files masked), /dev, /verifier and "
                "/proc/sys (sensitive /proc files masked); only /workspace, /tmp and /dev/shm (the trial's "
                "tmpfs) are writable"
            )
            enforced["environment"] = "bwrap --clearenv (only the contract's variables)"
            return
        for name in ("network", "filesystem"):
            missing[name] = "no bubblewrap: the command runs on the host"
        enforced["environment"] = "cleared environment (only the contract's variables)"

    def describe(self) -> JSONObject:
        """The capabilities as the manifest records them.

        Returns
        -------
        dict
            Isolation, bubblewrap, root, workspace mode, cgroups, notes and :meth:`enforcement`.
        """
        return {
            "isolation": self.isolation,
            "bwrap": self.bwrap,
            "bwrap_version": self.bwrap_version,
            "bwrap_userns": self.bwrap_userns,
            "root": self.root,
            "workspace_mode": self.workspace_mode,
            "cgroups": self.cgroups.describe(),
            "notes": list(self.notes),
            **self.enforcement(),
        }


def _etc_masks() -> tuple[tuple[str, bool], ...]:
    """Entries of /etc that are not world-readable (shadow, private keys): hidden in the sandbox."""
    masks: list[tuple[str, bool]] = []
    for dirpath, dirnames, filenames in os.walk("/etc"):
        for name in list(dirnames):
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and (st.st_mode & 0o005) != 0o005:
                masks.append((path, True))
                dirnames.remove(name)
        for name in filenames:
            path = os.path.join(dirpath, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode) and not st.st_mode & 0o004:
                masks.append((path, False))
    return tuple(sorted(masks))


def _proc_args() -> tuple[str, ...]:
    """bwrap arguments that make /proc's writable kernel knobs read-only and hide the sensitive files."""
    args: list[str] = []
    for name in _PROC_READ_ONLY:
        path = f"/proc/{name}"
        if os.path.exists(path):
            args += ["--ro-bind", path, path]
    for name in _PROC_MASKED:
        path = f"/proc/{name}"
        if os.path.isdir(path):
            args += ["--tmpfs", path, "--remount-ro", path]
        elif os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    return tuple(args)


def _system_links() -> tuple[tuple[str, str | None], ...]:
    """/bin, /lib, ... as symlink targets (merged /usr) or None (a real directory to bind)."""
    links: list[tuple[str, str | None]] = []
    for name in _SYSTEM_DIRS:
        path = f"/{name}"
        if os.path.islink(path):
            links.append((path, os.readlink(path)))
        elif os.path.isdir(path):
            links.append((path, None))
    return tuple(links)


def _fsize_unit() -> int:
    """Bytes per unit of ``ulimit -f`` in /bin/sh (512 in dash and POSIX mode, 1024 in bash)."""
    try:
        out = subprocess.run(
            ["/bin/sh", "-c", "ulimit -S -f 8 && cat /proc/self/limits"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return 512
    match = re.search(r"^Max file size\s+(\d+)", out, flags=re.MULTILINE)
    return int(match.group(1)) // 8 if match else 512


def bwrap_base(caps_bwrap: str, *, userns: bool) -> list[str]:
    """The bubblewrap command line every sandbox starts with: no capabilities, new namespaces, killed with its parent.

    Parameters
    ----------
    caps_bwrap
        The path of the ``bwrap`` executable.
    userns
        Whether bubblewrap may create a user namespace (then it does, and forbids nested ones).

    Returns
    -------
    list of str
        The arguments before the mounts and the command.
    """
    args = [caps_bwrap]
    if userns:
        args += ["--unshare-user", "--disable-userns"]
    args += [
        "--cap-drop",
        "ALL",
        "--unshare-pid",
        "--unshare-net",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--die-with-parent",
        "--new-session",
        "--hostname",
        "gatestats-sandbox",
    ]
    return args


def _probe_bwrap(path: str, *, userns: bool) -> bool:
    args = [*bwrap_base(path, userns=userns), "--ro-bind", "/usr", "/usr"]
    for name, target in _system_links():
        args += ["--symlink", target, name] if target else ["--ro-bind", name, name]
    args += ["--proc", "/proc", "--dev", "/dev", "--", "/bin/sh", "-c", "exit 0"]
    try:
        return subprocess.run(args, capture_output=True, timeout=30, check=False).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def detect_capabilities(isolation: Isolation = "auto", *, workspace: WorkspaceMode = "overlay") -> Capabilities:
    """Detect bubblewrap, root, cgroups and overlayfs.

    Parameters
    ----------
    isolation
        ``"bwrap"`` (required), ``"none"`` (run on the host) or ``"auto"`` (bubblewrap when it works).
    workspace
        The preferred workspace mode; without root it falls back to ``"dir-copy"``, without
        overlayfs to ``"tmpfs-copy"`` (each fallback is noted).

    Returns
    -------
    Capabilities
        What this machine offers, with notes on what falls short.

    Raises
    ------
    SandboxError
        ``isolation="bwrap"`` and bubblewrap is missing or cannot start a sandbox here.
    """
    notes: list[str] = []
    bwrap_path = shutil.which("bwrap") if isolation != "none" else None
    bwrap_version = None
    userns = False
    chosen: Literal["bwrap", "none"] = "none"
    if bwrap_path:
        with contextlib.suppress(OSError, subprocess.SubprocessError):
            bwrap_version = subprocess.run(
                [bwrap_path, "--version"], capture_output=True, text=True, timeout=10, check=False
            ).stdout.strip()
        if _probe_bwrap(bwrap_path, userns=True):
            userns, chosen = True, "bwrap"
        elif _probe_bwrap(bwrap_path, userns=False):
            chosen = "bwrap"
            notes.append("bwrap cannot create a user namespace here: nested user namespaces are not disabled")
        else:
            notes.append("bwrap is installed but cannot start a sandbox here")
    elif isolation != "none":
        notes.append("bwrap not found (Debian: apt-get install bubblewrap)")
    if isolation == "bwrap" and chosen != "bwrap":
        msg = "isolation 'bwrap' required but unavailable: " + "; ".join(notes)
        raise SandboxError(msg)
    root = mount_supported()
    mode: WorkspaceMode = workspace
    if not root:
        mode = "dir-copy"
        notes.append("not root: workspaces are plain directories and the disk bound is not enforced")
    elif mode == "overlay" and not overlay_supported():
        mode = "tmpfs-copy"
        notes.append("overlayfs unavailable: workspaces are copied into a size-limited tmpfs")
    cgroups = detect_cgroups() if root else CgroupSupport()
    return Capabilities(
        isolation=chosen,
        bwrap=bwrap_path if chosen == "bwrap" else None,
        bwrap_version=bwrap_version,
        bwrap_userns=userns,
        root=root,
        cgroups=cgroups,
        workspace_mode=mode,
        fsize_unit=_fsize_unit(),
        etc_masks=_etc_masks() if chosen == "bwrap" else (),
        proc_args=_proc_args() if chosen == "bwrap" else (),
        system_links=_system_links(),
        notes=tuple(notes),
    )
