"""Plain-language first sentences for the gate's reasons, written from a row's decision and kind.

The gate's own reason (the statistics: tests, p-values, cases needed) is kept word for word and
shown after the sentence; the sentence only says, for a release manager, what the row means for
the release. Nothing here changes a decision.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from gatestats.report._release_format import number, usd, words
from gatestats.vocabulary import GATE_METRICS, metric_spec

__all__ = ["Reason", "plain_check", "plain_rule", "plain_severe", "severe_detail", "verdict_reasons"]

_NOT_BLOCKING: Final = "This rule only warns: it does not block the release."


@dataclass(frozen=True, slots=True, kw_only=True)
class Reason:
    """One reason of the verdict: a plain sentence first, then the gate's statistics."""

    plain: str
    detail: str


def _where(row: Mapping[str, Any]) -> str:
    name = row.get("slice")
    return "" if name in (None, "", "all") else f" in slice '{name}'"


def _metric(row: Mapping[str, Any]) -> str:
    metric = str(row.get("metric"))
    return metric_spec(metric).words(row.get("k") or 1) if metric in GATE_METRICS else words(row.get("metric"))


def _too_few(row: Mapping[str, Any], question: str, where: str = "") -> str:
    """The sentence for a rule with too few cases (``where``) to tell ``question``, and how many would do."""
    needed = row.get("cases_needed")
    more = f"; about {needed} cases would be needed" if needed else ""
    return f"There are too few cases{where} to tell whether {question}{more}."


def _percent(value: Any) -> str:
    return f"{value:.0%}" if isinstance(value, int | float) else "the allowed amount"


def plain_rule(row: Mapping[str, Any]) -> str:
    """The sentence for a rule row that did not pass (``decision`` warn, fail or insufficient_evidence).

    Parameters
    ----------
    row
        A rule row of the verdict (``kind``, ``metric``, ``slice``, ``decision``, ``threshold``,
        ``margin``, ``cases_needed`` ...).

    Returns
    -------
    str
        One sentence a release manager understands, without statistical terms.

    Examples
    --------
    >>> print(plain_rule({"kind": "threshold", "metric": "pass_hat_k", "k": 4, "slice": "all",
    ...                   "decision": "fail", "threshold": 0.5}))
    The candidate's reliability (pass^4: all 4 trials of a case pass) is below the required 0.5.
    """
    decision = row.get("decision")
    if decision == "pass":
        return "This rule passed."
    if decision == "warn":
        return _NOT_BLOCKING
    sentence = _RULE_SENTENCES.get(str(row.get("kind")), _threshold_sentence)
    return sentence(row, decision == "insufficient_evidence")


def _paired_sentence(row: Mapping[str, Any], short: bool) -> str:
    """A paired rule: worse than the baseline by more than the margin, or too few cases to tell."""
    where, metric, margin = _where(row), _metric(row), number(row.get("margin"))
    if short:
        return _too_few(row, f"the candidate is at most {margin} worse than the baseline", where)
    return f"The candidate's {metric}{where} is worse than the baseline's by more than the allowed {margin}."


def _cost_increase_sentence(row: Mapping[str, Any], short: bool) -> str:
    """A cost-increase rule: the cost rose by more than allowed, or too few cases to tell."""
    allowed = _percent(row.get("margin"))
    if short:
        return _too_few(row, f"the candidate's cost per accepted outcome rose by more than the allowed {allowed}")
    return f"The candidate's cost per accepted outcome rose by more than the allowed {allowed}."


def _cost_threshold_sentence(row: Mapping[str, Any], short: bool) -> str:
    """A cost threshold: the cost is above the limit, or too few cases to tell."""
    limit = usd(row.get("threshold"))
    if short:
        question = "whether the candidate's cost per accepted outcome stays below"
        return f"There are too few cases to tell {question} {limit}."
    return f"The candidate's cost per accepted outcome is above {limit}."


def _threshold_sentence(row: Mapping[str, Any], short: bool) -> str:
    """A threshold on a rate: below the required value, or too few cases to tell."""
    where, metric, threshold = _where(row), _metric(row), number(row.get("threshold"))
    if short:
        return _too_few(row, f"the candidate's {metric} reaches {threshold}", where)
    return f"The candidate's {metric}{where} is below the required {threshold}."


