"""The words of a sequential gate's stop, shared by ``gatestats gate``'s terminal output and its Markdown summary.

Everything here is read from the verdict's ``sequential`` part
(:class:`gatestats.gate.bindings.SequentialBinding`): where the run stopped, each rule row's e-values
at its last batch against the levels they had to reach (the reciprocals of the alphas the verdict
binds), the trials used and saved against the fixed-size design. Nothing is recomputed. The
functions return plain text with no value from data in it except where the caller's ``escape``
is applied (the method name), so each renderer escapes rule names its own way.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gatestats.gate.bindings import SequentialBinding, SequentialRulePath

__all__ = ["SequentialRuleStop", "guarantee_text", "rule_stop", "stop_text", "trials_text"]


def _num(value: float) -> str:
    """A number as ``gatestats run --until-decided`` prints it (3 significant digits)."""
    return f"{value:.3g}"


def _level(alpha: float) -> str:
    """The e-value a side must reach, ``1 / alpha`` (a verdict file with a non-positive alpha shows none)."""
    return _num(1 / alpha) if alpha > 0 else "—"


def stop_text(binding: SequentialBinding, *, escape: Callable[[object], str]) -> str:
    """Where the run stopped and whether the decision was determined there, as one sentence.

    Parameters
    ----------
    binding
        The verdict's ``sequential`` part.
    escape
        How the renderer shows a value from the file (applied to the method name).

    Returns
    -------
    str
        For example ``stopped after 32 of at most 48 cases (batch 4 of at most 6, batches of 8 cases;
        betting confidence sequences, 2 trials per case on both systems): the decision was determined there``.

    Examples
    --------
    >>> from gatestats.gate.bindings import SequentialBinding
    >>> b = SequentialBinding(max_cases=48, trials=2, batch_cases=8, method="betting", alpha_pass_share=0.5,
    ...     order=(), checkpoints=(8, 16), stopped_at=16, decided=False, trials_used=64, trials_fixed=192,
    ...     trials_saved=128, rules=())
    >>> text = stop_text(b, escape=str)
    >>> text[:61]
    'stopped after 16 of at most 48 cases (batch 2 of at most 6, b'
    >>> text.rsplit(": ", 1)[1]
    'not decided yet, 32 cases of the design not run'
    """
    batches = -(-binding.max_cases // binding.batch_cases)
    design = (
        f"batches of {binding.batch_cases} cases; {escape(binding.method)} confidence sequences, "
        f"{binding.trials} trials per case on both systems"
    )
    if binding.stopped_at == 0:
        where = f"no batch is complete on both sides yet (0 of at most {binding.max_cases} cases; {design})"
    else:
        where = (
            f"stopped after {binding.stopped_at} of at most {binding.max_cases} cases "
            f"(batch {len(binding.checkpoints)} of at most {batches}, {design})"
        )
    unrun = binding.max_cases - binding.stopped_at
    if binding.decided:
        state = "the decision was determined there"
    elif unrun <= 0:
        state = "every case of the design ran and the decision was not determined (insufficient evidence)"
    else:
        state = f"not decided yet, {unrun} cases of the design not run"
    return f"{where}: {state}"


def trials_text(binding: SequentialBinding) -> str:
    """The trials used and saved against the fixed-size design.

    Parameters
    ----------
    binding
        The verdict's ``sequential`` part (its trial counts and design size are read).

    Returns
    -------
    str
        For example ``128 of the fixed-size design's 192 trials used (48 cases × 2 trials × 2 systems),
        64 saved (33%)``.
    """
    share = binding.trials_saved / binding.trials_fixed if binding.trials_fixed else 0.0
    return (
        f"{binding.trials_used} of the fixed-size design's {binding.trials_fixed} trials used "
        f"({binding.max_cases} cases × {binding.trials} trials × 2 systems), "
        f"{binding.trials_saved} saved ({share:.0%})"
    )


def guarantee_text(binding: SequentialBinding) -> str:
    """What the monitoring that happened means for the error guarantee, in one plain sentence.

    Parameters
    ----------
    binding
        The verdict's ``sequential`` part (only whether it has rule rows matters).

    Returns
    -------
    str
        The guarantee when at least one rule row was read; otherwise why there is nothing to guarantee.
    """
    if not binding.rules:
        return (
            "No rule's sequence was read (see the reasons): nothing was decided by it, so no pass rests on "
            "this monitoring."
        )
    return (
        "Each rule was read after every batch with an anytime-valid test against levels fixed before the "
        "first trial, so its chance of a false pass stays within its alpha under exactly the monitoring and "
        "the stop that happened here."
    )


@dataclass(frozen=True, slots=True, kw_only=True)
class SequentialRuleStop:
    """One rule row at its stop: its status, where, and both e-values with the level each had to reach."""

    row: str
    status: str
    e_pass: str
    e_fail: str


def rule_stop(rule: SequentialRulePath) -> SequentialRuleStop:
    """A rule row at the last batch it was read at (its decision, or the run's stop when undecided).

    Parameters
    ----------
    rule
        One row of the verdict's ``sequential.rules``.

    Returns
    -------
    SequentialRuleStop
        ``row`` unescaped (the caller escapes it); ``status`` such as ``pass at 16 cases`` or
        ``undecided after 48 cases, about 40 more cases needed``; ``e_pass`` / ``e_fail`` such as
        ``99.8 (level 80)``.
    """
    last = rule.path[-1] if rule.path else None
    pass_level, fail_level = _level(rule.alpha_pass), _level(rule.alpha_fail)
    if last is None:
        return SequentialRuleStop(
            row=rule.row,
            status=f"{rule.status}, not read",
            e_pass=f"— (level {pass_level})",
            e_fail=f"— (level {fail_level})",
        )
    if rule.status == "undecided":
        needed = "" if rule.cases_needed is None else f", about {rule.cases_needed} more cases needed"
        status = f"undecided after {last.n_cases} cases{needed}"
    else:
        status = f"{rule.status} at {last.n_cases} cases"
    return SequentialRuleStop(
        row=rule.row,
        status=status,
        e_pass=f"{_num(last.e_pass)} (level {pass_level})",
        e_fail=f"{_num(last.e_fail)} (level {fail_level})",
    )
