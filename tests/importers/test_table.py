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
        f"{path}:4: field 'outcome': column 'ok': expected {expected} (got an empty value)",
    ]


def test_non_integer_trial_and_bad_cost_are_named(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok,t,usd\nt1,1,0,0.1\nt1,1,1.5,x\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,trial=t,cost_usd=usd"), system="s")
    assert [str(p) for p in exc.value.problems] == [
        f"{path}:3: field 'trial': column 't': expected a 64-bit integer (got '1.5')",
        f"{path}:3: field 'cost_usd': column 'usd': expected a finite number (got 'x')",
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


@pytest.mark.parametrize("value", ["NaN", "nan", "inf", "-Infinity", "1e999"])
def test_csv_cost_that_is_not_a_finite_number_is_an_error_not_null(tmp_path: Path, value: str) -> None:
    path = _csv(tmp_path, f"task,ok,usd\nt1,1,0.5\nt2,1,{value}\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,cost_usd=usd"), system="s")
    assert str(exc.value) == f"{path}:3: field 'cost_usd': column 'usd': expected a finite number (got {value!r})"


def test_jsonl_ids_are_strings_or_integers_written_as_decimal_text(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": 123, "ok": true}\n\n{"task": "t2", "ok": 0}\n{"task": -7, "ok": "PASS"}\n')
    records = import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert records.select("case_id", "outcome").rows() == [("123", "passed"), ("t2", "failed"), ("-7", "passed")]


@pytest.mark.parametrize(
    ("cell", "got"),
    [
        ('["a"]', "array ['a']"),
        ('{"x": 1}', "object {'x': 1}"),
        ("1.0", "number 1.0"),
        ("true", "boolean True"),
    ],
)
def test_jsonl_id_of_another_type_is_refused_with_its_line(tmp_path: Path, cell: str, got: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(f'{{"task": "t1", "ok": 1}}\n\n{{"task": {cell}, "ok": 1}}\n')
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert str(exc.value) == f"{path}:3: field 'case_id': column 'task': expected a string or an integer (got {got})"


@pytest.mark.parametrize(
    ("field", "cell", "message"),
    [
        ("trial", "1.0", "expected an integer (got number 1.0)"),
        ("trial", '"2"', "expected an integer (got string '2')"),
        ("cost_usd", '"0.5"', "expected a finite number (got string '0.5')"),
        ("started_at", "1700000000", "expected a string (got integer 1700000000)"),
        (
            "outcome",
            "1.0",
            "expected one of 1/0, true/false, pass/fail, passed/failed, resource_killed, infra_error (got number 1.0)",
        ),
        (
            "outcome",
            "2",
            "expected one of 1/0, true/false, pass/fail, passed/failed, resource_killed, infra_error (got integer 2)",
        ),
    ],
)
def test_jsonl_cells_are_never_coerced(tmp_path: Path, field: str, cell: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text(f'{{"task": "t1", "ok": 1, "v": {cell}}}\n')
    mapping = {"case_id": "task", "outcome": "ok"} | ({"outcome": "v"} if field == "outcome" else {field: "v"})
    with pytest.raises(RecordFileError) as exc:
        import_table(path, mapping, system="s")
    assert str(exc.value) == f"{path}:1: field '{field}': column 'v': {message}"


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ('{"task": "t1", "ok": 1, "usd": NaN}', "not valid JSON: NaN is not a JSON number"),
        ('{"task": "t1", "ok": 1, "usd": 1e999}', "not valid JSON: number 1e999 overflows a 64-bit float"),
        ('{"task": "t1", "ok": 1, "ok": 0}', "duplicate key 'ok' (readers disagree on which value wins)"),
        (
            '{"task": "t1", "ok": 1, "trial": 9223372036854775808}',
            "not valid JSON: integer 9223372036854775808 is out of the 64-bit range",
        ),
    ],
)
def test_jsonl_lines_are_decoded_strictly_and_named(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "t0", "ok": 1, "usd": 0.1, "trial": 0}\n' + line + "\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    field = "ok" if "duplicate" in message else "<line>"
    assert str(exc.value) == f"{path}:2: field '{field}': {message}"


def test_deeply_nested_jsonl_line_is_an_error_not_a_recursion_error(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    path.write_text('{"task": "t1", "ok": 1, "x": ' + "[" * 3000 + "]" * 3000 + "}\n")
    with pytest.raises(RecordFileError, match=r"t\.jsonl:1: field '<line>': nested deeper than 32 levels"):
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("task,ok\nt1,1\nt2\n", 3, "expected 2 fields like the header (got 1)"),
        ("task,ok\nt1,1\nt2,1,x\n", 3, "expected 2 fields like the header (got 3)"),
        ('task,ok\n"t1\nnext",1\nt2,1,x\n', 4, "expected 2 fields like the header (got 3)"),
        ('task,ok\nt1,1\n"t2,1\n', 3, "not valid CSV: unexpected end of data"),
    ],
)
def test_csv_rows_are_read_strictly_with_their_physical_line(
    tmp_path: Path, text: str, line: int, message: str
) -> None:
    path = _csv(tmp_path, text)
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert str(exc.value) == f"{path}:{line}: field '<line>': {message}"


def test_quoted_newline_does_not_shift_the_line_of_a_later_error(tmp_path: Path) -> None:
    path = _csv(tmp_path, 'task,ok\n"t1\nsecond",1\nt2,maybe\n')
    with pytest.raises(RecordFileError, match=r"t\.csv:4: field 'outcome'"):
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")


def test_invalid_utf8_in_csv_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "t.csv"
    path.write_bytes(b"task,ok\nt1,1\nt\xff2,1\n")
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert str(exc.value) == f"{path}:3: field '<line>': not valid UTF-8 (byte 0xff at column 2)"


def test_parquet_list_column_as_case_id_names_each_row(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"task": [["a"], ["b"]], "ok": [1, 0]}).write_parquet(path)
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert [str(p) for p in exc.value.problems] == [
        f"{path} row 0: field 'case_id': column 'task': expected a string or an integer (got array ['a'])",
        f"{path} row 1: field 'case_id': column 'task': expected a string or an integer (got array ['b'])",
    ]


