"""The rollout plan: read strictly, every problem with file, line and key; a digest of what was read."""

from __future__ import annotations

import os
from pathlib import Path
from typing import get_args

import pytest

from gatestats import vocabulary
from gatestats.rollout.plan import KIND_METRICS, PlanError, load_plan, parse_plan
from gatestats_runner import contract

ROOT = Path(__file__).resolve().parents[2]

PLAN = """\
[rollout]
release = "bugfix-agent-2026-11"      # the gate's release
alpha = 0.05

[[rollout.stages]]
name = "shadow"
owner = "ml-platform@example.com"
cohorts = ["internal"]
min_observations = 200
min_days = 2

[[rollout.stages]]
name = "pilot"
owner = "support-leads@example.com"
share = 0.05
min_observations = 500

[[rollout.triggers]]
stage = "*"
metric = "unauthorized_actions"
kind = "none_tolerated"

[[rollout.triggers]]
stage = "*"
metric = "accepted_rate"
kind = "vs_gate"
delta = 0.10
alpha = 0.05

[[rollout.triggers]]
stage = "pilot"
metric = "escaped_defect_rate"
kind = "fixed"
level = 0.02
alpha = 0.01

[[rollout.triggers]]
stage = "pilot"
metric = "cost_per_accepted"
kind = "vs_previous"
ratio = 1.25
cost_cap_usd = 5.0
"""


def _problems(text: str) -> list[str]:
    with pytest.raises(PlanError) as caught:
        parse_plan(text.encode(), path="plan.toml")
    return [str(p) for p in caught.value.problems]


def test_the_documented_plan_reads_into_typed_stages_and_triggers() -> None:
    plan = parse_plan(PLAN.encode(), path="plan.toml")
    assert plan.release == "bugfix-agent-2026-11"
    assert plan.stage_names == ("shadow", "pilot")
    shadow, pilot = plan.stages
    assert (shadow.owner, shadow.cohorts, shadow.share, shadow.min_observations, shadow.min_days) == (
        "ml-platform@example.com",
        ("internal",),
        None,
        200,
        2.0,
    )
    assert (pilot.cohorts, pilot.share, pilot.min_days) == (None, 0.05, 0.0)
    assert [t.name for t in plan.triggers_for("shadow")] == [
        "*.unauthorized_actions.none_tolerated",
        "*.accepted_rate.vs_gate",
    ]
    assert len(plan.triggers_for("pilot")) == 4
    fixed = plan.triggers[2]
    assert (fixed.level, fixed.alpha, fixed.delta, fixed.ratio) == (0.02, 0.01, None, None)
    cost = plan.triggers[3]
    assert (cost.ratio, cost.cost_cap_usd, cost.alpha) == (1.25, 5.0, 0.05)
    assert plan.stage("pilot") is pilot
    with pytest.raises(KeyError, match="no stage 'production'"):
        plan.stage("production")


def test_the_digest_covers_values_not_comments_or_spacing() -> None:
    plan = parse_plan(PLAN.encode())
    spaced = PLAN.replace("alpha = 0.05\n", "alpha   =   0.05   # the default\n", 1)
    assert parse_plan(spaced.encode()).digest == plan.digest
    assert parse_plan(PLAN.replace("level = 0.02", "level = 0.03").encode()).digest != plan.digest
    assert parse_plan(PLAN.replace("alpha = 0.05\n", "", 1).encode()).digest == plan.digest  # the default is 0.05
    from gatestats.io.digest import digest_json

    assert plan.digest == digest_json(plan.to_dict())


def test_load_plan_reads_a_file_and_names_a_missing_one(tmp_path: Path) -> None:
    path = tmp_path / "rollout.toml"
    path.write_text(PLAN, encoding="utf-8")
    assert load_plan(path).path == str(path)
    with pytest.raises(PlanError, match=r"missing.toml: key '\(file\)': no such rollout plan file"):
        load_plan(tmp_path / "missing.toml")


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (("release = ", "releases = "), "plan.toml:2: key 'rollout.releases': unknown key"),
        (('name = "pilot"', 'name = "canary"'), "plan.toml:13: key 'rollout.stages[1].name': expected one of"),
        (('name = "pilot"', 'name = "shadow"'), "plan.toml:13: key 'rollout.stages[1].name': stage 'shadow' out of"),
        (("share = 0.05", "share = 0"), "plan.toml:15: key 'rollout.stages[1].share': expected a number in (0, 1]"),
        (("share = 0.05", "share = 1.5"), "plan.toml:15: key 'rollout.stages[1].share': expected a number in (0, 1]"),
        (("share = 0.05", 'share = 0.05\ncohorts = ["a"]'), "plan.toml:12: key 'rollout.stages[1]': set exactly one"),
        (("share = 0.05\n", ""), "plan.toml:12: key 'rollout.stages[1]': set exactly one"),
        (('cohorts = ["internal"]', 'cohorts = ["a", "a"]'), "key 'rollout.stages[0].cohorts': a cohort is named"),
        (('cohorts = ["internal"]', "cohorts = []"), "key 'rollout.stages[0].cohorts': expected at least one"),
        (("min_observations = 200", "min_observations = 0"), "plan.toml:9: key 'rollout.stages[0].min_observations'"),
        (("min_observations = 200", "min_observations = 2.5"), "expected an integer (got a number 2.5)"),
        (("min_observations = 200\n", ""), "key 'rollout.stages[0].min_observations': required key is missing"),
        (("min_days = 2", "min_days = -1"), "plan.toml:10: key 'rollout.stages[0].min_days': expected a number in"),
        (("min_days = 2", "min_days = nan"), "plan.toml:10: key 'rollout.stages[0].min_days': expected a number in"),
        (("min_days = 2", "min_days = inf"), "plan.toml:10: key 'rollout.stages[0].min_days': expected a number in"),
        (("alpha = 0.05\n", "alpha = 0.9\n"), "plan.toml:3: key 'rollout.alpha': expected a number in [1e-06, 0.5]"),
        (("alpha = 0.01", "alpha = true"), "plan.toml:35: key 'rollout.triggers[2].alpha': expected a number (got a"),
        (('stage = "pilot"', 'stage = "production"'), "plan.toml:31: key 'rollout.triggers[2].stage': no stage"),
        (('metric = "escaped_defect_rate"', 'metric = "vibes"'), "key 'rollout.triggers[2].metric': expected one of"),
        (('kind = "fixed"', 'kind = "fuzzy"'), "plan.toml:33: key 'rollout.triggers[2].kind': expected one of"),
        (("level = 0.02", "level = 1.0"), "plan.toml:34: key 'rollout.triggers[2].level': expected a rate in (0, 1)"),
        (("level = 0.02", "delta = 0.02"), "key 'rollout.triggers[2].delta': a 'fixed' trigger takes no 'delta'"),
        (("level = 0.02\n", ""), "key 'rollout.triggers[2].level': required key is missing"),
        (("delta = 0.10", "delta = 1.5"), "key 'rollout.triggers[1].delta': expected a number in [0, 1]"),
        (("ratio = 1.25", "ratio = 0.5"), "key 'rollout.triggers[3].ratio': expected a number in [1, 100]"),
        (("cost_cap_usd = 5.0\n", ""), "key 'rollout.triggers[3].cost_cap_usd': required key is missing"),
        (('kind = "none_tolerated"', 'kind = "vs_gate"'), "a 'vs_gate' trigger watches one of 'accepted_rate'"),
    ],
)
def test_every_problem_names_file_line_and_key(edit: tuple[str, str], expected: str) -> None:
    text = PLAN.replace(*edit, 1)
    assert text != PLAN
    found = _problems(text)
    assert any(expected in p for p in found), found


