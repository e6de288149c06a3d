"""A scripted stand-in for an agent CLI, for the `gatestats correct` demo (deterministic, standard library).

It reads the feedback package and fixes a defect only when a failing test's diagnostic names it
("defect: NAME") and it knows a fix for NAME. Otherwise it does what an agent without new
information does: it re-submits the same code with a cosmetic change (new bytes, same behaviour),
which the loop stops as a repeated identical failure.

The loop runs it as `python3 reviser.py` with these environment variables (docs/correction.md):
GATESTATS_FEEDBACK (feedback.json), GATESTATS_CANDIDATE (a copy of the failed candidate's files),
GATESTATS_OUTPUT (where the revised candidate goes), GATESTATS_SPEND (where to report spend),
GATESTATS_REQUEST, GATESTATS_CASE_ID, GATESTATS_ROUND.
"""

import json
import os
import re
import shutil
import sys

#: defect name -> (file, text to replace, replacement): what this stand-in "knows how to fix".
KNOWN_FIXES = {
    "apostrophe-split": ("textkit/titles.py", 'r"[A-Za-z]+"', 'r"[A-Za-z]+(?:\'[A-Za-z]+)?"'),
}
#: A simulated price for the stand-in's "tokens": dollars per character of feedback read.
USD_PER_CHAR = 3e-6


def main():
    with open(os.environ["GATESTATS_FEEDBACK"], encoding="utf-8") as handle:
        text = handle.read()
    feedback = json.loads(text)
    named = set()
    for test in feedback["failed_tests"]:
        named.update(re.findall(r"defect: ([a-z0-9-]+)", test["message"] + "\n" + test["detail"]))
    output = os.environ["GATESTATS_OUTPUT"]
    shutil.rmtree(output)
    shutil.copytree(os.environ["GATESTATS_CANDIDATE"], output)
    fixes = [KNOWN_FIXES[name] for name in sorted(named) if name in KNOWN_FIXES]
    for path, old, new in fixes:
        target = os.path.join(output, path)
        with open(target, encoding="utf-8") as handle:
            source = handle.read()
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(source.replace(old, new))
    if not fixes:  # no diagnostic names a defect it knows: a blind retry
        first = sorted(os.path.join(d, f) for d, _, files in os.walk(output) for f in files if f.endswith(".py"))[0]
        with open(first, "a", encoding="utf-8") as handle:
            handle.write(f"# retried in round {os.environ['GATESTATS_ROUND']} without a named defect\n")
    with open(os.environ["GATESTATS_SPEND"], "w", encoding="utf-8") as handle:
        json.dump({"usd": round(len(text) * USD_PER_CHAR, 6)}, handle)
    print(f"reviser: defects named {sorted(named) or 'none'}; fixes applied {len(fixes)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
