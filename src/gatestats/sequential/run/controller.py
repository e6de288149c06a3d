"""The sequential controller: run baseline and candidate batch by batch until the gate's decision is made.

``gatestats run --until-decided`` (see docs/sequential.md, "Running and gating"). The policy's
``[sequential]`` design fixes the most cases, the trials per case and the batch size; the case order
is a permutation drawn from the policy's seed (:func:`gatestats.gate.sequential_rules.case_order`,
recomputed by the gate). For each batch the runner runs both systems on the same cases, all their
trials (:attr:`gatestats_runner.launch.RunSetOptions.batch_cases`), in an order of the two systems
drawn from the seed; then both run sets are read back through the gate's own reader (checksums,
seal, membership: a record the gate would refuse stops the controller too) and evaluated by the gate
(:func:`gatestats.gate.evaluate_gate`, which decides each rule by its sequence). The run stops when
the decision is determined (a blocking rule or severe slice failed, or every blocking rule passed)
or the design's ``max_cases`` is reached. ``OUT/sequential.json`` is rewritten from the records
after every batch; after a crash or ``kill -9`` the same command resumes (the runner runs exactly
the missing trials of the batch that was interrupted).

Layout: ``OUT/baseline`` and ``OUT/candidate`` (run sets, each with the policy registered before its
first trial) and ``OUT/sequential.json``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from gatestats.errors import GatestatsError
from gatestats.gate import (
    Policy,
    RecordSet,
    Verdict,
    evaluate_gate,
    load_judge_calibrations,
    load_policy,
    load_record_set,
)
from gatestats.gate.sequential_rules import batch_first_side, case_order
from gatestats.records.runset import MANIFEST, RECORDS, read_run_set_manifest
from gatestats.sequential import SequentialDesign
from gatestats.sequential.run.path import path_document, write_path
from gatestats_runner.cases import load_case_set
from gatestats_runner.digests import tree_digest
from gatestats_runner.launch import Executor, Progress, RunSetOptions, run_run_set

__all__ = [
    "SIDES",
    "NotSequentialError",
    "SequentialRunError",
    "SequentialRunOptions",
    "SequentialRunResult",
    "run_until_decided",
]

SIDES: tuple[Literal["baseline", "candidate"], ...] = ("baseline", "candidate")


class NotSequentialError(GatestatsError, ValueError):
    """The policy has no ``[sequential]`` table: ``--until-decided`` has no design to follow (a usage error)."""


class SequentialRunError(GatestatsError, ValueError):
    """The sequential run cannot start or continue (invalid input: nothing more is run)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialRunOptions:
    """What to run: the policy (with ``[sequential]``), the cases, both systems' candidate directories, where.

    ``baseline`` and ``candidate`` are candidate directories (``CASE_ID/`` holds the files laid over
    that case), as for ``gatestats run --candidate``; the run sets are labelled with the policy's
    ``[baseline].system`` and ``[candidate].system`` (``candidate`` when it names none).
    """

    policy: Path
    cases: Path
    baseline: Path
    candidate: Path
    out: Path
    baseline_parts: Mapping[str, str] = field(default_factory=dict)
    candidate_parts: Mapping[str, str] = field(default_factory=dict)
    infra_retries: int = 2
    isolation: str = "auto"
    workspace: str = "overlay"
    require_enforced: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialRunResult:
    """Where the run stopped.

    ``verdict`` is the gate's evaluation at the stop (not written: ``gatestats gate`` writes the
    verdict file); ``state`` is ``decided`` or ``max_cases``; ``batches_run`` counts the batches this
    call ran (0 when it resumed a run that had already stopped).
    """

    verdict: Verdict
    path: Path
    state: Literal["decided", "max_cases"]
    batches_run: int
    document: Mapping[str, Any]


def _label(policy: Policy, side: Literal["baseline", "candidate"]) -> str:
    req = policy.baseline if side == "baseline" else policy.candidate
    return req.system or side


