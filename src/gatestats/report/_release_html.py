"""HTML of each section of a release report (tables and text; the charts are in ``_release_charts``).

Every value is escaped; missing numbers are shown as ``—`` and an estimate the data cannot support
as "insufficient evidence" with its reason, never as 0. Numbers, money, durations and case ids
are written by :mod:`gatestats.report._release_format`; each reason starts with a plain sentence
(:mod:`gatestats.report._release_words`). The styles are inline (one ``<style>`` in the verdict
section), so the page needs nothing from the network. The order of the sections is not known
here: it is the table in :mod:`gatestats.report._release_sections`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final

import polars as pl

from gatestats.io.text import TEXT_LIMIT
from gatestats.report import _release_cells as gs
from gatestats.report._release_data import FLIPS_CSV, ReleaseData
from gatestats.report._release_format import NONE as _NONE
from gatestats.report._release_format import (
    case_html,
    duration,
    plural,
    rate,
    short_case_id,
    shown,
    side_system,
    threshold_text,
    usd,
    words,
)
from gatestats.report._release_format import e as _e
from gatestats.report._release_rollout import after_gate_html
from gatestats.report._release_sequential import sequential_html
from gatestats.report._release_words import severe_detail, verdict_reasons
from gatestats.vocabulary import ESTIMANDS, PASSED, UNCLASSIFIED

__all__ = ["BUILDERS", "VERDICT_WORDS", "provenance_html"]

VERDICT_WORDS: Final[Mapping[str, tuple[str, str]]] = {
    "pass": ("PASS", "the candidate may ship"),
    "warn": ("WARN", "the candidate may ship; a warn-only rule did not pass"),
    "fail": ("FAIL", "the candidate must not ship"),
    "insufficient_evidence": ("INSUFFICIENT EVIDENCE", "blocked: the evidence cannot decide"),
}


def _named(data: ReleaseData, side: str) -> str:
    """A side with its system label in code font, the label left out when it is the side's name (HTML)."""
    system = getattr(data.verdict, side).system
    if side_system(side, system) == side:
        return _e(_side(data, side))
    return f"{_e(_side(data, side))} <code>{shown(system)}</code>"


def _side(data: ReleaseData, side: str) -> str:
    """A side's name with the layer its records name beside it (``baseline (replay)``); plain text."""
    layers = getattr(data.verdict, side).layers
    return f"{side} ({', '.join(layers)})" if layers else side


# --- sections -------------------------------------------------------------------------------------


def _verdict(data: ReleaseData) -> str:
    v = data.verdict
    word, meaning = VERDICT_WORDS.get(v.verdict, (str(v.verdict).upper(), ""))
    policy = v.policy
    line = (
        f"{_e(meaning)} · {_named(data, 'candidate')} against {_named(data, 'baseline')} under policy "
        f"<strong>{_e(policy.name)}</strong> "
        f"v{_e(policy.version)} · exit code {_e(v.exit_code)} · decided {_e(v.created_at)}"
    )
    parts = [
        gs.STYLE,
        f'<div class="gs-verdict gs-{_e(v.verdict)}" data-verdict="{_e(v.verdict)}">'
        f'<div class="gs-verdict-word">{_e(word)}</div><div class="gs-verdict-line">{line}</div></div>',
    ]
    notice = v.registration.notice_text
    if notice is not None:  # registered at import: said beside the verdict, not only as "origin import"
        parts.append(
            '<p class="gs-registration" style="border-left: 4px solid #9a6700; background: #fff8c5; '
            f'padding: 6px 12px;"><strong>Registration:</strong> {_e(notice)}</p>'
        )
    reasons = verdict_reasons(
        list(v.reasons),
        checks=gs.rows(data.checks),
        severe=gs.rows(data.severe_slices),
        rules=gs.rows(data.rules),
    )
    if reasons:
        parts.append(f"<p><strong>Reasons ({len(reasons)})</strong></p>{gs.reason_list(reasons, ordered=True)}")
    else:
        parts.append("<p><strong>Reasons:</strong> none: every precondition, severe slice and rule passed.</p>")
    rules = data.rules
    counts = ", ".join(f"{n} {_e(words(d))}" for d, n in rules.group_by("decision").len().sort("decision").iter_rows())
    flips = data.flips.group_by("direction").len()
    n_flips = dict(flips.iter_rows())
    parts.append(
        f"<p>{plural(rules.height, 'rule row')}: {counts or 'none'}; "
        f"{plural(data.severe_slices.height, 'severe slice')}; "
        f"flips: {n_flips.get('pass_to_fail', 0)} pass → fail, {n_flips.get('fail_to_pass', 0)} fail → pass.</p>"
    )
    checks = data.checks
    failed = checks.filter(pl.col("status") != "ok").height
    table = gs.table(
        ["check", "side", "status", "detail"],
        ([_e(c["name"]), _e(c["side"]), gs.badge(c["status"]), _e(words(c["detail"]))] for c in gs.rows(checks)),
    )
    parts.append(
        f"<details{' open' if failed else ''}><summary>Preconditions (blocking on silence): {checks.height} "
        f"checked, {failed} failed</summary>{table}</details>"
    )
    return "\n".join(parts)


