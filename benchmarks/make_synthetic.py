"""Write a deterministic synthetic run-record file for the benchmarks.

Layout (defaults): 10 systems x 100,000 cases x 10 trials = 10,000,000 first attempts, plus
one retry record (``attempt = 1``) for each first attempt that ended in ``infra_error`` (about
0.5%, so roughly 10.05 million records in all). Retries never end in ``infra_error``, so every
case keeps 10 valid trials and pass@k / pass^k are defined, with intervals, for k = 1..10.

* Case difficulty is heterogeneous and shared across systems: ``theta_i ~ Beta(0.6, 0.5)``;
  system ``s`` succeeds with ``expit(logit(theta_i) + shift_s)``, ``shift_s`` evenly spaced in
  [-0.5, 0.5].
* About 1% of first attempts end in ``resource_killed`` (``bound`` set: ``wall_clock`` or
  ``memory``), about 0.5% in ``infra_error`` (then retried).
* Columns are contract fields only: the eight required ones plus ``bound``, ``exit_code`` and
  ``machine_seconds``; every other optional field is absent, as the contract allows.
* ``record_id`` is unique; ``run_set_id`` is one per system.

The file is written one system at a time (one polars frame of ~1M rows in memory), in row
groups of ``--row-group-size`` rows, compressed with zstd. The same ``--seed`` gives the same
bytes of data (the Parquet footer records the writer version).

Usage::

    .venv/bin/python benchmarks/make_synthetic.py            # benchmarks/_data/records_10m.parquet
    .venv/bin/python benchmarks/make_synthetic.py --cases 1000 --out /tmp/small.parquet
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import numpy.typing as npt
import polars as pl
import pyarrow.parquet as pq

DATA_DIR = Path(__file__).resolve().parent / "_data"
DEFAULT_OUT = DATA_DIR / "records_10m.parquet"

P_INFRA_ERROR = 0.005
P_RESOURCE_KILLED = 0.01
P_MEMORY_BOUND = 0.2  # share of resource kills hitting the memory bound (else wall clock)
BETA_A, BETA_B = 0.6, 0.5
SHIFT_RANGE = 0.5

#: Column order and dtypes of the file (a subset of the contract; the rest is absent).
FILE_SCHEMA = pl.Schema(
    {
        "schema_version": pl.Int64(),
        "record_id": pl.String(),
        "run_set_id": pl.String(),
        "system": pl.String(),
        "case_id": pl.String(),
        "trial": pl.Int64(),
        "attempt": pl.Int64(),
        "outcome": pl.String(),
        "bound": pl.String(),
        "exit_code": pl.Int64(),
        "machine_seconds": pl.Float64(),
    }
)

_OUTCOMES = ("passed", "failed", "resource_killed", "infra_error")
_PASSED, _FAILED, _KILLED, _INFRA = range(4)
_EXIT_CODES = (0, 1, 137, None)


def system_name(index: int) -> str:
    """Label of the ``index``-th synthetic system."""
    return f"system-{index:02d}"


def case_difficulty(n_cases: int, *, seed: int) -> npt.NDArray[np.float64]:
    """Per-case success probability ``theta_i ~ Beta(a, b)``, shared by all systems."""
    rng = np.random.default_rng([seed, 0])
    theta = rng.beta(BETA_A, BETA_B, size=n_cases)
    return np.clip(theta, 1e-6, 1 - 1e-6)


def _draw_outcomes(
    p_success: npt.NDArray[np.float64], rng: np.random.Generator, *, allow_infra: bool
) -> npt.NDArray[np.int8]:
    u = rng.random(p_success.size)
    success = rng.random(p_success.size) < p_success
    codes = np.where(success, _PASSED, _FAILED).astype(np.int8)
    codes[u < P_RESOURCE_KILLED] = _KILLED
    if allow_infra:
        codes[(u >= P_RESOURCE_KILLED) & (u < P_RESOURCE_KILLED + P_INFRA_ERROR)] = _INFRA
    return codes


def system_frame(
    index: int, theta: npt.NDArray[np.float64], *, n_systems: int, n_trials: int, seed: int
) -> pl.DataFrame:
    """All records of one system: first attempts, then the retries of infrastructure errors."""
    rng = np.random.default_rng([seed, 1 + index])
    shift = -SHIFT_RANGE + 2 * SHIFT_RANGE * index / max(n_systems - 1, 1)
    logit = np.log(theta) - np.log1p(-theta) + shift
    p_case = 1.0 / (1.0 + np.exp(-logit))

    n_cases = theta.size
    case = np.repeat(np.arange(n_cases, dtype=np.int64), n_trials)
    trial = np.tile(np.arange(n_trials, dtype=np.int64), n_cases)
    first = _draw_outcomes(p_case[case], rng, allow_infra=True)
    retry_at = np.flatnonzero(first == _INFRA)
    retry = _draw_outcomes(p_case[case[retry_at]], rng, allow_infra=False)

    all_case = np.concatenate([case, case[retry_at]])
    all_trial = np.concatenate([trial, trial[retry_at]])
    attempt = np.concatenate([np.zeros(case.size, np.int64), np.ones(retry_at.size, np.int64)])
    code = np.concatenate([first, retry])
    killed = code == _KILLED
    memory_bound = rng.random(code.size) < P_MEMORY_BOUND
    seconds = rng.lognormal(mean=3.0, sigma=1.0, size=code.size)

    name = system_name(index)
    frame = pl.DataFrame(
        {
            "__case": all_case,
            "trial": all_trial,
            "attempt": attempt,
            "__code": code,
            "__killed": killed,
            "__memory": memory_bound,
            "machine_seconds": np.round(seconds, 3),
        }
    )
    case_id = pl.format("case-{}", pl.col("__case").cast(pl.String).str.zfill(6))
    return (
        frame.with_columns(case_id=case_id)
        .with_columns(
            schema_version=pl.lit(1, dtype=pl.Int64),
            record_id=pl.format("{}/{}/t{}/a{}", pl.lit(name), pl.col("case_id"), pl.col("trial"), pl.col("attempt")),
            run_set_id=pl.lit(f"runset-{seed}-{name}"),
            system=pl.lit(name),
            outcome=pl.col("__code").replace_strict(list(range(4)), list(_OUTCOMES), return_dtype=pl.String),
            bound=pl.when(pl.col("__killed"))
            .then(pl.when(pl.col("__memory")).then(pl.lit("memory")).otherwise(pl.lit("wall_clock")))
            .otherwise(pl.lit(None, dtype=pl.String)),
            exit_code=pl.col("__code").replace_strict(list(range(4)), list(_EXIT_CODES), return_dtype=pl.Int64),
        )
        .sort("__case", "trial", "attempt")
        .select(pl.col(column).cast(dtype) for column, dtype in FILE_SCHEMA.items())
    )


def write_synthetic(
    out: Path,
    *,
    n_systems: int = 10,
    n_cases: int = 100_000,
    n_trials: int = 10,
    seed: int = 20_240_601,
    row_group_size: int = 250_000,
) -> int:
    """Write the synthetic record file to ``out`` (atomically); return the number of records."""
    if min(n_systems, n_cases, n_trials, row_group_size) < 1:
        msg = (
            "n_systems, n_cases, n_trials and row_group_size must all be >= 1 "
            f"(got {n_systems}, {n_cases}, {n_trials}, {row_group_size})"
        )
        raise ValueError(msg)
    out.parent.mkdir(parents=True, exist_ok=True)
    tmp = out.with_name(f".{out.name}.tmp")
    theta = case_difficulty(n_cases, seed=seed)
    total = 0
    writer: pq.ParquetWriter | None = None
    try:
        for index in range(n_systems):
            table = system_frame(index, theta, n_systems=n_systems, n_trials=n_trials, seed=seed).to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(tmp, table.schema, compression="zstd")
            writer.write_table(table, row_group_size=row_group_size)
            total += table.num_rows
            print(f"  {system_name(index)}: {table.num_rows:,} records", file=sys.stderr)
        if writer is not None:
            writer.close()
            writer = None
        tmp.replace(out)
    finally:
        if writer is not None:
            writer.close()
        tmp.unlink(missing_ok=True)
    return total


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="output Parquet file")
    parser.add_argument("--systems", type=int, default=10)
    parser.add_argument("--cases", type=int, default=100_000)
    parser.add_argument("--trials", type=int, default=10)
    parser.add_argument("--seed", type=int, default=20_240_601)
    parser.add_argument("--row-group-size", type=int, default=250_000)
    args = parser.parse_args(argv)
    start = time.perf_counter()
    total = write_synthetic(
        args.out,
        n_systems=args.systems,
        n_cases=args.cases,
        n_trials=args.trials,
        seed=args.seed,
        row_group_size=args.row_group_size,
    )
    size = args.out.stat().st_size / 2**20
    elapsed = time.perf_counter() - start
    print(f"wrote {total:,} records to {args.out} ({size:.1f} MiB) in {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
