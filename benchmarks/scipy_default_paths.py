"""Which scipy functions the default paths of ``compare``, ``rank`` and ``calibrate`` call, and whether
exact formulas could replace them without moving a bit (issue 28, item 2; session 39).

    .venv/bin/python benchmarks/scipy_default_paths.py [--trace] [--agreement]

``--trace`` runs each command on the inputs ``benchmarks/bench_startup.py`` uses, in a fresh
interpreter, with a profile hook that records every call made from gatestats code into scipy
(function, scipy module, gatestats call site, count). ``--agreement`` compares scipy's values of
those functions with exact values, rounded once to the nearest double:

- ``binom.cdf(k, m, 0.5)`` and ``binom.pmf(k, m, 0.5)`` (the exact McNemar and sign tests): the
  exact value is an integer over :math:`2^m` (``math.comb``), rounded once by ``Fraction``;
- ``beta.ppf(q, c, b + 1)`` (the exact odds-ratio interval's lower bound, Clopper-Pearson): the
  double nearest the root, found by bisection over the doubles with the binomial tail evaluated
  exactly in rationals;
- ``norm.sf(x)`` (the kappa p-value) against ``0.5 * math.erfc(x / sqrt(2))`` (the C library's erfc).

It prints how many values are bit-identical and the largest relative difference. Nothing here is
imported by gatestats.

Session 39's ``--demo`` (each command's JSON as it was against the same with an exact binomial patched
in) is gone: since session 40 the commands compute the exact binomial themselves, so both runs were the
same. The JSON fields that moved are listed in docs/paired.md and benchmarks/RESULTS.md (session 40).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from fractions import Fraction
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

_TRACER = r"""
import collections, os, sys
SCIPY = os.sep + "scipy" + os.sep
calls = collections.Counter()
def hook(frame, event, arg):
    if event != "call" or SCIPY not in frame.f_code.co_filename:
        return
    caller = frame.f_back
    if caller is None or SCIPY in caller.f_code.co_filename or "gatestats" not in caller.f_code.co_filename:
        return
    src = os.path.dirname(os.path.dirname(__import__("gatestats").__file__))
    where = os.path.relpath(caller.f_code.co_filename, src)
    name = frame.f_code.co_qualname
    module = frame.f_code.co_filename.split(SCIPY)[-1]
    calls[f"{name} ({module}) from {where}:{caller.f_lineno}"] += 1
sys.setprofile(hook)
sys.argv = ["gatestats", *sys.argv[1:]]
from gatestats.cli import main
try:
    main()
except SystemExit:
    pass
sys.setprofile(None)
import json
print(json.dumps(dict(sorted(calls.items()))), file=sys.stderr)
"""


def trace() -> None:
    """Print the scipy calls of each command's default path (the bench_startup inputs)."""
    from bench_startup import _READING

    env = {**os.environ, "PYTHONPATH": f"{ROOT / 'src'}{os.pathsep}{ROOT / 'runner'}"}
    for name in ("compare", "rank", "calibrate"):
        argv = [sys.executable, "-c", _TRACER, *_READING[name]]
        done = subprocess.run(argv, capture_output=True, text=True, env=env, check=True, cwd=ROOT)
        calls = json.loads(done.stderr.strip().splitlines()[-1])
        print(f"## {name}")
        for call, count in calls.items():
            print(f"- {count} x {call}")


def _exact_binomial(limit: int) -> tuple[int, int, int, float]:
    from scipy import stats

    total = cdf_differ = pmf_differ = 0
    worst = 0.0
    for m in range(1, limit + 1):
        combs = [math.comb(m, i) for i in range(m + 1)]
        ks = list(range(m + 1))
        cdf = stats.binom.cdf(ks, m, 0.5)
        pmf = stats.binom.pmf(ks, m, 0.5)
        running = 0
        for k in ks:
            running += combs[k]
            exact_cdf, exact_pmf = float(Fraction(running, 1 << m)), float(Fraction(combs[k], 1 << m))
            total += 1
            cdf_differ += exact_cdf != cdf[k]
            pmf_differ += exact_pmf != pmf[k]
            worst = max(worst, abs(exact_cdf - cdf[k]) / exact_cdf, abs(exact_pmf - pmf[k]) / exact_pmf)
    return total, cdf_differ, pmf_differ, worst


