"""How the release report writes money, durations, case ids, thresholds and the gate's reasons (issue 19)."""

from __future__ import annotations

import html
import unicodedata

import pytest

from gatestats.report._release_format import case_html, duration, number, short_case_id, threshold_text, usd, words
from gatestats.report._release_sections import SECTIONS, qmd_body, section_html, section_names
from gatestats.report._release_words import plain_rule, plain_severe, verdict_reasons


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        (1.453e-05, "$0.0000145"),  # the demo's cost per attempt, once "$1.453e-05"
        (2.906e-05, "$0.0000291"),
        (0.0002836, "$0.000284"),
        (9.996e-06, "$0.0000100"),  # rounding carries into the next digit
        (0.025, "$0.0250"),
        (0.9949, "$0.995"),
        (0.999, "$1.00"),
        (2.5, "$2.50"),
        (1234.5, "$1,234.50"),
        (0.0, "$0"),
        (None, "—"),
        (float("nan"), "—"),
    ],
)
def test_usd_is_plain_decimals_with_three_significant_digits_below_a_dollar(value: float | None, shown: str) -> None:
    assert usd(value) == shown
    assert "e" not in shown


@pytest.mark.parametrize(
    ("hours", "shown"),
    [
        (12 / 3600, "12.0 s"),  # the demo's machine time, once "0.00"
        (0.5 / 3600, "0.5 s"),
        (59.99 / 3600, "1.0 min"),
        (270 / 3600, "4.5 min"),
        (2.345, "2.35 h"),
        (1234.0, "1,234.00 h"),
        (0.0, "0 s"),
        (None, "—"),
    ],
)
def test_duration_uses_seconds_minutes_or_hours(hours: float | None, shown: str) -> None:
    assert duration(hours) == shown


def test_number_never_uses_an_exponent_and_writes_a_true_minus() -> None:
    assert [number(v) for v in (0.805555, -0.05, 1.0, 0.0000123, 123456.0)] == [
        "0.8056",
        "\N{MINUS SIGN}0.05",
        "1",
        "0.0000123",
        "123500",  # four significant digits (the old "{:.4g}" wrote 1.235e+05)
    ]


def test_case_ids_are_shown_without_version_and_keep_it_in_the_title() -> None:
    case = "static-path-traversal@sha256:7263842cf658249f8f5b87cf7db0dd4ea1b85025ca8a2fa5950a621c26b1b80d"
    assert short_case_id(case) == "static-path-traversal"
    assert case_html(case) == f'<code class="gs-case" title="{case}">static-path-traversal</code>'
    assert case_html(case, ambiguous=True) == (
        f'<code class="gs-case" title="{case}">static-path-traversal@sha256:72638…</code>'
    )
    assert case_html("a<b") == '<code class="gs-case" title="a&lt;b">a&lt;b</code>'


def test_thresholds_say_what_they_compare() -> None:
    assert threshold_text({"kind": "paired", "threshold": -0.05}) == "\N{MINUS SIGN}0.05 vs baseline (difference)"
    assert threshold_text({"kind": "paired", "threshold": 0.02}) == "+0.02 vs baseline (difference)"
    assert threshold_text({"kind": "cost_increase", "threshold": 1.15}) == "≤ 1.15 × baseline (ratio)"
    assert threshold_text({"kind": "cost_threshold", "threshold": 0.25}) == "≤ $0.250"
    assert threshold_text({"kind": "threshold", "threshold": 0.5}) == "0.5"
    assert threshold_text({"kind": "threshold", "threshold": None}) == "—"


def test_tokens_of_the_verdict_become_words() -> None:
    assert (
        words("x: insufficient_evidence: y (insufficient_evidence)")
        == "x: insufficient evidence: y (insufficient evidence)"
    )
    assert words(None) == ""


def _rule(**fields: object) -> dict[str, object]:
    return {"row": "r", "metric": "pass_rate", "slice": "all", "k": 1, "margin": None, "cases_needed": None} | fields


@pytest.mark.parametrize(
    ("row", "sentence"),
    [
        (
            _rule(kind="paired", decision="fail", margin=0.05),
            "The candidate's pass rate is worse than the baseline's by more than the allowed 0.05.",
        ),
        (
            _rule(kind="paired", decision="insufficient_evidence", margin=0.05, cases_needed=20, slice="billing"),
            "There are too few cases in slice 'billing' to tell whether the candidate is at most 0.05 worse than "
            "the baseline; about 20 cases would be needed.",
        ),
        (
            _rule(kind="threshold", metric="pass_hat_k", k=4, decision="fail", threshold=0.5),
            "The candidate's reliability (pass^4: all 4 trials of a case pass) is below the required 0.5.",
        ),
        (
            _rule(kind="threshold", decision="warn", threshold=0.7),
            "This rule only warns: it does not block the release.",
        ),
        (
            _rule(kind="cost_increase", metric="cost_per_accepted", decision="fail", margin=0.15),
            "The candidate's cost per accepted outcome rose by more than the allowed 15%.",
        ),
        (
            _rule(kind="cost_threshold", metric="cost_per_accepted", decision="insufficient_evidence", threshold=0.2),
            "There are too few cases to tell whether the candidate's cost per accepted outcome stays below $0.200.",
        ),
    ],
)
def test_each_rule_reason_starts_with_a_plain_sentence(row: dict[str, object], sentence: str) -> None:
    assert plain_rule(row) == sentence


