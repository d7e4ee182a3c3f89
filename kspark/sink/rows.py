"""From the Arrow batches Spark hands a write task to the rows the producer writes, per topic.

The producer takes ``value``, ``key``, ``headers`` and ``partition`` columns; everything else is
dropped here, and the topic comes from the ``topic`` option or column. All of it is Arrow
compute: no Python object per row.
"""

from collections.abc import Iterator

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
