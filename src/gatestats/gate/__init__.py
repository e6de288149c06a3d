"""The release gate: a policy registered before execution, blocking on silence, one verdict.

- :func:`load_policy` / :func:`parse_policy`: the TOML policy (every key checked, errors name key and line).
- :func:`register_policy`: write the policy's digest and time into a run set before its first record.
- :func:`load_record_set`: a run set directory (or record files) with digests.
- :func:`evaluate_gate`: the verdict (pass / warn / fail / insufficient_evidence) with its rows.
- :func:`write_verdict`: the immutable verdict file; :func:`read_verdict`: the one reader of it
  (strict JSON, every field typed, digest checked), :meth:`Verdict.from_dict`.
- :mod:`gatestats.gate.bindings`: the typed parts of a verdict (policy, record sets, curves, ...).

The names are imported on first use (PEP 562): reading a verdict (the report) loads the verdict
and its bindings, not the engine, the judges or scipy (tested in tests/cli/test_import_discipline.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from gatestats._lazy import lazy_names

if TYPE_CHECKING:
    from gatestats.gate.calibrations import JudgeCalibrations, load_judge_calibrations
    from gatestats.gate.engine import evaluate_gate
    from gatestats.gate.judge_labels import JudgeLabels, load_bound_judge_labels, load_judge_labels
    from gatestats.gate.policy import POLICY_FORMAT, Policy, PolicyError, PolicyProblem, Rule, load_policy, parse_policy
    from gatestats.gate.recordset import RecordSet, load_record_set
    from gatestats.gate.registration import Registration, RegistrationError, check_registration, register_policy
    from gatestats.gate.verdict import (
        EXIT_CODES,
        VERDICT_FORMAT,
        CheckResult,
        RuleResult,
        SevereSliceResult,
        Verdict,
        VerdictFile,
        VerdictFileError,
        read_verdict,
        verdict_digest,
        write_verdict,
    )

__all__ = [
    "EXIT_CODES",
    "POLICY_FORMAT",
    "VERDICT_FORMAT",
    "CheckResult",
    "JudgeCalibrations",
    "JudgeLabels",
    "Policy",
    "PolicyError",
    "PolicyProblem",
    "RecordSet",
    "Registration",
    "RegistrationError",
    "Rule",
    "RuleResult",
    "SevereSliceResult",
    "Verdict",
    "VerdictFile",
    "VerdictFileError",
    "check_registration",
    "evaluate_gate",
    "load_bound_judge_labels",
    "load_judge_calibrations",
    "load_judge_labels",
    "load_policy",
    "load_record_set",
    "parse_policy",
    "read_verdict",
    "register_policy",
    "verdict_digest",
    "write_verdict",
]
#: The module (under this package) of each name in ``__all__``, imported on first use.
_HOMES: Final = {
    **dict.fromkeys(("JudgeCalibrations", "load_judge_calibrations"), "calibrations"),
    "evaluate_gate": "engine",
    **dict.fromkeys(("JudgeLabels", "load_bound_judge_labels", "load_judge_labels"), "judge_labels"),
    **dict.fromkeys(
        ("POLICY_FORMAT", "Policy", "PolicyError", "PolicyProblem", "Rule", "load_policy", "parse_policy"), "policy"
    ),
    **dict.fromkeys(("RecordSet", "load_record_set"), "recordset"),
    **dict.fromkeys(("Registration", "RegistrationError", "check_registration", "register_policy"), "registration"),
    **dict.fromkeys(
        (
            "EXIT_CODES",
            "VERDICT_FORMAT",
            "CheckResult",
            "RuleResult",
            "SevereSliceResult",
            "Verdict",
            "VerdictFile",
            "VerdictFileError",
            "read_verdict",
            "verdict_digest",
            "write_verdict",
        ),
        "verdict",
    ),
}

__getattr__, __dir__ = lazy_names(__name__, _HOMES)