def test_verdict_reasons_keep_the_gates_statistics_after_the_plain_sentence() -> None:
    rule = _rule(row="floor: pass rate ≥ 0.5", kind="threshold", decision="insufficient_evidence", threshold=0.5)
    severe = {"slice": "security", "decision": "fail"}
    check = {"name": "min_cases", "side": "candidate", "status": "insufficient_evidence"}
    reasons = verdict_reasons(
        [
            "min_cases (candidate): 8 cases; the policy needs at least 10",
            "severe slice security: 1 of 8 trials did not pass",
            "floor: pass rate ≥ 0.5: insufficient_evidence: inconclusive (adjusted p = 0.86)",
            "something new",
        ],
        checks=[check],
        severe=[severe],
        rules=[rule],
    )
    assert [(r.plain, r.detail) for r in reasons] == [
        (
            "The evidence of the candidate is incomplete or does not match the policy (min_cases): the gate cannot "
            "decide until it is.",
            "min_cases (candidate): 8 cases; the policy needs at least 10",
        ),
        (plain_severe(severe), "severe slice security: 1 of 8 trials did not pass"),
        (
            "There are too few cases to tell whether the candidate's pass rate reaches 0.5.",
            "floor: pass rate ≥ 0.5: inconclusive (adjusted p = 0.86)",
        ),
        ("The gate gave this reason:", "something new"),
    ]


# --- the section table ------------------------------------------------------------------------------


def test_the_qmd_body_has_one_heading_per_section_in_table_order() -> None:
    body = qmd_body()
    headings = [line[3:] for line in body.splitlines() if line.startswith("## ")]
    assert headings == [s.title.replace("^", "\\^").replace("@", "\\@") for s in SECTIONS]
    assert body.index('chart("pass_hat_k")') < body.index('chart("pass_at_k")') < body.index('section("curves")')
    assert [line for line in body.splitlines() if line.startswith("#| label:")][:3] == [
        "#| label: verdict",
        "#| label: rules",
        "#| label: severe-slices",
    ]


def test_an_unknown_section_is_refused_naming_the_sections() -> None:
    with pytest.raises(ValueError, match=r"section must be one of verdict, rules, .*, provenance \(got 'cost2'\)"):
        section_html(None, "cost2")  # type: ignore[arg-type]
    assert section_names()[0] == "verdict"


def test_a_severe_reason_names_its_slice_once() -> None:
    # Issue 29: the gate writes "severe slice <name>: " before the slice's own reason, which names it again.
    severe = {"slice": "security", "decision": "fail"}
    (reason,) = verdict_reasons(
        ["severe slice security: severe slice 'security': 4 of 12 trials did not pass (x trial 0 failed)"],
        checks=[],
        severe=[severe],
        rules=[],
    )
    assert reason.detail == "severe slice 'security': 4 of 12 trials did not pass (x trial 0 failed)"


def test_words_name_a_side_once_and_write_no_exponent() -> None:
    text = "cost ratio 'candidate'/'baseline': baseline 'baseline': candidate 'candidate' spent 1.53e-05 (got 2e-3)"
    assert words(text) == "cost ratio candidate/baseline: baseline: candidate spent 0.0000153 (got 0.002)"
    assert words("system 'baseline-v2' and baseline 'released'") == "system 'baseline-v2' and baseline 'released'"


#: Ids anyone can write: a line separator, zero-width and bidirectional controls, a NUL, a long id.
_INVISIBLE = ("line\u2028sep", "zw\u200bj", "bidi\u202eevil\u202c", "nul\x00x", "tab\tx", "pua\ue000", "x" * 250)


@pytest.mark.parametrize("case", _INVISIBLE)
def test_ids_are_shown_by_the_terminals_rule(case: str) -> None:
    """The report's ids read as the terminal's (``gatestats.io.text.visible``): no invisible character reaches
    the page, the same escapes, the same shortening."""
    from gatestats.io.text import TEXT_LIMIT, visible
    from gatestats.report._release_format import shown

    assert shown(case) == html.escape(visible(case))
    got = case_html(case)
    assert got == f'<code class="gs-case" title="{html.escape(visible(case, limit=TEXT_LIMIT))}">{shown(case)}</code>'
    assert not any(unicodedata.category(ch) in {"Cc", "Cf", "Zl", "Zp", "Co"} for ch in got)
