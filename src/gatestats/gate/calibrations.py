"""Reading the judge calibrations a policy names: the gate's file input for judges, kept out of the engine.

:func:`~gatestats.gate.engine.evaluate_gate` decides from data; this module turns the policy's
``[judges.NAME] calibrations = [...]`` files into that data. A calibration that cannot be read is
not an error of the whole gate: the judge's entry holds the reason, and the engine makes every rule
that judge would vote on ``insufficient_evidence`` with it.
"""

from __future__ import annotations

from collections.abc import Mapping

from gatestats.errors import GatestatsError
from gatestats.gate.policy import JudgeRequirement, Policy
from gatestats.judges import JudgeCalibration, load_calibrations
from gatestats.judges.recalibration import recalibration_change

__all__ = ["JudgeCalibrations", "load_judge_calibrations", "recalibration_refusal"]

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
            stored = load_calibrations([str(p) for p in policy.judges[name].calibrations])
            out[name] = recalibration_refusal(policy.judges[name], stored) or stored
        except (GatestatsError, ValueError, OSError) as exc:
            out[name] = str(exc)
    return out


def recalibration_refusal(requirement: JudgeRequirement, stored: Mapping[str, JudgeCalibration]) -> str | None:
    """Why the judge may not vote because a recalibration moved beyond ``max_calibration_change``, or ``None``.

    Parameters
    ----------
    requirement
        The judge's policy table (its ``recalibrations`` and ``max_calibration_change``).
    stored
        Its stored calibrations by version.

    Returns
    -------
    str or None
        The reason (every rate that moved, per recalibration), or ``None`` when none moved.
    """
    if not requirement.recalibrations or requirement.max_calibration_change is None:
        return None
    reasons = []
    for new in load_calibrations([str(p) for p in requirement.recalibrations]).values():
        same = [c for c in stored.values() if (c.judge_model, c.rubric_digest) == (new.judge_model, new.rubric_digest)]
        if not same:
            reasons.append(f"recalibration {new.version} has no stored calibration of the same judge and rubric")
        for old in same:
            moved = recalibration_change(old, new).moved_beyond(requirement.max_calibration_change)
            reasons += [f"{old.version} -> {new.version}: {m}" for m in moved]
    return None if not reasons else "judge recalibrated and its calibration moved: " + "; ".join(reasons)
