"""The ceiling of a Python data source on this machine: ``format("kpy-ceiling")`` yields
ready-made Arrow batches of the kpy source's row schema and does nothing else, so reading it
costs only what Spark spends on any Python data source (tasks, Python workers, moving Arrow
batches into the JVM, the rows after them). A source that reads and decodes Kafka records can
at best match it.

Options: ``records`` (rows in all), ``partitions`` (Spark partitions, the rows spread evenly),
``rowsPerBatch`` (rows per yielded batch; default 72,000, what one 8 MiB fetch of the
benchmark's records holds, so that both sources hand Spark batches of one size). Rows look like
the benchmark's records: no key, a 100-byte value, topic ``ceiling``. Each Python worker builds
one batch when it first reads and yields it (or a slice of it) again and again.

>>> reader = CeilingDataSource({"records": "10", "partitions": "3",
...                             "rowsPerBatch": "2"}).reader(None)
>>> [sum(b.num_rows for b in reader.read(p)) for p in reader.partitions()]
[3, 3, 4]
>>> stream = CeilingDataSource({"records": "10", "partitions": "3"}).streamReader(None)
>>> [p.rows for p in stream.partitions(stream.initialOffset(), stream.latestOffset({}, None))]
[3, 3, 4]
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise

import numpy as np
import pyarrow as pa
from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from broker_lite.records.arrow.schema import RECORD_SCHEMA
from kspark.spark_ddl import SPARK_DDL

NAME = "kpy-ceiling"
DEFAULT_ROWS_PER_BATCH = 72_000
VALUE_BYTES = 100


@dataclass(frozen=True)
class RowCount(InputPartition):
    rows: int


class CeilingDataSource(DataSource):
    @classmethod
    def name(cls) -> str:
        return NAME

    def schema(self) -> str:
        return SPARK_DDL

    def reader(self, schema) -> CeilingReader:
        return CeilingReader(*self._shape())

    def streamReader(self, schema) -> CeilingStreamReader:
        return CeilingStreamReader(*self._shape())

    def _shape(self) -> tuple[int, int, int]:
        return (int(self.options["records"]), int(self.options["partitions"]),
                int(self.options.get("rowsPerBatch", DEFAULT_ROWS_PER_BATCH)))


class CeilingReader(DataSourceReader):
    def __init__(self, records: int, partitions: int, rows_per_batch: int):
        self.records, self.count, self.rows_per_batch = records, partitions, rows_per_batch

    def partitions(self) -> list[RowCount]:
        bounds = [self.records * i // self.count for i in range(self.count + 1)]
        return [RowCount(hi - lo) for lo, hi in pairwise(bounds)]

    def read(self, partition: RowCount) -> Iterator[pa.RecordBatch]:
        batch = ready_made_batch(self.rows_per_batch)
        left = partition.rows
        while left > 0:
            rows = min(left, self.rows_per_batch)
            yield batch if rows == batch.num_rows else batch.slice(0, rows)
            left -= rows


class CeilingStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """Every row is there from the start: offsets count rows, from 0 to ``records``."""

    def __init__(self, records: int, partitions: int, rows_per_batch: int):
        self.batches = CeilingReader(records, partitions, rows_per_batch)

    def initialOffset(self) -> dict:
        return {"rows": 0}

    def prepareForTriggerAvailableNow(self) -> None:
        pass  # the latest offset never moves

    def latestOffset(self, start: dict, limit) -> dict:
        return {"rows": self.batches.records}

    def partitions(self, start: dict, end: dict) -> list[RowCount]:
        rows = end["rows"] - start["rows"]
        return CeilingReader(rows, self.batches.count, self.batches.rows_per_batch).partitions() \
            if rows else []

    def read(self, partition: RowCount) -> Iterator[pa.RecordBatch]:
        return self.batches.read(partition)


def values(count: int, seed: int) -> pa.Array:
    """``count`` values of 100 bytes, half random and half repeated, so codecs have work: the
    benchmark's records (:mod:`kspark.bench.source_read`) and this source's rows."""
    raw = np.random.default_rng(seed).integers(0, 256, size=(count, VALUE_BYTES), dtype=np.uint8)
    raw[:, VALUE_BYTES // 2:] = ord("x")
    offsets = np.arange(count + 1, dtype=np.int32) * VALUE_BYTES
    return pa.Array.from_buffers(pa.binary(), count, [None, pa.py_buffer(offsets),
                                                      pa.py_buffer(raw.tobytes())])


@lru_cache(maxsize=4)
def ready_made_batch(rows: int) -> pa.RecordBatch:
    """One batch of ``rows`` rows of the kpy schema, as the benchmark's records decode."""
    timestamps = (np.arange(rows, dtype=np.int64) + 1_700_000_000_000) * 1000
    return pa.record_batch([
        pa.nulls(rows, pa.binary()), values(rows, seed=0),
        pa.array(["ceiling"] * rows, pa.string()), pa.array(np.zeros(rows, np.int32)),
        pa.array(np.arange(rows, dtype=np.int64)),
        pa.array(timestamps, RECORD_SCHEMA.field("timestamp").type),
        pa.array(np.zeros(rows, np.int32))], schema=RECORD_SCHEMA)
