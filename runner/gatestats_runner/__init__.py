"""gatestats_runner: the sandbox controller (standard library only; never imports gatestats).

It owns the execution environment and the run record: cases and their sandbox contracts,
fresh workspaces, isolation and bounds, one trial and one record, immutable and resumable run
sets, and the executors trials run on (threads here, or Ray).

Other programs (``gatestats`` first) import only the modules named in :data:`__all__` below,
the runner's public API written once: ``tests/test_architecture.py`` reads it and fails on an
import of any other runner module from ``gatestats``, and on a docs/architecture.md whose table
of public modules names others. Of these, the modules in :data:`RUN_STARTING` start runs: only
the commands that start runs (``gatestats run``, ``gatestats correct``) import them. The rest is
internal and may change without notice.
"""

__version__ = "0.1.0"

#: The public API: ``__version__``, :data:`RUN_STARTING`, and the public modules (the lowercase
#: names; docs/architecture.md says what each offers).
__all__ = [
    "RUN_STARTING",
    "__version__",
    "baseline",  # re-running a seeded sample of a stored baseline run set (drift); starts runs
    "cases",  # reading cases and writing a new case directory whole (golden-set life)
    "contract",  # the run-record contract v1, its schema and strict JSON decoding
    "correction",  # the correction loop (gatestats correct) and the rounds it journaled; starts runs
    "digests",  # sha256 digests and canonical JSON, one implementation
    "fsops",  # moving a finished directory into place without replacing anything
    "journal",  # the correction loop's journal: reading the rounds it wrote (starts nothing)
    "launch",  # starting run sets: options, executors by name, progress, errors; starts runs
    "runsets",  # run-set files: manifest, policy registration, imported run sets, checksums
]

#: The public modules that start runs (importing one brings in the executors and the sandbox).
RUN_STARTING = ("baseline", "correction", "launch")