def _rules(data: ReleaseData) -> str:
    level = f"{data.verdict.policy.confidence_level:.0%}"
    headers = [
        "rule (test)",
        _side(data, "candidate"),
        _side(data, "baseline"),
        f"{level} CI",
        "threshold",
        "α",
        "cases",
        "adj. p pass / fail",
        "decision",
    ]
    rows = [
        [
            shown(r["row"], limit=TEXT_LIMIT)
            + (" <em>(warn only)</em>" if r["action"] == "warn" else "")
            + f'<br><span class="gs-test">{_e(r["test"])}</span>',
            _observed(r),
            rate(r["baseline"]),
            gs.ci(r["ci_low"], r["ci_high"]) + (" (difference)" if _paired_ci(r) else ""),
            _e(threshold_text(r)),
            gs.p_value(r["alpha"]),
            str(r["n_cases"]),
            f"{gs.p_value(r['pvalue_pass_adjusted'])} / {gs.p_value(r['pvalue_fail_adjusted'])}",
            gs.badge(r["decision"]),
        ]
        for r in gs.rows(data.rules)
    ]
    if not rows:
        return "<p>The policy has no rule rows.</p>"
    multiplicity = data.verdict.policy.multiplicity
    note = (
        '<p class="gs-note">p (pass) tests "the rule does not hold": small means shown to hold; p (fail) tests '
        f'"the rule holds": small means shown violated. Both are adjusted across the rows ({_e(multiplicity)}); '
        "a row passes when its adjusted p (pass) is at most its α (the policy's alpha of the row, beside it). "
        "Paired rows show the candidate's and the baseline's value, the interval of the difference and a "
        "threshold that is a difference from the baseline; cost rows the ratio of the candidate's cost per "
        f"accepted outcome to the baseline's. {_populations(data)} Each row that did not pass has its reason "
        "under Verdict, above.</p>"
    )
    return gs.table(headers, rows, numeric=(1, 2, 5, 6, 7)) + note + _bounded(data)


def _populations(data: ReleaseData) -> str:
    """Which cases the rows count, and why their values differ from the curves' (which count every case)."""
    severe = data.severe_slices
    if severe.height == 0:
        return "Every row counts every case of its slice."
    n_severe = int(severe.get_column("n_cases").sum())
    most = data.curves.get_column("n_cases").max() if data.curves.height else None
    every = f"all {int(most)} cases" if isinstance(most, int | float) else "every case"
    return (
        f"Rows on pass rates, pass^k and pass@k leave out the severe slices' {plural(n_severe, 'case')} "
        "(scored on their own, every trial must pass: see Severe slices), so their values can differ from the "
        f"pass^k and pass@k curves below, which count {every}. Cost rows count every case of their slice, "
        "severe ones included: their spend is real spend."
    )


def _bounded(data: ReleaseData) -> str:
    """Rows decided on the bound of their unresolved attempts, each end in words (empty when none)."""
    items = [
        f"<li><strong>{_e(r.row)}</strong>: {_e(words(r.unresolved.summary))}</li>"
        for r in data.verdict.rules
        if r.unresolved is not None
    ]
    if not items:
        return ""
    return (
        "<p><strong>Unresolved attempts (decided on the bound)</strong>: an attempt whose final outcome is an "
        "infrastructure error counts as a failure of the candidate when a row is to pass and as a pass when it is "
        f"to fail; re-running them resolves the bound.</p><ul>{''.join(items)}</ul>"
    )