@pytest.mark.parametrize("bad", [float("nan"), float("inf")])
def test_parquet_nan_or_inf_cost_is_refused_not_nulled(tmp_path: Path, bad: float) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"task": ["a", "b"], "ok": [True, False], "usd": [0.5, bad]}).write_parquet(path)
    with pytest.raises(RecordFileError) as exc:
        import_table(path, parse_mapping("case_id=task,outcome=ok,cost_usd=usd"), system="s")
    assert (
        str(exc.value) == f"{path} row 1: field 'cost_usd': column 'usd': expected a finite number (got number {bad})"
    )


def test_parquet_uint64_trial_beyond_int64_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "t.parquet"
    pl.DataFrame({"task": ["a"], "ok": [1], "t": pl.Series([2**63], dtype=pl.UInt64)}).write_parquet(path)
    with pytest.raises(RecordFileError, match=r"row 0: field 'trial': column 't': expected an integer \(got integer"):
        import_table(path, parse_mapping("case_id=task,outcome=ok,trial=t"), system="s")


def test_error_count_is_exact_beyond_the_problems_shown(tmp_path: Path) -> None:
    path = _csv(tmp_path, "task,ok\n" + "".join(f"t{i},maybe\n" for i in range(130)))
    with pytest.raises(RecordFileError) as exc:
        import_table(path, {"case_id": "task", "outcome": "ok"}, system="s")
    assert exc.value.total == 130
    assert len(exc.value.problems) == 50
    assert str(exc.value).splitlines()[-1] == "... and 110 more problem(s)"
