"""Write the rollout example's observations: simulated shadow and pilot traffic of the release that passed
the sequential example's gate (``examples/sequential``), and the late labels found a week later.

The traffic is *simulated* (seeded, standard library only) and says so in every file's name and in
``examples/rollout/README.md``: no real production data is bundled. Run from the repository root::

    python3 examples/rollout/make_observations.py      # rewrites examples/rollout/data/ (seed 2026)

The story it encodes: in shadow the new agent's outputs would have been accepted as often as the
golden set predicts (about 88%) and nothing unauthorised was attempted; in the pilot the accepted
rate holds, but a week later reviewers find that about 8% of the accepted pilot outcomes were wrong
(escaped defects), four times the plan's tolerated 2%: the plan's trigger must roll the pilot back.
"""

from __future__ import annotations

import csv
import random
from datetime import UTC, datetime, timedelta
from pathlib import Path

SEED = 2026
OUT = Path(__file__).resolve().parent / "data"
START = datetime(2026, 11, 2, 8, 0, tzinfo=UTC)
#: (stage, batch sizes, accepted rate, escaped-defect rate among accepted, cohorts, first day)
STAGES = (
    ("shadow", (80, 120, 100), 0.88, 0.01, ("internal",), 0),
    ("pilot", (60, 90, 110), 0.87, 0.08, ("beta-eu", "beta-us"), 4),
)
FIELDS = (
    "request_id",
    "outcome",
    "accepted",
    "review_minutes",
    "unauthorized_actions",
    "cost_usd",
    "cohort",
    "started_at",
    "ended_at",
)


def _stamp(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


Spec = tuple[float, float, tuple[str, ...]]  # accepted rate, escaped-defect rate, cohorts


def _batch(
    rng: random.Random, stage: str, number: int, size: int, spec: Spec, day: int
) -> tuple[list[dict[str, str]], list[tuple[str, datetime]]]:
    accepted_rate, defect_rate, cohorts = spec
    rows: list[dict[str, str]] = []
    defects: list[tuple[str, datetime]] = []
    begin = START + timedelta(days=day)
    for i in range(size):
        started = begin + timedelta(minutes=rng.randrange(0, 600))
        ended = started + timedelta(seconds=rng.randrange(20, 400))
        passed = rng.random() < accepted_rate + 0.05
        accepted = passed and rng.random() < accepted_rate / (accepted_rate + 0.05)
        request = f"{stage}-{number}-{i:04d}"
        rows.append(
            {
                "request_id": request,
                "outcome": "passed" if passed else "failed",
                "accepted": "true" if accepted else "false",
                "review_minutes": f"{rng.uniform(0.5, 6.0):.2f}" if accepted else f"{rng.uniform(2.0, 12.0):.2f}",
                "unauthorized_actions": "0",
                "cost_usd": f"{rng.uniform(0.02, 0.09) * (2 if not passed else 1):.4f}",
                "cohort": rng.choice(cohorts),
                "started_at": _stamp(started),
                "ended_at": _stamp(ended),
            }
        )
        if accepted and rng.random() < defect_rate:
            defects.append((request, ended + timedelta(days=7)))
    return rows, defects


def main() -> None:
    rng = random.Random(SEED)
    OUT.mkdir(exist_ok=True)
    labels: list[tuple[str, datetime]] = []
    for stage, sizes, accepted_rate, defect_rate, cohorts, first_day in STAGES:
        for number, size in enumerate(sizes, start=1):
            spec = (accepted_rate, defect_rate, cohorts)
            rows, defects = _batch(rng, stage, number, size, spec, first_day + number - 1)
            with (OUT / f"simulated-{stage}-{number}.csv").open("w", newline="", encoding="utf-8") as handle:
                writer = csv.DictWriter(handle, fieldnames=FIELDS, lineterminator="\n")
                writer.writeheader()
                writer.writerows(rows)
            labels.extend(defects)
    with (OUT / "simulated-labels.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle, lineterminator="\n")
        writer.writerow(("record_id", "label", "observed_at", "note"))
        for request, when in sorted(labels, key=lambda item: item[1]):
            writer.writerow((request, "escaped_defect", _stamp(when), "reviewer found the accepted fix wrong"))


if __name__ == "__main__":
    main()