def _paired_ci(row: Mapping[str, Any]) -> bool:
    return row["kind"] == "paired" and row["ci_low"] is not None


def _observed(row: Mapping[str, Any]) -> str:
    if row["kind"] == "cost_increase" and row["observed"] is not None:
        return f"{rate(row['observed'])} × baseline"
    if row["kind"] == "cost_threshold":
        return usd(row["observed"])
    return rate(row["observed"])


def _severe(data: ReleaseData) -> str:
    if data.severe_slices.height == 0:
        return "<p>The policy names no severe slice.</p>"
    rows = [
        [
            shown(s["slice"]),
            str(s["n_cases"]),
            f"{s['n_passed']}/{s['n_trials']}",
            _NONE if s["baseline_failures"] is None else str(s["baseline_failures"]),
            gs.badge(s["decision"]),
            shown(severe_detail(s), limit=TEXT_LIMIT),
        ]
        for s in gs.rows(data.severe_slices)
    ]
    intro = (
        "<p>Every valid candidate trial of a severe slice's cases must pass (threshold 1.00); these cases are "
        "scored on their own and left out of every rule on pass rates, pass^k and pass@k. Cost rows count them: "
        "their spend is real spend.</p>"
    )
    out = intro + gs.table(
        ["slice", "cases", "candidate trials passed", "baseline failures", "decision", "reason"],
        rows,
        numeric=(1, 2, 3),
    )
    if data.severe_failures.height:
        fails = (
            [shown(f["slice"]), shown(f["case_id"]), str(f["trial"]), _e(f["outcome"]), _e(f["bound"] or _NONE)]
            for f in gs.rows(data.severe_failures)
        )
        out += "<p><strong>Candidate trials that did not pass</strong></p>"
        out += gs.table(["slice", "case", "trial", "outcome", "bound"], fails, numeric=(2,))
    return out


#: The most flips the page lists per direction (the first ones, in the table's order: case id in natural
#: order); every flip is in ``data/flips.csv`` and ``data/flips.parquet``. At 10M records there were ~690k.
FLIPS_SHOWN: Final = 100


def _flips_more(shown: int, total: int, label: str, csv: bool) -> str:
    """The sentence under a direction's table that lists only its first ``shown`` of ``total`` flips."""
    where = f"<code>data/{FLIPS_CSV}</code> beside this page" if csv else "<code>data/flips.parquet</code>"
    return (
        f"<p>The first {shown:,} are listed, by case id; {total - shown:,} more {label} flips are not. "
        f"Every flip is in {where}.</p>"
    )


def _flips_csv_note(flips: pl.DataFrame) -> str:
    """The sentence naming ``data/flips.csv``: whether the page lists every flip or the first of each direction."""
    most = max(flips.group_by("direction").len().get_column("len").to_list())
    every = "The one flip is" if flips.height == 1 else f"All {flips.height:,} flips are"
    listed = (
        f"{every} listed below and in"
        if most <= FLIPS_SHOWN
        else f"Each direction lists at most its first {FLIPS_SHOWN} cases. {every} in"
    )
    return (
        f"<p>{listed} <code>data/{FLIPS_CSV}</code> beside this page, for a spreadsheet (a case id that starts like "
        "a formula is written there after an apostrophe; the exact ids are in <code>data/flips.parquet</code>).</p>"
    )


def _flips(data: ReleaseData) -> str:
    flips = data.flips
    csv = FLIPS_CSV in data.digests
    out = (
        "<p>A flip is a case (at its version) whose candidate pass rate over its valid trials is below "
        "(pass → fail) or above (fail → pass) the baseline's, from the gate's paired comparison. Cases are named "
        "without their version; hover over a case for its full id.</p>"
    )
    if csv and flips.height:
        out += _flips_csv_note(flips)
    shorts = Counter(short_case_id(str(c)) for c in flips.get_column("case").to_list())
    ambiguous = {s for s, n in shorts.items() if n > 1}
    for direction, label in (("pass_to_fail", "pass → fail"), ("fail_to_pass", "fail → pass")):
        of_direction = flips.filter(pl.col("direction") == direction)
        items = gs.rows(of_direction.head(FLIPS_SHOWN))
        out += f"<p><strong>{label}: {plural(of_direction.height, 'case')}</strong></p>"
        if not items:
            out += "<p>none</p>"
            continue
        rows = (
            [
                case_html(str(f["case"]), ambiguous=short_case_id(str(f["case"])) in ambiguous),
                gs.counts(f["baseline_passed"], f["baseline_valid"]),
                gs.counts(f["candidate_passed"], f["candidate_valid"]),
            ]
            for f in items
        )
        headers = ["case", f"{_side(data, 'baseline')} passed/valid", f"{_side(data, 'candidate')} passed/valid"]
        out += gs.table(headers, rows, numeric=(1, 2))
        if of_direction.height > len(items):
            out += _flips_more(len(items), of_direction.height, label, csv)
    return out


