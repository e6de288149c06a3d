"""Issue 30's reproduction through the real CLI: unresolved attempts cannot turn a boundary candidate into a pass.

1,000 cases × 4 trials whose complete outcomes have pass rate exactly 0.60; policy pass rate ≥ 0.60 at
alpha 0.05 with ``max_infra_error_rate = 0.05``. Recording one failed trial in 200 of the 2-of-4 cases
as ``infra_error`` (5.0% of attempts, every case keeps 3 valid trials) used to give ``pass`` (observed
0.6333, p 0.017: the gate dropped them as missing at random). On the bound the row sits between
0.60 (all 200 failed) and 0.65 (all passed) and is ``insufficient_evidence``; resolved by new
attempts (attempt 1 appended, attempt 0 kept) under a policy that states ``infra_retries =
"counted"`` the verdict follows the new outcomes. Under the default (``bounded``) a retried trial
stays unresolved whatever its retry gave: the retry could be a second chance only the failing
trials got (docs/gate.md, "Retries").
"""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from gatestats.cli import app

POLICY = """\
format = "gatestats-policy/1"
name = "issue-30-reproduction"
version = "1"
k = 1
min_cases = 100
min_trials = 3
max_infra_error_rate = 0.05
on_insufficient_evidence = "block"
seed = 0

[baseline]
system = "baseline"

[candidate]
system = "candidate"

[[rules]]
name = "pass rate"
metric = "pass_rate"
threshold = 0.60
alpha = 0.05
"""

MAP = "case_id=case,trial=trial,attempt=attempt,outcome=outcome"


def _table(path: Path, mode: str, seed: int = 30) -> Path:
    """The candidate's table: ``complete``, ``infra`` (200 failures recorded as infra_error), or resolved.

    Resolved: ``fail`` / ``pass`` (every one), ``first-N`` (the first N in case order pass, the rest fail).
    """
    rng = random.Random(seed)
    counts = [4] * 250 + [3] * 250 + [2] * 250 + [1] * 150 + [0] * 100  # 2,400 of 4,000 passed: exactly 0.60
    rng.shuffle(counts)
    rows: list[tuple[str, int, int, str]] = []
    hit = 0
    for i, c in enumerate(counts):
        outcomes = ["passed"] * c + ["failed"] * (4 - c)
        rng.shuffle(outcomes)
        mark = mode != "complete" and c == 2 and hit < 200
        hit += mark
        for t, outcome in enumerate(outcomes):
            if mark and outcome == "failed":
                mark = False
                rows.append((f"case-{i:04d}", t, 0, "infra_error"))
                if mode != "infra":  # the re-run: a new attempt, the infra error kept
                    passes = mode == "pass" or (mode.startswith("first-") and hit <= int(mode[6:]))
                    rows.append((f"case-{i:04d}", t, 1, "passed" if passes else "failed"))
                continue
            rows.append((f"case-{i:04d}", t, 0, outcome))
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["case", "trial", "attempt", "outcome"])
        writer.writerows(rows)
    return path


def _gate(tmp_path: Path, mode: str, retries: str = "bounded") -> tuple[int, dict[str, Any]]:
    runner = CliRunner()
    policy = tmp_path / f"policy-{retries}.toml"
    if not policy.exists():
        policy.write_text(
            POLICY
            if retries == "bounded"
            else POLICY.replace("seed = 0\n", f"seed = 0\ninfra_retries = {retries!r}\n".replace("'", '"'))
        )
    if not (tmp_path / "base").exists():
        base = _table(tmp_path / "base.csv", "complete")
        result = runner.invoke(app, ["import", "table", str(base), "--map", MAP, "--system", "baseline",
                                     "--run-set", str(tmp_path / "base")])  # fmt: skip
        assert result.exit_code == 0, result.stderr
    table = _table(tmp_path / f"{mode}.csv", mode)
    run_set = tmp_path / f"cand-{mode}-{retries}"
    result = runner.invoke(app, ["import", "table", str(table), "--map", MAP, "--system", "candidate",
                                 "--run-set", str(run_set), "--policy", str(policy)])  # fmt: skip
    assert result.exit_code == 0, result.stderr
    result = runner.invoke(app, ["gate", "--policy", str(policy), "--baseline", str(tmp_path / "base"),
                                 "--candidate", str(run_set), "--json"])  # fmt: skip
    return result.exit_code, json.loads(result.stdout)


