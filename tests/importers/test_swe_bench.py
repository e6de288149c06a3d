"""SWE-bench importer, on hand-built files in the harness's format (tests/importers/fixtures/swe_bench/PROVENANCE.md)."""

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
from gatestats.importers.swe_bench import import_swe_bench

FIXTURES = Path(__file__).parent / "fixtures" / "swe_bench"
RUN_1 = FIXTURES / "demo-model.run-1.json"
RUN_2 = FIXTURES / "demo-model.run-2.json"
LOGS_1 = FIXTURES / "logs" / "run_evaluation" / "run-1" / "demo-model"


def _summary(**changes: Any) -> dict[str, Any]:
    document = json.loads(RUN_1.read_text())
    document.update(changes)
    return document


def _write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "demo-model.bad.json"
    path.write_text(json.dumps(document))
    return path


def test_lists_map_to_outcomes_and_match_the_harness_counts() -> None:
    records = import_swe_bench(RUN_1)
    summary = json.loads(RUN_1.read_text())
    counts = dict(records.group_by("outcome").len().iter_rows())
    # resolved -> passed; unresolved + empty patch -> failed; error -> infra_error.
    assert counts == {
        "passed": summary["resolved_instances"],
        "failed": summary["unresolved_instances"] + summary["empty_patch_instances"],
        "infra_error": summary["error_instances"],
    }
    assert counts == {"passed": 4, "failed": 3, "infra_error": 1}
    assert records["system"].unique().to_list() == ["demo-model"]


def test_errors_and_missing_instances_are_infra_errors_never_unresolved() -> None:
    records = import_swe_bench([RUN_1, RUN_2])
    errors = records.filter(pl.col("outcome") == "infra_error").sort("trial")
    assert errors.select("case_id", "trial", "failed_check").rows() == [
        ("sphinx-doc__sphinx-8595", 0, "harness error: the evaluation produced no valid report.json"),
        ("sphinx-doc__sphinx-8595", 1, "incomplete: no prediction was submitted for this instance"),
    ]
    empty = records.filter(pl.col("case_id") == "sympy__sympy-24152").sort("trial")
    assert empty.select("outcome", "failed_check").rows() == [
        ("failed", "empty patch: the model produced no patch"),
        ("passed", None),
    ]


def test_instance_absent_from_a_later_run_is_listed_as_infra_error(tmp_path: Path) -> None:
    document = _summary(resolved_ids=["astropy__astropy-12907"], resolved_instances=1, unresolved_ids=[])
    document.update(
        unresolved_instances=0, empty_patch_ids=[], empty_patch_instances=0, error_ids=[], error_instances=0
    )
    document["total_instances"] = 1
    short = _write(tmp_path, document)
    records = import_swe_bench([RUN_1, short])
    row = records.filter((pl.col("case_id") == "django__django-11099") & (pl.col("trial") == 1)).row(0, named=True)
    assert (row["outcome"], row["failed_check"]) == ("infra_error", "not in run summary demo-model.bad.json: not run")


def test_reports_name_failing_tests_and_must_agree(tmp_path: Path) -> None:
    records = import_swe_bench(RUN_1, logs=[LOGS_1])
    checks = dict(records.filter(pl.col("outcome") == "failed").select("case_id", "failed_check").iter_rows())
    assert checks == {
        "django__django-11133": "unresolved: FAIL_TO_PASS 1 failing (tests/model_forms/tests.py::test_bytes_cleaned)",
        "pytest-dev__pytest-5227": "unresolved: the patch did not apply",
        "sympy__sympy-24152": "empty patch: the model produced no patch",
    }
    with pytest.raises(
        RecordFileError,
        match=r"psf__requests-2317/report.json: field 'psf__requests-2317.resolved': resolved is true but the run summary lists the instance in unresolved_ids",
    ):
        import_swe_bench(RUN_2, logs=[LOGS_1])


def test_several_runs_are_trials_with_costs_and_repository_groups() -> None:
    records = import_swe_bench([RUN_1, RUN_2], costs=FIXTURES / "costs.csv")
    assert records.height == 16
    assert sorted(records["trial"].unique().to_list()) == [0, 1]
    row = records.filter((pl.col("case_id") == "django__django-11133") & (pl.col("trial") == 1)).row(0, named=True)
    assert (row["cost_usd"], row["case_group"]) == (0.17, "django__django")
    assert records.filter(pl.col("case_id") == "sympy__sympy-24152")["cost_usd"].null_count() == 2
    result = analyze(records, ks=[1]).system("demo-model")
    # The harness says 4/8 resolved in each run; gatestats leaves sphinx-8595 (no valid trial) undefined.
    assert result.get("pass_at_k", 1).status == "insufficient_evidence"


def test_instance_in_two_lists_is_refused(tmp_path: Path) -> None:
    document = _summary()
    document["unresolved_ids"] = [*document["unresolved_ids"], "astropy__astropy-12907"]
    document["unresolved_instances"] += 1
    bad = _write(tmp_path, document)
    with pytest.raises(RecordFileError) as caught:
        import_swe_bench(bad)
    assert str(caught.value) == (
        f"{bad}: field 'unresolved_ids': instance 'astropy__astropy-12907' is in both resolved_ids and "
        "unresolved_ids (the lists are disjoint)"
    )


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"schema_version": 3}, r"field 'schema_version': run summary schema_version integer 3 is not supported"),
        (
            {"resolved_instances": 5},
            r"field 'resolved_instances': resolved_instances is integer 5 but resolved_ids lists 4 instance\(s\)",
        ),
        (
            {"total_instances": 9},
            r"field 'total_instances': total_instances is integer 9 but the lists hold 8 instance\(s\): some are in no list",
        ),
        ({"error_ids": "sphinx-doc__sphinx-8595"}, r"field 'error_ids': expected a list of instance ids \(got string"),
    ],
)
def test_inconsistent_summary_is_refused(tmp_path: Path, changes: dict[str, Any], message: str) -> None:
    with pytest.raises(RecordFileError, match=message):
        import_swe_bench(_write(tmp_path, _summary(**changes)))


def test_cost_for_an_unknown_instance_is_refused(tmp_path: Path) -> None:
    costs = tmp_path / "costs.csv"
    costs.write_text("instance_id,trial,cost_usd\nnot__there-1,0,0.5\n")
    with pytest.raises(
        RecordFileError, match=r"costs.csv: field 'instance_id': instance 'not__there-1', trial 0 is in no run summary"
    ):
        import_swe_bench(RUN_1, costs=costs)


def test_cli_writes_records_and_nothing_on_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "records.jsonl"
    result = runner.invoke(app, ["import", "swe-bench", str(RUN_1), str(RUN_2), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "wrote 16 records (1 system(s), 8 case(s))" in result.stderr
    document = _summary()
    document["error_ids"] = ["astropy__astropy-12907"]
    bad_out = tmp_path / "bad.jsonl"
    result = runner.invoke(app, ["import", "swe-bench", str(_write(tmp_path, document)), "-o", str(bad_out)])
    assert result.exit_code == 1
    assert "is in both resolved_ids and error_ids" in result.stderr
    assert not bad_out.exists()
