"""Reading labelled sets and verdicts: mapping, joins, unparseable verdicts, errors with file:line:field."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.judges import parse_judgment_mapping, parse_where, read_judgments
from tests.judges.conftest import LLMBAR_MAP, mt_bench_where

MAP = {"item": "id", "label": "human", "verdict": "judge"}


def _csv(tmp_path: Path, text: str, name: str = "judgments.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _error(call: object) -> RecordFileError:
    with pytest.raises(RecordFileError) as info:
        call()  # type: ignore[operator]
    return info.value


def test_reads_the_llmbar_configuration(llmbar_judgments: Path) -> None:
    s = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("GPT-4"))
    assert s.frame.columns == ["item", "label", "verdict", "verdict_swapped"]
    assert s.frame.height == 200
    assert (s.negative, s.judge_model, s.rubric_version, s.n_labels_without_verdict) == (
        "2",
        "GPT-4",
        "Vanilla_NoRules",
        0,
    )
    assert s.where == (("subset", "Processed/MT-Bench"), ("evaluator", "GPT-4"), ("strategy", "Vanilla_NoRules"))


def test_separate_labels_file_with_composite_item_key(llmbar_judgments: Path, llmbar_items: Path) -> None:
    mapping = {"item": "subset+item_idx", "label": "label", "verdict": "winner_original_order", "slice": "subset"}
    s = read_judgments(
        llmbar_judgments,
        mapping,
        labels=llmbar_items,
        positive="1",
        kind="pairwise",
        where={"evaluator": "GPT-4", "strategy": "Vanilla_NoRules", "subset": "Processed/MT-Bench"},
    )
    assert s.frame.height == 200
    assert s.frame["item"][0] == "Processed/MT-Bench | 0"
    # items.csv labels all 466 Processed/* items; 266 of them (FairEval, LLMEval^2) were not judged here.
    assert s.n_labels_without_verdict == 266
    assert s.labels_without_verdict[0] == "Processed/FairEval | 0"
    assert s.sources == (str(llmbar_judgments), str(llmbar_items))


def test_verdicts_without_labels_are_an_error_that_says_how_many(tmp_path: Path) -> None:
    judgments = _csv(tmp_path, "id,judge\na,pass\nb,fail\nc,pass\nd,pass\n")
    labels = _csv(tmp_path, "id,human\na,pass\nb,fail\nx,pass\n", "labels.csv")
    err = _error(lambda: read_judgments(judgments, MAP, labels=labels, positive="pass"))
    assert str(err).splitlines() == [
        f"{judgments}: field 'item': 2 of 4 judged item(s) have no label in {labels} "
        "(and 1 labelled item(s) there have no verdict row); every judged item needs a label",
        f"{judgments}:4: field 'item': no label in {labels} (got 'c')",
        f"{judgments}:5: field 'item': no label in {labels} (got 'd')",
    ]


def test_unknown_verdict_value_names_file_line_and_field(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,human,judge\na,pass,pass\nb,fail,maybe\nc,fail,\n")
    err = _error(lambda: read_judgments(path, MAP, positive="pass", negative="fail"))
    assert str(err) == (
        f"{path}:3: field 'verdict': column 'judge': expected 'pass' or 'fail', or empty for an unparseable "
        "verdict (got 'maybe')"
    )
    assert err.problems[0].line == 3


def test_empty_and_declared_unparseable_verdicts_are_kept_as_null(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,human,judge\na,pass, PASS \nb,fail,ERROR\nc,fail,\nd,fail,Fail\n")
    s = read_judgments(path, MAP, positive="pass", unparseable=["error"])
    assert s.negative == "fail"
    assert s.frame["verdict"].to_list() == ["pass", None, None, "fail"]


def test_labelled_set_without_fails_needs_the_negative_value(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,human,judge\na,pass,pass\nb,pass,pass\n")
    err = _error(lambda: read_judgments(path, MAP, positive="pass"))
    assert str(err) == (
        f"{path}: field 'label': cannot infer the negative value: no label or verdict differs from the positive "
        "'pass'; give it explicitly (--negative)"
    )
    s = read_judgments(path, MAP, positive="pass", negative="fail")
    assert s.frame["label"].to_list() == ["pass", "pass"]


def test_duplicate_items_and_bad_labels(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,human,judge\na,pass,pass\na,fail,fail\nb,,pass\nc,meh,pass\n")
    err = _error(lambda: read_judgments(path, MAP, positive="pass", negative="fail"))
    assert [str(p) for p in err.problems] == [
        f"{path}:3: field 'item': duplicate item 'a' (first at line 2)",
        f"{path}:4: field 'label': column 'human': expected a label (got an empty value)",
    ]
    path2 = _csv(tmp_path, "id,human,judge\na,pass,pass\nc,meh,pass\n", "j2.csv")
    err2 = _error(lambda: read_judgments(path2, MAP, positive="pass", negative="fail"))
    assert str(err2) == f"{path2}:3: field 'label': column 'human': expected 'pass' or 'fail' (got 'meh')"


def test_one_calibration_is_for_one_judge(llmbar_judgments: Path) -> None:
    where = {"subset": "Processed/MT-Bench", "strategy": "Vanilla_NoRules"}
    mapping = {**LLMBAR_MAP, "item": "evaluator+item_idx"}
    err = _error(lambda: read_judgments(llmbar_judgments, mapping, positive="1", kind="pairwise", where=where))
    assert str(err) == (
        f"{llmbar_judgments}: field 'judge': column 'evaluator': a calibration is for one judge, the rows hold 4 "
        "(got ['ChatGPT', 'GPT-4', 'LLaMA2', 'PaLM2']); select one with --where evaluator=VALUE"
    )


def test_jsonl_and_parquet_inputs_give_the_same_frame(tmp_path: Path) -> None:
    rows = [
        {"id": 1, "human": 1, "judge": 1},
        {"id": 2, "human": 0, "judge": 1},
        {"id": 3, "human": 0, "judge": None},
    ]
    jsonl = tmp_path / "j.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    parquet = tmp_path / "j.parquet"
    pl.DataFrame(rows).write_parquet(parquet)
    csv = _csv(tmp_path, "id,human,judge\n1,1,1\n2,0,1\n3,0,\n")
    frames = [read_judgments(p, MAP, positive="1").frame for p in (jsonl, parquet, csv)]
    assert frames[0].equals(frames[1])
    assert frames[0].equals(frames[2])
    assert frames[0]["verdict"].to_list() == ["1", "1", None]


def test_parquet_errors_name_the_row(tmp_path: Path) -> None:
    parquet = tmp_path / "j.parquet"
    pl.DataFrame({"id": ["a", "b"], "human": ["pass", "fail"], "judge": ["pass", "nope"]}).write_parquet(parquet)
    err = _error(lambda: read_judgments(parquet, MAP, positive="pass"))
    assert str(err) == (
        f"{parquet} row 1: field 'verdict': column 'judge': expected 'pass' or 'fail', or empty for an "
        "unparseable verdict (got 'nope')"
    )


def test_missing_mapped_column_and_missing_file(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,human\na,pass\n")
    err = _error(lambda: read_judgments(path, MAP, positive="pass"))
    assert str(err) == f"{path}:1: field 'judge': mapped column not in the table (columns: ['id', 'human'])"
    err = _error(lambda: read_judgments(tmp_path / "nope.csv", MAP, positive="pass"))
    assert str(err) == f"{tmp_path / 'nope.csv'}: field '<file>': no such file"


def test_where_that_matches_nothing(llmbar_judgments: Path) -> None:
    err = _error(
        lambda: read_judgments(
            llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("GPT-5")
        )
    )
    assert str(err) == (
        f"{llmbar_judgments}: field '<file>': no judgment rows match subset=Processed/MT-Bench, evaluator=GPT-5, "
        "strategy=Vanilla_NoRules"
    )


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("item=a,label=b", "--map: verdict=COLUMN required (got 'item=a,label=b')"),
        (
            "item=a,label=b,verdict=c,colour=d",
            "--map: unknown field 'colour' (mappable: item, label, reason, verdict, verdict_swapped, verdict_persuaded, score, slice, judge, rubric)",
        ),
        ("item=a,item=b", "--map: field 'item' is mapped twice"),
        ("item", "--map: expected FIELD=COLUMN (got 'item')"),
    ],
)
def test_mapping_errors(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=f"^{re.escape(message)}$"):
        parse_judgment_mapping(text)


def test_where_parsing() -> None:
    assert parse_where(["a=b=c", " x = y "]) == {"a": "b=c", "x": "y"}
    with pytest.raises(ValueError, match=r"^--where: expected COLUMN=VALUE \(got 'nope'\)$"):
        parse_where(["nope"])


def test_option_errors(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,human,judge\na,pass,pass\n")
    with pytest.raises(ValueError, match=r"^a tie value applies to pairwise judges only"):
        read_judgments(path, MAP, positive="pass", negative="fail", tie="tie")
    with pytest.raises(ValueError, match=r"^mapping: verdict_swapped \(order swaps\) applies to pairwise judges"):
        read_judgments(path, {**MAP, "verdict_swapped": "judge"}, positive="pass")


def test_negative_value_inferred_from_verdicts_when_no_label_fails(tmp_path: Path) -> None:
    path = _csv(tmp_path, "id,human,judge\na,pass,Fail\nb,pass,pass\nc,pass,fail\n")
    s = read_judgments(path, MAP, positive="pass")
    assert s.negative == "Fail"
    assert s.frame["verdict"].to_list() == ["Fail", "pass", "Fail"]


@pytest.mark.parametrize(
    ("cell", "got"),
    [
        ("1.0", "number 1.0"),
        ('["pass"]', "array ['pass']"),
        ('{"v": "pass"}', "object {'v': 'pass'}"),
        ("true", "boolean True"),
    ],
)
def test_jsonl_label_of_another_type_is_refused_not_coerced(tmp_path: Path, cell: str, got: str) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text(f'{{"id": 1, "human": "pass", "judge": "pass"}}\n{{"id": 2, "human": {cell}, "judge": "fail"}}\n')
    err = _error(lambda: read_judgments(path, MAP, positive="pass", negative="fail"))
    assert str(err) == f"{path}:2: field 'label': column 'human': expected a string or an integer (got {got})"


@pytest.mark.parametrize(
    ("line", "field", "message"),
    [
        ('{"id": 2, "human": "pass", "judge": "fail", "judge": "pass"}', "judge", "duplicate key 'judge'"),
        ('{"id": 2, "human": "pass", "judge": "fail", "score": NaN}', "<line>", "not valid JSON: NaN"),
        ('{"id": 2, "human": "pass", "judge": "fail", "x": ' + "[" * 40 + "]" * 40 + "}", "<line>", "nested deeper"),
        ("[1, 2]", "<line>", "expected a JSON object (got array [1, 2])"),
    ],
)
def test_jsonl_lines_are_decoded_strictly(tmp_path: Path, line: str, field: str, message: str) -> None:
    path = tmp_path / "j.jsonl"
    path.write_text('{"id": 1, "human": "pass", "judge": "pass"}\n\n' + line + "\n")
    err = _error(lambda: read_judgments(path, MAP, positive="pass", negative="fail"))
    assert str(err).startswith(f"{path}:3: field '{field}': {message}")


@pytest.mark.parametrize("score", ["NaN", "inf", "1e999", "abc"])
def test_csv_score_must_be_a_finite_number(tmp_path: Path, score: str) -> None:
    path = _csv(tmp_path, f"id,human,judge,s\na,pass,pass,0.5\nb,fail,fail,{score}\n")
    err = _error(lambda: read_judgments(path, {**MAP, "score": "s"}, positive="pass"))
    assert str(err) == f"{path}:3: field 'score': column 's': expected a finite number (got {score!r})"


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("id,human,judge\na,pass,pass\nb,fail\n", 3, "expected 3 fields like the header (got 2)"),
        ('id,human,judge\n"a\nb",pass,pass\nc,fail,fail,x\n', 4, "expected 3 fields like the header (got 4)"),
        ('id,human,judge\na,pass,pass\n"b,fail,fail\n', 3, "not valid CSV: unexpected end of data"),
    ],
)
def test_csv_defects_name_their_physical_line(tmp_path: Path, text: str, line: int, message: str) -> None:
    path = _csv(tmp_path, text)
    err = _error(lambda: read_judgments(path, MAP, positive="pass"))
    assert str(err) == f"{path}:{line}: field '<line>': {message}"


def test_parquet_list_column_as_item_names_the_row(tmp_path: Path) -> None:
    path = tmp_path / "j.parquet"
    pl.DataFrame({"id": [["a"], ["b"]], "human": ["pass", "fail"], "judge": ["pass", "fail"]}).write_parquet(path)
    err = _error(lambda: read_judgments(path, MAP, positive="pass"))
    assert str(err).splitlines()[0] == (
        f"{path} row 0: field 'item': column 'id': expected a string or an integer (got array ['a'])"
    )


def test_labels_file_is_read_strictly_too(tmp_path: Path) -> None:
    judgments = _csv(tmp_path, "id,judge\na,pass\nb,fail\n")
    labels = tmp_path / "labels.csv"
    labels.write_bytes(b"id,human\na,pass\nb,fa\xffil\n")
    err = _error(lambda: read_judgments(judgments, MAP, labels=labels, positive="pass"))
    assert str(err) == f"{labels}:3: field '<line>': not valid UTF-8 (byte 0xff at column 5)"


def test_option_words_are_the_literal_types_values() -> None:
    # The runtime tuples the checks use are the Literal types' values, in order (one vocabulary).
    from typing import get_args

    from gatestats import judges

    assert judges.JUDGE_KINDS == get_args(judges.JudgeKind) == ("pointwise", "pairwise")
    assert judges.PROPORTION_METHODS == ("wilson", "clopper-pearson")
    assert judges.SWAPPED_CODINGS == ("original", "presented")
    assert judges.KAPPA_WEIGHTS == ("linear", "quadratic")
    assert judges.LIMIT_CRITERIA == ("upper_bound", "estimate")
    assert judges.CORRECTION_METHODS == ("lang-reiczigel",)


def test_unknown_kind_is_refused_with_the_vocabulary_message(tmp_path: Path) -> None:
    table = tmp_path / "j.csv"
    table.write_text("id,human,judge\na,pass,pass\n")
    mapping = {"item": "id", "label": "human", "verdict": "judge"}
    with pytest.raises(ValueError, match=r"^kind must be one of pointwise, pairwise \(got 'triple'\)$"):
        read_judgments(table, mapping, positive="pass", kind="triple")  # type: ignore[arg-type]
