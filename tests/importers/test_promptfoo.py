"""promptfoo importer, on results written by promptfoo 0.121.20 (tests/importers/fixtures/promptfoo/VERSION.txt)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats import analyze
from gatestats.cli import app
from gatestats.errors import RecordFileError
from gatestats.importers.promptfoo import import_promptfoo

RESULTS = Path(__file__).parent / "fixtures" / "promptfoo" / "results.json"
SYSTEMS = ("local-python", "local-python-b")


def _document() -> dict[str, Any]:
    return json.loads(RESULTS.read_text())


def _write(tmp_path: Path, document: dict[str, Any], name: str = "results.json") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(document))
    return path


def test_counts_match_promptfoo_own_stats() -> None:
    records = import_promptfoo(RESULTS)
    stats = _document()["results"]["stats"]  # promptfoo's summary: 15 passed, 9 failed, 6 errors
    counts = dict(records.group_by("outcome").len().iter_rows())
    assert counts == {"passed": stats["successes"], "failed": stats["failures"], "infra_error": stats["errors"]}
    assert counts == {"passed": 15, "failed": 9, "infra_error": 6}


def test_every_error_row_is_infra_error_with_unknown_cost() -> None:
    errors = import_promptfoo(RESULTS).filter(pl.col("outcome") == "infra_error")
    assert errors.height == 6
    assert set(errors["case_id"]) == {"provider error"}
    assert errors["cost_model_usd"].null_count() == 6  # promptfoo writes cost 0 on an error row
    assert errors["tokens_input"].null_count() == 6
    assert set(errors["failed_check"]) == {"promptfoo error: scripted provider error: upstream unavailable"}


def test_repeats_become_trials_of_stable_case_ids() -> None:
    records = import_promptfoo(RESULTS)
    trials = records.group_by("system", "case_id").agg(pl.col("trial").sort()).sort("system", "case_id")
    assert trials["system"].to_list() == [SYSTEMS[0]] * 5 + [SYSTEMS[1]] * 5
    assert set(trials["case_id"]) == {"capital", "arithmetic", "sky", "unknown question", "provider error"}
    assert all(t == [0, 1, 2] for t in trials["trial"].to_list())


def test_case_ids_do_not_depend_on_row_order(tmp_path: Path) -> None:
    document = _document()
    document["results"]["results"].reverse()
    for index, row in enumerate(document["results"]["results"]):
        row["testIdx"] = index
    reordered = import_promptfoo(_write(tmp_path, document))
    columns = ["system", "case_id", "outcome"]
    original = import_promptfoo(RESULTS)
    assert reordered.select(columns).sort(columns).equals(original.select(columns).sort(columns))


def test_one_description_with_two_vars_gets_digest_ids(tmp_path: Path) -> None:
    document = _document()
    for row in document["results"]["results"]:
        if row["testCase"]["description"] == "sky":
            row["testCase"]["description"] = "capital"
    records = import_promptfoo(_write(tmp_path, document))
    ids = sorted(set(records["case_id"]) - {"arithmetic", "unknown question", "provider error"})
    assert len(ids) == 2
    assert all(case.startswith("capital [vars ") and len(case) == len("capital [vars 12345678]") for case in ids)


def test_graders_judge_for_llm_rubric_code_for_the_rest() -> None:
    row = import_promptfoo(RESULTS).filter((pl.col("case_id") == "capital") & (pl.col("trial") == 0)).row(0, named=True)
    assert row["graders"] == [
        {"name": "equals", "kind": "code", "verdict": "passed", "calibration_version": None},
        {"name": "llm-rubric", "kind": "judge", "verdict": "passed", "calibration_version": None},
    ]
    assert (row["model_id"], row["prompt_version"]) == ("file://provider.py", "Answer briefly: {{question}}")
    assert (row["cost_model_usd"], row["tokens_input"], row["tokens_output"]) == (0.0004, 10, 2)
    assert "promptfoo 0.121.20, results format 3" in row["source"]


def test_analyze_says_insufficient_evidence_for_a_case_with_only_errors() -> None:
    records = import_promptfoo(RESULTS)
    # promptfoo's summary counts the errored rows as not passed (15/30 = 50%); gatestats gives the
    # case whose every trial errored no pass rate at all: insufficient evidence, never a failure.
    assert analyze(records, ks=[1]).system("local-python-b").get("pass_at_k", 1).status == "insufficient_evidence"
    rest = analyze(records.filter(pl.col("case_id") != "provider error"), ks=[1])
    # capital, arithmetic, sky 3/3 and unknown question 0/3 (b); local-python also fails sky.
    assert rest.system("local-python-b").get("pass_at_k", 1).estimate == pytest.approx(0.75)
    assert rest.system("local-python").get("pass_at_k", 1).estimate == pytest.approx(0.5)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d["results"].update(version=4),
            r"field 'results.version': promptfoo results format version integer 4 is not supported \(known: 3\)",
        ),
        (
            lambda d: d["results"].update(results=[]),
            r"field 'results.results': the results hold no rows \(promptfoo exits 0 on an empty run",
        ),
        (
            lambda d: d["results"]["results"][4].update(success="yes"),
            r"field 'results.results\[4\].success': expected true or false \(got string 'yes'\)",
        ),
        (
            lambda d: d["results"]["results"][7].update(failureReason=9),
            r"field 'results.results\[7\].failureReason': expected 0 \(none\), 1 \(assert\) or 2 \(error\) \(got integer 9\)",
        ),
    ],
)
def test_bad_input_is_refused_with_file_and_field(tmp_path: Path, edit: Any, message: str) -> None:
    document = _document()
    edit(document)
    with pytest.raises(RecordFileError, match=message):
        import_promptfoo(_write(tmp_path, document))


def test_not_json_names_the_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.json"
    bad.write_text('{"results":\n  {"version": 3,,}}')
    with pytest.raises(RecordFileError, match=r"bad.json:2: field '<line>': not valid JSON"):
        import_promptfoo(bad)


def test_one_system_label_for_two_providers_is_refused() -> None:
    with pytest.raises(RecordFileError, match=r"--system labels one system, but the file holds 2 providers/prompts"):
        import_promptfoo(RESULTS, system="mine")


def test_cli_writes_records_and_nothing_on_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "records.jsonl"
    result = runner.invoke(app, ["import", "promptfoo", str(RESULTS), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "wrote 30 records (2 system(s), 5 case(s))" in result.stderr
    document = _document()
    document["results"]["version"] = 2
    bad_out = tmp_path / "bad.jsonl"
    result = runner.invoke(app, ["import", "promptfoo", str(_write(tmp_path, document, "v2.json")), "-o", str(bad_out)])
    assert result.exit_code == 1
    assert "results format version integer 2 is not supported" in result.stderr
    assert not bad_out.exists()
