"""From the Arrow batches Spark hands a write task to the rows the producer writes, per topic.

Spark hands a task its rows in Arrow batches of ``spark.sql.execution.arrow.maxRecordsPerBatch``
rows (10,000 by default), about a megabyte of 100-byte values. Sent one at a time, each would
end in a part-filled record batch and wait for a round trip of its own, so consecutive batches
are first combined (:func:`coalesced`; the writer sends several ``batch.size`` at a time). The
producer takes ``value``, ``key``, ``headers`` and ``partition`` columns; everything else is
dropped here, and the topic comes from the ``topic`` option or column. All of it is Arrow
compute: no Python object per row.
"""

from collections.abc import Iterable, Iterator

import pyarrow as pa
import pyarrow.compute as pc

PRODUCER_COLUMNS = ("key", "value", "headers", "partition")


class NullTopicError(ValueError):
    """A row has no topic: the ``topic`` column is null and no ``topic`` option was given."""


def rows_by_topic(batch: pa.RecordBatch, topic: str | None) -> Iterator[tuple[str, pa.RecordBatch]]:
    """``(topic, rows)`` for every topic ``batch`` writes to, rows in their original order.

    >>> rows = pa.record_batch({"value": [b"a", b"b", b"c"], "topic": ["x", "y", "x"]})
    >>> [(t, r.column("value").to_pylist()) for t, r in rows_by_topic(rows, None)]
    [('x', [b'a', b'c']), ('y', [b'b'])]
    """
    names = {name.lower(): i for i, name in enumerate(batch.schema.names)}
    kept = pa.record_batch([batch.column(names[c]) for c in PRODUCER_COLUMNS if c in names],
                           names=[c for c in PRODUCER_COLUMNS if c in names])
    if topic is not None:
        yield topic, kept
        return
    topics = batch.column(names["topic"])
    if topics.null_count:
        raise NullTopicError(f"{topics.null_count} rows have a null topic and no 'topic' "
                             "option is set")
    for name in pc.unique(topics).to_pylist():
        yield name, kept.filter(pc.equal(topics, name))


def coalesced(batches: Iterable[pa.RecordBatch], limit: int) -> Iterator[pa.RecordBatch]:
    """Consecutive non-empty ``batches`` combined until they hold ``limit`` bytes or more (the
    last may hold less), rows in their original order.

    >>> parts = [pa.record_batch({"value": [str(i) for i in range(n)]}) for n in (2, 0, 3, 1)]
    >>> [b.column("value").to_pylist() for b in coalesced(parts, limit=1 << 20)]
    [['0', '1', '0', '1', '2', '0']]
    >>> [b.num_rows for b in coalesced(parts, limit=1)]
    [2, 3, 1]
    """
    pending: list[pa.RecordBatch] = []
    size = 0
    for batch in batches:
        if batch.num_rows == 0:
            continue
        pending.append(batch)
        size += batch.nbytes
        if size >= limit:
            yield _combined(pending)
            pending, size = [], 0
    if pending:
        yield _combined(pending)


def _combined(batches: list[pa.RecordBatch]) -> pa.RecordBatch:
    if len(batches) == 1:
        return batches[0]
    table = pa.Table.from_batches(batches)
    return pa.RecordBatch.from_arrays([c.combine_chunks() for c in table.columns],
                                      schema=table.schema)
