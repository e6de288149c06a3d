"""SWE-bench importer, on files written by swebench 5.0.2's own grading and reporting code.

The fixture (tests/importers/fixtures/swe_bench/, PROVENANCE.md and VERSION.txt there) was made by
``make_fixture.py``: the test logs are written as the container writes them (no Docker here), then
``grading.get_eval_report`` (via ``run_instance(..., rewrite_reports=True)``) wrote every
``report.json`` and ``reporting.make_run_report`` wrote both run summaries.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats import analyze
from gatestats.cli import app
from gatestats.errors import RecordFileError
from gatestats.importers.swe_bench import LISTS, import_swe_bench

FIXTURES = Path(__file__).parent / "fixtures" / "swe_bench"
RUN_1 = FIXTURES / "demo-model.run-1.json"
RUN_2 = FIXTURES / "demo-model.run-2.json"
LOGS_1 = FIXTURES / "logs" / "run_evaluation" / "run-1" / "demo-model"
LOGS_2 = FIXTURES / "logs" / "run_evaluation" / "run-2" / "demo-model"
#: The keys, in order, that swebench 5.0.2's make_run_report writes (without a Docker client).
SUMMARY_KEYS = [
    "total_instances",
    "submitted_instances",
    "completed_instances",
    "resolved_instances",
    "unresolved_instances",
    "infra_failure_instances",
    "ambiguous_failure_instances",
    "empty_patch_instances",
    "error_instances",
    "completed_ids",
    "incomplete_ids",
    "empty_patch_ids",
    "submitted_ids",
    "resolved_ids",
    "unresolved_ids",
    "infra_failure_ids",
    "ambiguous_failure_ids",
    "failure_reasons",
    "error_ids",
    "schema_version",
]


def _summary(**changes: Any) -> dict[str, Any]:
    document = json.loads(RUN_1.read_text())
    document.update(changes)
    return document


def _write(tmp_path: Path, document: dict[str, Any]) -> Path:
    path = tmp_path / "demo-model.bad.json"
    path.write_text(json.dumps(document))
    return path


def _row(records: pl.DataFrame, case: str, trial: int) -> tuple[str, str | None]:
    row = records.filter((pl.col("case_id") == case) & (pl.col("trial") == trial)).row(0, named=True)
    return row["outcome"], row["failed_check"]


def test_fixture_is_the_harness_own_output() -> None:
    # The summaries carry the keys only swebench 5.x writes, in make_run_report's order, and the
    # harness's own console numbers (PROVENANCE.md): run-1 3 resolved, 2 unresolved, 1 empty,
    # 2 errors; run-2 5 resolved, 2 unresolved, 1 incomplete, 1 likely infrastructure failure.
    run_1, run_2 = json.loads(RUN_1.read_text()), json.loads(RUN_2.read_text())
    assert list(run_1) == SUMMARY_KEYS
    assert list(run_2) == SUMMARY_KEYS
    counts = ("resolved_instances", "unresolved_instances", "empty_patch_instances", "error_instances")
    assert [run_1[key] for key in counts] == [3, 2, 1, 2]
    assert [run_2[key] for key in counts] == [5, 2, 0, 0]
    assert (run_2["incomplete_ids"], run_2["infra_failure_ids"]) == (
        ["sphinx-doc__sphinx-8595"],
        ["psf__requests-2317"],
    )
    assert run_1["failure_reasons"] == {
        "sphinx-doc__sphinx-8595": "tests_timed_out",
        "sympy__sympy-20590": "missing_module",
    }
    # Every report.json get_eval_report wrote agrees with the summary make_run_report wrote.
    for summary, logs in ((run_1, LOGS_1), (run_2, LOGS_2)):
        reports = {path.parent.name: json.loads(path.read_text()) for path in logs.glob("*/report.json")}
        assert sorted(reports) == summary["completed_ids"]
        resolved = sorted(name for name, report in reports.items() if report[name]["resolved"])
        assert resolved == summary["resolved_ids"]


@pytest.mark.parametrize(
    ("summary", "logs", "expected"),
    [
        (RUN_1, LOGS_1, {"passed": 3, "failed": 3, "infra_error": 2}),
        (RUN_2, LOGS_2, {"passed": 5, "failed": 2, "infra_error": 1}),
    ],
)
def test_counts_match_the_harness_summary(summary: Path, logs: Path, expected: dict[str, int]) -> None:
    records = import_swe_bench(summary, logs=[logs])
    document = json.loads(summary.read_text())
    counts = dict(records.group_by("outcome").len().iter_rows())
    # resolved -> passed; unresolved + empty patch -> failed; error + incomplete -> infra_error (the
    # harness's infra_failure_ids stay failed unless trusted: see the test of that option).
    assert counts == {
        "passed": document["resolved_instances"],
        "failed": document["unresolved_instances"] + document["empty_patch_instances"],
        "infra_error": document["error_instances"] + len(document["incomplete_ids"]),
    }
    assert counts == expected
    assert records.height == document["total_instances"] == 8
    # Instance by instance: each of the harness's five lists is exactly the records with its outcome.
    for name, (outcome, _check) in LISTS.items():
        listed = records.filter(pl.col("case_id").is_in(document[name]))
        assert listed["outcome"].to_list() == [outcome] * len(document[name]), name


def test_errors_and_missing_instances_are_infra_errors_never_unresolved() -> None:
    records = import_swe_bench([RUN_1, RUN_2], logs=[LOGS_1, LOGS_2])
    errors = records.filter(pl.col("outcome") == "infra_error").sort("trial", "case_id")
    harness_error = "harness error: the evaluation produced no valid report.json"
    assert errors.select("case_id", "trial", "failed_check").rows() == [
        ("pytest-dev__pytest-5227", 0, harness_error),  # the patch did not apply: no report.json
        # the tests timed out: no report.json; the harness's reason (an ambiguous failure) is kept
        ("sphinx-doc__sphinx-8595", 0, f"{harness_error}; the harness's failure reason: tests_timed_out"),
        ("sphinx-doc__sphinx-8595", 1, "incomplete: no prediction was submitted for this instance"),
    ]
    assert _row(records, "sympy__sympy-24152", 0) == ("failed", "empty patch: the model produced no patch")
    assert _row(records, "sympy__sympy-24152", 1) == ("passed", None)


def test_instance_absent_from_a_later_run_is_listed_as_infra_error(tmp_path: Path) -> None:
    document = _summary(resolved_ids=["astropy__astropy-12907"], resolved_instances=1, unresolved_ids=[])
    document.update(
        unresolved_instances=0, empty_patch_ids=[], empty_patch_instances=0, error_ids=[], error_instances=0
    )
    document["total_instances"] = 1
    short = _write(tmp_path, document)
    records = import_swe_bench([RUN_1, short])
    assert _row(records, "django__django-11099", 1) == (
        "infra_error",
        "not in run summary demo-model.bad.json: not run",
    )


def test_reports_name_failing_tests_and_must_agree() -> None:
    records = import_swe_bench([RUN_1, RUN_2], logs=[LOGS_1, LOGS_2])
    assert _row(records, "django__django-11133", 0) == (
        "failed",
        "unresolved: FAIL_TO_PASS 1 failing (test_memoryview_content (httpwrappers.tests.HttpResponseTests))",
    )
    assert _row(records, "pytest-dev__pytest-5227", 1) == (
        "failed",
        "unresolved: PASS_TO_PASS 1 failing (testing/logging/test_reporting.py::test_nothing_logged)",
    )
    with pytest.raises(
        RecordFileError,
        match=r"django__django-11133/report.json: field 'django__django-11133.resolved': resolved is false but the run summary lists the instance in resolved_ids",
    ):
        import_swe_bench(RUN_2, logs=[LOGS_1])


def test_unparseable_test_output_is_not_called_a_patch_that_did_not_apply() -> None:
    records = import_swe_bench(RUN_1, logs=[LOGS_1])
    outcome, check = _row(records, "sympy__sympy-20590", 0)
    assert outcome == "failed"
    assert check is not None
    assert "did not apply" not in check
    assert "missing_module" in check


def test_a_suspected_infrastructure_failure_stays_failed_unless_the_classifier_is_trusted() -> None:
    # The harness's classifier reads logs: a candidate that breaks the network looks the same, so
    # by default the failure stays the candidate's (never a pass by removal), the reason kept.
    records = import_swe_bench([RUN_1, RUN_2], logs=[LOGS_1, LOGS_2])
    assert _row(records, "psf__requests-2317", 1) == (
        "failed",
        "unresolved: FAIL_TO_PASS 1 failing (test_requests.py::RequestsTestCase::test_binary_method_name_is_native_string); "
        "PASS_TO_PASS 2 failing (test_requests.py::RequestsTestCase::test_basic_building, ...); "
        "the harness suspects infrastructure: network_unreachable (infra_failure_ids)",
    )
    trusted = import_swe_bench([RUN_1, RUN_2], logs=[LOGS_1, LOGS_2], trust_infra_failures=True)
    assert _row(trusted, "psf__requests-2317", 1) == (
        "infra_error",
        "infrastructure failure: network_unreachable (the harness's infra_failure_ids)",
    )
    assert _row(trusted, "pytest-dev__pytest-5227", 1) == _row(records, "pytest-dev__pytest-5227", 1)


def test_several_runs_are_trials_with_costs_and_repository_groups() -> None:
    records = import_swe_bench([RUN_1, RUN_2], costs=FIXTURES / "costs.csv")
    assert records.height == 16
    assert sorted(records["trial"].unique().to_list()) == [0, 1]
    row = records.filter((pl.col("case_id") == "django__django-11133") & (pl.col("trial") == 1)).row(0, named=True)
    assert (row["cost_usd"], row["case_group"]) == (0.17, "django__django")
    assert records.filter(pl.col("case_id") == "sympy__sympy-24152")["cost_usd"].null_count() == 2
    result = analyze(records, ks=[1, 2]).system("demo-model")
    # The harness says 3/8 resolved (run-1) and 5/8 (run-2); gatestats leaves sphinx-8595 (no valid
    # trial) undefined, and pass@2 also pytest-5227 (one valid trial: a harness error in run-1).
    assert result.get("pass_at_k", 1).undefined_cases == ("sphinx-doc__sphinx-8595",)
    assert result.get("pass_at_k", 2).undefined_cases == ("pytest-dev__pytest-5227", "sphinx-doc__sphinx-8595")
    rerun_needed = records.filter(pl.col("case_id") != "sphinx-doc__sphinx-8595")
    estimate = analyze(rerun_needed, ks=[1]).system("demo-model").get("pass_at_k", 1)
    # Case rates over valid trials: astropy-12907 2/2, django-11099 2/2, django-11133 1/2,
    # requests-2317 1/2, pytest-5227 0/1, sympy-20590 1/2, sympy-24152 1/2: sum 4 over 7 cases.
    assert (estimate.numerator, estimate.denominator) == ("4", 7)


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        (
            {"infra_failure_ids": ["astropy__astropy-12907"]},
            "field 'infra_failure_ids[0]': instance 'astropy__astropy-12907' is in neither unresolved_ids nor error_ids",
        ),
        ({"infra_failure_ids": "psf__requests-2317"}, "field 'infra_failure_ids': expected a list of instance ids"),
        ({"failure_reasons": ["x"]}, "field 'failure_reasons': expected an object"),
        (
            {"failure_reasons": {"sympy__sympy-20590": 5}},
            "field 'failure_reasons.sympy__sympy-20590': expected the reason as a non-empty string",
        ),
        (
            {"infra_failure_ids": ["django__django-11133", "django__django-11133"]},
            "field 'infra_failure_ids[1]': instance 'django__django-11133' is listed twice",
        ),
    ],
)
def test_a_harness_classification_that_contradicts_the_lists_is_refused(
    tmp_path: Path, changes: dict[str, Any], message: str
) -> None:
    bad = _write(tmp_path, _summary(**changes))
    with pytest.raises(RecordFileError, match=re.escape(f"{bad}: {message}")):
        import_swe_bench(bad)


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
            r"field 'resolved_instances': resolved_instances is integer 5 but resolved_ids lists 3 instance\(s\)",
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
    logs = ["--logs", str(LOGS_1), "--logs", str(LOGS_2)]
    result = runner.invoke(
        app, ["import", "swe-bench", str(RUN_1), str(RUN_2), *logs, "-o", str(out)], catch_exceptions=False
    )
    assert result.exit_code == 0, result.stderr
    assert "wrote 16 records (1 system(s), 8 case(s))" in result.stderr
    outcomes = [json.loads(line)["outcome"] for line in out.read_text().splitlines()]
    assert {name: outcomes.count(name) for name in set(outcomes)} == {"passed": 8, "failed": 5, "infra_error": 3}
    document = _summary()
    document["error_ids"] = ["astropy__astropy-12907"]
    bad_out = tmp_path / "bad.jsonl"
    result = runner.invoke(app, ["import", "swe-bench", str(_write(tmp_path, document)), "-o", str(bad_out)])
    assert result.exit_code == 1
    assert "is in both resolved_ids and error_ids" in result.stderr
    assert not bad_out.exists()
