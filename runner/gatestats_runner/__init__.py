"""gatestats_runner: the sandbox controller (standard library only; never imports gatestats).

It owns the execution environment and the run record:

- :mod:`gatestats_runner.contract` — the run-record contract v1 (the single source of truth);
- :mod:`gatestats_runner.case` — cases (golden-set entries) and their sandbox contracts;
- :mod:`gatestats_runner.workspace`, :mod:`gatestats_runner.sandbox`,
  :mod:`gatestats_runner.cgroups` — fresh workspaces, isolation and bounds;
- :mod:`gatestats_runner.trial` — one trial, one record;
- :mod:`gatestats_runner.store`, :mod:`gatestats_runner.runset` — immutable, resumable run sets;
- :mod:`gatestats_runner.executors` — where trials run (threads here, or Ray).

Other programs (``gatestats`` first) use only its public modules: :mod:`~gatestats_runner.contract`,
:mod:`~gatestats_runner.digests` (every ``sha256:`` digest), :mod:`~gatestats_runner.runsets`
(run-set files: manifest, policy registration, imported run sets) and
:mod:`~gatestats_runner.launch` (starting runs). The rest is internal (docs/architecture.md).
"""

__version__ = "0.1.0"

__all__ = ["__version__", "contract"]
