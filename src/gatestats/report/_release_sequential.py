"""The "Sequential run" section of a release report: the path the verdict binds, batch by batch.

Everything shown is read from the verdict's ``sequential`` part (:class:`gatestats.gate.bindings.SequentialBinding`):
the design, where the run stopped, the trials used and saved against the fixed-size design, and for
every rule row its running estimate, confidence-sequence bounds and e-values after each batch. The
report computes no bound; the levels an e-value must reach are the reciprocals of the alphas the
verdict binds.
"""

from __future__ import annotations

from gatestats.gate.bindings import SequentialRulePath
from gatestats.report._release_data import ReleaseData
from gatestats.report._release_format import e as _e
from gatestats.report._release_format import number, words

__all__ = ["sequential_html"]


def _cell(value: str, *, numeric: bool = False) -> str:
    return f'<td class="gs-num">{value}</td>' if numeric else f"<td>{value}</td>"


def _table(headers: list[str], rows: list[list[str]]) -> str:
    head = "".join(f"<th>{_e(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(_cell(c, numeric=0 < i < 5) for i, c in enumerate(r)) + "</tr>" for r in rows)
    return f'<table class="gs-table gs-sequential"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def _rule_rows(rule: SequentialRulePath) -> list[list[str]]:
    """One row per batch the rule was read at; its path ends where it was decided (stopping is final)."""
    rows: list[list[str]] = []
    for point in rule.path:
        decided_here = rule.decided_at == point.n_cases
        status = rule.status if decided_here else "undecided"
        rows.append(
            [
                _e(rule.row),
                str(point.n_cases),
                number(point.estimate),
                f"[{number(point.lower)}, {number(point.upper)}]",
                f"{number(point.e_pass, 3)} / {number(point.e_fail, 3)}",
                f'<span class="gs-decision gs-{_e(status)}">{_e(words(status))}</span>',
            ]
        )
    if rule.status == "undecided" and rule.cases_needed is not None:
        rows.append([_e(rule.row), "—", "—", "—", "—", f"about {rule.cases_needed} more cases needed"])
    return rows


def sequential_html(data: ReleaseData) -> str:
    """The section's HTML (a fixed-size gate's verdict says so in one sentence).

    Parameters
    ----------
    data
        The report's data; only its verdict's ``sequential`` part is read.

    Returns
    -------
    str
        The summary paragraph and the table of every rule's path.
    """
    binding = data.verdict.sequential
    if binding is None:
        return "<p>A fixed-size gate: every case ran before the gate was read once (no [sequential] design).</p>"
    stop = (
        "the decision was determined there"
        if binding.decided
        else "the decision was not determined (insufficient evidence)"
    )
    levels = "; ".join(
        f"{_e(r.row)}: pass at e ≥ {number(1 / r.alpha_pass, 3)}, fail at e ≥ {number(1 / r.alpha_fail, 3)}"
        for r in binding.rules
    )
    summary = (
        f"<p>Sequential run ({_e(binding.method)} confidence sequences): batches of {binding.batch_cases} cases, "
        f"at most {binding.max_cases}, {binding.trials} trials per case on both systems, in an order drawn from "
        f"the policy's seed. It stopped after <strong>{binding.stopped_at}</strong> cases; {stop}. "
        f"<strong>{binding.trials_used}</strong> of the fixed-size design's {binding.trials_fixed} trials were "
        f"used, <strong>{binding.trials_saved}</strong> saved.</p>"
        "<p>Each rule was read after every batch with an anytime-valid test, so the chance of a false pass stays "
        "within the rule's alpha under exactly this monitoring and this stop. Stopping levels: "
        f"{levels or 'no rule was read'}.</p>"
    )
    rows = [row for rule in binding.rules for row in _rule_rows(rule)]
    headers = ["rule", "cases", "estimate", "confidence sequence", "e-value pass / fail", "status"]
    return summary + (_table(headers, rows) if rows else "<p>No batch was complete on both sides.</p>")
