"""gatestats_runner: the sandbox controller (standard library only; never imports gatestats).

It owns the execution environment and the run record:

- :mod:`gatestats_runner.contract` — the run-record contract v1 (the single source of truth);
- :mod:`gatestats_runner.case` — cases (golden-set entries) and their sandbox contracts;
- :mod:`gatestats_runner.workspace`, :mod:`gatestats_runner.sandbox`,
  :mod:`gatestats_runner.cgroups` — fresh workspaces, isolation and bounds;
- :mod:`gatestats_runner.trial` — one trial, one record;
- :mod:`gatestats_runner.store`, :mod:`gatestats_runner.runset` — immutable, resumable run sets;
- :mod:`gatestats_runner.executors` — where trials run (threads here, or Ray).
"""

__version__ = "0.1.0"

__all__ = ["__version__", "contract"]
