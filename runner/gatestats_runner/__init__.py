"""gatestats_runner: the sandbox controller (standard library only; never imports gatestats).

Holds the run-record contract v1 (:mod:`gatestats_runner.contract`), the single source of truth
that the statistics core also reads.
"""

__all__ = ["contract"]
