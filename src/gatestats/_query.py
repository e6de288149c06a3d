"""How gatestats runs its small lazy polars queries: as polars runs an eager operation.

A lazy ``collect()`` with the default flags runs every optimizer pass first; on the few hundred rows
of a gate call's case table those passes cost more than the query (about 0.2-0.3 ms a query, issue 28).
polars runs its own eager ``DataFrame`` operations (``join``, ``select``...) with a set of flags it
makes with ``QueryOptFlags._eager()``: the optimizer off but expression simplification, and its eager
executor. That constructor is not public, so it is looked up here, once, and nowhere else: where a
polars release no longer has it, :data:`EAGER` is the default flags, which give the same frames (the
flags choose how a plan runs, never what it computes) at the default cost.
tests/test_query_flags.py fails when the locked polars stops having it, so the loss is seen.
"""

from __future__ import annotations

import polars as pl

__all__ = ["EAGER", "SMALL", "collect_small"]


def _eager_flags() -> pl.QueryOptFlags:
    make = getattr(pl.QueryOptFlags, "_eager", None)
    return make() if callable(make) else pl.QueryOptFlags()


#: The flags of polars' eager operations (the default flags where this polars has none to offer).
EAGER: pl.QueryOptFlags = _eager_flags()


#: A query over at most this many rows runs with :data:`EAGER` in :func:`collect_small`; a larger one keeps
#: the default flags, whose optimizer passes pay on large frames (the bound ``case_summary`` uses too).
SMALL = 65_536


def collect_small(query: pl.LazyFrame, rows: int) -> pl.DataFrame:
    """``query.collect()``, with :data:`EAGER` when it reads at most :data:`SMALL` rows.

    Parameters
    ----------
    query
        The query.
    rows
        How many rows the query reads (the height of the frame it starts from).

    Returns
    -------
    polars.DataFrame
        The query's frame. The flags choose how the plan runs: counts, keys and checks come out the same, but a
        float sum may not (eager flags return one chunk and polars sums floats chunk by chunk, so the last bit can
        move: h48-gate measured it on ``cost._frames.prepare``). Use it only for queries without float sums.
    """
    return query.collect(optimizations=EAGER) if rows <= SMALL else query.collect()
