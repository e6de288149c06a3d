"""The table importer's slices, graders and trial labels, on the bundled real data and on hostile cells."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.errors import RecordFileError
from gatestats.importers import import_table, parse_mapping
from gatestats.judges import calibrate, write_calibration

DATA = Path(__file__).parents[2] / "data"
LLMBAR = DATA / "llmbar_judge_swap" / "judgments.csv"
TAU_AIRLINE = DATA / "tau_bench" / "tau_bench_gpt4o_airline_trials.csv"
TAU2_TELECOM = DATA / "tau_bench" / "tau2_testrun_gpt41_telecom_nouser_trials.csv"


def _csv(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _llmbar_table(tmp_path: Path) -> Path:
    """LLMBar's Processed/* judgments as a wide table a polars user would write: one row per (judge config, item)."""

    def order(column: str) -> pl.Expr:
        verdict = pl.when(pl.col(column) == pl.col("label")).then(pl.lit("pass")).otherwise(pl.lit("fail"))
        return pl.when(pl.col(column).is_null()).then(pl.lit("unparseable")).otherwise(verdict)

    table = pl.read_csv(LLMBAR).select(
        system=pl.col("evaluator") + "/" + pl.col("strategy"),
        case=pl.col("subset").str.replace("Processed/", "") + "#" + pl.col("item_idx").cast(pl.String),
        ok=(pl.col("winner_original_order") == pl.col("label")).fill_null(value=False),
        subset=pl.col("subset").str.replace("Processed/", ""),
        original=order("winner_original_order"),
        swapped=order("winner_swapped_order"),
    )
    path = tmp_path / "llmbar.csv"
    table.write_csv(path)
    return path


LLMBAR_MAP = "system=system,case_id=case,outcome=ok,slices=subset,judge:original=original,judge:swapped=swapped"


def test_llmbar_judgments_import_with_slices_and_judge_graders(tmp_path: Path) -> None:
    records = import_table(_llmbar_table(tmp_path), parse_mapping(LLMBAR_MAP), calibrations={"original": "cal-7"})
    assert records.height == 3728
    assert records["system"].n_unique() == 8
    assert records["case_id"].n_unique() == 466
    # 200 MT-Bench + 66 FairEval + 200 LLMEval^2 items, each judged by 8 configurations (PROVENANCE.md).
    per_slice = records.explode("slices").group_by("slices").len().sort("slices").rows()
    assert per_slice == [("FairEval", 528), ("LLMEval^2", 1600), ("MT-Bench", 1600)]
    graders = records.explode("graders").unnest("graders")
    unparseable = graders.filter(pl.col("verdict") == "unparseable").group_by("name").len().sort("name").rows()
    # PROVENANCE.md: an empty verdict is unparseable, 72 rows in the original order, 67 in the swapped order.
    assert unparseable == [("original", 72), ("swapped", 67)]
    versions = graders.group_by("name").agg(pl.col("calibration_version").unique()).sort("name").rows()
    assert versions == [("original", ["cal-7"]), ("swapped", [None])]
    assert set(graders["kind"]) == {"judge"}


def test_cli_summary_counts_distinct_cases_and_systems_not_pairs(tmp_path: Path) -> None:
    out = tmp_path / "llmbar.jsonl"
    args = ["import", "table", str(_llmbar_table(tmp_path)), "--map", LLMBAR_MAP, "-o", str(out)]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    summary = " ".join(result.stderr.split())
    assert summary.startswith("wrote 3728 records (8 system(s), 466 case(s)) to ")
    assert summary.endswith(": 3728 system-case pair(s) with 1 trial(s) each")


def test_tau_bench_trials_relabelled_run_n_import_exactly_as_the_integer_trials(tmp_path: Path) -> None:
    table = pl.read_csv(TAU_AIRLINE).with_columns(run="run-" + (pl.col("trial") + 1).cast(pl.String))
    path = tmp_path / "airline.csv"
    table.write_csv(path)
    common = "case_id=task_id,outcome=success,cost_execution_usd=user_cost_usd"
    numbered = import_table(path, parse_mapping(common + ",trial=trial"), system="gpt-4o")
    labelled = import_table(path, parse_mapping(common + ",trial_label=run"), system="gpt-4o")
    assert labelled.drop("source").equals(numbered.drop("source"))
    assert labelled.height == 200
    assert labelled["source"][1].endswith("; trial label 'run-2' (trials numbered per case in natural label order)"), (
        labelled["source"][1]
    )


