"""A gate scenario for attestation tests: a policy, two run sets as the runner writes them, keys, a CLI helper."""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from click.testing import Result
from typer.testing import CliRunner

from gatestats.attest import generate_key_pair
from gatestats.cli import app
from gatestats.gate import load_policy
from tests.gate.factory import policy_text, rewrite_records, write_run_set

RULES = """
[[rules]]
name = "pass rate non-inferior"
metric = "pass_rate"
test = "paired"
margin = 0.05
"""


def cli(*args: object) -> Result:
    """Run ``gatestats ARGS`` in-process (exceptions are caught so a traceback shows as ``result.exception``)."""
    return CliRunner().invoke(app, [str(a) for a in args])


def shift_records(run_set: Path, start: datetime) -> None:
    """Move every record's start and end to ``start`` plus one second per line (re-checksummed, re-sealed)."""
    rows: list[dict[str, Any]] = []
    for i, line in enumerate((run_set / "records.jsonl").read_text(encoding="utf-8").splitlines()):
        record: dict[str, Any] = json.loads(line)
        record.pop("checksum", None)
        stamp = (start + timedelta(seconds=i)).isoformat(timespec="seconds").replace("+00:00", "Z")
        record["started_at"] = record["ended_at"] = stamp
        rows.append(record)
    rewrite_records(run_set, rows)


def outcomes(n: int, failing: set[int]) -> dict[str, list[str]]:
    """One trial per case ``c000``..; the cases in ``failing`` fail."""
    return {f"c{i:03d}": ["failed" if i in failing else "passed"] for i in range(n)}


@dataclass(frozen=True, slots=True, kw_only=True)
class Scenario:
    """Files of one gate run: policy, baseline and candidate run sets, a key pair, the verdict path."""

    policy: Path
    baseline: Path
    candidate: Path
    private_key: Path
    public_key: Path
    verdict: Path

    @property
    def envelope(self) -> Path:
        """Where ``gate --sign`` writes the verdict's envelope."""
        return self.verdict.with_name(self.verdict.name + ".intoto.jsonl")

    def gate(self, *extra: object) -> Result:
        """``gatestats gate`` on this scenario."""
        return cli("gate", "--policy", self.policy, "--baseline", self.baseline, "--candidate", self.candidate, *extra)


def build(tmp_path: Path, *, sign_registration: bool = False) -> Scenario:
    """A candidate that loses 28 of 100 cases (verdict ``fail``), with checksummed runner records.

    With ``sign_registration`` the candidate's policy is registered (and signed) through
    ``gatestats policy register --sign`` on an empty run set, before its records are written.
    """
    pair = generate_key_pair(tmp_path / "signer")
    policy_path = tmp_path / "policy.toml"
    policy_path.write_text(policy_text(RULES), encoding="utf-8")
    policy = load_policy(policy_path)
    base = write_run_set(tmp_path / "base", system="baseline", outcomes=outcomes(100, {1, 2}))
    cand_outcomes = outcomes(100, set(range(1, 31)))
    if not sign_registration:
        cand = write_run_set(tmp_path / "cand", system="candidate", outcomes=cand_outcomes, policy=policy)
    else:
        cand = write_run_set(tmp_path / "cand", system="candidate", outcomes=cand_outcomes, policy=None)
        records = (cand / "records.jsonl").read_bytes()
        (cand / "records.jsonl").unlink()
        result = cli("policy", "register", policy_path, cand, "--sign", pair.private)
        assert result.exit_code == 0, result.output
        (cand / "records.jsonl").write_bytes(records)
        shift_records(cand, datetime.now(UTC) + timedelta(minutes=1))
    return Scenario(
        policy=policy_path,
        baseline=base,
        candidate=cand,
        private_key=pair.private,
        public_key=pair.public,
        verdict=tmp_path / "out" / "verdict.json",
    )
