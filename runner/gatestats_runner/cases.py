"""Cases for other owners: read a case or a case set, and write a new case directory whole.

Standard library only; public (in the runner's ``__all__``), so the release
controller writes cases in the one format the runner reads, checked by the runner's own reader.
"""

from __future__ import annotations

import os
import secrets
import shutil
from collections.abc import Collection, Mapping
from pathlib import Path, PurePosixPath

from gatestats_runner.case import CASE_FILE, CASE_FORMAT, Case, CaseError, CaseSet, load_case, load_case_set
from gatestats_runner.fsops import rename_once

__all__ = ["CASE_FILE", "CASE_FORMAT", "Case", "CaseError", "CaseSet", "load_case", "load_case_set", "write_case"]


def _checked_relative(target: Path, name: str) -> PurePosixPath:
    pure = PurePosixPath(name)
    if pure.is_absolute() or ".." in pure.parts or name in {"", "."} or "\\" in name or "\x00" in name:
        msg = f"{target}: file name {name!r} is not a relative path inside the case without '..'"
        raise CaseError(msg)
    return pure


def write_case(
    target: str | os.PathLike[str],
    files: Mapping[str, bytes],
    *,
    executable: Collection[str] = (),
) -> Case:
    """Write the case directory ``target`` from ``files``, whole or not at all, and return it loaded.

    The files are written into a new directory beside ``target`` (``.writing-HEX/NAME``), read back
    with :func:`load_case` (the format's every rule, with the case id the directory name), and
    only then renamed into place; ``target`` is never replaced.

    Parameters
    ----------
    target
        The case directory to create; its name is the case id. Its parent must exist.
    files
        Relative path (``/``-separated, no ``..``) -> bytes; must include ``case.json``.
    executable
        Paths among ``files`` written with mode 0755 (the others 0644).

    Returns
    -------
    Case
        The case as the runner loads it from ``target``.

    Raises
    ------
    CaseError
        A file name leaves the case, ``case.json`` is missing or breaks the format.
    FileExistsError
        ``target`` exists.
    """
    target = Path(target)
    if os.path.lexists(target):
        msg = f"{target}: already exists (a case directory is never replaced)"
        raise FileExistsError(msg)
    if CASE_FILE not in files:
        msg = f"{target}: {CASE_FILE} is missing from the files to write"
        raise CaseError(msg)
    unknown = sorted(set(executable) - set(files))
    if unknown:
        msg = f"{target}: executable names files that are not written: {', '.join(unknown)}"
        raise CaseError(msg)
    building_parent = target.parent / f".writing-{secrets.token_hex(6)}"
    building_parent.mkdir()
    try:
        building = building_parent / target.name
        building.mkdir()
        for name in sorted(files):
            path = building.joinpath(*_checked_relative(target, name).parts)
            path.parent.mkdir(parents=True, exist_ok=True)
            with open(path, "xb") as handle:
                handle.write(files[name])
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(path, 0o755 if name in executable else 0o644)
        load_case(building)  # the runner's own checks, before anything is visible
        rename_once(building, target)
    finally:
        shutil.rmtree(building_parent, ignore_errors=True)
    return load_case(target)