def _existing(policy: Policy, design: SequentialDesign, run_set: Path, source: Path) -> bool:
    """Whether ``run_set`` exists (then it must be this design's and ``source``'s: policy, trials, candidate bytes)."""
    if not run_set.exists():
        return False
    if not (run_set / MANIFEST).is_file():
        if run_set.is_dir() and not any(run_set.iterdir()):
            return False
        msg = f"{run_set}: exists and is not a run set; nothing was run (use a new --out)"
        raise SequentialRunError(msg)
    manifest = read_run_set_manifest(run_set / MANIFEST)
    registered = manifest.get("policy_digest")
    if registered != policy.digest or manifest.get("trials") != design.trials:
        records = run_set / RECORDS
        held = "holds records" if records.is_file() and records.stat().st_size > 0 else "was created"
        msg = (
            f"{run_set}: {held} under another design (registered policy {registered or 'none'}, "
            f"{manifest.get('trials')} trials per case); --until-decided with {policy.path} ({policy.digest}, "
            f"{design.trials} trials per case) is a new design: nothing was run (use a new --out)"
        )
        raise SequentialRunError(msg)
    if manifest.get("candidate_digest") != tree_digest(source):
        msg = (
            f"{run_set}: ran another candidate directory than {source} (its bytes differ); "
            "nothing was run (give the same --baseline and --candidate, or use a new --out)"
        )
        raise SequentialRunError(msg)
    return True


def _side_options(
    options: SequentialRunOptions,
    policy: Policy,
    design: SequentialDesign,
    side: Literal["baseline", "candidate"],
    *,
    resume: bool,
    batch: tuple[str, ...] | None,
) -> RunSetOptions:
    return RunSetOptions(
        cases=options.cases,
        candidate=options.baseline if side == "baseline" else options.candidate,
        out=options.out / side,
        trials=design.trials,
        resume=resume,
        system=_label(policy, side),
        system_parts=dict(options.baseline_parts if side == "baseline" else options.candidate_parts),
        infra_retries=options.infra_retries,
        isolation=options.isolation,  # type: ignore[arg-type]
        workspace=options.workspace,  # type: ignore[arg-type]
        require_enforced=options.require_enforced,
        policy_digest=policy.digest,
        prepare_only=not resume,
        batch_cases=batch,
    )


def _evaluate(policy: Policy, out: Path) -> Verdict:
    """The gate's evaluation of both run sets, read with the gate's integrity checks."""
    base: RecordSet = load_record_set(out / "baseline")
    cand: RecordSet = load_record_set(out / "candidate")
    return evaluate_gate(policy, base, cand, calibrations=load_judge_calibrations(policy))


