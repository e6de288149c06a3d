"""The valid files the fuzz suite starts from: every kind of file a gatestats command reads.

Everything is built from fixed values (no randomness), so a mutation seed always means the same
bytes. :func:`build_corpus` writes them to a directory and runs the gate once to get a verdict.
"""

from __future__ import annotations

import io
import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl
from typer.testing import CliRunner

from gatestats.cli import app
from gatestats.gate import load_policy
from tests.gate.factory import policy_text, write_run_set

__all__ = ["CORRECT_ARGS", "Corpus", "base_records", "build_corpus", "runner_outputs", "table_rows", "tau_items"]

RULES = """
[[rules]]
name = "most pass"
metric = "pass_rate"
threshold = 0.5
"""
N_CASES = 12


def base_records() -> list[dict[str, Any]]:
    """Records of two systems, 12 cases x 2 trials, nested fields filled (no checksum: imported origin)."""
    rows: list[dict[str, Any]] = []
    for system in ("baseline", "candidate"):
        for case in range(N_CASES):
            for trial in range(2):
                passed = (case + trial + (system == "candidate")) % 3 != 0
                rows.append(
                    {
                        "schema_version": 1,
                        "record_id": f"{system}-c{case:02d}-{trial}",
                        "run_set_id": f"rs-{system}",
                        "system": system,
                        "case_id": f"c{case:02d}",
                        "case_version": "v1",
                        "trial": trial,
                        "attempt": 0,
                        "outcome": "passed" if passed else "failed",
                        "model_id": f"model-{system}",
                        "slices": ["core", f"s{case % 3}"],
                        "graders": [{"name": "tests", "kind": "code", "verdict": "passed" if passed else "failed"}],
                        "artifacts": [{"path": "out.txt", "digest": None, "bytes": 10 + case}],
                        "cost_usd": 0.01 * (case + 1),
                        "tokens_input": 100 + case,
                        "machine_seconds": 1.5,
                        "started_at": f"2026-11-01T10:{case:02d}:0{trial}Z",
                        "ended_at": f"2026-11-01T10:{case:02d}:3{trial}Z",
                    }
                )
    return rows


def records_jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r, separators=(", ", ": ")).encode() + b"\n" for r in rows)


def _flat(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{k: v for k, v in r.items() if k not in ("slices", "graders", "artifacts")} for r in rows]


def records_csv(rows: list[dict[str, Any]]) -> bytes:
    flat = _flat(rows)
    columns = list(flat[0])
    out = io.StringIO()
    out.write(",".join(columns) + "\n")
    for r in flat:
        out.write(",".join("" if r[c] is None else str(r[c]) for c in columns) + "\n")
    return out.getvalue().encode()


def table_rows() -> list[dict[str, Any]]:
    """A results table of another harness: one row per trial."""
    return [
        {
            "task": f"t{i // 2}",
            "run": i % 2,
            "ok": ["pass", "fail"][i % 3 == 0],
            "usd": round(0.02 * (i + 1), 4),
            "model": "m-1",
            "at": f"2026-11-01T11:00:{i:02d}Z",
        }
        for i in range(16)
    ]


TABLE_MAP = "case_id=task,trial=run,outcome=ok,cost_usd=usd,model_id=model,started_at=at"


def tau_items() -> list[dict[str, Any]]:
    """A τ-bench result list (its shape: task_id, reward, info, traj, trial)."""
    return [
        {
            "task_id": i // 2,
            "reward": [1.0, 0.0][i % 3 == 0],
            "info": {"user_cost": 0.001 * i, "reward_info": {"actions": [{"name": "x", "kwargs": {"a": [1, 2]}}]}},
            "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}],
            "trial": i % 2,
        }
        for i in range(10)
    ]


def tau2_doc() -> dict[str, Any]:
    return {
        "timestamp": "2026-01-01T00:00:00",
        "info": {"agent_info": {"llm": "m-2"}, "environment_info": {"domain_name": "telecom"}},
        "tasks": [],
        "simulations": [
            {"task_id": f"k{i // 2}", "trial": i % 2, "reward_info": {"reward": float(i % 2)}, "agent_cost": 0.01}
            for i in range(8)
        ],
    }