@pytest.fixture(scope="module")
def verdicts(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[int, dict[str, Any]]]:
    tmp = tmp_path_factory.mktemp("issue30")
    found = {mode: _gate(tmp, mode) for mode in ("complete", "infra", "pass")}
    found["pass-bounded"] = found.pop("pass")
    return found | {mode: _gate(tmp, mode, "counted") for mode in ("fail", "pass", "first-105", "first-104")}


def test_the_complete_outcomes_at_the_threshold_are_insufficient_evidence(verdicts: dict[str, Any]) -> None:
    code, verdict = verdicts["complete"]
    assert (code, verdict["verdict"]) == (12, "insufficient_evidence")
    assert verdict["rules"][0]["observed"] == pytest.approx(0.60)
    assert "unresolved" not in verdict["rules"][0]  # nothing unresolved: the row as before


def test_200_unresolved_attempts_no_longer_pass_and_the_row_shows_both_ends(verdicts: dict[str, Any]) -> None:
    code, verdict = verdicts["infra"]
    assert (code, verdict["verdict"]) == (12, "insufficient_evidence")  # was pass (exit 0), p 0.017
    row = verdict["rules"][0]
    assert row["observed"] == pytest.approx(0.6333, abs=1e-4)  # valid outcomes only: 200 cases at 2/3 instead of 2/4
    assert row["pvalue_pass"] > 0.05
    bound = row["unresolved"]
    assert (bound["candidate"], bound["baseline"]) == (200, 0)
    assert bound["observed_if_failed"] == pytest.approx(0.60)
    assert bound["observed_if_passed"] == pytest.approx(0.65)
    assert "0.6 if all 200 unresolved attempts of the candidate had failed" in row["reason"]
    # the search over the number counted as failures: 95 failures of 200 (105 passes) would still pass
    assert bound["to_decide"] == 95
    assert "it would pass if at most 95 of the candidate's 200 had failed (the rest passed)" in row["reason"]
    assert verdict["infra"]["candidate"]["infra_errors"] == 200  # the data-quality limit still sees them


def test_resolved_as_failures_the_verdict_follows_the_new_outcomes(verdicts: dict[str, Any]) -> None:
    code, verdict = verdicts["fail"]
    assert (code, verdict["verdict"]) == (12, "insufficient_evidence")
    row = verdict["rules"][0]
    assert row["observed"] == pytest.approx(0.60)
    assert "unresolved" not in row  # every final attempt is valid: nothing left to bound


def test_resolved_as_passes_the_verdict_follows_the_new_outcomes(verdicts: dict[str, Any]) -> None:
    code, verdict = verdicts["pass"]
    assert (code, verdict["verdict"]) == (0, "pass")
    row = verdict["rules"][0]
    assert row["observed"] == pytest.approx(0.65)
    assert "unresolved" not in row


def test_the_number_that_would_decide_it_is_the_one_that_does(verdicts: dict[str, Any]) -> None:
    # "it would pass if at most 95 of the 200 had failed": resolved with 105 passes it passes, with 104 not
    assert verdicts["first-105"][1]["verdict"] == "pass"
    assert verdicts["first-104"][1]["verdict"] == "insufficient_evidence"


def test_by_default_a_retried_trial_stays_unresolved_whatever_its_retry_gave(verdicts: dict[str, Any]) -> None:
    # the same 200 retries that pass under "counted" are a second chance the policy did not accept
    code, verdict = verdicts["pass-bounded"]
    assert (code, verdict["verdict"]) == (12, "insufficient_evidence")
    row = verdict["rules"][0]
    assert row["observed"] == pytest.approx(0.65)  # the estimate still reads the retries
    bound = row["unresolved"]
    assert (bound["candidate"], bound["baseline"]) == (200, 0)
    assert bound["observed_if_failed"] == pytest.approx(0.60)
    assert verdict["policy"]["infra_retries"] == "bounded"
    assert verdicts["pass"][1]["policy"]["infra_retries"] == "counted"
