"""Reading one offset range of one partition into Arrow, on an executor.

Fetch responses are decoded as they arrive, one Arrow batch per response, so memory stays
bounded by the client's ``max.partition.fetch.bytes`` (plus one record batch: a broker always
returns at least one whole batch, however large). Offsets that are not there any more are data
loss, reported per ``failOnDataLoss`` as Spark's Kafka source does: an error, or a warning and
the records that remain.

Under ``read_committed`` the broker stops at the last stable offset and lists the aborted
transactions of the fetched range; their records are dropped here, as Kafka consumers do
(:mod:`broker_lite.client.aborted`).
"""

import logging
from collections.abc import Iterator

import pyarrow as pa

from broker_lite.records import iter_batches
from broker_lite.records.arrow import batches_to_arrow
from broker_lite.client import EARLIEST, KafkaClient, KafkaClientError, OffsetOutOfRangeError
from broker_lite.client.aborted import AbortedTransactions

from .planning import OffsetRange

logger = logging.getLogger(__name__)

DATA_LOSS_HINT = ("Some data may have been lost because they are not available in Kafka any "
                  "more; either the data was aged out by Kafka or the topic may have been "
                  "deleted before all the data in the topic was processed. If you want your "
                  "streaming query to continue on such cases, set the source option "
                  "'failOnDataLoss' to 'false'.")


class DataLossError(RuntimeError):
    """Offsets a query was about to read are gone (retention, deletion, truncation)."""


def read_range(client: KafkaClient, r: OffsetRange, *, include_headers: bool,
               isolation_level: str, fail_on_data_loss: bool) -> Iterator[pa.RecordBatch]:
    """The records of ``r`` as Arrow batches of Spark's Kafka schema, in offset order."""
    tp = r.topic_partition
    position = r.start
    aborted = AbortedTransactions()
    while position < r.end:
        fetched = client.fetch({tp: position}, isolation_level=isolation_level)[tp]
        if isinstance(fetched.error, OffsetOutOfRangeError):
            earliest = client.list_offsets({tp: EARLIEST}, isolation_level=isolation_level)[tp]
            if earliest is not None and position < earliest:
                report_data_loss(f"offsets {position} to {min(earliest, r.end) - 1} of {tp.topic}-"
                             f"{tp.partition} are gone (the log now starts at {earliest})",
                             fail_on_data_loss)
                position = earliest
                continue
            report_data_loss(f"{tp.topic}-{tp.partition} ends before offset {position}, which was "
                         f"to be read up to {r.end}", fail_on_data_loss)
            return
        if fetched.error is not None:
            raise fetched.error
        batches = list(iter_batches(fetched.records))
        if not batches:
            stable_end = (fetched.last_stable_offset
                          if isolation_level == "read_committed" and fetched.last_stable_offset >= 0
                          else fetched.high_watermark)
            if position >= stable_end:
                report_data_loss(f"{tp.topic}-{tp.partition} ends at {stable_end}, before offset "
                             f"{r.end} which was to be read", fail_on_data_loss)
                return
            continue  # nothing yet below the end: fetch again
        if batches[-1].next_offset <= position:
            raise KafkaClientError(f"fetching {tp.topic}-{tp.partition} at {position} returned "
                                   "only earlier records")
        aborted.add(fetched.aborted_transactions)
        kept = [b for b in batches if b.next_offset > position and aborted.keep(b)]
        rows = batches_to_arrow(kept, topic=r.topic, partition=r.partition,
                                start_offset=position, end_offset=r.end,
                                include_headers=include_headers)
        if rows.num_rows:
            yield rows
        position = max(position, batches[-1].next_offset)


def report_data_loss(what: str, fail_on_data_loss: bool) -> None:
    if fail_on_data_loss:
        raise DataLossError(f"{what}. {DATA_LOSS_HINT}")
    logger.warning("%s; continuing because failOnDataLoss is false", what)
