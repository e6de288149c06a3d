"""Count what the fuzz suite feeds each command: ``python -m tests.fuzz.summary [--slow] [--failures]``.

Prints the Markdown tables of docs/fuzz.md (malformed inputs per target and mutation kind, and
command runs per command); ``--failures`` also lists every failed check.
"""

from __future__ import annotations

import sys
import tempfile
from collections import Counter
from pathlib import Path

from tests.fuzz.corpus import build_corpus
from tests.fuzz.doors import ALL_TARGETS as TARGETS
from tests.fuzz.targets import run_target
from tests.fuzz.test_fuzz import FAST_SEEDS, FULL_SEEDS


def main(argv: list[str]) -> int:
    seeds = list(FAST_SEEDS) + (list(FULL_SEEDS) if "--slow" in argv else [])
    per_kind: Counter[tuple[str, str]] = Counter()
    valid: Counter[str] = Counter()
    per_command: Counter[str] = Counter()
    failures: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        (root / "corpus").mkdir()
        corpus = build_corpus(root / "corpus")
        for target in TARGETS:
            for kind in target.kinds:
                for seed in seeds:
                    outcome = run_target(target, kind, seed, corpus, root / target.name / kind / str(seed))
                    if not outcome.malformed:
                        valid[target.name] += 1
                        continue
                    per_kind[target.name, kind] += 1
                    for command in outcome.commands:
                        per_command[command] += 1
                    failures += outcome.failures
    print(f"seeds per mutation kind: {len(seeds)}\n")
    print("| target (file) | commands | malformed inputs | still valid, not counted |\n|---|---|---|---|")
    for target in TARGETS:
        total = sum(n for (name, _), n in per_kind.items() if name == target.name)
        commands = ", ".join(f"`{c}`" for c in target.commands)
        print(f"| {target.name} (`{target.file}`) | {commands} | {total} | {valid[target.name]} |")
    print(f"| **total** | | **{sum(per_kind.values())}** | {sum(valid.values())} |\n")
    print("| mutation kind | malformed inputs | targets |\n|---|---|---|")
    for kind in sorted({k for _, k in per_kind}):
        names = [name for (name, k) in per_kind if k == kind]
        print(f"| {kind} | {sum(per_kind[name, kind] for name in names)} | {len(names)} |")
    print("\n| command | runs on malformed inputs |\n|---|---|")
    for command, n in sorted(per_command.items()):
        print(f"| `gatestats {command}` | {n} |")
    print(f"\ncommand runs: {sum(per_command.values())}; failed checks: {len(failures)}")
    if "--failures" in argv:
        for failure in failures:
            print(failure[:700])
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
