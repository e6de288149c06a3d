"""The calibration artifact: content-addressed versions, atomic immutable files, integrity on load."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from gatestats.errors import RecordFileError
from gatestats.judges import calibrate, load_calibration, read_judgments, write_calibration
from gatestats.judges.calibration import content_version
from tests.judges.conftest import LLMBAR_MAP, as_kind, mt_bench_where

FRAME = pl.DataFrame(
    {
        "item": [f"c{i}" for i in range(10)],
        "label": ["pass"] * 5 + ["fail"] * 5,
        "verdict": ["pass", "pass", "pass", "pass", "fail", "pass", "fail", "fail", "fail", None],
    }
)
IDENTITY = {"judge_model": "gpt-4o-2024-08-06", "rubric_digest": "sha256:" + "ab" * 32, "rubric_version": "v3"}


def test_calibration_headline_statistics(frame_kind: str) -> None:
    cal = calibrate(as_kind(FRAME, frame_kind), positive="pass", negative="fail", **IDENTITY)
    assert (cal.false_pass_rate.numerator, cal.false_pass_rate.n) == (1, 4)
    assert (cal.false_fail_rate.numerator, cal.false_fail_rate.n) == (1, 5)
    assert (cal.n_items, cal.n_unparseable) == (10, 1)
    assert (cal.flip_rate, cal.position_bias_pvalue, cal.persuasion_pvalue) == (None, None, None)
    assert cal.version.startswith("judge-cal-")
    assert len(cal.version) == len("judge-cal-") + 16
    assert cal.to_frame()["statistic"].to_list() == ["false_pass_rate", "false_fail_rate", "kappa"]


def test_version_is_a_content_digest() -> None:
    base = calibrate(FRAME, positive="pass", negative="fail", **IDENTITY)
    shuffled = calibrate(FRAME.reverse(), positive="pass", negative="fail", **IDENTITY)
    assert shuffled.version == base.version  # row order is not content
    relabelled = FRAME.with_columns(label=pl.when(pl.col("item") == "c0").then(pl.lit("fail")).otherwise("label"))
    changes = [
        calibrate(relabelled, positive="pass", negative="fail", **IDENTITY),
        calibrate(FRAME, positive="pass", negative="fail", **{**IDENTITY, "judge_model": "gpt-4o-mini"}),
        calibrate(FRAME, positive="pass", negative="fail", **{**IDENTITY, "rubric_digest": "sha256:" + "cd" * 32}),
        calibrate(FRAME, positive="pass", negative="fail", method="clopper-pearson", **IDENTITY),
        calibrate(FRAME.with_columns(verdict=pl.lit("pass")), positive="pass", negative="fail", **IDENTITY),
    ]
    versions = {c.version for c in changes}
    assert base.version not in versions
    assert len(versions) == len(changes)
    assert changes[0].calibration_set_digest != base.calibration_set_digest
    assert changes[4].calibration_set_digest == base.calibration_set_digest
    assert changes[4].judgments_digest != base.judgments_digest
    # File names are provenance, not content.
    assert calibrate(FRAME, positive="pass", negative="fail", sources=["x.csv"], **IDENTITY).version == base.version


def test_write_load_round_trip_and_never_overwrite(tmp_path: Path) -> None:
    cal = calibrate(FRAME, positive="pass", negative="fail", sources=["judgments.csv"], **IDENTITY)
    path = write_calibration(cal, tmp_path / "cal" / "judge.json")
    loaded = load_calibration(path)
    assert loaded == cal
    assert list(path.parent.iterdir()) == [path]  # no temporary file left behind
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match=r"calibration file already exists \(calibrations are immutable"):
        write_calibration(cal, path)
    assert path.read_bytes() == before


def test_edited_calibration_is_refused(tmp_path: Path) -> None:
    cal = calibrate(FRAME, positive="pass", negative="fail", **IDENTITY)
    path = write_calibration(cal, tmp_path / "judge.json")
    document = json.loads(path.read_text())
    document["false_pass_rate"]["ci_high"] = 0.05  # make the judge look better
    tampered = tmp_path / "tampered.json"
    tampered.write_text(json.dumps(document))
    with pytest.raises(RecordFileError) as info:
        load_calibration(tampered)
    assert str(info.value) == (
        f"{tampered}: field 'version': expected {content_version(document)!r}, the digest of the file's "
        f"content (got {cal.version!r}): the calibration was edited after it was written"
    )
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"schema": "something-else"}))
    with pytest.raises(
        RecordFileError, match=r"field 'schema': expected 'gatestats.judge_calibration.v1' \(got 'something-else'\)"
    ):
        load_calibration(wrong)


def test_llmbar_gpt4_calibration_records_the_order_test(llmbar_judgments: Path) -> None:
    s = read_judgments(llmbar_judgments, LLMBAR_MAP, positive="1", kind="pairwise", where=mt_bench_where("GPT-4"))
    cal = calibrate(
        s.frame, positive="1", negative="2", kind="pairwise", judge_model=s.judge_model, rubric_version=s.rubric_version
    )
    assert cal.flip_rate is not None
    assert (cal.flip_rate.numerator, cal.flip_rate.n) == (26, 200)
    assert cal.position_bias_pvalue == pytest.approx(0.5572, abs=5e-5)
    assert cal.details["order"]["n_correct_original"] == 159
    assert cal.swapped_coding == "original"


def test_bad_calibration_frames() -> None:
    with pytest.raises(ValueError, match=r"^judgments: column 'item' must hold unique non-null ids"):
        calibrate(pl.concat([FRAME, FRAME.head(1)]), positive="pass", negative="fail")
    swapped = FRAME.with_columns(verdict_swapped=pl.col("verdict"))
    with pytest.raises(ValueError, match=r"applies to pairwise judges: use kind='pairwise'$"):
        calibrate(swapped, positive="pass", negative="fail")