def test_tau2_seeds_as_trial_labels_number_each_case_by_seed(tmp_path: Path) -> None:
    records = import_table(TAU2_TELECOM, parse_mapping("case_id=task_id,outcome=success,trial_label=seed"), system="s")
    source = pl.read_csv(TAU2_TELECOM, schema_overrides={"task_id": pl.String})
    expected = source.with_columns(rank=pl.col("seed").rank("ordinal").over("task_id").cast(pl.Int64) - 1)
    got = records.select("case_id", "trial", "outcome").sort("case_id", "trial")
    want = expected.select(
        case_id="task_id",
        trial="rank",
        outcome=pl.when(pl.col("success") == 1).then(pl.lit("passed")).otherwise(pl.lit("failed")),
    ).sort("case_id", "trial")
    assert got.equals(want)
    assert got.group_by("case_id").agg(pl.col("trial").max())["trial"].to_list() == [3] * 5


def test_trial_labels_are_numbered_in_natural_order_per_system_and_case(tmp_path: Path) -> None:
    rows = "".join(f"a,t1,run-{i},1\n" for i in (10, 2, 1, 9)) + "b,t1,Run-3,0\n" + "a,t2,seed-7,1\n"
    path = _csv(tmp_path, "sys,task,run,ok\n" + rows)
    records = import_table(path, parse_mapping("system=sys,case_id=task,trial_label=run,outcome=ok"))
    assert records.select("system", "case_id", "trial").rows() == [
        ("a", "t1", 3),
        ("a", "t1", 1),
        ("a", "t1", 0),
        ("a", "t1", 2),
        ("b", "t1", 0),
        ("a", "t2", 0),
    ]


def test_attempts_of_one_trial_share_its_label(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,run,att,ok\nt1,run-2,0,infra_error\nt1,run-2,1,1\nt1,run-1,0,0\n")
    records = import_table(path, parse_mapping("case_id=task,trial_label=run,attempt=att,outcome=ok"), system="s")
    assert records.select("trial", "attempt", "outcome").rows() == [
        (1, 0, "infra_error"),
        (1, 1, "passed"),
        (0, 0, "failed"),
    ]


@pytest.mark.parametrize("other", ["Run-01", " run-1", "RUN-1"])
def test_labels_that_collide_after_normalising_name_both_lines(tmp_path: Path, other: str) -> None:
    path = _csv(tmp_path, f"task,run,ok\nt1,run-1,1\nt2,run-1,1\nt1,{other},0\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,trial_label=run,outcome=ok"), system="s")
    assert str(exc.value) == (
        f"{path}:4: field 'trial_label': column 'run': trial labels {other!r} and 'run-1' of system 's', case 't1' "
        "differ only in case, blanks or leading zeros (which trial is which?) (first at line 2)"
    )


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("", "a trial label is required on every row (got an empty value)"),
        ('"run\n1"', "a trial label is one line of printable text (got 'run\\n1')"),
        ("nan", "a trial label is not a missing value written as text (got 'nan': leave the cell empty instead)"),
    ],
)
def test_bad_trial_label_names_line_and_column(tmp_path: Path, cell: str, message: str) -> None:
    path = _csv(tmp_path, f"task,run,ok\nt0,run-1,1\nt1,{cell},1\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,trial_label=run,outcome=ok"), system="s")
    assert str(exc.value) == f"{path}:3: field 'trial_label': column 'run': {message}"


