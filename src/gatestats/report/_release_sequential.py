"""The "Sequential run" section of a release report: the path the verdict binds, batch by batch.

Everything shown is read from the verdict's ``sequential`` part (:class:`gatestats.gate.bindings.SequentialBinding`):
the design, where the run stopped, the trials used and saved against the fixed-size design, and for
every rule row its running estimate, confidence-sequence bounds and e-values after each batch. The
report computes no bound; the summary sentences are :mod:`gatestats.gate.sequential_summary`'s, the
same ``gatestats gate`` prints.
"""

from __future__ import annotations

from gatestats.gate.bindings import SequentialRulePath
from gatestats.gate.sequential_summary import guarantee_text, rule_stop, stop_text, trials_text
from gatestats.report import _release_cells as gs
from gatestats.report._release_data import ReleaseData
from gatestats.report._release_format import e as _e
from gatestats.report._release_format import number, rate, words

__all__ = ["sequential_html"]


def _rule_rows(rule: SequentialRulePath) -> list[list[str]]:
    """One row per batch the rule was read at; its path ends where it was decided (stopping is final).

    The rule is named on its first row only (the rows below it are its later batches); numbers are
    written as on the rest of the page (estimates with three decimals, e-values with three significant
    digits in plain decimals).
    """
    rows: list[list[str]] = []
    for point in rule.path:
        decided_here = rule.decided_at == point.n_cases
        status = rule.status if decided_here else "undecided"
        rows.append(
            [
                _e(rule.row) if not rows else "",
                str(point.n_cases),
                rate(point.estimate),
                f"[{rate(point.lower)}, {rate(point.upper)}]",
                f"{number(point.e_pass, 3)} / {number(point.e_fail, 3)}",
                f'<span class="gs-decision gs-{_e(status)}">{_e(words(status))}</span>',
            ]
        )
    if rule.status == "undecided" and rule.cases_needed is not None:
        rows.append(["" if rows else _e(rule.row), "—", "—", "—", "—", f"about {rule.cases_needed} more cases needed"])
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
    # The same sentences as ``gatestats gate`` prints (gate.sequential_summary): one wording, one set of cases.
    levels = "; ".join(
        f"{_e(stop.row)}: {_e(stop.status)}, e-value for pass {_e(words(stop.e_pass))}, "
        f"for fail {_e(words(stop.e_fail))}"
        for stop in map(rule_stop, binding.rules)
    )
    summary = (
        f"<p>Sequential run: {stop_text(binding, escape=_e)}. The cases ran in an order drawn from the "
        f"policy's seed; {_e(trials_text(binding))}.</p>"
        f"<p>{_e(guarantee_text(binding))} At the stop: {levels or 'no rule was read'}.</p>"
    )
    rows = [row for rule in binding.rules for row in _rule_rows(rule)]
    headers = ["rule", "cases", "estimate", "confidence sequence", "e-value pass / fail", "status"]
    return summary + (
        gs.table(headers, rows, numeric=(1, 2, 3, 4)) if rows else "<p>No batch was complete on both sides.</p>"
    )
