"""``--rerun-unresolved``: exactly the unresolved attempts run again, as new attempts; nothing is rewritten (issue 30).

An unresolved attempt is a trial's final attempt that is an ``infra_error`` whose retries are spent.
The gate bounds it (docs/gate.md); re-running it resolves the bound. These tests run without a
sandbox (``isolation="none"``, a plain directory): the attempts to lose are lost by a stand-in
remote executor, the way the runner turns a lost remote attempt into an ``infra_error``.
"""

from __future__ import annotations

from concurrent.futures import Future
from pathlib import Path
from typing import Any

import pytest

from gatestats_runner.executors import LocalExecutor
from gatestats_runner.runset import OptionError, RunSetOptions, run_run_set
from gatestats_runner.store import RECORDS, RunSetError, read_manifest, read_records, seal_records
from tests.runner.conftest import write_case


class _Losing:
    """A stand-in remote executor that loses the first attempt of the chosen (case, trial)s."""

    name = "losing-remote"
    workers = 2

    def __init__(self, lose: set[tuple[str, int]]) -> None:
        self.inner = LocalExecutor(2)
        self.lose = lose

    def start(self, caps: Any) -> None:
        self.inner.start(caps)

    def submit(self, spec: Any) -> Future[Any]:
        if (spec.case.case_id, spec.trial) in self.lose and spec.attempt == 0:
            lost: Future[Any] = Future()
            lost.set_exception(ConnectionError("worker died"))
            return lost
        return self.inner.submit(spec)

    def shutdown(self, *, cancel: bool = False) -> None:
        self.inner.shutdown(cancel=cancel)


def _setup(tmp_path: Path) -> tuple[Path, RunSetOptions]:
    """Two cases × 2 trials; a trial fails while ``tmp_path/fail-CASE`` exists, else passes (the host's shell)."""
    for case in ("a", "b"):
        write_case(tmp_path / "cases", case, command=["sh", "-c", f"test ! -e {tmp_path}/fail-{case}"])
    (tmp_path / "candidate").mkdir()
    options = RunSetOptions(
        cases=tmp_path / "cases", candidate=tmp_path / "candidate", out=tmp_path / "rs", trials=2,
        infra_retries=0, isolation="none", workspace="dir-copy",
    )  # fmt: skip
    return tmp_path / "rs", options


def _rows(out: Path) -> list[tuple[str, int, int, str]]:
    return sorted((r["case_id"], r["trial"], r["attempt"], r["outcome"]) for r in read_records(out / RECORDS).records)


def test_rerun_unresolved_runs_exactly_the_unresolved_attempts_as_new_attempts(tmp_path: Path) -> None:
    out, options = _setup(tmp_path)
    (tmp_path / "fail-b").touch()
    summary = run_run_set(options, executor=_Losing({("a", 1), ("b", 0)}))  # type: ignore[arg-type]
    assert summary.complete  # retries spent: the infra errors are final, and unresolved
    assert summary.counts == {"passed": 1, "failed": 1, "infra_error": 2}
    before = (out / RECORDS).read_bytes()
    first = _rows(out)

    plain = run_run_set(RunSetOptions(**{**_fields(options), "resume": True}))
    assert plain.attempts_run == 0  # a plain resume leaves them: they are final
    resolved = run_run_set(RunSetOptions(**{**_fields(options), "resume": True, "rerun_unresolved": True}))
    assert resolved.attempts_run == 2
    assert resolved.counts == {"passed": 2, "failed": 2}  # a's trial 1 passed, b's trial 0 failed
    assert resolved.complete
    assert (out / RECORDS).read_bytes().startswith(before)  # appended, never rewritten
    assert _rows(out) == sorted([*first, ("a", 1, 1, "passed"), ("b", 0, 1, "failed")])
    manifest = read_manifest(out)
    assert manifest["records_seal"] == seal_records(out)  # sealed again, as --resume does
    assert manifest["counts"] == {"passed": 2, "failed": 2}
    assert len(manifest["sessions"]) == 3
    again = run_run_set(RunSetOptions(**{**_fields(options), "resume": True, "rerun_unresolved": True}))
    assert again.attempts_run == 0  # nothing unresolved is left


def test_the_gate_reads_the_re_run_run_set_and_counts_the_new_attempts(tmp_path: Path) -> None:
    from gatestats.gate import load_record_set
    from gatestats.vocabulary import final_attempts

    out, options = _setup(tmp_path)
    run_run_set(options, executor=_Losing({("a", 0)}))  # type: ignore[arg-type]
    run_run_set(RunSetOptions(**{**_fields(options), "resume": True, "rerun_unresolved": True}))
    records = load_record_set(out).records  # checksums and the seal verified
    final = final_attempts(records).collect()
    assert sorted(final.get_column("outcome").to_list()) == ["passed"] * 4
    assert records.height == 5


