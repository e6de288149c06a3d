"""The generic table importer: mapping, outcome spellings, one trial per case, precise errors."""

from __future__ import annotations

from pathlib import Path

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.importers import OUTCOME_VALUES, import_table, parse_mapping


def _csv(tmp_path: Path, text: str, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


@pytest.mark.parametrize(
    ("raw", "outcome"),
    [
        ("1", "passed"),
        ("0", "failed"),
        ("True", "passed"),
        ("false", "failed"),
        ("PASS", "passed"),
        ("fail", "failed"),
        (" passed ", "passed"),
        ("Failed", "failed"),
        ("infra_error", "infra_error"),
        ("1.0", "passed"),
    ],
)
def test_outcome_spellings_map_to_contract_values(tmp_path: Path, raw: str, outcome: str) -> None:
    path = _csv(tmp_path, f"task,ok\nt1,{raw}\n")
    records = import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert records["outcome"].to_list() == [outcome]
    assert OUTCOME_VALUES[raw.strip().lower()] == outcome


def test_missing_trial_column_means_one_trial_per_case(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok,sys\nt1,1,a\nt2,0,a\nt1,0,b\n")
    records = import_table(path, parse_mapping("case_id=task,outcome=ok,system=sys"))
    assert records.select("system", "case_id", "trial").rows() == [
        ("a", "t1", 0),
        ("a", "t2", 0),
        ("b", "t1", 0),
    ]


def test_repeated_case_without_trial_column_is_a_duplicate_named_by_line(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok\nt1,1\nt2,1\nt1,0\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert str(exc.value) == (
        f"{path}:4: field 'system,case_id,case_version,trial,attempt': duplicate record (system='s', case_id='t1', "
        "case_version=None, trial=0, attempt=0) (first at line 2)"
    )


def test_unknown_outcome_value_names_line_column_and_value(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok\nt1,1\nt2,maybe\nt3,\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    expected = "one of 1/0, true/false, pass/fail, passed/failed, resource_killed, infra_error"
    assert [str(p) for p in exc.value.problems] == [
        f"{path}:3: field 'outcome': column 'ok': expected {expected} (got 'maybe')",
        f"{path}:4: field 'outcome': column 'ok': expected {expected} (got None)",
    ]


def test_non_integer_trial_and_bad_cost_are_named(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok,t,usd\nt1,1,0,0.1\nt1,1,1.5,x\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,trial=t,cost_usd=usd"), system="s")
    assert [str(p) for p in exc.value.problems] == [
        f"{path}:3: field 'trial': column 't': expected int64 (got '1.5')",
        f"{path}:3: field 'cost_usd': column 'usd': expected float64 (got 'x')",
    ]


def test_negative_cost_fails_contract_validation(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok,usd\nt1,1,-0.5\n")
    with pytest.raises(RecordFileError, match=r"t\.csv:2: field 'cost_usd': must be >= 0 \(got -0\.5\)"):
        import_table(path, parse_mapping("case_id=task,outcome=ok,cost_usd=usd"), system="s")


def test_mapped_column_missing_from_table(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok\nt1,1\n")
    with pytest.raises(RecordFileError, match=r"t\.csv:1: field 'result': mapped column not in the table"):
        import_table(path, {"case_id": "task", "outcome": "result"}, system="s")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("case_id=a,outcome", "--map: expected FIELD=COLUMN (got 'outcome')"),
        ("case=a", "--map: unknown record field 'case'"),
        ("case_id=a,case_id=b", "--map: field 'case_id' is mapped twice"),
        ("record_id=a", "--map: unknown record field 'record_id'"),
    ],
)
def test_parse_mapping_rejects_bad_text(text: str, message: str) -> None:
    with pytest.raises(ValueError, match="^" + message.replace("(", r"\(").replace(")", r"\)")):
        parse_mapping(text)


def test_system_must_come_from_exactly_one_place(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok,sys\nt1,1,a\n")
    with pytest.raises(ValueError, match="not both or neither"):
        import_table(path, {"case_id": "task", "outcome": "ok"})
    with pytest.raises(ValueError, match="not both or neither"):
        import_table(path, {"case_id": "task", "outcome": "ok", "system": "sys"}, system="x")


@pytest.mark.parametrize("suffix", [".parquet", ".jsonl"])
def test_parquet_and_jsonl_tables_with_native_types(tmp_path: Path, suffix: str) -> None:
    frame = pl.DataFrame({"task": [1, 2, 2], "ok": [True, False, True], "trial": [0, 0, 1], "cost": [0.1, None, 0.3]})
    path = tmp_path / f"t{suffix}"
    frame.write_parquet(path) if suffix == ".parquet" else frame.write_ndjson(path)
    records = import_table(path, parse_mapping("case_id=task,outcome=ok,trial=trial,cost_model_usd=cost"), system="s")
    assert records.select("case_id", "trial", "outcome", "cost_model_usd").rows() == [
        ("1", 0, "passed", 0.1),
        ("2", 0, "failed", None),
        ("2", 1, "passed", 0.3),
    ]