def _curves(data: ReleaseData) -> str:
    curves = data.curves
    if curves.height == 0:
        return "<p>No records: no curve.</p>"
    cells = {(r["metric"], r["side"], r["k"]): r for r in gs.rows(curves)}
    ks = sorted({int(k) for k in curves.get_column("k").to_list()})
    columns = [(m, s) for m in ESTIMANDS for s in ("baseline", "candidate")]
    labels = {"pass_hat_k": "pass^k", "pass_at_k": "pass@k"}
    headers = ["k", *(f"{_side(data, s)} {labels[m]}" for m, s in columns)]
    rows = [[str(k), *(gs.estimate(cells[(m, s, k)]) if (m, s, k) in cells else _NONE for m, s in columns)] for k in ks]
    methods = sorted({str(m) for m in curves.get_column("method").drop_nulls().to_list()})
    level = float(curves.get_column("confidence_level").max() or 0.95)  # type: ignore[arg-type]
    n_cases = curves.get_column("n_cases").max()
    every = f"all {int(n_cases)} cases" if isinstance(n_cases, int | float) else "every case"
    rules = " (the rows of the Rules table leave the severe slices' cases out)" if data.severe_slices.height else ""
    note = (
        f'<p class="gs-note">Estimates with {level:.0%} intervals over {every}, severe slices included{rules}, '
        f"the case as the unit; interval method: {_e(', '.join(methods) or _NONE)}.</p>"
    )
    reasons = sorted({str(r) for r in curves.get_column("reason").drop_nulls().to_list()})
    extra = f"<p><strong>Insufficient evidence</strong></p>{gs.bullet_list(reasons)}" if reasons else ""
    return gs.table(headers, rows, numeric=(0, 1, 2, 3, 4)) + note + extra


def _slices(data: ReleaseData) -> str:
    slices = data.slices
    if slices.height == 0:
        return "<p>No records: no slice.</p>"
    cells = {(r["slice"], r["side"]): r for r in gs.rows(slices)}
    names = sorted({str(s) for s in slices.get_column("slice").to_list()})
    rows = []
    for name in names:
        row = [shown(name) + (" <em>(severe)</em>" if cells[(name, "baseline")]["severe"] else "")]
        for side in ("baseline", "candidate"):
            r = cells[(name, side)]
            row += [str(r["n_cases"]), gs.counts(r["n_passed"], r["n_valid_trials"]), gs.estimate(r)]
        rows.append(row)
    headers = ["slice"] + [
        f"{_side(data, side)} {h}" for side in ("baseline", "candidate") for h in ("cases", PASSED, "rate")
    ]
    reasons = sorted({f"{r['slice']} ({r['side']}): {r['reason']}" for r in gs.rows(slices) if r["reason"]})
    extra = f"<p><strong>Insufficient evidence</strong></p>{gs.bullet_list(reasons)}" if reasons else ""
    note = (
        "<p class=\"gs-note\">Pass rate = mean over the slice's cases of each case's share of passed valid trials.</p>"
    )
    return gs.table(headers, rows, numeric=(1, 2, 3, 4, 5, 6)) + note + extra


_CASE_GROUPS: Final[Mapping[str, str]] = {
    "shared": "shared (compared)",
    "added": "new set only (its baseline-to-be)",
    "retired": "retired (old set only)",
}
_LISTED: Final = 50


def _case_list(cases: Sequence[str]) -> str:
    """Case ids as ``<code>`` (the first :data:`_LISTED`, then how many more)."""
    shown = ", ".join(case_html(c) for c in cases[:_LISTED])
    more = f" and {len(cases) - _LISTED} more" if len(cases) > _LISTED else ""
    return (shown + more) or _NONE


