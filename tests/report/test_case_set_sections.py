"""The report's "Case set" and "Failure classes" sections draw exactly what the verdict binds."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from gatestats.gate import Verdict
from gatestats.report._release_sections import SECTIONS, section_html
from tests.gate.test_case_sets import overlap_verdict


def _html(verdict: Verdict, section: str) -> str:
    return section_html(SimpleNamespace(verdict=verdict), section)  # type: ignore[arg-type]


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def test_both_sections_are_rows_of_the_one_section_table_after_the_slices() -> None:
    names = [s.name for s in SECTIONS]
    assert names[names.index("slices") + 1 : names.index("slices") + 3] == ["case_sets", "failure_classes"]
    assert [s.title for s in SECTIONS if s.name in {"case_sets", "failure_classes"}] == ["Case set", "Failure classes"]


def test_an_overlap_shows_the_shared_comparison_the_new_sets_cases_and_the_retired(tmp_path: Path) -> None:
    text = _text(_html(overlap_verdict(tmp_path), "case_sets"))
    assert "the baseline ran case set cs-1 , the candidate case set cs-2 . 24 shared cases at the same" in text
    assert "10 cases only in the candidate's set (the new set's baseline-to-be); 5 only in the baseline's" in text
    assert "shared (compared) baseline 24 24/24 1.000 [" in text
    assert "shared (compared) candidate 24 66/72 0.917 [" in text
    assert "new set only (its baseline-to-be) candidate 10 15/30 0.500 [" in text
    assert "new set only n000 , n001 , n002" in text
    assert "retired c000 , c001 , c002 , c003 , c004 changed version c029" in text


def test_one_case_set_says_so(tmp_path: Path) -> None:
    verdict = replace(overlap_verdict(tmp_path), case_sets=None)
    assert _text(_html(verdict, "case_sets")).startswith("One case set: both sides ran case set cs-2")


def test_failure_classes_are_counted_per_case_with_their_interval(tmp_path: Path) -> None:
    verdict = overlap_verdict(tmp_path)
    text = _text(_html(verdict, "failure_classes"))
    assert "The candidate's 7 failed cases by failure class" in text
    assert "policy_misread 5 of 7 0.714 [0.359, 0.918] c005 , n000 , n001 , n002 , n003" in text
    assert "tool_misuse 1 of 7" in text
    none = replace(verdict, failure_classes=())
    assert _text(_html(none, "failure_classes")) == "No candidate case failed: there is no failure class to count."


def test_case_ids_from_records_are_escaped_in_both_sections(tmp_path: Path) -> None:
    verdict = overlap_verdict(tmp_path)
    hostile = "<script>x</script>"
    sets = replace(verdict.case_sets, added=(hostile,))  # type: ignore[type-var]
    fc = (replace(verdict.failure_classes[0], failure_class=hostile, cases=(hostile,)),)
    for html in (
        _html(replace(verdict, case_sets=sets), "case_sets"),
        _html(replace(verdict, failure_classes=fc), "failure_classes"),
    ):
        assert "<script>" not in html
        assert "&lt;script&gt;" in html