_RULE_SENTENCES: dict[str, Callable[[Mapping[str, Any], bool], str]] = {
    "paired": _paired_sentence,
    "cost_increase": _cost_increase_sentence,
    "cost_threshold": _cost_threshold_sentence,
}


def plain_severe(item: Mapping[str, Any]) -> str:
    """The sentence for a severe slice that did not pass.

    Parameters
    ----------
    item
        A severe-slice entry of the verdict (``slice``, ``decision``).

    Returns
    -------
    str
        One plain sentence.
    """
    name = item.get("slice")
    if item.get("decision") == "fail":
        return (
            f"A candidate trial in the severe slice '{name}' did not pass: every trial there must pass, so the "
            "candidate must not ship."
        )
    return f"The severe slice '{name}' has too little evidence to show that every candidate trial passes."


def severe_detail(item: Mapping[str, Any]) -> str:
    """A severe slice's own reason, named once: the gate's reason starts with the slice it is about.

    Parameters
    ----------
    item
        A severe-slice entry of the verdict (``slice``, ``reason``).

    Returns
    -------
    str
        ``severe slice 'security': 4 of 12 trials did not pass (…)``, as words.

    Examples
    --------
    >>> severe_detail({"slice": "security", "reason": "severe slice 'security': 1 of 4 trials did not pass"})
    "severe slice 'security': 1 of 4 trials did not pass"
    """
    reason = words(item.get("reason"))
    named = f"severe slice {item.get('slice')!r}"
    return reason if reason.startswith(named) or not reason else f"{named}: {reason}"


def plain_check(check: Mapping[str, Any]) -> str:
    """The sentence for a precondition that blocked (the gate blocks when evidence is missing or off).

    Parameters
    ----------
    check
        A check of the verdict (``name``, ``side``).

    Returns
    -------
    str
        One plain sentence.
    """
    side = check.get("side")
    whose = f" of the {side}" if side in ("baseline", "candidate") else ""
    return (
        f"The evidence{whose} is incomplete or does not match the policy ({words(check.get('name'))}): "
        "the gate cannot decide until it is."
    )


def verdict_reasons(
    reasons: Sequence[str],
    *,
    checks: Sequence[Mapping[str, Any]],
    severe: Sequence[Mapping[str, Any]],
    rules: Sequence[Mapping[str, Any]],
) -> list[Reason]:
    """Each of the verdict's reasons, in its order, with the plain sentence of the row it came from.

    The gate writes ``"<check> (<side>): <detail>"``, ``"severe slice <name>: <reason>"`` and
    ``"<row>: <decision>: <reason>"``; a reason that matches none keeps a general sentence.

    Parameters
    ----------
    reasons
        The verdict's reasons, in order.
    checks, severe, rules
        The verdict's checks, severe slices and rule rows, to find the row a reason came from.

    Returns
    -------
    list[Reason]
        One :class:`Reason` per reason: the plain sentence first, the gate's words as detail.
    """
    out = []
    for reason in reasons:
        out.append(_one(reason, checks, severe, rules))
    return out


def _one(
    reason: str,
    checks: Sequence[Mapping[str, Any]],
    severe: Sequence[Mapping[str, Any]],
    rules: Sequence[Mapping[str, Any]],
) -> Reason:
    for row in rules:
        prefix = f"{row.get('row')}: {row.get('decision')}: "
        if reason.startswith(prefix):
            return Reason(plain=plain_rule(row), detail=words(f"{row.get('row')}: {reason[len(prefix) :]}"))
    for item in severe:
        if reason == item.get("reason"):  # the slice's own reason, which names it
            return Reason(plain=plain_severe(item), detail=words(reason))
        prefix = f"severe slice {item.get('slice')}: "
        if reason.startswith(prefix):  # an older verdict: the gate's prefix, then the slice's reason
            rest = reason[len(prefix) :]
            named = rest.startswith(f"severe slice {item.get('slice')!r}")
            return Reason(plain=plain_severe(item), detail=words(rest if named else reason))
    for check in checks:
        if reason.startswith(f"{check.get('name')} ({check.get('side')}): "):
            return Reason(plain=plain_check(check), detail=words(reason))
    return Reason(plain="The gate gave this reason:", detail=words(reason))