def _case_sets(data: ReleaseData) -> str:
    v = data.verdict
    sets = v.case_sets
    if sets is None:
        version = v.candidate.case_set_version or ", ".join(v.candidate.task_set_version) or _NONE
        return (
            f"<p>One case set: both sides ran case set <code>{_e(version)}</code> as far as their run sets "
            "and records say; no case was added or retired between them.</p>"
        )
    rows = [
        [
            _e(_CASE_GROUPS[r.cases]),
            _e(_side(data, r.side)),
            str(r.n_cases),
            gs.counts(r.n_passed, r.n_valid_trials),
            gs.estimate(r.to_dict()),
        ]
        for r in sets.rates
    ]
    level = f"{sets.rates[0].confidence_level:.0%}" if sets.rates else "95%"
    reasons = sorted({f"{_CASE_GROUPS[r.cases]} ({r.side}): {r.reason}" for r in sets.rates if r.reason})
    extra = f"<p><strong>Insufficient evidence</strong></p>{gs.bullet_list(reasons)}" if reasons else ""
    return (
        f"<p><strong>Overlap period:</strong> the baseline ran case set <code>{_e(sets.baseline_version)}</code>, "
        f"the candidate case set <code>{_e(sets.candidate_version)}</code>. {plural(sets.n_shared, 'shared case')} at "
        f"the same version compared; {plural(len(sets.added), 'case')} only in the candidate's set (the new set's "
        f"baseline-to-be); {len(sets.retired)} only in the baseline's (retired); {len(sets.changed)} changed "
        "version (compared by neither).</p>"
        + gs.table(["cases", "side", "cases", "passed/valid", f"pass rate [{level}]"], rows, numeric=(2, 3, 4))
        + "<p class=\"gs-note\">Pass rate = mean over the group's cases of each case's share of passed valid "
        "trials, the case as the unit. These numbers are shown, not decided: the gate decides on the cases both "
        "sides ran (its <code>same_cases</code> check).</p>"
        + gs.table(
            ["", "cases"],
            [
                ["new set only", _case_list(sets.added)],
                ["retired", _case_list(sets.retired)],
                ["changed version", _case_list(sets.changed)],
            ],
        )
        + extra
    )


def _failure_classes(data: ReleaseData) -> str:
    counts = data.verdict.failure_classes
    if not counts:
        return "<p>No candidate case failed: there is no failure class to count.</p>"
    level = f"{counts[0].confidence_level:.0%}"
    # A share of the unclassified failures is no estimate of anything: it gets its count, not an interval.
    rows = [
        [
            _e(c.failure_class),
            f"{c.count} of {c.n}",
            _NONE if c.failure_class == UNCLASSIFIED else f"{rate(c.share)} {gs.ci(c.ci_low, c.ci_high)}",
            _case_list(c.cases),
        ]
        for c in counts
    ]
    n = counts[0].n
    unclassified = [c for c in counts if c.failure_class == UNCLASSIFIED]
    note = ""
    if unclassified:
        count = unclassified[0].count
        if count == n:
            phrase = "none of them carries a failure class"
        else:
            phrase = f"{plural(count, 'case')} {'carries' if count == 1 else 'carry'} no failure class"
        note = (
            f'<p class="gs-note">{UNCLASSIFIED}: {phrase} (the records\' <code>failure_class</code> field), so no '
            "share or interval is shown for them.</p>"
        )
    return (
        f"<p>The candidate's {plural(n, 'failed case')} by failure class: a case whose final trial failed or was "
        "resource-killed counts once, however many of its trials failed. Many failures in one class are likely "
        "one cause, not many.</p>"
        + gs.table(["failure class", "failed cases", f"share [{level} Wilson]", "cases"], rows, numeric=(1, 2))
        + note
    )


_COST_ROWS: Final[tuple[tuple[str, Callable[[Mapping[str, Any]], str]], ...]] = (
    ("cost per accepted outcome [CI]", lambda c: gs.estimate(c, usd)),
    ("cases", lambda c: _NONE if c["n_cases"] is None else str(c["n_cases"])),
    ("accepted / trials", lambda c: gs.counts(c["accepted"], c["trials"])),
    (
        "attempts (infra errors)",
        lambda c: _NONE if c["attempts"] is None else f"{c['attempts']} ({c['attempts_infra_error']})",
    ),
    ("total spend", lambda c: usd(c["total_spend_usd"])),
    ("review", lambda c: usd(c["review_usd"])),
    ("human time", lambda c: duration(c["human_hours"])),
    ("machine time", lambda c: duration(c["machine_hours"])),
    ("calendar time", lambda c: duration(c["calendar_hours"])),
)


