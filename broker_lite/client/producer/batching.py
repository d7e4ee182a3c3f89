"""Cutting Arrow rows into record batches that stay under a byte limit, without encoding them.

:func:`split_rows` cuts the rows greedily by their records' sizes
(:func:`broker_lite.records.arrow.sizes.record_sizes`, upper bounds computed before encoding),
one batch after another, each holding as many rows as fit: Python work per batch, not per row.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from broker_lite.records.record_batch import HEADER_SIZE

#: Bytes of a record batch outside its records (its header).
BATCH_OVERHEAD = HEADER_SIZE

def split_rows(rows: pa.RecordBatch, sizes: np.ndarray, max_batch_bytes: int
               ) -> list[pa.RecordBatch]:
    """Cut ``rows`` into consecutive slices whose batches (header included, by ``sizes``) stay
    within ``max_batch_bytes``; a row too large on its own gets a slice of its own (the caller
    checks sizes against its limits first).

    >>> from broker_lite.records.arrow.sizes import record_sizes
    >>> rows = pa.record_batch({"value": [b"x" * 10] * 5})
    >>> [b.num_rows for b in split_rows(rows, record_sizes(rows, 0), 61 + 2 * 17)]
    [2, 2, 1]
    """
    n = rows.num_rows
    budget = max_batch_bytes - BATCH_OVERHEAD
    ends = np.cumsum(sizes)
    batches, start, before = [], 0, 0
    while start < n:
        stop = int(np.searchsorted(ends, before + budget, side="right"))
        stop = max(stop, start + 1)
        batches.append(rows.slice(start, stop - start))
        before = int(ends[stop - 1])
        start = stop
    return batches


def as_record_batch(rows: pa.RecordBatch | pa.Table) -> pa.RecordBatch:
    """One contiguous RecordBatch for a Table (chunks combined), a RecordBatch as it is."""
    if isinstance(rows, pa.RecordBatch):
        return rows
    if isinstance(rows, pa.Table):
        return pa.RecordBatch.from_arrays([c.combine_chunks() for c in rows.columns],
                                          schema=rows.schema)
    raise TypeError(f"rows must be a pyarrow RecordBatch or Table, not {type(rows).__name__}")