def test_html_in_a_trial_label_is_kept_as_data_and_quoted_in_source(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,run,ok\nt1,<b>it's</b>,1\n")
    records = import_table(path, parse_mapping("case_id=task,trial_label=run,outcome=ok"), system="s")
    assert "; trial label '<b>it\\'s</b>' (" in records["source"][0]


def test_label_in_an_integer_trial_column_points_to_trial_label(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,t,ok\nt1,run-1,1\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,trial=t,outcome=ok"), system="s")
    assert str(exc.value) == (
        f"{path}:2: field 'trial': column 't': expected a 64-bit integer (got 'run-1'); "
        "for labels such as run-1 map trial_label=COLUMN"
    )


@pytest.mark.parametrize(
    ("cell", "slices"),
    [
        ("security", ["security"]),
        ('" security ;billing "', ["security", "billing"]),
        ('"[""a;b"", ""c""]"', ["a;b", "c"]),
        ("<b>x</b>", ["<b>x</b>"]),
        ("", None),
        ('"[]"', []),
    ],
)
def test_csv_slices_cell_formats(tmp_path: Path, cell: str, slices: list[str] | None) -> None:
    path = _csv(tmp_path, f"task,ok,sl\nt1,1,{cell}\n")
    records = import_table(path, parse_mapping("case_id=task,outcome=ok,slices=sl"), system="s")
    assert records["slices"].to_list() == [slices]


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("a;;b", "item 1: a slice is not blank (got '')"),
        ("a;b;a", "slice 'a' is given twice"),
        ("NaN", "item 0: a slice is not a missing value written as text (got 'NaN': leave the cell empty instead)"),
        ('"a\nb"', "item 0: a slice is one line of printable text (got 'a\\nb')"),
        (
            "\"['a', 'b']\"",
            "expected a JSON array of strings (got \"['a', 'b']\": not valid JSON: Expecting value (column 2))",
        ),
        ('"[1]"', "item 0: expected a string (got integer 1)"),
        ('"[""a"", ""a ""]"', "item 1: a slice has no surrounding blanks (got 'a ')"),
    ],
)
def test_malformed_csv_slices_cell_is_refused_with_line(tmp_path: Path, cell: str, message: str) -> None:
    path = _csv(tmp_path, f"task,ok,sl\nt0,1,x\nt1,1,{cell}\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,slices=sl"), system="s")
    assert str(exc.value) == f"{path}:3: field 'slices': column 'sl': {message}"


def test_parquet_slices_are_a_list_column_and_a_null_item_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"task": ["a", "b", "c"], "ok": [1, 0, 1], "sl": [["x", "y"], None, ["x", None]]}).write_parquet(path)
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,slices=sl"), system="s")
    assert str(exc.value) == f"{path} row 2: field 'slices': column 'sl': item 1: expected a string (got null)"
    pl.DataFrame({"task": ["a", "b"], "ok": [1, 0], "sl": [["x", "y"], None]}).write_parquet(path)
    records = import_table(path, parse_mapping("case_id=task,outcome=ok,slices=sl"), system="s")
    assert records["slices"].to_list() == [["x", "y"], None]


def test_jsonl_slices_string_is_refused_not_split(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "a", "ok": 1, "sl": "x;y"}\n')
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,slices=sl"), system="s")
    assert str(exc.value) == f"{path}:1: field 'slices': column 'sl': expected a list of strings (got string 'x;y')"


def test_a_case_with_different_slices_on_two_rows_is_refused(tmp_path: Path) -> None:
    path = _csv(tmp_path, "sys,task,ok,sl\na,t1,1,security\nb,t1,1,billing;security\na,t2,1,\nb,t2,0,\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("system=sys,case_id=task,outcome=ok,slices=sl"))
    assert str(exc.value) == (
        f"{path}:3: field 'slices': column 'sl': case 't1' has slices ['billing', 'security'] here and ['security'] "
        "on another row (slices describe the case: give every row of a case the same) (first at line 2)"
    )


def test_grader_columns_become_code_and_judge_graders_and_empty_means_not_graded(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok,em,j\nt1,1,1,PASS\nt2,0,false,\nt3,1,,\n")
    records = import_table(path, parse_mapping("case_id=task,outcome=ok,grader:exact=em,judge:helpful=j"), system="s")
    assert records["graders"].to_list() == [
        [
            {"name": "exact", "kind": "code", "verdict": "passed", "calibration_version": None},
            {"name": "helpful", "kind": "judge", "verdict": "passed", "calibration_version": None},
        ],
        [{"name": "exact", "kind": "code", "verdict": "failed", "calibration_version": None}],
        None,
    ]


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        ("maybe", "expected one of passed/failed/unparseable, 1/0, true/false, pass/fail (got 'maybe')"),
        ("NaN", "expected one of passed/failed/unparseable, 1/0, true/false, pass/fail (got 'NaN')"),
        ("0.5", "expected one of passed/failed/unparseable, 1/0, true/false, pass/fail (got '0.5')"),
    ],
)
def test_bad_grader_verdict_is_refused_with_line_and_grader(tmp_path: Path, cell: str, message: str) -> None:
    path = _csv(tmp_path, f"task,ok,em\nt1,1,1\nt2,1,{cell}\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,grader:exact=em"), system="s")
    assert str(exc.value) == f"{path}:3: field 'graders.exact': column 'em': {message}"


