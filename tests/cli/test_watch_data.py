"""`gatestats watch init|observe|label`: exit 0 when written; exit 2 naming the problem, nothing written."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import Result
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.rollout import read_labels, read_log
from tests.rollout.conftest import PLAN, verdict_path  # noqa: F401 - the session fixture, shared

TABLE = (
    "ticket,outcome,accepted,review_minutes,unauthorized_actions,cohort,cost_usd\n"
    "T-1,passed,true,3.5,0,internal,0.02\n"
    "T-2,failed,false,12,0,beta,0.05\n"
    "T-3,passed,true,1,0,internal,0.01\n"
)
MAP = "case_id=ticket,outcome=outcome,accepted=accepted,review_minutes=review_minutes,"
MAP += "unauthorized_actions=unauthorized_actions,cohort=cohort,cost_usd=cost_usd"


def _run(*args: str) -> Result:
    return CliRunner().invoke(app, list(args))


def _tree(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


@pytest.fixture
def setup(tmp_path: Path, verdict_path: Path) -> tuple[Path, Path, Path]:  # noqa: F811 - the fixture above
    plan = tmp_path / "rollout.toml"
    plan.write_text(PLAN, encoding="utf-8")
    table = tmp_path / "obs.csv"
    table.write_text(TABLE, encoding="utf-8")
    watch = tmp_path / "WATCH"
    result = _run("watch", "init", str(watch), "--plan", str(plan), "--verdict", str(verdict_path))
    assert result.exit_code == 0, result.output
    assert "watching release 'candidate'" in result.stderr
    return watch, plan, table


def test_init_observe_label_write_the_log(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    watch, _, table = setup
    result = _run(
        "watch", "observe", str(watch), str(table), "--stage", "shadow", "--map", MAP, "--id-column", "ticket"
    )
    assert result.exit_code == 0, result.output
    assert "wrote batch 0001 (stage shadow): 3 observations" in result.stderr
    log = read_log(watch)
    assert log.records.get_column("record_id").to_list() == ["T-1", "T-2", "T-3"]
    assert log.records.get_column("accepted").to_list() == [True, False, True]
    assert log.records.get_column("system").unique().to_list() == ["candidate"]
    labels = tmp_path / "labels.csv"
    labels.write_text("record_id,label,observed_at\nT-1,escaped_defect,2026-11-20T10:00:00Z\n", encoding="utf-8")
    result = _run("watch", "label", str(watch), str(labels))
    assert result.exit_code == 0, result.output
    assert "added 1 late label to" in result.stderr
    assert [x.record_id for x in read_labels(watch)] == ["T-1"]


def test_a_record_file_is_observed_as_it_is(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    from tests.rollout.conftest import observations

    watch, _, _ = setup
    records = tmp_path / "obs.jsonl"
    observations(4, stage="pilot", cohort=None).write_ndjson(records)
    result = _run("watch", "observe", str(watch), str(records), "--stage", "pilot")
    assert result.exit_code == 0, result.output
    assert read_log(watch).batches[0].stage == "pilot"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "production", "--map", MAP], "--stage: 'production' is not a stage of the plan"),
        (["--stage", "canary", "--map", MAP], "--stage: 'canary' is not a stage of the plan"),
        (["--stage", "shadow", "--map", MAP.replace("cohort=cohort", "cohort=ticket")], "is not a cohort of stage"),
        (["--stage", "shadow", "--map", MAP, "--system", "x"], "No such option: --system"),
        (["--stage", "shadow", "--map", "case_id=nope,outcome=outcome"], "nope"),
        (["--stage", "shadow", "--id-column", "ticket"], "--id-column: only with --map"),
    ],
)
def test_bad_observations_exit_2_and_write_nothing(
    setup: tuple[Path, Path, Path], args: list[str], message: str
) -> None:
    watch, _, table = setup
    before = _tree(watch)
    result = _run("watch", "observe", str(watch), str(table), *args)
    assert result.exit_code == 2, result.output
    assert message in result.output
    assert _tree(watch) == before


def test_another_release_is_refused(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    watch, _, _ = setup
    table = tmp_path / "other.csv"
    table.write_text("case,outcome,system\nT-9,passed,old-release\n", encoding="utf-8")
    result = _run(
        "watch",
        "observe",
        str(watch),
        str(table),
        "--stage",
        "shadow",
        "--map",
        "case_id=case,outcome=outcome,system=system",
    )
    assert result.exit_code == 2, result.output
    assert "field 'system': release 'old-release' is not the watched 'candidate'" in result.stderr
    assert not any((watch / "batches").iterdir())


def test_a_plan_edited_after_registration_exits_2_naming_both_digests(setup: tuple[Path, Path, Path]) -> None:
    watch, plan, table = setup
    plan.write_text(PLAN.replace("min_observations = 50", "min_observations = 5"), encoding="utf-8")
    result = _run("watch", "observe", str(watch), str(table), "--stage", "shadow", "--map", MAP)
    assert result.exit_code == 2, result.output
    assert "differs from the one registered" in result.stderr
    assert result.stderr.count("sha256:") == 2
    assert not any((watch / "batches").iterdir())


def test_hostile_ids_exit_2(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    watch, _, _ = setup
    table = tmp_path / "hostile.csv"
    table.write_text('ticket,outcome\n"T-1\x1b]0;pwned\x07",passed\n', encoding="utf-8")
    result = _run(
        "watch", "observe", str(watch), str(table), "--stage", "shadow", "--map", "case_id=ticket,outcome=outcome"
    )
    assert result.exit_code == 2, result.output
    assert "\x1b" not in result.output
    assert "control character U+001B" in result.stderr


def test_a_label_naming_no_record_exits_2_and_appends_nothing(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    watch, _, table = setup
    assert _run("watch", "observe", str(watch), str(table), "--stage", "shadow", "--map", MAP).exit_code == 0
    labels = tmp_path / "labels.csv"
    labels.write_text("record_id,label,observed_at\nT-404,rework,2026-11-20T10:00:00Z\n", encoding="utf-8")
    result = _run("watch", "label", str(watch), str(labels))
    assert result.exit_code == 2, result.output
    assert "labels.csv:2: field 'record_id': names no record of the log (record_id 'T-404')" in result.stderr
    assert not (watch / "labels.jsonl").exists()


def test_init_refuses_an_existing_directory_and_another_release(
    setup: tuple[Path, Path, Path],
    tmp_path: Path,
    verdict_path: Path,  # noqa: F811
) -> None:
    watch, plan, _ = setup
    result = _run("watch", "init", str(watch), "--plan", str(plan), "--verdict", str(verdict_path))
    assert result.exit_code == 2
    assert "exists; a watch is created once" in result.stderr
    other = tmp_path / "other.toml"
    other.write_text(PLAN.replace('release = "candidate"', 'release = "v2"'), encoding="utf-8")
    result = _run("watch", "init", str(tmp_path / "W2"), "--plan", str(other), "--verdict", str(verdict_path))
    assert result.exit_code == 2
    assert "the plan names release 'v2'" in result.stderr
    assert not (tmp_path / "W2").exists()


def test_an_edited_batch_is_unreadable_evidence_exit_1(setup: tuple[Path, Path, Path], tmp_path: Path) -> None:
    watch, _, table = setup
    assert (
        _run(
            "watch", "observe", str(watch), str(table), "--stage", "shadow", "--map", MAP, "--id-column", "ticket"
        ).exit_code
        == 0
    )
    records = watch / "batches" / "0001" / "records.jsonl"
    records.write_text(records.read_text().replace('"accepted":false', '"accepted":true'))
    labels = tmp_path / "labels.csv"
    labels.write_text("record_id,label,observed_at\nT-1,rework,2026-11-20T10:00:00Z\n", encoding="utf-8")
    result = _run("watch", "label", str(watch), str(labels))
    assert result.exit_code == 1, result.output
    assert "checksum" in result.stderr