def _cost(data: ReleaseData) -> str:
    cost = {c["side"]: c for c in gs.rows(data.cost)}
    sides = [s for s in ("baseline", "candidate") if s in cost]
    # One column per side (two sides fit the page; eleven columns did not).
    headers = ["", *(_side(data, s) + side_system(s, cost[s]["system"])[len(s) :] for s in sides)]
    rows = [[_e(label), *(cell(cost[s]) for s in sides)] for label, cell in _COST_ROWS]
    source = {c["source"] for c in cost.values()}
    note = (
        '<p class="gs-note">Spend of every attempt (failed, retried and infra-errored ones included) plus priced '
        "human review and correction time, divided by the accepted outcomes; case-level bootstrap interval. Human, "
        "machine and calendar time are separate rows. Money in US dollars, in plain decimals. "
        + (
            "Numbers from the verdict."
            if source == {"verdict"}
            else "The policy has no cost rule: computed without review or machine rates."
        )
        + "</p>"
    )
    reasons = [
        f"{c['side']}: {c['reason'] or c['interval_reason']}"
        for c in cost.values()
        if c["reason"] or c["interval_reason"]
    ]
    gate_rows = [r for r in gs.rows(data.rules) if r["metric"] == "cost_per_accepted"]
    out = gs.table(headers, rows, numeric=tuple(range(1, len(sides) + 1))) + note
    if reasons:
        out += f"<p><strong>Insufficient evidence</strong></p>{gs.bullet_list(reasons)}"
    if gate_rows:
        items = [
            f"{r['row']}: observed {_observed(r)}"
            + (f" {gs.ci(r['ci_low'], r['ci_high'])}" if r["ci_low"] is not None else "")
            + f" on {plural(r['n_cases'], 'case')} → {r['decision']}"
            for r in gate_rows
        ]
        out += f"<p><strong>The gate's cost rows</strong></p>{gs.bullet_list(items)}"
    return out


def _judges(data: ReleaseData) -> str:
    judge_checks = data.checks.filter(pl.col("name").str.starts_with("judge:"))
    if data.judges.height == 0 and judge_checks.height == 0:
        return "<p>No rule of the policy is graded by an LLM judge: no judge calibration was needed.</p>"
    rows = (
        [
            _e(j["grader"]),
            gs.badge("ok" if j["can_vote"] else "insufficient_evidence"),
            _e(j["calibration_versions"] or _NONE),
            _e(j["reasons"] or ""),
        ]
        for j in gs.rows(data.judges)
    )
    return gs.table(["judge grader", "may vote", "calibration versions", "reasons"], rows)


def _infra(data: ReleaseData) -> str:
    rows = [
        [
            _e(side_system(i["side"], i["system"])),
            _NONE if i["attempts"] is None else str(i["attempts"]),
            _NONE if i["infra_errors"] is None else f"{i['infra_errors']} ({_pct(i['infra_error_rate'])})",
            _pct(i["max_infra_error_rate"]),
            _NONE if i["resource_killed"] is None else str(i["resource_killed"]),
            _e(i["infra_error_cases"] or _NONE),
        ]
        for i in gs.rows(data.infra)
    ]
    headers = ["side", "attempts", "infra errors", "limit", "resource killed", "cases with infra errors"]
    out = (
        "<p>An infra error is neither a pass nor a failure: it is retried as a new attempt and counted here. "
        "A resource kill is the candidate's outcome, with the bound that fired.</p>"
    )
    out += gs.table(headers, rows, numeric=(1, 2, 3, 4))
    if data.bounds.height:
        bound_rows = ([_e(b["side"]), _e(b["bound"]), str(b["count"])] for b in gs.rows(data.bounds))
        out += "<p><strong>Bounds that fired</strong></p>"
        out += gs.table(["side", "bound", "trials killed"], bound_rows, numeric=(2,))
    else:
        out += "<p><strong>Bounds that fired:</strong> none.</p>"
    return out


def _pct(value: float | None) -> str:
    return _NONE if value is None else f"{value:.1%}"


_CHECKSUMS = {
    "verified": "every record's checksum verified",
    "none": "records WITHOUT checksums: unverified evidence (accepted by the policy's require_checksums = false)",
    "empty": "no records",
}