def test_rerun_unresolved_without_resume_is_a_usage_error(tmp_path: Path) -> None:
    _, options = _setup(tmp_path)
    with pytest.raises(OptionError, match=r"rerun_unresolved: .* use it with resume"):
        run_run_set(RunSetOptions(**{**_fields(options), "rerun_unresolved": True}))
    assert not (tmp_path / "rs").exists()


def test_an_imported_run_set_cannot_be_re_run(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gatestats.cli import app

    table = tmp_path / "t.csv"
    table.write_text("case,outcome\nx,infra_error\ny,1\n")
    runner = CliRunner()
    result = runner.invoke(app, ["import", "table", str(table), "--map", "case_id=case,outcome=outcome",
                                 "--system", "s", "--run-set", str(tmp_path / "imported")])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    before = sorted(p.name for p in (tmp_path / "imported").iterdir())
    _, options = _setup(tmp_path)
    with pytest.raises(RunSetError, match=r"field 'origin': the run set was imported from '[^']*t\.csv', not run by the "
                                          r"runner: cannot re-run its unresolved attempts; the gate keeps"):  # fmt: skip
        run_run_set(RunSetOptions(**{**_fields(options), "out": tmp_path / "imported", "resume": True,
                                     "rerun_unresolved": True}))  # fmt: skip
    assert sorted(p.name for p in (tmp_path / "imported").iterdir()) == before  # no lock file, nothing written
    cli = runner.invoke(app, ["run", str(tmp_path / "cases"), "--candidate", str(tmp_path / "candidate"), "--trials",
                              "2", "--out", str(tmp_path / "imported"), "--resume", "--rerun-unresolved",
                              "--isolation", "none"])  # fmt: skip
    assert cli.exit_code == 1
    assert "cannot re-run its unresolved attempts" in cli.stderr
    usage = runner.invoke(app, ["run", str(tmp_path / "cases"), "--candidate", str(tmp_path / "candidate"),
                                "--trials", "2", "--out", str(tmp_path / "new"), "--rerun-unresolved"])  # fmt: skip
    assert usage.exit_code == 2
    assert "--rerun-unresolved: re-runs the unresolved attempts of one run set: use it with --resume" in usage.stderr
    assert not (tmp_path / "new").exists()


def _fields(options: RunSetOptions) -> dict[str, Any]:
    return {name: getattr(options, name) for name in options.__dataclass_fields__}


def test_an_interrupted_re_run_resumes_with_the_rest_and_runs_nothing_twice(tmp_path: Path) -> None:
    out, options = _setup(tmp_path)
    run_run_set(options, executor=_Losing({("a", 0), ("a", 1), ("b", 0)}))  # type: ignore[arg-type]
    seen: list[Any] = []

    def interrupt(p: Any) -> None:
        if p.record is not None:
            seen.append(p.record)
            raise KeyboardInterrupt  # the runner killed after the first re-run attempt's record

    again = RunSetOptions(**{**_fields(options), "resume": True, "rerun_unresolved": True})
    with pytest.raises(KeyboardInterrupt):
        run_run_set(again, executor=LocalExecutor(1), progress=interrupt)
    assert len(seen) == 1
    rest = run_run_set(again)
    assert rest.attempts_run == 2  # the two still unresolved, not the one already re-run
    rows = _rows(out)
    assert [r for r in rows if r[2] == 1] == [("a", 0, 1, "passed"), ("a", 1, 1, "passed"), ("b", 0, 1, "passed")]
    assert rest.complete
    assert read_manifest(out)["records_seal"] == seal_records(out)


def test_edited_records_are_refused_before_anything_is_re_run(tmp_path: Path) -> None:
    out, options = _setup(tmp_path)
    run_run_set(options, executor=_Losing({("a", 0)}))  # type: ignore[arg-type]
    path = out / RECORDS
    edited = path.read_bytes().replace(b'"outcome":"infra_error"', b'"outcome":"passed"', 1)
    assert edited != path.read_bytes()
    path.write_bytes(edited)
    with pytest.raises(RunSetError):
        run_run_set(RunSetOptions(**{**_fields(options), "resume": True, "rerun_unresolved": True}))
    assert path.read_bytes() == edited  # nothing appended


def test_the_cli_says_what_the_gate_makes_of_a_re_run(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from gatestats.cli import app
    from gatestats.cli.run import RERUN_NOTE

    out, _ = _setup(tmp_path)
    args = ["run", str(tmp_path / "cases"), "--candidate", str(tmp_path / "candidate"), "--trials", "2",
            "--out", str(out), "--isolation", "none", "--infra-retries", "0"]  # fmt: skip
    first = CliRunner().invoke(app, args)
    assert first.exit_code == 0, first.stderr
    assert "re-run attempt" not in first.stderr  # said only after a re-run
    result = CliRunner().invoke(app, [*args, "--resume", "--rerun-unresolved"])
    assert result.exit_code == 0, result.stderr
    assert " ".join(RERUN_NOTE.split()) in " ".join(result.stderr.split())
    assert 'infra_retries = "counted"' in RERUN_NOTE
