"""Reading one offset range of one partition into Arrow, on an executor.

The client's partition reader (:mod:`broker_lite.client.consumer.partition_reader`) does the
reading: fetch by fetch, batches checked (``kafka.check.crcs``, on unless set false), cut at the
range, without transaction markers and, under ``read_committed``, without the records of aborted
transactions. Each fetch is decoded whole into one Arrow batch, so memory stays bounded by the
client's ``max.partition.fetch.bytes`` (plus one record batch, when a batch is larger).

Offsets that are not there any more are data loss, reported per ``failOnDataLoss`` as Spark's
Kafka source does: an error, or a warning and the records that remain. Corrupt data is not data
loss: it fails the read whatever ``failOnDataLoss`` says, naming the partition and the offset.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from typing import TYPE_CHECKING

from .planning import OffsetRange

if TYPE_CHECKING:  # the driver imports this module too (for report_data_loss), and reads nothing
    import pyarrow as pa

    from broker_lite.client import KafkaClient, OutOfRange

logger = logging.getLogger(__name__)

DATA_LOSS_HINT = ("Some data may have been lost because they are not available in Kafka any "
                  "more; either the data was aged out by Kafka or the topic may have been "
                  "deleted before all the data in the topic was processed. If you want your "
                  "streaming query to continue on such cases, set the source option "
                  "'failOnDataLoss' to 'false'.")


class DataLossError(RuntimeError):
    """Offsets a query was about to read are gone (retention, deletion, truncation)."""


def arrow_batches(client: KafkaClient, r: OffsetRange, *, include_headers: bool,
                  isolation_level: str, fail_on_data_loss: bool) -> Iterator[pa.RecordBatch]:
    """The records of ``r`` as Arrow batches of Spark's Kafka schema, in offset order."""

    def on_data_loss(gone: OutOfRange) -> int | None:
        report_data_loss(str(gone), fail_on_data_loss)
        return gone.log_start if gone.below_start else None  # what remains, or nothing

    for chunk in client.read_range(r.topic_partition, r.start, r.end,
                                   isolation_level=isolation_level, on_out_of_range=on_data_loss):
        rows = chunk.to_arrow(include_headers=include_headers)
        if rows.num_rows:
            yield rows


def report_data_loss(what: str, fail_on_data_loss: bool) -> None:
    if fail_on_data_loss:
        raise DataLossError(f"{what}. {DATA_LOSS_HINT}")
    logger.warning("%s; continuing because failOnDataLoss is false", what)