def _integrity(side: Mapping[str, object]) -> str:
    """How far the records of a side can be trusted to be the ones that were written, and where they came from."""
    status = _CHECKSUMS.get(str(side.get("checksums")), "not recorded (a verdict from an earlier gatestats)")
    text = f"{_e(status)}; origin {_e(side.get('origin') or 'record files')}"
    if side.get("imported_from"):
        text += (
            f"<br>imported from {gs.code(side.get('imported_from'))} ({gs.code(side.get('imported_source_digest'))})"
            f" by {_e(side.get('imported_by'))} at {_e(side.get('imported_at'))}"
        )
    return text


def provenance_html(data: ReleaseData, *, renderer: str | None = None, renderer_version: str | None = None) -> str:
    """The provenance section: the verdict, policy, registration and record files, and the renderer.

    Parameters
    ----------
    data
        The report's data.
    renderer, renderer_version
        The renderer and its version (None: shown as ``—``).

    Returns
    -------
    str
        The section's HTML.
    """
    p = data.provenance
    verdict, policy, registration = p["verdict"], p["policy"], p["registration"]
    rows: list[list[str]] = [
        ["verdict file", gs.code(verdict["path"])],
        ["verdict digest", gs.code(verdict["digest"])],
        ["verdict made", f"{_e(verdict['created_at'])} by {_e(verdict['tool_version'])}"],
        ["policy", f"{_e(policy['name'])} v{_e(policy['version'])} ({gs.code(policy['path'])})"],
        ["policy digest", gs.code(policy["digest"])],
        ["policy registered at", _e(registration.get("registered_at") or _NONE)],
        ["first record at", _e(registration.get("first_record_at") or _NONE)],
        ["registered in", gs.code(registration.get("run_set"))],
    ]
    notice = data.verdict.registration.notice_text
    if notice is not None:
        rows.append(["pre-registration", f"<strong>no</strong>: {_e(notice)}"])
    for side in ("baseline", "candidate"):
        s = p["sides"][side]
        parts = s.get("system_parts") or {}
        shown = [f"{_e(k)} = {_e(', '.join(v))}" for k, v in sorted(parts.items()) if v]
        rows += [
            [f"{side} system", f"<code>{_e(s.get('system'))}</code>"],
            [f"{side} system digest", gs.code(", ".join(s.get("system_digest") or []))],
            [f"{side} system parts", "<br>".join(shown) or _NONE],
            [f"{side} case-set version", gs.code(s.get("case_set_version"))],
            [f"{side} task-set version", gs.code(", ".join(s.get("task_set_version") or []))],
            [f"{side} layer", _e(", ".join(getattr(data.verdict, side).layers) or "none named by its records")],
            [
                f"{side} run set",
                f"{gs.code(s.get('run_set_id'))} ({_e(s.get('kind'))}, {_e(s.get('n_records'))} records)",
            ],
            [f"{side} record set digest", gs.code(s.get("digest"))],
            [f"{side} integrity", _integrity(s)],
        ]
        rows += [
            [f"{side} record file", f"{gs.code(f['path'])}<br>{gs.code(f['digest'])} ({_e(f.get('size'))} bytes)"]
            for f in s.get("files") or []
        ]
    rows.append(["report made by", f"gatestats {_e(p['report']['gatestats_version'])}"])
    rows.append(["renderer", f"{_e(renderer or _NONE)} ({_e(renderer_version or _NONE)})"])
    digests = gs.table(["data file", "sha256"], ([gs.code(n), gs.code(d)] for n, d in sorted(data.digests.items())))
    return (
        gs.table(["item", "value"], rows)
        + f"<details><summary>Data files of this report ({len(data.digests)}, checked before rendering)</summary>"
        + f"{digests}</details>"
    )


#: The HTML builder of each section, by section name; :func:`provenance_html` also takes the renderer.
BUILDERS: Final[Mapping[str, Callable[[ReleaseData], str]]] = {
    "verdict": _verdict,
    "rules": _rules,
    "sequential": sequential_html,
    "after_gate": after_gate_html,
    "severe_slices": _severe,
    "flips": _flips,
    "curves": _curves,
    "slices": _slices,
    "cost": _cost,
    "judges": _judges,
    "infra": _infra,
    "case_sets": _case_sets,
    "failure_classes": _failure_classes,
    "provenance": provenance_html,
}
