"""Accounting of the query's micro-batches, from Spark's progress reports.

Spark reports a progress (``StreamingQueryProgress``, a dict) after every micro-batch it ran,
and also for idle triggers, at most every ``spark.sql.streaming.noDataProgressEventInterval``,
with the id of the batch it will run next. Only reports with an ``addBatch`` duration are of
batches that ran; a batch id is counted once, whatever report repeats it. Fields used::

    batchId                        the micro-batch
    numInputRows                   records read from the source
    durationMs.triggerExecution    the batch's wall time, planning to commit (ms)
    sink.numOutputRows             records written by the sink (-1 if the sink does not say)
    eventTime.watermark            the watermark the batch ran with (ISO-8601 instant)
    stateOperators[].numRowsDroppedByWatermark
                                   input rows dropped for being older than the watermark

>>> batches = MicroBatches()
>>> [b.id for b in batches.update([
...     {"batchId": 0, "numInputRows": 5, "durationMs": {"addBatch": 9, "triggerExecution": 20},
...      "sink": {"numOutputRows": 2}, "eventTime": {"watermark": "1970-01-01T00:00:00.000Z"},
...      "stateOperators": [{"numRowsDroppedByWatermark": 0}]},
...     {"batchId": 1, "numInputRows": 0, "durationMs": {"triggerExecution": 1}}])]
[0]
>>> batches.records_in, batches.records_out, batches.count
(5, 2, 1)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class Batch:
    """One micro-batch that ran."""

    id: int
    input_rows: int
    output_rows: int
    duration_ms: int
    watermark_ms: int | None
    dropped_by_watermark: int


def batch_of(progress: Mapping) -> Batch | None:
    """The :class:`Batch` a progress report describes (None for an idle trigger)."""
    durations = progress.get("durationMs") or {}
    if "addBatch" not in durations:
        return None
    sink = progress.get("sink") or {}
    watermark = (progress.get("eventTime") or {}).get("watermark")
    return Batch(
        id=int(progress["batchId"]),
        input_rows=int(progress.get("numInputRows") or 0),
        output_rows=max(0, int(sink.get("numOutputRows", 0) or 0)),
        duration_ms=int(durations.get("triggerExecution", durations["addBatch"])),
        watermark_ms=None if watermark is None else round(
            datetime.fromisoformat(watermark).timestamp() * 1000),
        dropped_by_watermark=sum(int(op.get("numRowsDroppedByWatermark", 0) or 0)
                                 for op in progress.get("stateOperators") or ()),
    )


class MicroBatches:
    """The micro-batches seen so far, by id."""

    def __init__(self):
        self.by_id: dict[int, Batch] = {}

    def update(self, progresses: Iterable[Mapping]) -> list[Batch]:
        """Take in progress reports (``query.recentProgress``); returns the batches not seen
        before, in id order."""
        new = {}
        for progress in progresses:
            batch = batch_of(progress)
            if batch is not None and batch.id not in self.by_id:
                new[batch.id] = batch
        self.by_id.update(new)
        return [new[i] for i in sorted(new)]

    @property
    def count(self) -> int:
        return len(self.by_id)

    @property
    def last(self) -> Batch | None:
        return self.by_id[max(self.by_id)] if self.by_id else None

    @property
    def records_in(self) -> int:
        return sum(b.input_rows for b in self.by_id.values())

    @property
    def records_out(self) -> int:
        return sum(b.output_rows for b in self.by_id.values())

    @property
    def dropped_by_watermark(self) -> int:
        return sum(b.dropped_by_watermark for b in self.by_id.values())

    @property
    def watermark_ms(self) -> int | None:
        """The latest watermark a batch ran with."""
        marks = [b.watermark_ms for b in self.by_id.values() if b.watermark_ms is not None]
        return max(marks) if marks else None

    @property
    def durations_ms(self) -> list[int]:
        return [self.by_id[i].duration_ms for i in sorted(self.by_id)]
