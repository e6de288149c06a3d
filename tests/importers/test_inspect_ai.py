"""Inspect AI importer, on logs written by inspect-ai 0.3.285 (tests/importers/fixtures/inspect/VERSION.txt)."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from gatestats import analyze
from gatestats.cli import app
from gatestats.errors import RecordFileError
from gatestats.importers.inspect_ai import import_inspect

FIXTURES = Path(__file__).parent / "fixtures" / "inspect"
EVAL_LOG = FIXTURES / "fixture.eval"
JSON_LOG = FIXTURES / "fixture.json"
KEY = ["case_id", "trial", "attempt"]
# Inspect's reductions.json in the fixture (mean reducer of the `exact` scorer, C = 1, I = 0): the
# per-sample score Inspect reports. Errored epochs are left out by Inspect; limit hits scored I.
INSPECT_EXACT_REDUCTION = {"always": 1.0, "never": 0.0, "half": 0.5, "crash": 1.0, "flaky": 0.5}


def _final(records: pl.DataFrame) -> pl.DataFrame:
    """The last attempt of each trial (the trial's outcome)."""
    return records.sort(KEY).group_by("case_id", "trial", maintain_order=True).last()


def _rewrite(source: Path, target: Path, *, replace: dict[str, bytes | None]) -> Path:
    """A copy of an .eval archive with members replaced (None: dropped), written with deflate."""
    with zipfile.ZipFile(io.BytesIO(source.read_bytes())) as old, zipfile.ZipFile(target, "w") as new:
        for info in old.infolist():
            if info.filename in replace:
                data = replace[info.filename]
                if data is not None:
                    new.writestr(info.filename, data, compress_type=zipfile.ZIP_DEFLATED)
                continue
            raw = _member_bytes(source, info.filename)
            new.writestr(info.filename, raw, compress_type=zipfile.ZIP_DEFLATED)
    return target


def _member_bytes(file: Path, name: str) -> bytes:
    import zstandard

    with zipfile.ZipFile(file) as archive:
        info = archive.getinfo(name)
        assert info.compress_type == 93  # zstd, as Inspect writes it
        blob = file.read_bytes()
        start = (
            info.header_offset + 30 + int.from_bytes(blob[info.header_offset + 26 : info.header_offset + 28], "little")
        )
        start += int.from_bytes(blob[info.header_offset + 28 : info.header_offset + 30], "little")
        return zstandard.ZstdDecompressor().stream_reader(io.BytesIO(blob[start : start + info.compress_size])).read()


def test_eval_archive_counts_match_inspect_read_eval_log() -> None:
    records = import_inspect(EVAL_LOG)
    final = _final(records)
    # inspect_ai.log.read_eval_log(fixture.eval), run once in the scratch venv (VERSION.txt):
    # total_samples 20, completed_samples 19, one sample with `error`, one with `limit`, exact C on 11 samples.
    assert final.height == 20
    assert final.filter(pl.col("outcome") != "infra_error").height == 19
    counts = dict(final.group_by("outcome").len().iter_rows())
    assert counts == {"passed": 11, "failed": 7, "resource_killed": 1, "infra_error": 1}
    assert records.height == 22  # two error_retries became earlier attempts


def test_counts_agree_with_inspect_reader_when_installed() -> None:
    log_module = pytest.importorskip("inspect_ai.log")
    log = log_module.read_eval_log(str(EVAL_LOG))
    final = _final(import_inspect(EVAL_LOG))
    assert final.height == log.results.total_samples
    errored = sum(1 for s in log.samples if s.error is not None)
    assert final.filter(pl.col("outcome") == "infra_error").height == errored


def test_eval_and_json_logs_give_the_same_records() -> None:
    columns = [*KEY, "outcome", "bound", "failed_check", "graders", "tokens_input", "tokens_output", "model_id"]
    from_eval = import_inspect(EVAL_LOG).select(columns).sort(KEY)
    from_json = import_inspect(JSON_LOG).select(columns).sort(KEY)
    assert from_eval.drop("failed_check").equals(from_json.drop("failed_check"))


def test_every_error_becomes_infra_error_with_its_message() -> None:
    records = import_inspect(EVAL_LOG)
    errors = records.filter(pl.col("outcome") == "infra_error").sort(KEY)
    assert errors.select(KEY).rows() == [("crash", 1, 0), ("crash", 1, 1), ("flaky", 0, 0)]
    assert errors["failed_check"].to_list() == [
        "inspect error (retried): RuntimeError('tool sandbox unreachable (scripted error)')",
        "inspect error: RuntimeError('tool sandbox unreachable (scripted error)')",
        "inspect error (retried): RuntimeError('transient provider error (scripted, retried)')",
    ]
    retried = records.filter((pl.col("case_id") == "flaky") & (pl.col("trial") == 0)).sort("attempt")
    assert retried["outcome"].to_list() == ["infra_error", "passed"]


def test_limit_hit_is_resource_killed_with_its_bound() -> None:
    row = import_inspect(EVAL_LOG).filter((pl.col("case_id") == "flaky") & (pl.col("trial") == 2)).row(0, named=True)
    assert (row["outcome"], row["bound"]) == ("resource_killed", "output")
    assert row["failed_check"] == "inspect message limit 10.0: message limit 10 exceeded (scripted)"


def test_pass_at_1_per_case_equals_inspect_mean_reduction() -> None:
    final = _final(import_inspect(EVAL_LOG)).filter(pl.col("outcome") != "infra_error")
    per_case = final.group_by("case_id").agg((pl.col("outcome") == "passed").mean().alias("rate"))
    assert dict(per_case.iter_rows()) == INSPECT_EXACT_REDUCTION


def test_analyze_reports_the_errored_case_as_insufficient_for_pass_hat_4() -> None:
    result = analyze(import_inspect(EVAL_LOG), ks=[1, 4]).system("mockllm/model")
    assert result.get("pass_at_k", 1).estimate == pytest.approx(0.6)  # Inspect's exact/accuracy: 0.6
    assert result.get("pass_hat_k", 4).status == "insufficient_evidence"


def test_system_parts_scorers_graders_and_usage() -> None:
    row = import_inspect(EVAL_LOG).filter((pl.col("case_id") == "always") & (pl.col("trial") == 0)).row(0, named=True)
    assert row["model_id"] == "mockllm/model"
    assert row["task_set_version"] == "fixture_task@2"
    assert row["retry_policy"] == "retry_on_error=1"
    assert row["orchestration_version"].startswith("inspect_ai 0.3.285; plan scripted (sha256 ")
    assert row["verifier_version"].startswith("scorers exact,length_score; epochs 4; reducer None; fail_on_error False")
    assert row["graders"] == [
        {"name": "exact", "kind": "code", "verdict": "passed", "calibration_version": None},
        {"name": "length_score", "kind": "code", "verdict": "passed", "calibration_version": None},
    ]
    assert (row["tokens_input"], row["tokens_output"], row["cost_model_usd"]) == (12, 3, None)
    assert "inspect_ai 0.3.285, log format 2" in row["source"]
    assert "fixture.eval (sha256 " in row["source"]


def test_numeric_scorer_with_threshold_and_judge_kind() -> None:
    records = import_inspect(EVAL_LOG, scorer="length_score", threshold=0.25, judges=["exact"])
    final = _final(records)
    assert final.filter(pl.col("outcome") == "passed").height == 18  # every scored, non-limited sample
    assert records["graders"].drop_nulls()[0][0]["kind"] == "judge"


def test_unknown_scorer_is_refused() -> None:
    with pytest.raises(
        RecordFileError, match=r"field 'eval.scorers': no scorer 'f1' in this log \(scorers: exact, length_score\)"
    ):
        import_inspect(EVAL_LOG, scorer="f1")


def test_truncated_archive_is_refused(tmp_path: Path) -> None:
    cut = tmp_path / "cut.eval"
    cut.write_bytes(EVAL_LOG.read_bytes()[:20000])
    with pytest.raises(
        RecordFileError, match=r"cut.eval: field '<file>': not a readable Inspect .eval log \(a zip archive"
    ):
        import_inspect(cut)


def test_member_that_is_not_json_names_file_member_and_line(tmp_path: Path) -> None:
    bad = _rewrite(EVAL_LOG, tmp_path / "bad.eval", replace={"samples/half_epoch_2.json": b'{"id": "half",\n oops}'})
    with pytest.raises(RecordFileError) as caught:
        import_inspect(bad)
    assert str(caught.value) == (
        f"{bad}[samples/half_epoch_2.json]:2: field '<line>': not valid JSON: "
        "Expecting property name enclosed in double quotes (column 2)"
    )


def test_damaged_zstd_member_is_refused(tmp_path: Path) -> None:
    blob = bytearray(EVAL_LOG.read_bytes())
    with zipfile.ZipFile(EVAL_LOG) as archive:
        info = archive.getinfo("header.json")
    middle = info.header_offset + 30 + len(info.filename) + len(info.extra) + info.compress_size // 2
    blob[middle] ^= 0xFF
    damaged = tmp_path / "damaged.eval"
    damaged.write_bytes(bytes(blob))
    with pytest.raises(RecordFileError, match=r"damaged.eval\[header.json\]: field '<member>': "):
        import_inspect(damaged)


def test_unknown_log_version_and_missing_header_are_refused(tmp_path: Path) -> None:
    document = json.loads(JSON_LOG.read_text())
    document["version"] = 99
    future = tmp_path / "future.json"
    future.write_text(json.dumps(document))
    with pytest.raises(
        RecordFileError,
        match=r"field 'version': Inspect log format version integer 99 is not supported \(known: 1, 2\)",
    ):
        import_inspect(future)
    headless = _rewrite(EVAL_LOG, tmp_path / "running.eval", replace={"header.json": None})
    with pytest.raises(RecordFileError, match=r"field 'header.json': no header.json member: the log is incomplete"):
        import_inspect(headless)


def test_bare_nan_in_reductions_is_tolerated(tmp_path: Path) -> None:
    text = JSON_LOG.read_text()
    marker = '"reductions": ['
    assert marker in text
    patched = tmp_path / "nan.json"
    patched.write_text(
        text.replace(marker, marker + '{"scorer": "exact", "samples": [{"value": NaN, "sample_id": "x"}]}, ', 1)
    )
    assert import_inspect(patched).height == 22


def test_missing_sample_epoch_becomes_infra_error_not_in_the_log(tmp_path: Path) -> None:
    partial = _rewrite(EVAL_LOG, tmp_path / "partial.eval", replace={"samples/never_epoch_4.json": None})
    row = import_inspect(partial).filter((pl.col("case_id") == "never") & (pl.col("trial") == 3)).row(0, named=True)
    assert row["outcome"] == "infra_error"
    assert row["failed_check"] == "no sample in the log (eval status success): not run or not recorded"


def test_same_log_twice_is_refused_naming_both_files(tmp_path: Path) -> None:
    copy = tmp_path / "copy.eval"
    copy.write_bytes(EVAL_LOG.read_bytes())
    with pytest.raises(
        RecordFileError,
        match=r"copy.eval: field 'samples': system 'mockllm/model', case '.+', epoch \d is also in .+fixture.eval",
    ):
        import_inspect([EVAL_LOG, copy])


def test_cli_writes_records_and_writes_nothing_on_bad_input(tmp_path: Path) -> None:
    runner = CliRunner()
    out = tmp_path / "records.jsonl"
    result = runner.invoke(app, ["import", "inspect", str(EVAL_LOG), "-o", str(out)], catch_exceptions=False)
    assert result.exit_code == 0, result.stderr
    assert "wrote 22 records (1 system(s), 5 case(s))" in result.stderr
    cut = tmp_path / "cut.eval"
    cut.write_bytes(EVAL_LOG.read_bytes()[:1000])
    bad_out = tmp_path / "bad.jsonl"
    result = runner.invoke(app, ["import", "inspect", str(cut), "-o", str(bad_out)], catch_exceptions=False)
    assert result.exit_code == 1
    assert "cut.eval: field '<file>': not a readable Inspect .eval log" in result.stderr
    assert not bad_out.exists()
    result = runner.invoke(app, ["import", "inspect", str(EVAL_LOG), "--value", "P=maybe", "-o", str(bad_out)])
    assert result.exit_code == 2
    assert not bad_out.exists()
