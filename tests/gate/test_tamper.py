"""Tampering with a runner run set after the run: every single-line edit, deletion, reordering and
cross-run-set copy is refused (exit 1, no verdict) or blocks — the gate never says ``pass``.

The exhaustive sweep goes through :func:`load_record_set` (the layer every command reads run sets
through); one case of each kind also goes through the ``gatestats gate`` command line.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.errors import RecordFileError
from gatestats.gate import load_policy, load_record_set
from gatestats_runner.store import encode_record, seal_records
from tests.gate.factory import policy_text, write_run_set

RULES = """
[[rules]]
name = "pass rate floor"
metric = "pass_rate"
threshold = 0.3
"""

N_CASES, N_TRIALS = 12, 2


def _outcomes(n: int) -> dict[str, list[str]]:
    return {f"c{i:03d}": ["passed", "failed" if i % 5 == 0 else "passed"] for i in range(n)}


@pytest.fixture(scope="module")
def honest(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path, Path]:
    """Policy, baseline, candidate and a second candidate run set (another run, another run_set_id)."""
    root = tmp_path_factory.mktemp("honest")
    policy_path = root / "policy.toml"
    policy_path.write_text(policy_text(RULES, min_cases=N_CASES, min_trials=N_TRIALS), encoding="utf-8")
    policy = load_policy(policy_path)
    base = write_run_set(root / "base", system="baseline", outcomes=_outcomes(N_CASES), model_id="model-old")
    cand = write_run_set(root / "cand", system="candidate", outcomes=_outcomes(N_CASES), policy=policy)
    other = write_run_set(root / "other", system="candidate", outcomes=_outcomes(N_CASES), policy=policy)
    manifest = json.loads((other / "manifest.json").read_text())
    lines = [json.loads(line) for line in (other / "records.jsonl").read_text().splitlines()]
    for line in lines:
        line["run_set_id"] = "rs-another-run"
        line["outcome"] = "passed"
    (other / "records.jsonl").write_bytes(b"".join(encode_record(r) for r in lines))
    manifest.update(run_set_id="rs-another-run", records_seal=seal_records(other))
    (other / "manifest.json").write_text(json.dumps(manifest))
    return policy_path, base, cand, other


def _copy(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst)
    return dst


def _lines(run_set: Path) -> list[bytes]:
    return (run_set / "records.jsonl").read_bytes().splitlines(keepends=True)


def _edit_outcome(line: bytes, *, rechecksum: bool) -> bytes:
    record = json.loads(line)
    record["outcome"] = "failed" if record["outcome"] == "passed" else "passed"
    if rechecksum:
        return encode_record(record)
    return (json.dumps(record, sort_keys=True, separators=(",", ":")) + "\n").encode()


Tamper = Callable[[list[bytes], int, list[bytes]], list[bytes]]

TAMPERS: dict[str, Tamper] = {
    "edit": lambda ls, i, _: [*ls[:i], _edit_outcome(ls[i], rechecksum=False), *ls[i + 1 :]],
    "edit with checksum recomputed": lambda ls, i, _: [*ls[:i], _edit_outcome(ls[i], rechecksum=True), *ls[i + 1 :]],
    "checksum removed": lambda ls, i, _: [
        *ls[:i],
        (json.dumps({k: v for k, v in json.loads(ls[i]).items() if k != "checksum"}) + "\n").encode(),
        *ls[i + 1 :],
    ],
    "deletion": lambda ls, i, _: [*ls[:i], *ls[i + 1 :]],
    "reordering": lambda ls, i, _: (
        [*ls[:i], ls[(i + 1) % len(ls)], ls[i], *ls[i + 2 :]] if i + 1 < len(ls) else [ls[i], *ls[1:i], ls[0]]
    ),
    "duplicated line": lambda ls, i, _: [*ls[: i + 1], ls[i], *ls[i + 1 :]],
    "copied from another run set (replacing)": lambda ls, i, other: [*ls[:i], other[i], *ls[i + 1 :]],
    "copied from another run set (added)": lambda ls, i, other: [*ls, other[i]],
}


@pytest.mark.parametrize("kind", list(TAMPERS))
def test_every_single_line_tampering_is_refused(
    honest: tuple[Path, Path, Path, Path], tmp_path: Path, kind: str
) -> None:
    _, _, cand, other = honest
    lines, foreign = _lines(cand), _lines(other)
    assert len(lines) == N_CASES * N_TRIALS
    load_record_set(cand)  # the honest run set reads
    work = _copy(cand, tmp_path / "work")
    for i in range(len(lines)):
        tampered = TAMPERS[kind](lines, i, foreign)
        assert tampered != lines
        (work / "records.jsonl").write_bytes(b"".join(tampered))
        with pytest.raises(RecordFileError) as caught:
            load_record_set(work)
        assert str(work / "records.jsonl") in str(caught.value), (kind, i)


@pytest.mark.parametrize("kind", list(TAMPERS))
def test_the_gate_writes_no_verdict_for_a_tampered_run_set(
    honest: tuple[Path, Path, Path, Path], tmp_path: Path, kind: str
) -> None:
    policy, base, cand, other = honest
    work = _copy(cand, tmp_path / "cand")
    lines = _lines(cand)
    tampered = TAMPERS[kind](lines, 3, _lines(other))
    (work / "records.jsonl").write_bytes(b"".join(tampered))
    verdict = tmp_path / "verdict.json"
    result = CliRunner().invoke(
        app,
        ["gate", "--policy", str(policy), "--baseline", str(base), "--candidate", str(work), "-o", str(verdict)],
    )
    assert result.exit_code == 1, result.output
    assert not verdict.exists()
    assert "records.jsonl" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_the_honest_run_sets_pass_so_the_refusals_above_are_the_tampering(
    honest: tuple[Path, Path, Path, Path],
) -> None:
    policy, base, cand, _ = honest
    result = CliRunner().invoke(
        app, ["gate", "--policy", str(policy), "--baseline", str(base), "--candidate", str(cand), "--json"]
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert body["verdict"] == "pass"
    assert body["candidate"]["checksums"] == "verified"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda m: m.update(run_set_id="rs-forged"), "run_set_id"),
        (lambda m: m.update(system="someone-else"), "system"),
        (lambda m: m["cases"][0].update(case_version="v-forged"), "case_version"),
        (
            lambda m: (
                m.update(records_seal={**m["records_seal"], "lines": m["records_seal"]["lines"]}, complete=True)
                or m["records_seal"].update(bytes=m["records_seal"]["bytes"] - 1)
            ),
            "records_seal",
        ),
        (lambda m: m.pop("records_seal"), "records_seal"),
        (lambda m: m.update(complete="yes"), "complete"),
    ],
)
def test_a_manifest_that_no_longer_describes_its_records_is_refused(
    honest: tuple[Path, Path, Path, Path], tmp_path: Path, change: Callable[[dict[str, object]], object], field: str
) -> None:
    work = _copy(honest[2], tmp_path / "work")
    manifest = json.loads((work / "manifest.json").read_text())
    change(manifest)
    (work / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(RecordFileError) as caught:
        load_record_set(work)
    assert any(p.field == field for p in caught.value.problems), str(caught.value)


def test_a_manifest_with_a_duplicate_key_is_refused(honest: tuple[Path, Path, Path, Path], tmp_path: Path) -> None:
    work = _copy(honest[2], tmp_path / "work")
    text = (work / "manifest.json").read_text()
    (work / "manifest.json").write_text(text[:-1] + ', "complete": false}')
    with pytest.raises(RecordFileError, match=r"manifest\.json: field 'complete': duplicate key 'complete'"):
        load_record_set(work)


def test_unchecksummed_record_files_block_unless_the_policy_accepts_them(
    honest: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    policy, base, cand, _ = honest
    plain = tmp_path / "base.jsonl"
    rows = [json.loads(line) for line in (base / "records.jsonl").read_text().splitlines()]
    plain.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "checksum"}) + "\n" for r in rows))

    def gate(policy_path: Path) -> dict[str, object]:
        result = CliRunner().invoke(
            app, ["gate", "--policy", str(policy_path), "--baseline", str(plain), "--candidate", str(cand), "--json"]
        )
        body: dict[str, object] = json.loads(result.stdout)
        assert result.exit_code == {"pass": 0, "insufficient_evidence": 12}[str(body["verdict"])]
        return body

    strict = gate(policy)
    assert strict["verdict"] == "insufficient_evidence"
    assert any("without checksums" in r and "require_checksums = true" in r for r in strict["reasons"])  # type: ignore[attr-defined]
    lenient_policy = tmp_path / "lenient.toml"
    lenient_policy.write_text("require_checksums = false\n" + policy.read_text())
    # the candidate's registration names the strict policy's digest: register the lenient one in a copy
    cand2 = _copy(cand, tmp_path / "cand2")
    manifest = json.loads((cand2 / "manifest.json").read_text())
    manifest["policy_digest"] = load_policy(lenient_policy).digest
    (cand2 / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(
        app,
        ["gate", "--policy", str(lenient_policy), "--baseline", str(plain), "--candidate", str(cand2), "--json"],
    )
    body = json.loads(result.stdout)
    assert body["verdict"] == "pass"
    assert body["baseline"]["checksums"] == "none"
    assert any(c["name"] == "checksums" and "unverified evidence" in c["detail"] for c in body["checks"])


@pytest.mark.parametrize("name", ["manifest.json", "records.jsonl"])
def test_a_fifo_in_place_of_a_run_set_file_is_refused_without_blocking(
    honest: tuple[Path, Path, Path, Path], tmp_path: Path, name: str
) -> None:
    work = _copy(honest[2], tmp_path / "work")
    (work / name).unlink()
    os.mkfifo(work / name)
    with pytest.raises(RecordFileError, match=r"(must be a regular file|not a regular file)"):
        load_record_set(work)
