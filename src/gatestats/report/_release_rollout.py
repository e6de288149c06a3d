"""The "After the gate" section of a release report: the rollout's latest reading (``gatestats watch status``).

Everything shown is read from ``data/watch.json``, a copy of the rollout's latest decision file
(``gatestats-watch-decision/1``, its digest checked when the report was built and bound to the
verdict this report shows): the stages with their owners, cohorts and observations, every
trigger's level, evidence and crossing, the comparison of each stage with the golden set, and the
decision with the time it was made. The report computes no bound.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any, Final

from gatestats.report import _release_cells as gs
from gatestats.report._release_data import ReleaseData
from gatestats.report._release_format import e as _e
from gatestats.report._release_format import number, plural, rate, words

__all__ = ["after_gate_html"]

#: The decision in words, with its colour class (the same banner as the verdict's).
ACTION_WORDS: Final[Mapping[str, tuple[str, str]]] = {
    "roll_back": ("ROLL BACK", "fail"),
    "advance": ("ADVANCE", "pass"),
    "continue": ("CONTINUE", "warn"),
}
#: A stage's action or a trigger's status as the badge class it is drawn with.
BADGE: Final[Mapping[str, str]] = {
    "roll_back": "fail",
    "fired": "fail",
    "advance": "pass",
    "advanced": "ok",
    "quiet": "ok",
    "continue": "warn",
    "insufficient_evidence": "insufficient_evidence",
    "not_started": "insufficient_evidence",
}


def _badge(word: str) -> str:
    shown = words(word).replace("_", " ")
    return f'<span class="gs-decision gs-{_e(BADGE.get(word, "warn"))}">{_e(shown)}</span>'


def _list(value: object) -> Sequence[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


def _traffic(stage: Mapping[str, Any]) -> str:
    cohorts = stage.get("cohorts")
    if isinstance(cohorts, list) and cohorts:
        return ", ".join(_e(c) for c in cohorts)
    share = stage.get("share")
    return f"{float(share):.0%} of traffic" if isinstance(share, int | float) else "—"


def _stage_rows(stages: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for s in stages:
        seen = s.get("n_observations", 0)
        pending = s.get("pending", 0)
        observed = f"{seen}" + (f" ({pending} pending)" if pending else "")
        window = (
            "—" if s.get("first_observed_at") is None else f"{_e(s['first_observed_at'])} – {_e(s['last_observed_at'])}"
        )
        days = s.get("days_observed")
        needed = f"{s.get('min_observations')} obs., {number(s.get('min_days'), 3)} days"
        rows.append(
            [
                f"<strong>{_e(s.get('stage'))}</strong>",
                _e(s.get("owner")),
                _traffic(s),
                observed,
                window,
                "—" if days is None else number(days, 3),
                needed,
                _badge(str(s.get("action"))),
                _e(words(s.get("reason"))),
            ]
        )
    return rows


def _evalue(log_e: object, threshold: object) -> str:
    """The e-value now against 1/α (both in plain decimals); a count trigger has none."""
    if not isinstance(log_e, int | float) or not isinstance(threshold, int | float):
        return "— (a count)"
    shown = "> 10^300" if log_e > 690 else number(math.exp(log_e), 3)
    return f"{shown} / {number(math.exp(threshold), 3)}"


def _level(t: Mapping[str, Any]) -> str:
    level = t.get("level")
    metric = str(t.get("metric"))
    shown = "—" if level is None else (f"${float(level):.4f}" if metric == "cost_per_accepted" else number(level, 4))
    side = "≥" if t.get("direction") == "below" else "≤"
    return f"{_e(metric.replace('_', ' '))} {side} {shown} <span class='gs-test'>({_e(t.get('reference'))})</span>"


def _estimate(t: Mapping[str, Any]) -> str:
    """The estimate as the metric is stated: a rate, a count's share, dollars per accepted outcome, minutes."""
    value = t.get("estimate")
    if not isinstance(value, int | float):
        return "—"
    if t.get("metric") == "cost_per_accepted":
        return f"${value:.4f}"
    return number(value, 3) if t.get("metric") == "review_minutes" else rate(value)


def _bound(t: Mapping[str, Any]) -> str:
    """The confidence sequence's bound on the side that matters now (a count: its running total)."""
    value = t.get("bound")
    if not isinstance(value, int | float) or t.get("status") == "insufficient_evidence":
        return "—"
    if t.get("alpha") is None:
        return f"{value:g} so far"
    side = "≥" if t.get("direction") == "above" else "≤"
    if t.get("metric") == "cost_per_accepted":  # the bound of the reduced mean the test reads
        return f"{side} {number(value, 4)}*"
    return f"{side} {_estimate({**t, 'estimate': value})}"


