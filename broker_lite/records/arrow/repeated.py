"""The ``topic`` and ``partition`` columns: one value repeated for every record of a read.

A reader decodes fetch after fetch of the same partition, each into a batch of tens of
thousands of rows, and these two columns are the same in every one of them. Built anew each
time, they cost more than decoding a fetch's keys and values: a fresh buffer of a megabyte or
so is faulted in page by page. So each is built once, at a size rounded up to a power of two,
and every batch gets a zero-copy slice of it (Arrow arrays are immutable, so batches may share
them). A few values are kept, the most recently used, and only up to a bounded size: a read of
many topics or of huge fetches still gets its columns, built for it alone.
"""

import threading

import numpy as np
import pyarrow as pa

#: Values kept per column; a reader goes through its partitions' fetches one after another.
KEPT_VALUES = 16
#: A kept column holds no more bytes than this; larger ones are built for their batch alone.
MAX_KEPT_BYTES = 4 << 20


def _topic_column(topic: str, n: int) -> pa.Array:
    encoded = topic.encode("utf-8")
    offsets = np.arange(n + 1, dtype=np.int32) * len(encoded)
    return pa.Array.from_buffers(pa.string(), n,
                                 [None, pa.py_buffer(offsets), pa.py_buffer(encoded * n)])


def _partition_column(partition: int, n: int) -> pa.Array:
    return pa.array(np.full(n, partition, dtype=np.int32), pa.int32())


class RepeatedColumn:
    """Columns of one value repeated ``n`` times, built by ``build(value, n)`` whose rows take
    ``row_bytes(value)`` bytes each, kept per value and sliced."""

    def __init__(self, build, row_bytes) -> None:
        self._build, self._row_bytes = build, row_bytes
        self._kept: dict = {}  # value -> column; the most recently used last
        self._lock = threading.Lock()

    def __call__(self, value, n: int) -> pa.Array:
        capacity = 1 << max(n - 1, 0).bit_length()
        if capacity * self._row_bytes(value) > MAX_KEPT_BYTES:
            return self._build(value, n)
        with self._lock:
            column = self._kept.pop(value, None)
            if column is None or len(column) < n:
                column = self._build(value, capacity)
            self._kept[value] = column
            if len(self._kept) > KEPT_VALUES:
                del self._kept[next(iter(self._kept))]
        return column.slice(0, n)


#: ``topic_column(topic, n)``: the ``topic`` column of ``n`` records.
topic_column = RepeatedColumn(_topic_column, lambda topic: len(topic.encode("utf-8")) + 4)
#: ``partition_column(partition, n)``: the ``partition`` column of ``n`` records.
partition_column = RepeatedColumn(_partition_column, lambda partition: 4)
