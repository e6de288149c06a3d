"""The gate refuses evidence from an ancestor: a revised candidate is judged on its own records only."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from gatestats.gate.lineage import ancestor_check
from tests.gate.factory import rewrite_records
from tests.gate.test_gate import _gate, _outcomes, _setup


def _frame(rows: list[tuple[str, str, str | None]]) -> pl.DataFrame:
    return pl.DataFrame(
        rows, schema={"case_id": pl.String, "candidate_digest": pl.String, "parent_candidate_digest": pl.String},
        orient="row",
    )  # fmt: skip


def test_records_without_lineage_add_no_check() -> None:
    assert ancestor_check(_frame([("a", "d0", None)])) is None
    assert ancestor_check(pl.DataFrame({"case_id": ["a"], "candidate_digest": ["d0"]})) is None


def test_a_revision_alone_is_accepted() -> None:
    check = ancestor_check(_frame([("a", "d2", "d1"), ("b", "e1", "e0")]))
    assert check is not None
    assert (check.name, check.status) == ("lineage", "ok")


def test_an_ancestor_two_rounds_back_is_refused_and_the_case_named() -> None:
    # d2 was revised from d1, d1 from d0: records of d0 beside d2's are an ancestor's evidence.
    rows = [("a", "d2", "d1"), ("a", "d1", "d0"), ("b", "e1", "e0"), ("a", "d0", None)]
    check = ancestor_check(_frame(rows))
    assert check is not None
    assert (check.status, check.side) == ("insufficient_evidence", "candidate")
    assert check.detail.startswith("evidence from an ancestor: the records of 1 case(s) mix a revised candidate")
    assert "(a)" in check.detail


def _lineage(root: Path, ancestor_in: str | None) -> None:
    rows: list[dict[str, Any]] = [json.loads(line) for line in (root / "records.jsonl").read_text().splitlines()]
    for row in rows:
        row.pop("checksum", None)
        ancestor = row["case_id"] == ancestor_in and row["trial"] == 1
        row["candidate_digest"] = f"sha256:d0-{row['case_id']}" if ancestor else f"sha256:d1-{row['case_id']}"
        row["parent_candidate_digest"] = None if ancestor else f"sha256:d0-{row['case_id']}"
        row["correction_round"] = 0 if ancestor else 1
    rewrite_records(root, rows)


def test_the_gate_blocks_a_candidate_whose_evidence_includes_its_ancestor(tmp_path: Path) -> None:
    base = _outcomes(200, set(range(0, 200, 4)), trials=2)
    cand = _outcomes(200, set(range(0, 200, 16)), trials=2)
    policy, b, c = _setup(tmp_path, base=base, cand=cand, k=2)
    _lineage(c, ancestor_in=None)
    code, body, out = _gate(policy, b, c)
    assert body is not None, out
    assert code == 0, body["reasons"]
    assert {"name": "lineage", "side": "candidate", "status": "ok"}.items() <= next(
        x for x in body["checks"] if x["name"] == "lineage"
    ).items()
    _lineage(c, ancestor_in="c005")
    code, body, out = _gate(policy, b, c)
    assert body is not None, out
    assert (code, body["verdict"]) == (12, "insufficient_evidence")
    (lineage,) = [x for x in body["checks"] if x["name"] == "lineage"]
    assert lineage["status"] == "insufficient_evidence"
    assert "(c005)" in lineage["detail"]
