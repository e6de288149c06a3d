"""``gatestats run CASES --baseline-sample N --against STORED --out DIR [--seed S]``: re-run a stored baseline's sample.

The work is :func:`gatestats_runner.baseline.run_baseline_sample` (the runner's public API): the
stored run set's own candidate copy runs again on a seeded random sample of ``N`` of its cases,
with its number of trials, system label and parts, under today's infrastructure; the new run
set's manifest records the sample, the seed and the stored run set's digest. ``gatestats drift
STORED DIR`` then tests whether the baseline moved. Options that the stored run set decides
(``--trials``, ``--system`` and the system parts, a policy, ``--prepare``) are usage errors here;
``gatestats run`` then runs the sample behind its bar (:func:`gatestats.cli._trial_bar.run_with_bar`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from gatestats.cli._common import usage_error

__all__ = ["check_baseline_options"]


def check_baseline_options(*, baseline_sample: int | None, against: Path | None, decided: Mapping[str, object]) -> None:
    """Refuse a half-given baseline re-run, or options the stored run set decides, as usage errors (exit 2).

    Parameters
    ----------
    baseline_sample, against
        ``--baseline-sample`` and ``--against``: both or neither.
    decided
        Option name -> value of the options a baseline re-run takes from the stored run set; any
        value that is not None or False is refused.
    """
    if (baseline_sample is None) != (against is None):
        raise usage_error("--baseline-sample N and --against STORED_RUN_SET go together")
    given = sorted(name for name, value in decided.items() if value not in (None, False))
    if baseline_sample is not None and given:
        raise usage_error(
            f"--baseline-sample: {', '.join(given)}: taken from the stored run set (trials, system, policy); "
            "leave them out"
        )
