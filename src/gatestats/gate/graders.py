"""The grader in the agent's reach: the policy's golden set, checked against the candidate's run, as data.

A policy with ``golden_set = "PATH"`` says which protected set's approved graders the candidate's
run must have used. The engine reads no file: the gate command runs
:func:`gatestats.golden.check_graders` on the set and the candidate's run set and hands the
findings (or why they could not be read) to :func:`~gatestats.gate.engine.evaluate_gate` as
:data:`GoldenFindings`. Every finding is a blocking check naming the case, the changed files, who
changed them and who approved the version in force (docs/gate.md, "The grader in the agent's reach").
"""

from __future__ import annotations

from collections.abc import Sequence

from gatestats.gate.policy import Policy
from gatestats.gate.verdict import CheckResult
from gatestats.golden.checks import Finding

__all__ = ["GoldenFindings", "GraderFinding", "grader_checks"]

#: One case whose grader is not the approved one: the golden set's own finding (the case, what kind,
#: and who changed what), as :func:`gatestats.golden.check_graders` returns it.
GraderFinding = Finding

#: The findings of the policy's golden set against the candidate's run, or why they could not be read.
GoldenFindings = Sequence[GraderFinding] | str


def grader_checks(policy: Policy, given: GoldenFindings | None) -> list[CheckResult]:
    """The blocking checks of the policy's golden set (none when the policy names no set).

    Parameters
    ----------
    policy
        The registered policy (its ``golden_set``).
    given
        The findings (an empty sequence: every grader is the approved one), or the reason the set
        or the run's manifest could not be read, or ``None`` when nothing was checked.

    Returns
    -------
    list of CheckResult
        ``golden_set`` ``ok`` when there is no finding; else one ``insufficient_evidence`` check per
        finding, named ``golden_set:KIND:CASE``; a set that could not be checked blocks too.
    """
    if policy.golden_set is None:
        return []
    where = str(policy.golden_set)
    if given is None:
        detail = f"the graders of golden set {where} were not checked against the candidate's run"
        return [CheckResult(name="golden_set", side="candidate", status="insufficient_evidence", detail=detail)]
    if isinstance(given, str):
        detail = f"golden set {where} could not be checked against the candidate's run: {given}"
        return [CheckResult(name="golden_set", side="candidate", status="insufficient_evidence", detail=detail)]
    if not given:
        detail = f"every case's grader is the one approved in golden set {where}"
        return [CheckResult(name="golden_set", side="candidate", status="ok", detail=detail)]
    return [
        CheckResult(
            name=f"golden_set:{f.kind}:{f.case_id}",
            side="candidate",
            status="insufficient_evidence",
            detail=f"case {f.case_id!r} ({f.kind}): {f.message}",
        )
        for f in given
    ]
