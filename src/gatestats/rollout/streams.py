"""The observations of one stage as the streams a trigger reads, in arrival order, with late labels applied.

Arrival order is the log's: batch by batch, and within a batch the order the records were written
(the order of the table a batch was imported from). Late labels change no record; they are joined
by ``record_id`` when a stream is built:

- ``escaped_defect`` / ``rework`` mark an *accepted* observation (the streams of
  ``escaped_defect_rate`` and ``rework_rate`` hold one value per accepted observation: 1 when it was
  later found wrong / reworked). A label that arrives later turns a 0 into a 1 and never the other
  way, so an e-process for "the rate is above its level" read with the labels known so far is at
  most the one read with every label: reading before all labels arrived never raises a false
  rollback (docs/rollout.md, "Late labels and validity").
- ``accepted`` / ``not_accepted`` settle an observation whose ``accepted`` was still unknown (null)
  when it was imported; an observation still unknown is left out of the accepted-outcome stream and
  counted as pending.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import polars as pl

__all__ = ["StageStreams", "stage_streams"]

FloatArray = npt.NDArray[np.float64]


@dataclass(frozen=True, slots=True, kw_only=True)
class StageStreams:
    """One stage's observations as streams (each in arrival order) and what each value came from.

    ``accepted`` holds 1/0 per observation whose acceptance is known (``accepted_ids`` the record of
    each value); ``escaped`` and ``rework`` one value per accepted observation; ``unauthorized`` the
    count of each observation that recorded one (a null count is not a zero: it is left out);
    ``ended_at`` the time of each observation (its end, else its start);
    ``review_minutes`` per observation that recorded it; ``cost`` and ``cost_accepted`` per
    observation whose acceptance is known (the cost NaN where the record has none: the cost triggers
    refuse a stream with unknown costs; a pending observation is left out of both, as its acceptance
    would otherwise count as a refusal).
    """

    stage: str
    n_observations: int
    pending: int
    record_ids: tuple[str, ...]
    ended_at: tuple[str | None, ...]
    batch: tuple[int, ...]
    accepted: FloatArray
    accepted_ids: tuple[str, ...]
    escaped: FloatArray
    rework: FloatArray
    flagged_ids: tuple[str, ...]
    unauthorized: FloatArray
    unauthorized_ids: tuple[str, ...]
    review_minutes: FloatArray
    review_ids: tuple[str, ...]
    cost: FloatArray
    cost_accepted: FloatArray

    def when(self, record_id: str) -> tuple[int | None, str | None]:
        """The batch and the end time of an observation of the stage.

        Parameters
        ----------
        record_id
            The observation's record id.

        Returns
        -------
        tuple
            Its batch number and ``ended_at`` (``(None, None)`` when it is not in the stage).
        """
        try:
            i = self.record_ids.index(record_id)
        except ValueError:
            return None, None
        return self.batch[i], self.ended_at[i]


def _floats(values: Iterable[object]) -> FloatArray:
    return np.asarray([np.nan if v is None else float(v) for v in values], dtype=np.float64)  # type: ignore[arg-type]


def _settled(accepted: list[bool | None], ids: list[str], labels: Mapping[str, str]) -> list[bool | None]:
    """Acceptance per observation: the record's, or a late label's where the record had none."""
    out: list[bool | None] = []
    for value, rid in zip(accepted, ids, strict=True):
        late = labels.get(rid) if value is None else None
        out.append(value if late not in ("accepted", "not_accepted") else late == "accepted")
    return out


def stage_streams(
    records: pl.DataFrame, stage: str, *, flags: Mapping[str, frozenset[str]], settled: Mapping[str, str]
) -> StageStreams:
    """The streams of one stage.

    Parameters
    ----------
    records
        The log's records (:func:`gatestats.rollout.log.read_log`), with their ``batch`` column, in
        arrival order.
    stage
        The stage's name.
    flags
        Per label word (``escaped_defect``, ``rework``), the record ids it marks.
    settled
        Per record id, the last ``accepted`` / ``not_accepted`` label (for records whose
        ``accepted`` was null).

    Returns
    -------
    StageStreams
        Every stream of the stage.
    """
    own = records.filter(pl.col("stage") == stage)
    ids: list[str] = own.get_column("record_id").to_list()
    accepted = _settled(own.get_column("accepted").to_list(), ids, settled)
    known = [i for i, a in enumerate(accepted) if a is not None]
    taken = [i for i in known if accepted[i]]
    escaped_ids, rework_ids = flags.get("escaped_defect", frozenset()), flags.get("rework", frozenset())
    counts = own.get_column("unauthorized_actions").to_list()
    minutes = own.get_column("review_minutes").to_list()
    costs = _floats(own.get_column("cost_usd").to_list())
    ended = [
        e if e is not None else s
        for e, s in zip(own.get_column("ended_at").to_list(), own.get_column("started_at").to_list(), strict=True)
    ]
    return StageStreams(
        stage=stage,
        n_observations=own.height,
        pending=own.height - len(known),
        record_ids=tuple(ids),
        ended_at=tuple(None if e is None else str(e) for e in ended),
        batch=tuple(own.get_column("batch").to_list()),
        accepted=np.asarray([1.0 if accepted[i] else 0.0 for i in known], dtype=np.float64),
        accepted_ids=tuple(ids[i] for i in known),
        escaped=np.asarray([1.0 if ids[i] in escaped_ids else 0.0 for i in taken], dtype=np.float64),
        rework=np.asarray([1.0 if ids[i] in rework_ids else 0.0 for i in taken], dtype=np.float64),
        flagged_ids=tuple(ids[i] for i in taken),
        unauthorized=_floats(c for c in counts if c is not None),
        unauthorized_ids=tuple(rid for rid, c in zip(ids, counts, strict=True) if c is not None),
        review_minutes=_floats(m for m in minutes if m is not None),
        review_ids=tuple(rid for rid, m in zip(ids, minutes, strict=True) if m is not None),
        cost=costs[known] if known else np.zeros(0, dtype=np.float64),
        cost_accepted=np.asarray([1.0 if accepted[i] else 0.0 for i in known], dtype=np.float64),
    )
