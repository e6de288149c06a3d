"""Re-running a seeded random sample of a stored baseline run set under today's infrastructure.

The runner's public API for issue 13, item 7 ("the baseline stays executable"): the stored run
set's own copy of the candidate (``STORED/candidate/``, the bytes its trials ran) is run again on
``n`` of its cases, drawn by a seeded pseudo-random sample, with the stored number of trials. The
new run set's manifest says what was sampled (``baseline_sample``): the format, the seed, ``n``,
the population it was drawn from, the sampled case ids, and the stored run set (its id, the digest
of its ``records.jsonl`` from the seal, its candidate digest and case-set version). A drift test
(``gatestats drift``) compares the two on the sampled cases.

Refused before anything is written (:class:`~gatestats_runner.store.RunSetError` or
:class:`~gatestats_runner.case.CaseError`): a stored run set that is not complete, whose records
no longer match their seal, or whose candidate copy was modified; a sampled case that no longer
exists or whose version changed (a changed case is a new evaluation, not drift of the same one);
``n`` outside 1..(cases of the stored run set).
"""

from __future__ import annotations

import os
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TypedDict

from gatestats_runner.case import CaseError, load_case_set
from gatestats_runner.digests import tree_digest
from gatestats_runner.executors import Executor
from gatestats_runner.launch import SYSTEM_PARTS, OptionError, Progress, RunSetOptions, RunSetSummary, run_run_set
from gatestats_runner.runset import CANDIDATE
from gatestats_runner.runsets import BASELINE_SAMPLE_FORMAT
from gatestats_runner.sandbox import Isolation
from gatestats_runner.store import RunSetError, read_manifest, seal_records

__all__ = [
    "BASELINE_SAMPLE_FORMAT",
    "BaselineSampleOptions",
    "run_baseline_sample",
    "sample_case_ids",
    "stored_run_set_ref",
]


def sample_case_ids(case_ids: Sequence[str], n: int, seed: int) -> tuple[str, ...]:
    """A seeded simple random sample of ``n`` case ids, without replacement, sorted.

    The population is sorted first, so the sample depends only on the set of ids, ``n`` and
    ``seed`` (``random.Random(seed).sample``: the same on every platform and Python 3 version).

    Parameters
    ----------
    case_ids
        The population (distinct ids).
    n
        The sample size, 1 <= n <= len(case_ids).
    seed
        The seed (a non-negative integer).

    Returns
    -------
    tuple[str, ...]
        The sampled ids, sorted.

    Raises
    ------
    OptionError
        ``n`` or ``seed`` out of range, or duplicate ids.
    """
    population = sorted(case_ids)
    if len(set(population)) != len(population):
        msg = "case_ids: expected distinct ids"
        raise OptionError(msg)
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= len(population):
        msg = f"--baseline-sample: expected an integer in 1..{len(population)} (the stored run set's cases) (got {n!r})"
        raise OptionError(msg)
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        msg = f"--seed: expected an integer >= 0 (got {seed!r})"
        raise OptionError(msg)
    return tuple(sorted(random.Random(seed).sample(population, n)))


class StoredRunSetRef(TypedDict):
    """What identifies a stored run set (:func:`stored_run_set_ref`), as a baseline sample records it.

    The manifest's fields; each is null in a run set that does not name it.
    """

    run_set_id: str
    records_digest: str | None
    records_lines: int
    candidate_digest: str | None
    case_set_version: str | None
    trials: int | None
    system: str | None
    system_digest: str | None


def stored_run_set_ref(stored: str | os.PathLike[str]) -> StoredRunSetRef:
    """What identifies a stored run set: id, records digest (its seal, checked against the file), candidate, cases.

    Parameters
    ----------
    stored
        A complete run set directory.

    Returns
    -------
    dict
        ``run_set_id``, ``records_digest``, ``records_lines``, ``candidate_digest``,
        ``case_set_version``, ``trials``, ``system``, ``system_digest``.

    Raises
    ------
    RunSetError
        Not a run set, not complete, or its records do not match the manifest's seal.
    """
    root = Path(stored)
    manifest = read_manifest(root)
    path = root / "manifest.json"
    if manifest.get("complete") is not True:
        msg = f"{path}: field 'complete': the stored run set is not complete (got {manifest.get('complete')!r})"
        raise RunSetError(msg)
    seal = seal_records(root)
    if manifest.get("records_seal") != seal:
        msg = (
            f"{path}: field 'records_seal': records.jsonl no longer matches the manifest's seal "
            f"(got {seal!r}, sealed {manifest.get('records_seal')!r}); the stored run set is damaged"
        )
        raise RunSetError(msg)
    return {
        "run_set_id": manifest["run_set_id"],
        "records_digest": seal["digest"],
        "records_lines": seal["lines"],
        "candidate_digest": manifest.get("candidate_digest"),
        "case_set_version": manifest.get("case_set_version"),
        "trials": manifest.get("trials"),
        "system": manifest.get("system"),
        "system_digest": manifest.get("system_digest"),
    }