def run_until_decided(
    options: SequentialRunOptions,
    *,
    executor: Callable[[], Executor] | None = None,
    on_batch: Callable[[Mapping[str, Any]], None] | None = None,
    on_trial: Callable[[Progress], None] | None = None,
) -> SequentialRunResult:
    """Run batches of both systems until the gate's decision is determined or ``max_cases`` is reached.

    Parameters
    ----------
    options
        The policy, the cases, both candidate directories and the output directory.
    executor
        Makes the executor of one run (None: the runner's local executor); called once per run.
    on_batch
        Called with the path document (:func:`~gatestats.sequential.run.path.path_document`) after it
        is written: once on start (the state so far) and after every batch.
    on_trial
        The runner's progress, passed to every run.

    Returns
    -------
    SequentialRunResult
        The gate's evaluation at the stop, the path file, why it stopped.

    Raises
    ------
    PolicyError
        The policy file is invalid.
    NotSequentialError
        The policy has no ``[sequential]`` table (nothing is run).
    SequentialRunError
        ``OUT/baseline`` or ``OUT/candidate`` exists under another design (another policy registered,
        or other trials per case) or ran other candidate bytes, the cases are fewer than
        ``max_cases``, or a batch did not complete (nothing more is run).
    RecordFileError
        A run set's records fail the gate's integrity checks.
    CaseError, RunSetError, SandboxError, OptionError
        From the runner (see :mod:`gatestats_runner.launch`).
    """
    policy = load_policy(options.policy)
    design = policy.sequential
    if design is None:
        msg = f"{options.policy}: --until-decided needs a policy with a [sequential] table (the design to follow)"
        raise NotSequentialError(msg)
    order = _prepare(options, policy, design, executor)
    checkpoints = design.checkpoints()
    batches_run = 0
    reached_before = -1
    while True:
        verdict = _evaluate(policy, options.out)
        binding = verdict.sequential
        if binding is None:  # pragma: no cover - a [sequential] policy always gives one
            msg = f"{options.policy}: the gate gave no sequential evaluation"
            raise SequentialRunError(msg)
        state: Literal["running", "decided", "max_cases"] = (
            "decided" if binding.decided else "max_cases" if binding.stopped_at >= design.max_cases else "running"
        )
        document = path_document(verdict, policy_digest=policy.digest, seed=policy.seed, state=state)
        path = write_path(options.out, document)
        if on_batch is not None:
            on_batch(document)
        if state != "running":
            return SequentialRunResult(
                verdict=verdict, path=path, state=state, batches_run=batches_run, document=document
            )
        _check_progress(options.out, verdict, reached_before)
        reached_before = binding.stopped_at
        j = len(binding.checkpoints)
        batch = tuple(order[binding.stopped_at : checkpoints[j]])
        first = batch_first_side(policy.seed, j)
        for side in (first, "candidate" if first == "baseline" else "baseline"):
            run_run_set(
                _side_options(options, policy, design, side, resume=True, batch=batch),
                executor=None if executor is None else executor(),
                progress=on_trial,
            )
        batches_run += 1


def _prepare(
    options: SequentialRunOptions,
    policy: Policy,
    design: SequentialDesign,
    executor: Callable[[], Executor] | None,
) -> tuple[str, ...]:
    """Check the run sets and the cases, create the missing run sets (policy registered); the case order."""
    sources = {"baseline": options.baseline, "candidate": options.candidate}
    existing = {side: _existing(policy, design, options.out / side, sources[side]) for side in SIDES}
    cases = load_case_set(options.cases).cases
    ids = [c.case_id for c in cases]
    if len(ids) < design.max_cases:
        msg = f"{options.cases}: {len(ids)} cases; the policy's [sequential] max_cases is {design.max_cases}"
        raise SequentialRunError(msg)
    groups = Counter(c.case_group for c in cases if c.case_group is not None)
    shared = sorted(g for g, n in groups.items() if n > 1)
    if shared:  # the gate would refuse these run sets (gate/sequential_rules.py): refuse before any trial
        msg = (
            f"{options.cases}: cases share a case_group ({', '.join(repr(g) for g in shared[:8])}): anytime-valid "
            "sequences need independent cases; gate this golden set with the fixed-size gate (docs/sequential.md)"
        )
        raise SequentialRunError(msg)
    for side in SIDES:  # create both run sets (the policy registered) before the first trial
        if not existing[side]:
            run_run_set(
                _side_options(options, policy, design, side, resume=False, batch=None),
                executor=None if executor is None else executor(),
            )
    return case_order(ids, policy.seed)[: design.max_cases]


def _check_progress(out: Path, verdict: Verdict, reached_before: int) -> None:
    """Refuse to go on when the run sets break the order, or when the last batch did not complete."""
    binding = verdict.sequential
    assert binding is not None
    problems = [c.detail for c in verdict.checks if c.name == "sequential_order" and c.status != "ok"]
    if problems:
        msg = f"{out}: the run sets cannot continue the sequential run: {problems[0]}"
        raise SequentialRunError(msg)
    if binding.stopped_at == reached_before:
        msg = (
            f"{out}: batch {len(binding.checkpoints) + 1} ran but is not complete on both sides "
            "(a trial without its final record); run the same command again to resume it"
        )
        raise SequentialRunError(msg)
