"""``calibrate(read_judgments(...))``: what the set inferred is not asked again; a contradiction names both values."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl
import pytest

from gatestats.judges import calibrate, read_judgments
from tests.judges.conftest import LLMBAR_MAP, mt_bench_where

#: The version `gatestats calibrate` prints for GPT-4 on MT-Bench (docs/judges.md). Session 40: was
#: judge-cal-07b94565b71cacae; the kappa p-value it hashes is now erfc(|z|/sqrt 2), 7.235722819785652e-17
#: (scipy's 2 * norm.sf gave 7.235722819785659e-17), so the same inputs give a new version (docs/judges.md).
GPT4_VERSION = "judge-cal-c705136ac2bf2878"


def test_the_set_alone_gives_the_command_line_calibration(llmbar_judgments: Path) -> None:
    judged = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("GPT-4"))
    cal = calibrate(judged)
    assert cal.version == GPT4_VERSION
    assert (cal.positive, cal.negative, cal.kind, cal.judge_model) == ("1", "2", "pairwise", "GPT-4")
    assert cal.sources == (str(llmbar_judgments),)
    # The old keywords still work, repeating what the set holds.
    again = calibrate(judged, positive="1", negative="2", kind="pairwise", judge_model="GPT-4")
    assert again.version == GPT4_VERSION
    # And the frame with every keyword, as before.
    old = calibrate(
        judged.frame,
        positive="1",
        negative="2",
        kind="pairwise",
        judge_model="GPT-4",
        rubric_digest=cal.rubric_digest,
        rubric_version="Vanilla_NoRules",
    )
    assert old.version == GPT4_VERSION


@pytest.mark.parametrize(
    ("keyword", "value", "theirs"),
    [
        ("negative", "1", "'2'"),
        ("positive", "2", "'1'"),
        ("kind", "pointwise", "'pairwise'"),
        ("tie", "0", "None"),
        ("judge_model", "GPT-5", "'GPT-4'"),
        ("rubric_version", "other", "'Vanilla_NoRules'"),
        ("n_labels_without_verdict", 3, "0"),
    ],
)
def test_a_contradicting_keyword_is_an_error_naming_both(
    llmbar_judgments: Path, keyword: str, value: object, theirs: str
) -> None:
    judged = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("GPT-4"))
    message = f"calibrate: {keyword}={value!r} contradicts the judgment set's {keyword}={theirs}"
    with pytest.raises(ValueError, match=re.escape(message)):
        calibrate(judged, **{keyword: value})  # type: ignore[arg-type]


def test_a_frame_still_needs_its_values() -> None:
    frame = pl.DataFrame({"item": ["1"], "label": ["pass"], "verdict": ["pass"]})
    with pytest.raises(ValueError, match="positive= and negative= are required with a frame"):
        calibrate(frame, positive="pass")
    assert calibrate(frame, positive="pass", negative="fail").kind == "pointwise"


def test_a_judge_model_fills_in_what_the_files_do_not_name(llmbar_judgments: Path) -> None:
    mapping = {k: v for k, v in LLMBAR_MAP.items() if k not in ("judge", "rubric")}
    judged = read_judgments(llmbar_judgments, mapping, positive="1", kind="pairwise", where=mt_bench_where("GPT-4"))
    cal = calibrate(judged, judge_model="gpt-4-0613", rubric_version="v1")
    assert (cal.judge_model, cal.rubric_version, cal.negative) == ("gpt-4-0613", "v1", "2")
    assert cal.rubric_digest is not None