def judgment_rows() -> list[dict[str, Any]]:
    return [
        {"id": i, "human": ["pass", "fail"][i % 3 == 0], "judge": ["pass", "fail"][i % 4 == 0], "score": i / 10}
        for i in range(20)
    ]


JUDGE_MAP = "item=id,label=human,verdict=judge,score=score"


def _csv(rows: list[dict[str, Any]]) -> bytes:
    columns = list(rows[0])
    lines = [",".join(columns)] + [",".join(str(r[c]) for c in columns) for r in rows]
    return ("\n".join(lines) + "\n").encode()


def _jsonl(rows: list[dict[str, Any]]) -> bytes:
    return b"".join(json.dumps(r).encode() + b"\n" for r in rows)


def _parquet(rows: list[dict[str, Any]]) -> bytes:
    buffer = io.BytesIO()
    pl.DataFrame(rows).write_parquet(buffer)
    return buffer.getvalue()


@dataclass(frozen=True, slots=True, kw_only=True)
class Corpus:
    """Valid base files (bytes) and, on disk, a policy, two run sets and the verdict of a gate run."""

    root: Path
    files: dict[str, bytes]
    policy: Path
    baseline: Path
    candidate: Path
    verdict: Path
    #: A golden set of two approved cases, the run set ``gatestats run`` made of them (one failed record),
    #: its baseline re-run (``run --baseline-sample``) and a finished correction loop (``gatestats correct``).
    golden_run: Path
    stored: Path
    rerun: Path
    correction: Path


GOLDEN_EXAMPLE = Path(__file__).resolve().parents[2] / "data" / "golden_refund"
PROMOTE_ARGS = ["--failure-class", "policy_misread", "--severity", "high", "--split", "development", "--by", "Fuzz"]


def _golden_set(root: Path, files: dict[str, bytes]) -> None:
    """A golden set (``root/golden``) with one proposed case promoted from the refund trace, and its inputs."""
    files["trace.json"] = (GOLDEN_EXAMPLE / "refund-41-days.json").read_bytes()
    files["expect.json"] = (GOLDEN_EXAMPLE / "refund-expect.json").read_bytes()
    args = ["promote", str(GOLDEN_EXAMPLE / "refund-41-days.json"), "--case-id", "refund", *PROMOTE_ARGS]
    args += ["--expect", str(GOLDEN_EXAMPLE / "refund-expect.json"), "--set", str(root / "golden")]
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        msg = f"the fuzz corpus needs a golden set; promote said (exit {result.exit_code}): {result.output}"
        raise RuntimeError(msg)
    files["golden.json"] = (root / "golden" / "golden.json").read_bytes()


def _invoke(args: list[str], what: str) -> None:
    result = CliRunner().invoke(app, args)
    if result.exit_code != 0:
        msg = f"the fuzz corpus needs {what}; {args[0]} said (exit {result.exit_code}): {result.output}"
        raise RuntimeError(msg)


CORRECTION_EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "correction"
#: ``gatestats correct`` on the bundled example, without a sandbox (``--out`` appended).
CORRECT_ARGS = [
    "correct", str(CORRECTION_EXAMPLE / "cases"), "--candidate", str(CORRECTION_EXAMPLE / "candidate"),
    "--reviser", f"{sys.executable} {CORRECTION_EXAMPLE / 'reviser.py'}", "--isolation", "none",
]  # fmt: skip


