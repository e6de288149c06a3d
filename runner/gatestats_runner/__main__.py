"""``python -m gatestats_runner run ...``: the runner's own command line (standard library only).

The same options as ``gatestats run`` (which adds a progress bar). Exit codes: 0 the run set is
complete; 1 invalid input (cases, candidate, run set mismatch, damaged records, isolation that
was required but is missing); 2 usage error (an unknown option, or a value no run can have:
``--trials 0``, ``--workers 0``, ``--infra-retries -1``, an unknown bound in
``--require-enforced``, ``--executor ray`` where Ray is not installed); 3 the run set is still
incomplete.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

from gatestats_runner.launch import (
    EXECUTORS,
    SYSTEM_PARTS,
    CaseError,
    OptionError,
    Progress,
    RunSetError,
    RunSetOptions,
    SandboxError,
    make_executor,
    run_run_set,
)

__all__ = ["main", "make_executor"]  # make_executor lives in gatestats_runner.launch; kept here for older callers

EXIT_INPUT = 1
EXIT_USAGE = 2
EXIT_INCOMPLETE = 3


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m gatestats_runner", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="run cases x trials of a candidate into an immutable, resumable run set")
    run.add_argument("cases", type=Path, help="cases directory (one subdirectory with case.json per case)")
    run.add_argument("--candidate", type=Path, required=True, help="candidate directory: CASE_ID/ files per case")
    run.add_argument("--trials", type=int, required=True, help="trials per case (k)")
    run.add_argument("--out", type=Path, required=True, help="run set directory (new, or existing with --resume)")
    run.add_argument("--workers", type=int, default=None, help="parallel trials (default: the number of cores)")
    run.add_argument("--resume", action="store_true", help="continue a crashed run set: run only missing trials")
    run.add_argument(
        "--rerun-unresolved",
        action="store_true",
        help="with --resume: run one new attempt of every trial whose final attempt is an infra_error",
    )
    run.add_argument("--system", default="candidate", help="label of the evaluated system")
    for part in SYSTEM_PARTS:
        run.add_argument(f"--{part.replace('_', '-')}", default=None, help=f"system part: {part}")
    run.add_argument("--infra-retries", type=int, default=2, help="retries of an infra_error attempt (default 2)")
    run.add_argument("--isolation", choices=["auto", "bwrap", "none"], default="auto")
    run.add_argument("--workspace", choices=["overlay", "tmpfs-copy", "dir-copy"], default="overlay")
    run.add_argument("--require-enforced", default="", help="comma-separated bounds that must be enforced")
    run.add_argument("--policy-digest", default=None, help="digest of the gate policy registered before the run")
    run.add_argument("--executor", choices=list(EXECUTORS), default="local")
    run.add_argument("--address", default=None, help="Ray cluster address (with --executor ray)")
    run.add_argument("--quiet", action="store_true", help="no progress lines")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; return the exit status (argparse exits 2 itself on a malformed command line).

    Parameters
    ----------
    argv
        The arguments after the program name (default: ``sys.argv[1:]``).

    Returns
    -------
    int
        0 when the run set is complete, 1 on invalid input, 2 on an invalid option, 3 when the run
    set is left incomplete.
    """
    args = _parser().parse_args(argv)
    options = RunSetOptions(
        cases=args.cases,
        candidate=args.candidate,
        out=args.out,
        trials=args.trials,
        resume=args.resume,
        system=args.system,
        system_parts={p: getattr(args, p) for p in SYSTEM_PARTS if getattr(args, p) is not None},
        infra_retries=args.infra_retries,
        isolation=args.isolation,
        workspace=args.workspace,
        require_enforced=tuple(x.strip() for x in args.require_enforced.split(",") if x.strip()),
        policy_digest=args.policy_digest,
        rerun_unresolved=args.rerun_unresolved,
    )

    def report(p: Progress) -> None:
        if not args.quiet and p.record is not None:
            r = p.record
            bound = f" ({r['bound']})" if r.get("bound") else ""
            print(f"[{p.done}/{p.total}] {r['case_id']} t{r['trial']} a{r['attempt']}: {r['outcome']}{bound}")

    try:
        executor = make_executor(args.executor, workers=args.workers, address=args.address)
        with warnings.catch_warnings():
            warnings.simplefilter("always")
            summary = run_run_set(options, executor=executor, progress=report)
    except OptionError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except (CaseError, RunSetError, SandboxError, ValueError, ImportError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_INPUT
    counts = ", ".join(f"{k} {v}" for k, v in sorted(summary.counts.items()))
    state = "complete" if summary.complete else "INCOMPLETE"
    print(f"{summary.out}: {state}, {summary.total_trials} trials ({counts}); {summary.attempts_run} attempts run now")
    not_enforced = summary.isolation.get("not_enforced") or {}
    for name, why in not_enforced.items():
        print(f"warning: bound '{name}' not enforced: {why}", file=sys.stderr)
    return 0 if summary.complete else EXIT_INCOMPLETE


if __name__ == "__main__":
    raise SystemExit(main())