def _trigger_rows(stages: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for s in stages:
        for t in _list(s.get("triggers")):
            fired = t.get("fired_record")
            when = (
                "—"
                if fired is None
                else f"{gs.code(fired)} batch {_e(t.get('fired_batch'))}, {_e(t.get('fired_time'))}"
            )
            alpha = t.get("alpha")
            rows.append(
                [
                    _e(s.get("stage")),
                    f"<strong>{_e(t.get('name'))}</strong> <span class='gs-test'>{_e(words(t.get('kind')))}</span>",
                    _level(t),
                    "—" if alpha is None else number(alpha, 3),
                    str(t.get("n", 0)),
                    _estimate(t),
                    _bound(t),
                    "—"
                    if t.get("status") == "insufficient_evidence"
                    else _evalue(t.get("log_evalue"), t.get("threshold")),
                    _badge(str(t.get("status"))),
                    when if t.get("status") != "insufficient_evidence" else _e(words(t.get("reason"))),
                ]
            )
    return rows


def _layer_rows(layers: Sequence[Mapping[str, Any]]) -> list[list[str]]:
    rows = []
    for row in layers:
        c = row.get("comparison") if isinstance(row.get("comparison"), Mapping) else {}
        assert isinstance(c, Mapping)
        rows.append(
            [
                _e(row.get("stage")),
                f"{rate(c.get('production_rate'))} (n = {c.get('production_n')})",
                f"{rate(c.get('golden_rate'))} ({plural(int(c.get('golden_cases') or 0), 'case')})",
                f"{number(c.get('difference'), 3)} {gs.ci(c.get('lower'), c.get('upper'))}",
                _e(words(c.get("decision"))),
            ]
        )
    return rows


#: The colours of the trigger paths (one per trigger of a stage, in the plan's order).
_COLOURS: Final = ("#0969da", "#cf222e", "#1a7f37", "#8250df", "#9a6700", "#57606a")


def _scale(value: float, low: float, high: float, size: float) -> float:
    return size * (value - low) / (high - low) if high > low else 0.0


def _paths_svg(stage: Mapping[str, Any]) -> str:
    """One stage's e-value paths (log scale) against each trigger's level log(1/α), as an inline SVG.

    Drawn from the thinned path in the decision file (observation, log e-value); a count trigger has
    no e-value and is not drawn. Nothing is computed: the points are the decision's.
    """
    lines = []
    for t in _list(stage.get("triggers")):
        points = [(p[0], p[1]) for p in t.get("path", []) if isinstance(p, list) and isinstance(p[1], int | float)]
        if points and isinstance(t.get("threshold"), int | float):
            lines.append((str(t.get("name")), points, float(t["threshold"])))
    if not lines:
        return ""
    width, height, pad = 560.0, 170.0, 34.0
    n_max = max(x for _, pts, _ in lines for x, _ in pts)
    top = max([thr * 1.3 for _, _, thr in lines] + [min(y, 40.0) for _, pts, _ in lines for _, y in pts])
    low = max(-10.0, min([0.0] + [y for _, pts, _ in lines for _, y in pts]))
    parts = [
        f'<svg class="gs-paths" width="{width + 2 * pad + 260:.0f}" height="{height + 2 * pad:.0f}" role="img" '
        f'aria-label="e-value paths of stage {_e(stage.get("stage"))}">',
        f'<text x="{pad}" y="14" font-size="12">log e-value by observation — stage {_e(stage.get("stage"))} '
        "(dashed: each trigger's level log 1/α)</text>",
    ]
    for i, (name, pts, threshold) in enumerate(lines):
        colour = _COLOURS[i % len(_COLOURS)]
        ys = [pad + height - _scale(min(max(y, low), top), low, top, height) for _, y in pts]
        coords = " ".join(f"{pad + _scale(x, 0, n_max, width):.1f},{y:.1f}" for (x, _), y in zip(pts, ys, strict=True))
        y_level = pad + height - _scale(threshold, low, top, height)
        parts.append(f'<polyline fill="none" stroke="{colour}" stroke-width="1.8" points="{coords}"/>')
        parts.append(
            f'<line x1="{pad}" x2="{pad + width}" y1="{y_level:.1f}" y2="{y_level:.1f}" stroke="{colour}" '
            'stroke-dasharray="4 3" stroke-width="1"/>'
        )
        parts.append(
            f'<text x="{pad + width + 4}" y="{pad + 12 + 14 * i}" font-size="11" fill="{colour}">{_e(name)}</text>'
        )
    axis_y = pad + height - _scale(0.0, low, top, height)
    parts.append(f'<line x1="{pad}" x2="{pad + width}" y1="{axis_y:.1f}" y2="{axis_y:.1f}" stroke="#999"/>')
    parts.append(f'<text x="{pad}" y="{pad + height + 16}" font-size="11">0</text>')
    parts.append(f'<text x="{pad + width - 40}" y="{pad + height + 16}" font-size="11">{n_max} obs.</text>')
    parts.append("</svg>")
    return "".join(parts)


def after_gate_html(data: ReleaseData) -> str:
    """The section's HTML (a report built without ``--watch`` says so in one sentence).

    Parameters
    ----------
    data
        The report's data; only its ``watch`` document is read.

    Returns
    -------
    str
        The decision banner, the stages, the triggers, the layer comparison and the escaped defects.
    """
    doc = data.watch
    if doc is None:
        return (
            "<p>No rollout reading is bound to this report version: after <code>gatestats watch status</code>, "
            "<code>gatestats report VERDICT --watch WATCH</code> builds the next version with this section.</p>"
        )
    word, colour = ACTION_WORDS.get(str(doc.get("action")), (str(doc.get("action")).upper(), "warn"))
    stages = _list(doc.get("stages"))
    line = (
        f"release <strong>{_e(doc.get('release'))}</strong> · reading {_e(doc.get('number'))} at "
        f"{_e(doc.get('created_at'))} · current stage {_e(doc.get('current_stage') or 'none')} · exit code "
        f"{_e(doc.get('exit_code'))} · {plural(len(_list(doc.get('batches'))), 'batch', 'batches')}, "
        f"{plural(int(doc.get('n_labels') or 0), 'late label')}"
    )
    parts = [
        gs.STYLE,
        f'<div class="gs-verdict gs-{colour}" data-rollout="{_e(doc.get("action"))}">'
        f'<div class="gs-verdict-word">{_e(word)}</div><div class="gs-verdict-line">{line}</div></div>',
    ]
    reasons = [str(r) for r in doc.get("reasons", []) if isinstance(r, str)]
    if reasons:
        parts.append(f"<p><strong>Why:</strong></p>{gs.bullet_list(_e(words(r)) for r in reasons)}")
    headers = ["stage", "owner", "traffic", "observations", "first – last", "days", "minimum", "action", "reason"]
    parts.append(gs.table(headers, _stage_rows(stages), numeric=(3, 5)))
    trigger_headers = [
        "stage",
        "trigger",
        "rolls back unless",
        "α",
        "n",
        "estimate",
        "confidence bound",
        "e-value / 1/α",
        "status",
        "fired at",
    ]
    parts.append(
        "<p class='gs-note'>Each trigger is an anytime-valid test read after every batch: it fires when its "
        "e-value reaches 1/α, and the chance that it ever fires on a release that does not breach its level "
        "is at most α (docs/rollout.md). * A cost trigger's bound is of the mean of cost − level × accepted, "
        "above 0 exactly when the cost per accepted outcome is above the level.</p>"
    )
    parts.append(gs.table(trigger_headers, _trigger_rows(stages), numeric=(3, 4, 5, 6, 7)))
    svgs = [svg for svg in map(_paths_svg, stages) if svg]
    if svgs:
        parts.append('<div class="gs-table-box">' + "".join(svgs) + "</div>")
    layers = _list(doc.get("layers"))
    if layers:
        parts.append(
            "<p><strong>Does production look like the golden set?</strong> Accepted outcomes per stage "
            "against the gate's candidate pass rate.</p>"
        )
        headers = ["stage", "accepted rate", "golden pass rate", "difference [interval]", "reading"]
        parts.append(gs.table(headers, _layer_rows(layers), numeric=(1, 2, 3)))
    escaped = [str(r) for r in doc.get("escaped_defects", []) if isinstance(r, str)]
    if escaped:
        parts.append(
            f"<p><strong>Escaped defects ({len(escaped)})</strong>: each goes back through promotion as a proposed "
            "case (<code>gatestats watch defects</code> gives each one's <code>gatestats promote</code> command), "
            "never approved automatically: "
            f"{', '.join(gs.code(r) for r in escaped[:50])}{' …' if len(escaped) > 50 else ''}</p>"
        )
    return "".join(parts)