def test_parquet_nan_verdict_is_refused_not_read_as_a_grade(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"task": ["a", "b"], "ok": [1, 0], "j": [1.0, float("nan")]}).write_parquet(path)
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,judge:helpful=j"), system="s")
    assert [str(p) for p in exc.value.problems] == [
        f"{path} row 0: field 'graders.helpful': column 'j': expected one of passed/failed/unparseable, 1/0, "
        "true/false, pass/fail (got number 1.0)",
        f"{path} row 1: field 'graders.helpful': column 'j': expected one of passed/failed/unparseable, 1/0, "
        "true/false, pass/fail (got number nan)",
    ]


def test_graders_json_column_in_csv_jsonl_and_parquet(tmp_path: Path) -> None:
    graders = [
        {"name": "exact", "kind": "code", "verdict": "passed", "calibration_version": None},
        {"name": "helpful", "kind": "judge", "verdict": "unparseable", "calibration_version": "cal-2"},
    ]
    frame = pl.DataFrame({"task": ["a"], "ok": [1], "g": [graders]})
    csv = _csv(
        tmp_path,
        'task,ok,g\na,1,"[{""name"": ""exact"", ""kind"": ""code"", ""verdict"": ""passed""}, '
        '{""name"": ""helpful"", ""kind"": ""judge"", ""verdict"": ""unparseable"", ""calibration_version"": ""cal-2""}]"\n',
    )
    frame.write_parquet(tmp_path / "t.parquet")
    frame.write_ndjson(tmp_path / "t.jsonl")
    for path in (csv, tmp_path / "t.parquet", tmp_path / "t.jsonl"):
        records = import_table(path, parse_mapping("case_id=task,outcome=ok,graders=g"), system="s")
        assert records["graders"].to_list() == [graders], path


@pytest.mark.parametrize(
    ("cell", "message"),
    [
        (
            '[{"name": "x", "kind": "code", "verdict": "passed"}, {"name": "x", "kind": "judge", "verdict": "failed"}]',
            "grader 'x' is given twice",
        ),
        (
            '[{"name": "x", "kind": "llm", "verdict": "passed"}]',
            "item 0 (x): kind: expected 'code' or 'judge' (got string 'llm')",
        ),
        (
            '[{"name": "x", "kind": "code", "verdict": "pass"}]',
            "item 0 (x): verdict: expected passed, failed or unparseable (got string 'pass')",
        ),
        (
            '[{"name": "x", "kind": "code", "verdict": "passed", "score": 1}]',
            "item 0: unknown key 'score' (keys: name, kind, verdict, calibration_version)",
        ),
        (
            '[{"name": "x", "kind": "code", "verdict": "passed", "calibration_version": "c"}]',
            "item 0 (x): calibration_version: only a judge has one",
        ),
        (
            '[{"name": "a\\nb", "kind": "code", "verdict": "passed"}]',
            "item 0: name: a grader name is one line of printable text (got 'a\\nb')",
        ),
        ('{"x": "passed"}', "expected a list of grader objects (got object {'x': 'passed'})"),
    ],
)
def test_malformed_graders_cell_is_refused_with_line(tmp_path: Path, cell: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "a", "ok": 1, "g": null}\n' + f'{{"task": "b", "ok": 1, "g": {cell}}}\n')
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,graders=g"), system="s")
    assert str(exc.value) == f"{path}:2: field 'graders': column 'g': {message}"


