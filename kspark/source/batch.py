"""``spark.read.format("kpy")``: a fixed offset range per partition, planned on the driver."""

from collections.abc import Iterator

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader

from kspark.options import log_unused_kafka_settings
from kspark.structured.plan import StructuredPlan

from .connect import lease_client, with_offset_retries
from .options import SOURCE_KAFKA_SETTINGS, SourceOptions
from .partition_reader import arrow_batches
from .planning import OffsetRange, plan_ranges
from .positions import OffsetResolutionError, resolve


class KpyBatchReader(DataSourceReader):
    """Resolves the starting and ending positions once, when the read is planned, so every
    Spark task of the query reads a fixed range."""

    def __init__(self, options: SourceOptions, structured: StructuredPlan | None = None):
        self.options = options
        self.structured = structured
        log_unused_kafka_settings(options.client, SOURCE_KAFKA_SETTINGS, "spark.read")
        start, end = with_offset_retries(options, self._positions)
        backwards = sorted(tp for tp in start if start[tp] > end[tp])
        if backwards:
            raise OffsetResolutionError(
                "the starting offset is after the ending offset for " + ", ".join(
                    f"{tp.topic}-{tp.partition} ({start[tp]} > {end[tp]})" for tp in backwards))
        self.ranges = plan_ranges(start, end, min_partitions=options.min_partitions,
                                  max_records_per_partition=options.max_records_per_partition)

    def _positions(self):
        """The starting and ending offset of every partition read, with a client of its own."""
        options = self.options
        with lease_client(options) as client:
            partitions = options.subscription.resolve(client.topics())
            if options.subscription.assigned:
                _check_assigned(client, partitions)
            kwargs = {"isolation_level": options.isolation_level, "group_id": options.group_id}
            start = resolve(client, options.starting_for(False), partitions, **kwargs)
            end = resolve(client, options.ending_for(False), partitions, **kwargs)
        return start, end

    def partitions(self) -> list[OffsetRange]:
        return list(self.ranges)

    def read(self, partition: OffsetRange) -> Iterator[pa.RecordBatch]:
        yield from read_partition(self.options, partition, self.structured)


def read_partition(options: SourceOptions, partition: OffsetRange,
                   structured: StructuredPlan | None = None) -> Iterator[pa.RecordBatch]:
    """The records of one planned range, read on an executor over the connections its Python
    worker keeps from task to task; structured keys and values decoded per ``structured``."""
    if not isinstance(partition, OffsetRange):
        return  # nothing was planned: Spark still runs one task, with a placeholder partition
    with lease_client(options, reading=True) as client:
        batches = arrow_batches(client, partition, include_headers=options.include_headers,
                                isolation_level=options.isolation_level,
                                fail_on_data_loss=options.fail_on_data_loss)
        if structured is None:
            yield from batches
            return
        from kspark.structured.reading import decode_batch

        for rows in batches:
            yield decode_batch(rows, structured, partition.topic, partition.partition)


def _check_assigned(client, partitions) -> None:
    topics = client.topics()
    missing = [tp for tp in partitions if tp.partition >= topics.get(tp.topic, 0)]
    if missing:
        raise OffsetResolutionError("option 'assign': " + ", ".join(
            f"{tp.topic}-{tp.partition}" for tp in missing) + " do not exist")
