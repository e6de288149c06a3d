"""The sequential controller behind ``gatestats run --until-decided`` (see docs/sequential.md).

- :func:`run_until_decided`: batches of both systems on the same cases, in the order drawn from the
  policy's seed, until the gate's decision is determined or the design's ``max_cases`` is reached.
- :func:`path_document` / :func:`write_path`: ``OUT/sequential.json``, rewritten from the records
  after every batch.
"""

from gatestats.sequential.run.controller import (
    NotSequentialError,
    SequentialRunError,
    SequentialRunOptions,
    SequentialRunResult,
    run_until_decided,
)
from gatestats.sequential.run.path import PATH_FILE, PATH_FORMAT, path_document, write_path

__all__ = [
    "PATH_FILE",
    "PATH_FORMAT",
    "NotSequentialError",
    "SequentialRunError",
    "SequentialRunOptions",
    "SequentialRunResult",
    "path_document",
    "run_until_decided",
    "write_path",
]