def test_grader_in_both_a_column_and_the_graders_cell_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "a", "ok": 1, "x": 1, "g": [{"name": "exact", "kind": "code", "verdict": "passed"}]}\n')
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,graders=g,grader:exact=x"), system="s")
    assert (
        str(exc.value)
        == f"{path}:1: field 'graders.exact': column 'x': grader 'exact' is also in the graders column 'g'"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("case_id=a,grader:x=b,judge:x=c", "--map: grader 'x' is mapped twice"),
        ("case_id=a,grader:=b", "--map: a grader name is not blank (got '')"),
        ("case_id=a,slice=b", "--map: unknown record field 'slice'"),
    ],
)
def test_parse_mapping_refuses_bad_grader_entries(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")) as exc:
        parse_mapping(text)
    if "unknown" in message:
        assert str(exc.value).endswith("; graders: grader:NAME=COLUMN, judge:NAME=COLUMN")


def test_trial_and_trial_label_together_and_calibration_of_a_non_judge_are_refused(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok,t,em\nt1,1,0,1\n")
    with pytest.raises(ValueError, match=r"^mapping: give trial=COLUMN \(integers\) or trial_label=COLUMN"):
        import_table(path, parse_mapping("case_id=task,outcome=ok,trial=t,trial_label=t"), system="s")
    with pytest.raises(ValueError, match=r"^calibrations: 'exact' is not a judge column \(map judge:exact=COLUMN\)$"):
        import_table(
            path, parse_mapping("case_id=task,outcome=ok,grader:exact=em"), system="s", calibrations={"exact": "c"}
        )


def test_cli_writes_nothing_when_a_cell_is_malformed(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,run,ok,sl,em\nt1,run-1,1,a,1\nt1,run-01,1,a,1\n")
    runner = CliRunner()
    out, run_set = tmp_path / "out.jsonl", tmp_path / "rs"
    mapping = "case_id=task,trial_label=run,outcome=ok,slices=sl,judge:exact=em"
    for target in (["-o", str(out)], ["--run-set", str(run_set)]):
        result = runner.invoke(app, ["import", "table", str(path), "--map", mapping, "--system", "s", *target])
        assert result.exit_code == 1, result.stderr
        assert f"{path}:3: field 'trial_label': column 'run': trial labels 'run-01' and 'run-1'" in result.stderr
    assert not out.exists()
    assert not run_set.exists()
    result = runner.invoke(
        app, ["import", "table", str(path), "--map", mapping, "--system", "s", "--calibration", "exact", "-o", str(out)]
    )
    assert result.exit_code == 2
    assert "--calibration: expected JUDGE=VERSION (got 'exact')" in result.stderr
    assert not out.exists()


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_a_table_without_rows_is_an_error_and_nothing_is_written(tmp_path: Path, suffix: str) -> None:
    path = tmp_path / f"t{suffix}"
    frame = pl.DataFrame({"task": [], "ok": []}, schema={"task": pl.String, "ok": pl.Int64})
    frame.write_csv(path) if suffix == ".csv" else frame.write_parquet(path)
    out = tmp_path / "out.jsonl"
    args = ["import", "table", str(path), "--map", "case_id=task,outcome=ok", "--system", "s", "-o", str(out)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 1
    assert f"t{suffix}: field '<file>': the table has no rows (nothing to import)" in " ".join(result.stderr.split())
    assert not out.exists()


GATE_POLICY = """
format = "gatestats-policy/1"
name = "llmbar-judges"
version = "1"
k = 1
min_cases = 400
min_trials = 1
max_infra_error_rate = 0.1
on_insufficient_evidence = "block"
severe_slices = ["FairEval"]
# the ids share their subset's stem (MT-Bench#12): the subsets are strata the rules name, the items independent
case_grouping = "independent"

[baseline]
system = "chatgpt"

[candidate]
system = "gpt-4"
pins = {{ model_id = "GPT-4" }}

[[rules]]
name = "MT-Bench non-inferior"
metric = "pass_rate"
slice = "MT-Bench"
test = "paired"
margin = 0.05
alpha = 0.05

[[rules]]
name = "swapped-order judge"
metric = "pass_rate"
grader = "swapped"
threshold = 0.5

[judges.swapped]
calibrations = ["{calibration}"]
judge_model = "judge-1"
rubric_digest = "sha256:rubric"
max_false_pass_rate = 0.1
"""


def _correct(column: str) -> pl.Expr:
    return (pl.col(column) == pl.col("label")).fill_null(value=False)


def test_imported_slices_and_judge_columns_drive_severe_slices_slice_rules_and_judge_rules(tmp_path: Path) -> None:
    """LLMBar's Vanilla_NoRules verdicts: ChatGPT as the baseline, GPT-4 as the candidate, the swapped-order
    verdict standing in for a judge grader (calibrated on a made-up 400-item set, as tests/gate/test_judge_rules)."""
    labels = pl.DataFrame(
        {"item": [f"i{i}" for i in range(400)], "label": ["pass"] * 200 + ["fail"] * 200}
    ).with_columns(verdict=pl.Series(["pass"] * 194 + ["fail"] * 6 + ["pass"] * 4 + ["fail"] * 196))
    cal = calibrate(labels, positive="pass", negative="fail", judge_model="judge-1", rubric_digest="sha256:rubric")
    write_calibration(cal, tmp_path / "cal.json")
    policy = tmp_path / "policy.toml"
    policy.write_text(GATE_POLICY.format(calibration="cal.json"))
    judgments = pl.read_csv(LLMBAR).filter(pl.col("strategy") == "Vanilla_NoRules")
    runner = CliRunner()
    mapping = "case_id=case,outcome=ok,slices=subset,model_id=model,judge:swapped=swapped"
    for evaluator, system in (("ChatGPT", "chatgpt"), ("GPT-4", "gpt-4")):
        table = judgments.filter(pl.col("evaluator") == evaluator).select(
            case=pl.col("subset").str.replace("Processed/", "") + "#" + pl.col("item_idx").cast(pl.String),
            ok=_correct("winner_original_order"),
            subset=pl.col("subset").str.replace("Processed/", ""),
            swapped=pl.when(pl.col("winner_swapped_order").is_null())
            .then(pl.lit("unparseable"))
            .otherwise(_correct("winner_swapped_order").cast(pl.String)),
            model=pl.lit(evaluator),
        )
        table.write_csv(tmp_path / f"{system}.csv")
        args = ["import", "table", str(tmp_path / f"{system}.csv"), "--map", mapping, "--system", system]
        args += ["--calibration", f"swapped={cal.version}", "--run-set", str(tmp_path / system)]
        result = runner.invoke(app, args + (["--policy", str(policy)] if system == "gpt-4" else []))
        assert result.exit_code == 0, result.stderr
    sides = ["--baseline", str(tmp_path / "chatgpt"), "--candidate", str(tmp_path / "gpt-4")]
    gate = runner.invoke(app, ["gate", "--policy", str(policy), *sides, "--json"])
    body = json.loads(gate.stdout)
    fair = judgments.filter(pl.col("subset") == "Processed/FairEval", pl.col("evaluator").is_in(["ChatGPT", "GPT-4"]))
    wrong = fair.group_by("evaluator").agg((~_correct("winner_original_order")).sum()).sort("evaluator").rows()
    assert wrong == [("ChatGPT", 22), ("GPT-4", 15)]  # of the 66 FairEval items, from judgments.csv directly
    severe = body["severe_slices"][0]
    assert (severe["n_cases"], len(severe["failures"]), severe["baseline_failures"]) == (66, 15, 22)
    assert gate.exit_code == 11  # a severe-slice failure fails the gate
    rules = {rule["rule"]: rule for rule in body["rules"]}
    assert (rules["MT-Bench non-inferior"]["slice"], rules["MT-Bench non-inferior"]["n_cases"]) == ("MT-Bench", 200)
    assert body["judges"]["swapped"]["can_vote"] is True
    unparseable = judgments.filter((pl.col("evaluator") == "GPT-4") & pl.col("winner_swapped_order").is_null())
    # unparseable verdicts are not votes: they are unresolved (issue 30), and the row passes only because it
    # holds with every one of them counted as a failure
    judge_row = rules["swapped-order judge"]
    assert judge_row["decision"] == "pass"
    assert judge_row["unresolved"]["candidate"] == unparseable.height == 5
    assert judge_row["unresolved"]["summary"] == "passes even if all 5 unresolved attempts of the candidate had failed"
    assert judge_row["unresolved"]["observed_if_failed"] == pytest.approx(315 / 400)


def test_cli_summary_names_trial_ranges_case_versions_and_numbered_labels(tmp_path: Path) -> None:
    path = _csv(tmp_path, "sys,task,ver,run,ok\na,t1,v1,run-1,1\na,t1,v1,run-2,1\nb,t1,v2,seed-7,0\nb,t2,v1,x,1\n")
    mapping = "system=sys,case_id=task,case_version=ver,trial_label=run,outcome=ok"
    result = CliRunner().invoke(app, ["import", "table", str(path), "--map", mapping, "-o", str(tmp_path / "o.jsonl")])
    assert result.exit_code == 0, result.stderr
    assert " ".join(result.stderr.split()).endswith(
        ": 3 system-case pair(s) with 1 to 2 trial(s) each; 3 (case, case_version) pairs: some cases come in several "
        "versions; trial labels numbered per system and case in natural order (each record's source names its label)"
    )
    assert "wrote 4 records (2 system(s), 2 case(s)) to " in " ".join(result.stderr.split())


def test_one_label_twice_in_a_case_is_a_duplicate_trial_named_by_both_lines(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,run,ok\nt1,run-1,1\nt1,run-2,1\nt1,run-1,0\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,trial_label=run,outcome=ok"), system="s")
    assert str(exc.value) == (
        f"{path}:4: field 'system,case_id,case_version,trial,attempt': duplicate record (system='s', case_id='t1', "
        "case_version=None, trial=0, attempt=0) (first at line 2)"
    )