def _upper_tail(p: Fraction, c: int, m: int) -> Fraction:
    """P(X >= c) for X ~ Binomial(m, p), exactly."""
    q = 1 - p
    return sum((math.comb(m, i) * p**i * q ** (m - i) for i in range(c, m + 1)), Fraction(0))


def _nearest_root(tail: float, c: int, b: int) -> float:
    """The double nearest the Clopper-Pearson lower bound: P(X >= c | m = b + c, p) = tail."""
    import struct

    m, target = b + c, Fraction(tail)

    def bits(x: float) -> int:
        return struct.unpack("<q", struct.pack("<d", x))[0]

    def value(i: int) -> float:
        return struct.unpack("<d", struct.pack("<q", i))[0]

    low, high = bits(0.0), bits(1.0)  # the tail increases with p; low below the root, high above
    while high - low > 1:
        mid = (low + high) // 2
        if _upper_tail(Fraction(value(mid)), c, m) < target:
            low = mid
        else:
            high = mid
    f_low = abs(_upper_tail(Fraction(value(low)), c, m) - target)
    f_high = abs(_upper_tail(Fraction(value(high)), c, m) - target)
    return value(low) if f_low < f_high else value(high)  # nearest in the tail (a proxy for nearest in p)


def agreement() -> None:
    """Print how often exact values equal scipy's to the bit, and the largest relative difference."""
    from scipy import special, stats

    total, cdf_differ, pmf_differ, worst = _exact_binomial(300)
    print(f"binom at p=0.5, every k for m = 1..300 ({total} values): cdf differs from the exact value rounded")
    print(f"  once in {cdf_differ} ({cdf_differ / total:.1%}), pmf in {pmf_differ} ({pmf_differ / total:.1%});")
    print(f"  largest relative difference {worst:.2e}")
    tail = (1 - 0.95) / 2
    pairs = [(c, b) for c in range(1, 41, 3) for b in range(0, 41, 3)]
    differ, worst = 0, 0.0
    for c, b in pairs:
        ours, theirs = _nearest_root(tail, c, b), float(stats.beta.ppf(tail, c, b + 1))
        differ += ours != theirs
        worst = max(worst, abs(ours - theirs) / theirs)
    print(f"beta.ppf({tail!r}, c, b + 1), {len(pairs)} pairs (c, b <= 40): {differ} differ from the nearest")
    print(f"  double to the root ({differ / len(pairs):.1%}); largest relative difference {worst:.2e}")
    grid = [i / 1000 for i in range(1, 37001)]  # norm.sf underflows to 0 past ~38.5
    sf = special.ndtr([-x for x in grid])
    ours = [0.5 * math.erfc(x * math.sqrt(0.5)) for x in grid]  # scipy's ndtr: x * M_SQRT1_2, then erfc
    differ = sum(a != s for a, s in zip(ours, sf, strict=True))
    worst = max(abs(a - s) / s for a, s in zip(ours, sf, strict=True))
    print(f"norm.sf(x), x = 0.001..37 step 0.001 ({len(grid)} values): 0.5*erfc(x*sqrt(1/2)) differs in {differ}")
    print(f"  ({differ / len(grid):.1%}); largest relative difference {worst:.2e}")


def main() -> None:
    """Run the parts asked for (all by default)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trace", action="store_true")
    parser.add_argument("--agreement", action="store_true")
    args = parser.parse_args()
    every = not (args.trace or args.agreement)
    if args.trace or every:
        trace()
    if args.agreement or every:
        agreement()


if __name__ == "__main__":
    main()