@dataclass(frozen=True, slots=True, kw_only=True)
class BaselineSampleOptions:
    """A baseline re-run: the cases, the stored run set, the sample and where to write the new run set."""

    cases: Path
    stored: Path
    out: Path
    n: int
    seed: int = 0
    #: The baseline candidate directory to run; None: the stored run set's own copy (``STORED/candidate``).
    #: When given, its bytes must be the stored copy's (the same content digest).
    candidate: Path | None = None
    resume: bool = False
    infra_retries: int = 2
    isolation: Isolation = "auto"
    require_enforced: tuple[str, ...] = ()


def _same_cases(cases: Path, sample: Sequence[str], stored_cases: dict[str, str]) -> None:
    """Refuse a sampled case that is missing from ``cases`` or whose version changed since the stored run."""
    now = {c.case_id: c.version for c in load_case_set(cases).cases}
    for case_id in sample:
        if case_id not in now:
            msg = f"{cases}: sampled case {case_id!r} of the stored run set is missing"
            raise CaseError(msg)
        if now[case_id] != stored_cases[case_id]:
            msg = (
                f"{cases}/{case_id}: case_version: changed since the stored run "
                f"(got {now[case_id]}, stored {stored_cases[case_id]}); a changed case is a new evaluation, not drift"
            )
            raise CaseError(msg)


def _candidate_to_rerun(options: BaselineSampleOptions, manifest: Mapping[str, object], ref: StoredRunSetRef) -> Path:
    """The stored run set's own candidate copy, or ``options.candidate`` when it holds the same bytes."""
    stored_copy = options.stored / CANDIDATE
    if manifest.get("origin", "runner") != "runner" or not stored_copy.is_dir():
        msg = (
            f"{options.stored}: no candidate copy to re-run (origin {manifest.get('origin', 'runner')!r}): "
            "only a run set made by the sandbox runner can be re-run"
        )
        raise RunSetError(msg)
    if tree_digest(stored_copy) != ref["candidate_digest"]:
        msg = f"{stored_copy}: the stored run set's copy of the candidate was modified; the run set is damaged"
        raise RunSetError(msg)
    candidate = stored_copy if options.candidate is None else options.candidate
    given = None if options.candidate is None else tree_digest(options.candidate)
    if given is not None and given != ref["candidate_digest"]:
        msg = (
            f"{options.candidate}: --candidate: not the stored baseline's bytes (got digest {given}, "
            f"stored {ref['candidate_digest']}); omit --candidate to run the stored copy"
        )
        raise RunSetError(msg)
    return candidate


def run_baseline_sample(
    options: BaselineSampleOptions,
    *,
    progress: Callable[[Progress], None] | None = None,
    executor: Executor | None = None,
) -> RunSetSummary:
    """Re-run a seeded sample of a stored baseline run set's cases, with its trials, into a new run set.

    The new run set is an ordinary one (:func:`~gatestats_runner.runset.run_run_set`) whose
    manifest also says what was sampled, and from which stored run set (``baseline_sample``).

    Parameters
    ----------
    options
        The cases, stored run set, sample size and seed, output directory.
    progress, executor
        As in :func:`~gatestats_runner.runset.run_run_set`.

    Returns
    -------
    RunSetSummary
        The new run set (its manifest has ``baseline_sample``).

    Raises
    ------
    OptionError
        ``n`` or ``seed`` out of range.
    RunSetError
        The stored run set is not complete or damaged, ``candidate`` is not its bytes, or the new
        run set cannot be made (as :func:`~gatestats_runner.runset.run_run_set`).
    CaseError
        A sampled case is missing from ``cases`` or its version changed since the stored run.
    """
    ref = stored_run_set_ref(options.stored)
    manifest = read_manifest(options.stored)
    stored_cases = {str(c["case_id"]): str(c["case_version"]) for c in manifest.get("cases", [])}
    sample = sample_case_ids(list(stored_cases), options.n, options.seed)
    candidate = _candidate_to_rerun(options, manifest, ref)
    _same_cases(options.cases, sample, stored_cases)
    trials = ref["trials"]
    if trials is None:
        msg = f"{options.stored / 'manifest.json'}: field 'trials': the stored run set names no number of trials"
        raise RunSetError(msg)
    record = {
        "format": BASELINE_SAMPLE_FORMAT,
        "seed": options.seed,
        "n": options.n,
        "population": sorted(stored_cases),
        "case_ids": list(sample),
        "stored": ref,
    }
    return run_run_set(
        RunSetOptions(
            cases=options.cases,
            candidate=candidate,
            out=options.out,
            trials=int(trials),
            resume=options.resume,
            system=str(ref["system"]),
            system_parts={k: v for k, v in (manifest.get("system_parts") or {}).items() if k in SYSTEM_PARTS},
            infra_retries=options.infra_retries,
            isolation=options.isolation,
            require_enforced=options.require_enforced,
            case_ids=sample,
            baseline_sample=record,
        ),
        executor=executor,
        progress=progress,
    )
