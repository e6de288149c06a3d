"""Reading the judge calibrations a policy names: the gate's file input for judges, kept out of the engine.

:func:`~gatestats.gate.engine.evaluate_gate` decides from data; this module turns the policy's
``[judges.NAME] calibrations = [...]`` files into that data. A calibration that cannot be read is
not an error of the whole gate: the judge's entry holds the reason, and the engine makes every rule
that judge would vote on ``insufficient_evidence`` with it.
"""

from __future__ import annotations

from collections.abc import Mapping

from gatestats.errors import GatestatsError
from gatestats.gate.policy import Policy
from gatestats.judges import JudgeCalibration, load_calibrations

__all__ = ["JudgeCalibrations", "load_judge_calibrations"]

#: Per judge grader: its calibrations by version, or why they could not be read.
JudgeCalibrations = Mapping[str, Mapping[str, JudgeCalibration] | str]


def load_judge_calibrations(policy: Policy) -> dict[str, dict[str, JudgeCalibration] | str]:
    """Read the calibration files of every judge grader a rule of ``policy`` uses.

    Parameters
    ----------
    policy
        The gate policy; the calibration paths of its ``[judges]`` tables are read.

    Returns
    -------
    dict
        ``{grader: {version: calibration}}``, or ``{grader: reason}`` when a file cannot be read,
        fails its integrity check or is not a calibration.
    """
    out: dict[str, dict[str, JudgeCalibration] | str] = {}
    for name in sorted({r.grader for r in policy.rules if r.grader is not None}):
        try:
            out[name] = load_calibrations([str(p) for p in policy.judges[name].calibrations])
        except (GatestatsError, ValueError, OSError) as exc:
            out[name] = str(exc)
    return out