def test_the_file_limits_and_syntax_are_errors_not_tracebacks(tmp_path: Path) -> None:
    assert _problems("[rollout\n") == [_problems("[rollout\n")[0]]
    assert "plan.toml:1: key '(syntax)': not TOML" in _problems("[rollout\n")[0]
    deep = "[rollout]\nrelease = " + "[" * 40 + "]" * 40 + "\n"
    assert "nested deeper than 32 levels" in _problems(deep)[0]
    with pytest.raises(PlanError, match="not UTF-8"):
        parse_plan(b"[rollout]\nrelease = '\xff'\n")
    huge = tmp_path / "huge.toml"
    huge.write_bytes(b"#" * ((1 << 20) + 1))
    with pytest.raises(PlanError, match="larger than 1048576 bytes: not a rollout plan file"):
        load_plan(huge)
    fifo = tmp_path / "fifo.toml"
    os.mkfifo(fifo)
    with pytest.raises(PlanError, match=r"fifo.toml: key '\(file\)'"):
        load_plan(fifo)
    assert "required table is missing" in _problems("release = 'x'\n")[-1]


@pytest.mark.parametrize("release", ["a\nb", "a\x00b", "x" * 1025, ""])
def test_hostile_names_are_refused(release: str) -> None:
    text = PLAN.replace('"bugfix-agent-2026-11"', '"' + release.replace("\n", "\\n").replace("\x00", "\\u0000") + '"')
    assert any("key 'rollout.release'" in p for p in _problems(text))


def test_a_huge_integer_and_a_duplicate_trigger_name_are_named() -> None:
    found = _problems(PLAN.replace("min_observations = 200", "min_observations = " + "9" * 40))
    assert any("an integer of 40 digits" in p for p in found)
    twice = PLAN + '\n[[rollout.triggers]]\nstage = "*"\nmetric = "unauthorized_actions"\nkind = "none_tolerated"\n'
    assert any("trigger name '*.unauthorized_actions.none_tolerated' is used twice" in p for p in _problems(twice))


def test_review_minutes_needs_a_cap_from_the_trigger_or_the_plan() -> None:
    trigger = '\n[[rollout.triggers]]\nstage = "pilot"\nmetric = "review_minutes"\nkind = "fixed"\nlevel = 30\n'
    assert any("review_cap_minutes': required key is missing" in p for p in _problems(PLAN + trigger))
    capped = PLAN.replace("alpha = 0.05\n", "alpha = 0.05\nreview_cap_minutes = 120\n", 1) + trigger
    plan = parse_plan(capped.encode())
    assert plan.triggers[-1].review_cap_minutes == 120.0
    too_high = capped.replace("level = 30", "level = 300")
    assert any("level 300 is above the cap 120" in p for p in _problems(too_high))


def test_the_rollout_words_are_the_vocabulary_and_the_contract() -> None:
    assert vocabulary.STAGES is contract.STAGES
    assert get_args(vocabulary.Stage) == vocabulary.STAGES == ("shadow", "pilot", "production")
    assert set(vocabulary.ROLLOUT_METRIC_BETTER) == set(vocabulary.ROLLOUT_METRICS)
    assert set(KIND_METRICS) == set(vocabulary.TRIGGER_KINDS)
    assert all(set(m) <= set(vocabulary.ROLLOUT_METRICS) for m in KIND_METRICS.values())


def test_the_plan_of_docs_rollout_md_reads() -> None:
    text = (ROOT / "docs" / "rollout.md").read_text(encoding="utf-8")
    block = text.split("## The plan", 1)[1].split("```toml\n", 1)[1].split("```", 1)[0]
    plan = parse_plan(block.encode(), path="docs/rollout.md")
    assert plan.stage_names[0] == "shadow"
