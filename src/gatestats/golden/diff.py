"""What changed between two versions of a golden set: added, retired and changed cases."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from gatestats._typing import JSONObject
from gatestats_runner.cases import CaseSet, load_case_set
from gatestats_runner.digests import digest_json

__all__ = ["CaseChange", "SetDiff", "diff_sets"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseChange:
    """A case in both versions with a different case version; ``grader_changed`` when its verifier differs."""

    case_id: str
    old_version: str
    new_version: str
    grader_changed: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class SetDiff:
    """The difference between two case sets, with both set versions."""

    old_version: str
    new_version: str
    added: tuple[str, ...]
    retired: tuple[str, ...]
    changed: tuple[CaseChange, ...]
    unchanged: tuple[str, ...]

    def to_dict(self) -> JSONObject:
        """The difference as JSON (changed cases by id; unchanged ones counted).

        Returns
        -------
        dict
            Versions, ``added``, ``retired``, ``changed``, ``grader_changed`` and ``unchanged``.
        """
        return {
            "old_version": self.old_version,
            "new_version": self.new_version,
            "added": list(self.added),
            "retired": list(self.retired),
            "changed": [c.case_id for c in self.changed],
            "grader_changed": [c.case_id for c in self.changed if c.grader_changed],
            "unchanged": len(self.unchanged),
        }


def _cases(path: Path) -> CaseSet:
    """A golden set directory (its ``cases/``, possibly empty) or a plain case-set directory."""
    if (path / "golden.json").is_file():
        cases = path / "cases"
        if not cases.is_dir() or not any((d / "case.json").is_file() for d in cases.iterdir()):
            return CaseSet(root=cases, cases=(), version=digest_json([]))
        return load_case_set(cases)
    return load_case_set(path)


def diff_sets(old: str | Path, new: str | Path) -> SetDiff:
    """Compare two golden-set (or case-set) directories case by case.

    Parameters
    ----------
    old, new
        The two set directories.

    Returns
    -------
    SetDiff
        Cases added, retired, changed (and whether their graders did) and unchanged.

    Raises
    ------
    CaseError
        A directory is not a case set or holds a malformed case.
    """
    a, b = _cases(Path(old)), _cases(Path(new))
    old_cases = {c.case_id: c for c in a.cases}
    new_cases = {c.case_id: c for c in b.cases}
    shared = sorted(set(old_cases) & set(new_cases))
    changed = tuple(
        CaseChange(
            case_id=cid,
            old_version=old_cases[cid].version,
            new_version=new_cases[cid].version,
            grader_changed=old_cases[cid].verifier_digest != new_cases[cid].verifier_digest,
        )
        for cid in shared
        if old_cases[cid].version != new_cases[cid].version
    )
    return SetDiff(
        old_version=a.version,
        new_version=b.version,
        added=tuple(sorted(set(new_cases) - set(old_cases))),
        retired=tuple(sorted(set(old_cases) - set(new_cases))),
        changed=changed,
        unchanged=tuple(cid for cid in shared if old_cases[cid].version == new_cases[cid].version),
    )
