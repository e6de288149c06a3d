"""``gatestats.records.where``: the strict ``--where`` filter over record fields (polars' SQL)."""

from __future__ import annotations

import polars as pl
import pytest

from gatestats.records.contract import POLARS_SCHEMA
from gatestats.records.where import (
    WHERE_LIMIT,
    WhereError,
    apply_where,
    record_filter,
    where_columns,
)


def _records() -> pl.DataFrame:
    """Two systems, 3 cases, 2 trials; case z of system a retried once (trial 1: attempts 0 and 1)."""
    rows = [
        {"system": s, "case_id": c, "case_version": None, "trial": t, "attempt": 0, "outcome": "passed"}
        for s in ("a", "b")
        for c in ("x", "y", "z")
        for t in (0, 1)
    ]
    rows.append({"system": "a", "case_id": "z", "case_version": None, "trial": 1, "attempt": 1, "outcome": "failed"})
    slices = [["security"] if row["case_id"] == "x" else [] for row in rows]
    frame = pl.DataFrame(rows, schema_overrides={"case_version": pl.String, "trial": pl.Int64, "attempt": pl.Int64})
    return frame.with_columns(slices=pl.Series(slices, dtype=pl.List(pl.String)))


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("system = 'a' AND trial < 3", 7),
        ("case_id IN ('x', 'y')", 8),
        ("array_contains(slices, 'security')", 4),
        ("'security' = ANY(slices)", 4),
        ("trial BETWEEN 0 AND 0", 6),
        ("upper(system) = 'B' OR case_id LIKE 'x%'", 8),
        ("case_version IS NULL", 13),
        ("system = 'it''s'", None),
    ],
)
def test_the_documented_expressions_keep_exact_counts(text: str, kept: int | None) -> None:
    frame = _records()
    if kept is None:
        with pytest.raises(WhereError, match="kept no record of 13"):
            apply_where(frame, [text], source="r.jsonl")
        return
    result = apply_where(frame, [text], source="r.jsonl")
    assert (result.kept, result.total) == (kept, 13)
    assert result.records.equals(frame.filter(record_filter(text)))
    assert result.message == f"--where kept {kept} of 13 records"


def test_several_filters_must_all_hold() -> None:
    result = apply_where(_records(), ["system = 'b'", "case_id = 'x'"], source="r")
    assert result.kept == 2


def test_no_filter_returns_the_records_unchanged() -> None:
    frame = _records()
    result = apply_where(frame, [], source="r")
    assert result.records is frame
    assert (result.kept, result.total) == (13, 13)


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("model = 'x'", r"unknown record field\(s\) \['model'\] \(the fields: schema_version, record_id"),
        ("system = ", "not a valid SQL expression"),
        ("system = 'a", "a string is not closed"),
        ("trial", "not a boolean predicate"),
        ("system", "not a boolean predicate"),
        ("count(*) > 1", "function 'count' is not allowed"),
        ("sum(trial) > 1", "function 'sum' is not allowed"),
        ("max(trial) = trial", "function 'max' is not allowed"),
        ("rank() OVER () = 1", "function 'rank' is not allowed"),
        ("trial = 0 OVER ()", "no query, subquery or window"),
        ("SELECT * FROM self", "no query, subquery or window"),
        ("trial IN (SELECT trial FROM self)", "no query, subquery or window"),
        ("system = 'a'; DROP TABLE self", "';' is not allowed"),
        ("`system` = 'a'", "'`' is not allowed"),
        ("\"system\" = 'a'", "'\"' is not allowed"),
        ("system = 'a'\nOR trial = 1", r"control character '\\n' at position 12"),
        ("system = 'a\x00'", r"control character '\\x00'"),
        ("system = 'a\x1b[31m'", r"control character '\\x1b'"),
        ("system = 1", "cannot be evaluated on the record fields"),
        ("", "empty"),
        ("   ", "empty"),
        ("trial < " + "1" * 10_000, f"longer than {WHERE_LIMIT} characters"),
    ],
)
def test_refused_expressions_say_why_and_name_where(text: str, reason: str) -> None:
    with pytest.raises(WhereError, match=reason) as caught:
        record_filter(text)
    assert str(caught.value).startswith("--where ")
    assert len(str(caught.value)) < 1200  # a 10,000-character expression is not echoed whole


def test_an_expression_at_the_limit_is_parsed() -> None:
    text = "system = '" + "a" * (WHERE_LIMIT - len("system = ''")) + "'"
    assert len(text) == WHERE_LIMIT
    record_filter(text)
    with pytest.raises(WhereError, match=f"longer than {WHERE_LIMIT} characters"):
        record_filter(text + " ")


def test_hostile_strings_inside_quotes_are_data() -> None:
    frame = _records().with_columns(pl.lit("`; DROP --").alias("case_id"))
    assert apply_where(frame, ["case_id = '`; DROP --'"], source="r").kept == 13


def test_a_filter_splitting_a_retried_trial_is_refused() -> None:
    with pytest.raises(WhereError, match=r"some attempts of 1 trial\(s\).*case_id='z'.*every attempt of a trial"):
        apply_where(_records(), ["attempt = 0"], source="r.jsonl")
    with pytest.raises(WhereError, match="some attempts of 1 trial"):
        apply_where(_records(), ["outcome = 'passed'"], source="r.jsonl")


def test_a_filter_keeping_whole_retried_trials_is_allowed() -> None:
    result = apply_where(_records(), ["case_id = 'z'"], source="r")
    assert result.kept == 5
    assert apply_where(_records(), ["NOT (system = 'a' AND case_id = 'z' AND trial = 1)"], source="r").kept == 11


def test_null_results_drop_the_record_as_sql_where_does() -> None:
    frame = _records().with_columns(
        pl.when(pl.col("case_id") == "x").then(None).otherwise(pl.col("system")).alias("system")
    )
    assert apply_where(frame, ["system = 'b'"], source="r").kept == 4  # case x: system null, dropped
    assert apply_where(frame, ["system <> 'b'"], source="r").kept == 5  # null <> 'b' is null, dropped


def test_where_columns_adds_the_filtered_fields_and_the_trial_key() -> None:
    assert where_columns(("system", "outcome"), []) == ("system", "outcome")
    assert where_columns(("outcome",), ["array_contains(slices, 'x')"]) == (
        "outcome",
        "system",
        "case_id",
        "case_version",
        "trial",
        "attempt",
        "slices",
    )
    assert where_columns(None, ["trial < 1"]) is None
    with pytest.raises(WhereError, match="unknown record field"):
        where_columns(None, ["nope = 1"])


def test_every_contract_field_can_be_named() -> None:
    for name in POLARS_SCHEMA:
        record_filter(f"{name} IS NOT NULL")


@pytest.mark.parametrize("text", ["system = 'a' \u202e", "sys\u200btem = 'a'"])
def test_invisible_characters_outside_strings_are_syntax_errors(text: str) -> None:
    with pytest.raises(WhereError, match="not a valid SQL expression"):
        record_filter(text)


def test_null_and_casts_are_refused_true_keeps_everything() -> None:
    with pytest.raises(WhereError, match="not a boolean predicate"):
        record_filter("NULL")
    with pytest.raises(WhereError, match="function 'CAST' is not allowed"):
        record_filter("CAST(trial AS VARCHAR) = '1'")
    assert apply_where(_records(), ["TRUE"], source="r").kept == 13