def runner_outputs(root: Path, files: dict[str, bytes]) -> dict[str, Path]:
    """What the runner and the correction loop write, written by them (never by hand)."""
    golden, candidate = root / "golden-run", root / "runner-candidate"
    for trace, case_id, split, transcript in [
        ("refund-41-days.json", "refund-41", "development", "bad.json"),
        ("refund-35-days.json", "refund-35", "holdout", "good.json"),  # twins: never in one split
    ]:
        args = ["promote", str(GOLDEN_EXAMPLE / trace), "--case-id", case_id, "--set", str(golden), "--split", split]
        args += ["--failure-class", "policy_misread", "--severity", "high", "--by", "Dana"]
        _invoke([*args, "--expect", str(GOLDEN_EXAMPLE / "refund-expect.json")], "a golden set")
        _invoke(["cases", "approve", case_id, "--set", str(golden), "--by", "Dana"], "approved cases")
        (candidate / case_id).mkdir(parents=True)
        shutil.copyfile(GOLDEN_EXAMPLE / "transcripts" / transcript, candidate / case_id / "transcript.json")
    stored, rerun = root / "stored", root / "rerun"
    run = ["run", str(golden / "cases"), "--workers", "1", "--isolation", "none"]
    _invoke([*run, "--candidate", str(candidate), "--trials", "1", "--out", str(stored)], "a run set")
    _invoke([*run, "--baseline-sample", "2", "--against", str(stored), "--seed", "1", "--out", str(rerun)], "a re-run")
    correction = root / "correction"
    _invoke([*CORRECT_ARGS, "--out", str(correction)], "a correction loop")
    for name, folder in (("stored", stored), ("rerun", rerun)):
        for file in ("records.jsonl", "manifest.json"):
            files[f"{name}/{file}"] = (folder / file).read_bytes()
    for file in ("journal.jsonl", "rounds/median/r00/records.jsonl"):
        files[f"correction/{file}"] = (correction / file).read_bytes()
    return {"golden_run": golden, "stored": stored, "rerun": rerun, "correction": correction}


def build_corpus(root: Path) -> Corpus:
    """Write the valid inputs under ``root`` and run the gate once (its verdict is a base file too)."""
    rows = base_records()
    files: dict[str, bytes] = {
        "records.jsonl": records_jsonl(rows),
        "records.csv": records_csv(rows),
        "records.parquet": _parquet(rows),
        "table.csv": _csv(table_rows()),
        "table.jsonl": _jsonl(table_rows()),
        "table.parquet": _parquet(table_rows()),
        "tau.json": json.dumps(tau_items(), indent=1).encode(),
        "tau2.json": json.dumps(tau2_doc(), indent=1).encode(),
        "judgments.csv": _csv(judgment_rows()),
        "judgments.jsonl": _jsonl(judgment_rows()),
        "judgments.parquet": _parquet(judgment_rows()),
        "labels.csv": _csv([{"id": r["id"], "human": r["human"]} for r in judgment_rows()]),
    }
    policy_path = root / "policy.toml"
    policy_path.write_text(policy_text(RULES, min_cases=5), encoding="utf-8")
    files["policy.toml"] = policy_path.read_bytes()
    policy = load_policy(policy_path)
    outcomes = {f"c{i:02d}": ["passed", "passed"] for i in range(30)}
    baseline = write_run_set(root / "base", system="baseline", outcomes=outcomes)
    candidate = write_run_set(root / "cand", system="candidate", outcomes=outcomes, policy=policy)
    files["runset/records.jsonl"] = (candidate / "records.jsonl").read_bytes()
    files["runset/manifest.json"] = (candidate / "manifest.json").read_bytes()
    verdict = root / "verdict.json"
    result = CliRunner().invoke(
        app,
        [
            "gate",
            "--policy",
            str(policy_path),
            "--baseline",
            str(baseline),
            "--candidate",
            str(candidate),
            "-o",
            str(verdict),
        ],
    )
    if not verdict.is_file():
        msg = f"the fuzz corpus needs a verdict; gate said (exit {result.exit_code}): {result.output}"
        raise RuntimeError(msg)
    files["verdict.json"] = verdict.read_bytes()
    _golden_set(root, files)
    doors = runner_outputs(root, files)
    return Corpus(
        root=root, files=files, policy=policy_path, baseline=baseline, candidate=candidate, verdict=verdict, **doors
    )
