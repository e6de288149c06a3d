"""The report's "Sequential run" section: the path the verdict binds, read and shown, never computed."""

from __future__ import annotations

import re
from dataclasses import replace
from html import unescape
from types import SimpleNamespace

from gatestats.gate.bindings import SequencePointBinding, SequentialBinding, SequentialRulePath
from gatestats.report._release_sections import SECTIONS, section_html


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _point(n: int, estimate: float, lower: float, upper: float, e_pass: float) -> SequencePointBinding:
    return SequencePointBinding(n_cases=n, estimate=estimate, lower=lower, upper=upper, e_pass=e_pass, e_fail=0.01)


BINDING = SequentialBinding(
    max_cases=48,
    trials=2,
    batch_cases=8,
    method="betting",
    alpha_pass_share=0.5,
    order=tuple(f"c{i}" for i in range(48)),
    checkpoints=(8, 16),
    stopped_at=16,
    decided=False,
    trials_used=64,
    trials_fixed=192,
    trials_saved=128,
    rules=(
        SequentialRulePath(
            row="solves: pass rate ≥ 0.6",
            status="pass",
            decided_at=16,
            boundary=0.6,
            alpha_pass=0.0125,
            alpha_fail=0.0125,
            cases_needed=None,
            path=(_point(8, 1.0, 0.407, 1.0, 9.99), _point(16, 1.0, 0.613, 1.0, 99.8)),
        ),
        SequentialRulePath(
            row="not worse <b>",
            status="undecided",
            decided_at=None,
            boundary=-0.1,
            alpha_pass=0.0125,
            alpha_fail=0.0125,
            cases_needed=14,
            path=(_point(8, 0.25, -0.51, 0.81, 3.59), _point(16, 0.25, -0.258, 0.624, 12.9)),
        ),
    ),
)


def _html(binding: SequentialBinding | None) -> str:
    return section_html(SimpleNamespace(verdict=SimpleNamespace(sequential=binding)), "sequential")  # type: ignore[arg-type]


def test_the_section_follows_the_flips_in_the_one_section_table() -> None:
    names = [s.name for s in SECTIONS]
    assert names[names.index("flips") + 1] == "sequential"
    assert [s.title for s in SECTIONS if s.name == "sequential"] == ["Sequential run"]


def test_the_section_shows_the_stop_the_trials_saved_and_every_batch_of_every_rule() -> None:
    html = _html(BINDING)
    text = unescape(_text(html))
    # The run was read mid-way (32 of the design's 48 cases not run): not yet an answer, and not
    # called insufficient evidence; the sentences are the ones ``gatestats gate`` prints.
    assert "stopped after 16 of at most 48 cases" in text
    assert "not decided yet, 32 cases of the design not run" in text
    assert "insufficient evidence" not in text
    assert "64 of the fixed-size design's 192 trials used (48 cases × 2 trials × 2 systems), 128 saved (67%)" in text
    assert (
        "solves: pass rate ≥ 0.6: pass at 16 cases, e-value for pass 99.8 (level 80), for fail 0.01 (level 80)" in text
    )
    rows = re.findall(r"<tr>(.*?)</tr>", html.split("<tbody>", 1)[1])
    cells = [[unescape(_text(c)) for c in re.findall(r"<td[^>]*>(.*?)</td>", r)] for r in rows]
    # Issue 29: each rule is named once (on its first batch), estimates and bounds with three decimals
    # as on the rest of the page (they were "1", "0.25", "[0.407, 1]" beside "0.7778" elsewhere).
    assert cells == [
        ["solves: pass rate ≥ 0.6", "8", "1.000", "[0.407, 1.000]", "9.99 / 0.01", "undecided"],
        ["", "16", "1.000", "[0.613, 1.000]", "99.8 / 0.01", "pass"],
        ["not worse <b>", "8", "0.250", "[−0.510, 0.810]", "3.59 / 0.01", "undecided"],
        ["", "16", "0.250", "[−0.258, 0.624]", "12.9 / 0.01", "undecided"],
        ["", "—", "—", "—", "—", "about 14 more cases needed"],
    ]
    assert "not worse &lt;b&gt;" in html
    assert "<b>" not in html


def test_a_zero_alpha_in_a_verdict_file_shows_no_level_and_no_division_error() -> None:
    rule = BINDING.rules[0]
    zero = SequentialBinding(**{**{f: getattr(BINDING, f) for f in BINDING.__dataclass_fields__}, "rules": (
        SequentialRulePath(**{**{f: getattr(rule, f) for f in rule.__dataclass_fields__}, "alpha_pass": 0.0}),
    )})  # fmt: skip
    assert "e-value for pass 99.8 (level —)" in _text(_html(zero))  # raised ZeroDivisionError before


def test_a_fixed_size_verdict_says_so() -> None:
    assert _text(_html(None)).startswith("A fixed-size gate: every case ran before the gate was read once")


def test_e_values_are_plain_decimals_in_the_summary_as_in_the_table() -> None:
    # Issue 29: the summary said "for fail 1.53e-05" (the gate's terminal format) above a table saying 0.0000153.
    rule = BINDING.rules[0]
    last = replace(rule.path[-1], e_fail=1.53e-05)
    binding = replace(BINDING, rules=(replace(rule, path=(*rule.path[:-1], last)),))
    text = _text(_html(binding))
    assert "for fail 0.0000153 (level 80)" in text
    assert "99.8 / 0.0000153" in text
    assert not re.search(r"\de-\d", text)
