"""The report prints each side's layer (replay / live / shadow) beside the side, in its header and tables."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

from gatestats.gate import Verdict
from gatestats.report._release_sections import section_html
from tests.gate.test_case_sets import overlap_verdict


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


def _layered(verdict: Verdict, base: tuple[str, ...], cand: tuple[str, ...]) -> Verdict:
    return replace(
        verdict,
        baseline=replace(verdict.baseline, layers=base),  # type: ignore[arg-type]
        candidate=replace(verdict.candidate, layers=cand),  # type: ignore[arg-type]
    )


def test_the_case_set_table_names_each_sides_layer(tmp_path: Path) -> None:
    verdict = _layered(overlap_verdict(tmp_path), ("replay",), ("replay",))
    text = _text(section_html(SimpleNamespace(verdict=verdict), "case_sets"))  # type: ignore[arg-type]
    assert "shared (compared) baseline (replay) 24 24/24" in text
    assert "shared (compared) candidate (replay) 24 66/72" in text


def test_sides_without_a_layer_are_named_as_before(tmp_path: Path) -> None:
    verdict = overlap_verdict(tmp_path)
    assert (verdict.baseline.layers, verdict.candidate.layers) == ((), ())
    text = _text(section_html(SimpleNamespace(verdict=verdict), "case_sets"))  # type: ignore[arg-type]
    assert "shared (compared) baseline 24 24/24" in text


def test_the_header_and_every_side_table_name_the_layer(scenario_verdict: Path, tmp_path: Path) -> None:
    from gatestats.gate import read_verdict
    from gatestats.report._release_data import ReleaseData, check_record_files, load_sides
    from gatestats.report._release_tables import compute_tables

    file = read_verdict(scenario_verdict)  # the release scenario's (tests/report/conftest.py), read only
    tables, provenance = compute_tables(file, load_sides(file, check_record_files(file)))
    verdict = _layered(file.verdict, ("live",), ("live",))
    data = ReleaseData(
        directory=tmp_path,
        verdict=verdict,
        verdict_digest=file.digest,
        provenance=provenance,
        digests={},
        **tables,
    )
    header = _text(section_html(data, "verdict"))
    assert "candidate (live) against baseline (live) under policy" in header  # labels that are the side names: once
    for section, shown in (
        ("rules", "rule (test) candidate (live) baseline (live) 95% CI"),
        ("flips", "case baseline (live) passed/valid candidate (live) passed/valid"),
        ("curves", "k baseline (live) pass^k candidate (live) pass^k"),
        ("slices", "slice baseline (live) cases baseline (live) passed"),
        ("provenance", "baseline layer live"),
    ):
        assert shown in _text(section_html(data, section)), section
