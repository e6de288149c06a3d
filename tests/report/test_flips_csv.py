"""The flips section lists the first ``FLIPS_SHOWN`` flips of each direction; ``data/flips.csv`` holds them all.

At 10M records a gate had ~690k flips: the page listed every one (a 91 MB ``report.html``). The CSV is a
data file like the others (in ``digests.json``, written in the build directory that is renamed into place).
"""

from __future__ import annotations

import copy
import csv
import io
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from gatestats.gate import VerdictFile
from gatestats.report._release_data import FLIPS_CSV, ReleaseData, flips_csv_bytes
from gatestats.report._release_html import FLIPS_SHOWN
from gatestats.report._release_sections import section_html

#: Ids that break a naive CSV or run in a spreadsheet: separators, quotes, line breaks, formulas.
HOSTILE = (
    "a,b",
    'say "hi"',
    "two\nlines",
    "cr\r\nlf",
    "sep\u2028x",
    "=cmd|' /C calc'!A0",
    "+1+1",
    "-2",
    "@SUM(A1)",
    "\tTAB",
    "plain-7",
    "",
)


COUNTS = ("baseline_passed", "baseline_valid", "candidate_passed", "candidate_valid")


def _flips(cases: list[str], direction: str = "pass_to_fail") -> pl.DataFrame:
    return pl.DataFrame(
        {
            "direction": [direction] * len(cases),
            "case": cases,
            "baseline_passed": [4] * len(cases),
            "baseline_valid": [4] * len(cases),
            "candidate_passed": [None] * len(cases),
            "candidate_valid": [4] * len(cases),
        },
        schema={"direction": pl.String, "case": pl.String, **dict.fromkeys(COUNTS, pl.Int64)},
    )


def test_csv_keeps_every_hostile_id_in_one_cell_and_defuses_formulas() -> None:
    table = _flips(list(HOSTILE))
    text = flips_csv_bytes(table).decode("utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert rows[0] == table.columns
    assert len(rows) == 1 + len(HOSTILE)
    for case, row in zip(HOSTILE, rows[1:], strict=True):
        assert len(row) == 6
        formula = case[:1] in {"=", "+", "-", "@", "\t", "\r"}
        assert row[1] == ("'" + case if formula else case)
        assert row[4] == ""  # a missing count is an empty cell, never 0
        assert row[2] == "4"
    assert text.endswith("\r\n")


@dataclass(frozen=True)
class Scenario:
    """The release scenario's verdict (tests/report/conftest.py) and its tables, computed once for this module."""

    file: VerdictFile
    tables: dict[str, pl.DataFrame]
    provenance: dict[str, Any]


@pytest.fixture(scope="module")
def scenario(scenario_verdict: Path) -> Scenario:
    """Each test replaces the flips (in a copy of the tables) and reads the rest: the gate and the tables once."""
    from gatestats.gate import read_verdict
    from gatestats.report._release_data import check_record_files, load_sides
    from gatestats.report._release_tables import compute_tables

    file = read_verdict(scenario_verdict)
    tables, provenance = compute_tables(file, load_sides(file, check_record_files(file)))
    return Scenario(file=file, tables=dict(tables), provenance=dict(provenance))


def _data(scenario: Scenario, tmp_path: Path, flips: pl.DataFrame, digests: dict[str, str]) -> ReleaseData:
    tables = {**scenario.tables, "flips": flips}  # a new dict: the module's tables are never replaced
    return ReleaseData(
        directory=tmp_path, verdict=scenario.file.verdict, verdict_digest=scenario.file.digest,
        provenance=copy.deepcopy(scenario.provenance), digests=digests, **tables,
    )  # fmt: skip


def _text(html: str) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html)).strip()


@pytest.mark.parametrize("n", [0, 3, FLIPS_SHOWN, FLIPS_SHOWN + 1, 2 * FLIPS_SHOWN + 37])
def test_page_lists_the_first_flips_and_says_how_many_more(scenario: Scenario, tmp_path: Path, n: int) -> None:
    cases = [f"case-{i}" for i in range(n)]
    other = ["z-1", "z-2"]
    flips = pl.concat([_flips(cases), _flips(other, "fail_to_pass")])
    html = section_html(_data(scenario, tmp_path, flips, {FLIPS_CSV: "sha256:x"}), "flips")
    text = _text(html)
    listed = re.findall(r'<code class="gs-case" title="([^"]*)"', html)
    assert listed == [*cases[:FLIPS_SHOWN], *other]  # the first ones, in the table's order
    assert f"pass → fail: {n} case" in text
    hidden = n - FLIPS_SHOWN
    if hidden > 0:
        assert f"at most its first {FLIPS_SHOWN} cases. All {n + 2:,} flips are in data/{FLIPS_CSV} beside" in text
    else:  # every flip is on the page: no limit spoken of
        assert f"All {n + 2:,} flips are listed below and in data/{FLIPS_CSV} beside this page" in text
        assert "at most" not in text
    if hidden > 0:
        assert f"The first {FLIPS_SHOWN} are listed, by case id; {hidden:,} more pass → fail flips are not." in text
    else:  # nothing said about flips that are not there
        assert "more pass → fail" not in text
        assert "The first" not in text
    assert "more fail → pass" not in text


@pytest.mark.parametrize(
    ("cases", "said"),
    [
        ([], None),  # no flip: each direction says none, no file is named
        (["only"], "The one flip is listed below and in data/flips.csv"),
    ],
)
def test_no_flip_or_one_is_said_plainly(scenario: Scenario, tmp_path: Path, cases: list[str], said: str | None) -> None:
    flips = _flips(cases) if cases else _flips(["x"]).clear()
    text = _text(section_html(_data(scenario, tmp_path, flips, {FLIPS_CSV: "sha256:x"}), "flips"))
    if said is None:
        assert FLIPS_CSV not in text
        assert text.count("none") == 2
    else:
        assert said in text
    assert "1 flips" not in text
    assert "0 flips" not in text


def test_data_without_the_csv_names_the_parquet(scenario: Scenario, tmp_path: Path) -> None:
    """A report's ``data/`` written before the CSV existed: the page never names a file that is not there."""
    flips = _flips([f"case-{i}" for i in range(FLIPS_SHOWN + 5)])
    text = _text(section_html(_data(scenario, tmp_path, flips, {}), "flips"))
    assert FLIPS_CSV not in text
    assert "5 more pass → fail flips are not. Every flip is in data/flips.parquet" in text
