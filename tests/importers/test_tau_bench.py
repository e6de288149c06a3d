"""τ-bench and τ²-bench importers, on the bundled real result files."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

from gatestats import analyze
from gatestats.errors import RecordFileError
from gatestats.importers import import_table, import_tau_bench, parse_mapping

# τ-bench README leaderboard, "Airline" table, row "TC (gpt-4o)" (sierra-research/tau-bench,
# commit 59a200c6): pass^1..4. Also in data/tau_bench/reference_tau_bench_readme_passk.csv.
PUBLISHED_PASS_HAT = {1: 0.420, 2: 0.273, 3: 0.220, 4: 0.200}
# Derived with the unbiased estimator in data/tau_bench/PROVENANCE.md: pass@1..4.
PASS_AT = {1: 0.42, 2: 0.5667, 3: 0.66, 4: 0.72}


def test_tau_bench_import_reproduces_published_pass_hat_k(tau_raw: Path) -> None:
    records = import_tau_bench(tau_raw, system="gpt-4o")
    assert records.height == 200
    result = analyze(records, ks=[1, 2, 3, 4]).system("gpt-4o")
    for k, published in PUBLISHED_PASS_HAT.items():
        estimate = result.get("pass_hat_k", k)
        assert estimate.status == "ok"
        assert round(estimate.estimate, 3) == published
        assert estimate.ci_low < estimate.estimate < estimate.ci_high
        assert round(result.get("pass_at_k", k).estimate, 4) == PASS_AT[k]


def test_both_importers_give_the_same_trials_and_numbers(tau_raw: Path, tau_csv: Path) -> None:
    from_json = import_tau_bench(tau_raw, system="gpt-4o")
    from_table = import_table(tau_csv, parse_mapping("case_id=task_id,trial=trial,outcome=success"), system="gpt-4o")
    key = ["case_id", "trial"]
    assert from_json.select(*key, "outcome").sort(key).equals(from_table.select(*key, "outcome").sort(key))
    a = analyze(from_json, ks=[1, 2, 3, 4]).to_frame()
    b = analyze(from_table, ks=[1, 2, 3, 4]).to_frame()
    assert a.equals(b)


def test_user_simulator_cost_is_kept_and_missing_cost_stays_null(tau_raw: Path) -> None:
    records = import_tau_bench(tau_raw)
    cost = records["cost_execution_usd"]
    # PROVENANCE.md: user cost summed over the 195 non-empty records is $0.5031; 5 are empty.
    assert cost.null_count() == 5
    assert cost.sum() == pytest.approx(0.5031, abs=1e-4)
    assert records["cost_model_usd"].null_count() == 200
    assert records["system"].unique().to_list() == ["gpt-4o-airline"]


def test_tau2_import_reads_model_domain_and_agent_cost(tau2_raw: Path) -> None:
    records = import_tau_bench(tau2_raw)
    assert records.height == 20
    assert (records["outcome"] == "passed").sum() == 16  # PROVENANCE.md: 16 of 20 trials succeed
    assert round(records["cost_model_usd"].sum(), 6) == 0.942952  # total agent cost
    assert records["model_id"].unique().to_list() == ["gpt-4.1-2025-04-14"]
    assert records["task_set_version"].unique().to_list() == ["tau2-bench/telecom"]
    result = analyze(records, ks=[1, 2, 4]).systems[0]
    # One task fails all 4 trials, the other 4 pass all 4: pass^k = 0.8 for every k.
    assert [result.get("pass_hat_k", k).estimate for k in (1, 2, 4)] == [0.8, 0.8, 0.8]


def test_success_is_reward_within_tolerance_of_one(tmp_path: Path) -> None:
    path = tmp_path / "r.json"
    items = [
        {"task_id": 0, "reward": 1 - 5e-7, "info": {}, "traj": [], "trial": 0},
        {"task_id": 1, "reward": 1 - 2e-6, "info": {}, "traj": [], "trial": 0},
        {"task_id": 2, "reward": 0.5, "info": {}, "traj": [], "trial": 0},
    ]
    path.write_text(json.dumps(items))
    assert import_tau_bench(path)["outcome"].to_list() == ["passed", "failed", "failed"]


def test_missing_trial_makes_pass_hat_k_insufficient_not_zero(tau_raw: Path, tmp_path: Path) -> None:
    items = json.loads(tau_raw.read_text())
    kept = [item for item in items if not (item["task_id"] == 7 and item["trial"] == 3)]
    path = tmp_path / "thinned.json"
    path.write_text(json.dumps(kept))
    result = analyze(import_tau_bench(path), ks=[3, 4]).systems[0]
    assert result.get("pass_hat_k", 3).status == "ok"  # case 7 has 3 trials: k=3 is defined
    four = result.get("pass_hat_k", 4)
    assert four.status == "insufficient_evidence"
    assert four.estimate is None
    assert four.undefined_cases == ("7",)
    assert four.reason == "pass^4 is undefined for 1 of 50 case(s) with fewer than 4 valid trials (fewest: 3): 7"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            '{"a": 1}',
            "{path}: field 'simulations': expected a τ-bench JSON list or a τ²-bench object with a 'simulations' list",
        ),
        ('"text"', "{path}: field '<json>': expected a JSON list of results (got str)"),
        ("[]", "{path}: field '<json>': the result file holds no trials"),
        (
            '[{"task_id": 0, "trial": 0, "info": {}}]',
            "{path} row 0: field 'reward': item 0: expected a finite number (got null)",
        ),
        (
            '[{"task_id": 0, "reward": 1.0, "info": {}}]',
            "{path} row 0: field 'trial': item 0: required key is missing",
        ),
        (
            '[{"task_id": 0, "reward": 1.0, "trial": 0, "info": {"user_cost": "cheap"}}]',
            "{path} row 0: field 'cost_execution_usd': item 0: user_cost: expected a non-negative number (got string 'cheap')",
        ),
    ],
)
def test_bad_tau_bench_files_name_item_and_field(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RecordFileError) as exc:
        import_tau_bench(path)
    assert str(exc.value) == expected.format(path=path)


def test_torn_json_names_the_line(tmp_path: Path, tau_raw: Path) -> None:
    path = tmp_path / "torn.json"
    path.write_bytes(tau_raw.read_bytes()[:5000])
    with pytest.raises(RecordFileError, match=r"torn\.json:\d+: field '<line>': not valid JSON"):
        import_tau_bench(path)


def test_duplicate_task_trial_is_an_error(tmp_path: Path) -> None:
    path = tmp_path / "dup.json"
    item = {"task_id": 3, "reward": 1.0, "info": {}, "traj": [], "trial": 0}
    path.write_text(json.dumps([item, item]))
    with pytest.raises(
        RecordFileError,
        match=r"row 1: field 'system,case_id,case_version,trial,attempt': duplicate record",
    ):
        import_tau_bench(path)


def test_records_are_deterministic(tau_raw: Path) -> None:
    assert import_tau_bench(tau_raw).equals(import_tau_bench(tau_raw))
    assert pl.Series(import_tau_bench(tau_raw)["record_id"]).n_unique() == 200


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        (
            '[{"task_id": 0, "reward": 1.0, "trial": 0},\n {"task_id": 1, "reward": NaN, "trial": 0}]',
            "{path}:2: field '<line>': not valid JSON: NaN is not a JSON number",
        ),
        (
            '[{"task_id": 0, "reward": 1.0,\n "trial": 9223372036854775808}]',
            "{path}:2: field '<line>': not valid JSON: integer 9223372036854775808 is out of the 64-bit range",
        ),
        (
            '[{"task_id": 0, "reward": 1e999, "trial": 0}]',
            "{path}:1: field '<line>': not valid JSON: number 1e999 overflows a 64-bit float",
        ),
        (
            '[{"task_id": 0, "reward": 1.0, "trial": 0, "trial": 1}]',
            "{path}: field 'trial': duplicate key 'trial' (readers disagree on which value wins)",
        ),
        (
            '[{"task_id": 0,\n "reward": 1.0, "trial": 0, "traj": ' + "[" * 3000 + "]" * 3000 + "}]",
            "{path}:2: field '<line>': nested deeper than 32 levels",
        ),
        (
            '[{"task_id": ["a"], "reward": 1.0, "trial": 0}]',
            "{path} row 0: field 'task_id': item 0: expected a string or an integer (got array ['a'])",
        ),
        (
            '[{"task_id": 1.5, "reward": 1.0, "trial": 0}]',
            "{path} row 0: field 'task_id': item 0: expected a string or an integer (got number 1.5)",
        ),
    ],
)
def test_strict_json_defects_name_line_or_field(tmp_path: Path, content: str, expected: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(RecordFileError) as exc:
        import_tau_bench(path)
    assert str(exc.value) == expected.format(path=path)


def test_bom_and_invalid_utf8_name_their_line(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_bytes(b"\xef\xbb\xbf[]")
    with pytest.raises(RecordFileError, match=r"bad\.json:1: field '<line>': starts with a UTF-8 byte-order mark"):
        import_tau_bench(path)
    path.write_bytes(b'[{"task_id": 0,\n "reward": 1.0, "trial": 0, "x": "\xff"}]')
    with pytest.raises(
        RecordFileError, match=r"bad\.json:2: field '<line>': not valid UTF-8 at byte \d+ \(column \d+\)"
    ):
        import_tau_bench(path)


def test_every_bad_item_is_counted(tmp_path: Path) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([{"task_id": i, "reward": "high", "trial": 0} for i in range(120)]))
    with pytest.raises(RecordFileError) as exc:
        import_tau_bench(path)
    assert (exc.value.total, len(exc.value.problems)) == (120, 50)
