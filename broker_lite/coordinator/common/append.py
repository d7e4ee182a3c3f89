"""The one way coordinator records reach the log of an internal topic's partition.

Group metadata, offset commits and their tombstones are all written here: one v2 batch per call,
``CreateTime`` timestamps, the codec of ``offsets.topic.compression.codec``, stamped with the
partition's leader epoch. Commits written inside a transaction (TxnOffsetCommit) pass the
producer's id and epoch and are marked transactional; everything else carries no producer.

The append is local and synchronous. ``on_appended`` is told at once, before any wait: the
followers' fetches waiting in the purgatory for new data must wake to copy the batch, or the
wait below would last their ``replica.fetch.wait.max.ms``. With ``replication_timeout_ms`` it
then waits, as Kafka writes these records with acks=all, until every replica in the partition's
ISR has them (the high watermark passed them; see
:class:`broker_lite.replication.partition.Partition`), so a commit answered survives the loss of
the leader; a wait that fails is the error Kafka's coordinators map (REQUEST_TIMED_OUT,
NOT_ENOUGH_REPLICAS_AFTER_APPEND, or NOT_LEADER_OR_FOLLOWER when leadership moved meanwhile).
When :func:`append_records` returns, the records are committed, and a commit can be answered.
"""

from collections.abc import Callable, Sequence

from broker_lite.log import KafkaStorageError, Log, LogError
from broker_lite.log.producer_state import AppendOrigin
from broker_lite.protocol import ErrorCode
from broker_lite.records import (
    CompressionType,
    RecordBatchBuilder,
    RecordsError,
    RecordTooLargeError,
)

#: How the transaction and share coordinators answer a failed append to their topic (Kafka's
#: ``appendTransactionToLog`` and coordinator runtime): the client retries or finds its
#: coordinator again.
COORDINATOR_APPEND_ERRORS = {
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.REQUEST_TIMED_OUT: ErrorCode.COORDINATOR_NOT_AVAILABLE,
    ErrorCode.NOT_LEADER_OR_FOLLOWER: ErrorCode.NOT_COORDINATOR,
    ErrorCode.KAFKA_STORAGE_ERROR: ErrorCode.NOT_COORDINATOR,
    ErrorCode.MESSAGE_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
    ErrorCode.RECORD_LIST_TOO_LARGE: ErrorCode.UNKNOWN_SERVER_ERROR,
}


class AppendFailed(Exception):
    """The records were not appended; ``code`` is the error a Produce would have got."""

    def __init__(self, code: ErrorCode, message: str = ""):
        super().__init__(message or code.name)
        self.code = code


def append_records(log: Log | None, leader_epoch: int,
                   records: Sequence[tuple[bytes, bytes | None]], *, timestamp_ms: int,
                   compression: CompressionType = CompressionType.NONE,
                   producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                   transactional: bool = False, replication_timeout_ms: int | None = None,
                   on_appended: Callable[[], None] = lambda: None) -> int:
    """Append ``(key, value)`` records (``value`` None: a tombstone) as one batch; the offset of
    its first record. ``log`` None means this broker does not lead the partition; with
    ``replication_timeout_ms``, wait that long at most for the ISR to have the batch, after
    telling ``on_appended``."""
    if log is None:
        raise AppendFailed(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    builder = RecordBatchBuilder(compression=compression, producer_id=producer_id,
                                 producer_epoch=producer_epoch, base_sequence=base_sequence,
                                 is_transactional=transactional)
    for key, value in records:
        builder.append(value, key=key, timestamp=timestamp_ms)
    try:
        written = log.append(builder.build(), partition_leader_epoch=leader_epoch,
                             origin=AppendOrigin.COORDINATOR)
    except RecordTooLargeError as exc:
        raise AppendFailed(ErrorCode.MESSAGE_TOO_LARGE, str(exc)) from exc
    except KafkaStorageError as exc:
        raise AppendFailed(ErrorCode.KAFKA_STORAGE_ERROR, str(exc)) from exc
    except (LogError, RecordsError) as exc:
        raise AppendFailed(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)) from exc
    on_appended()
    keeper = log.high_watermark_keeper
    if replication_timeout_ms is not None and keeper is not None:
        error = keeper.wait_for_replication(written.last_offset + 1,
                                            replication_timeout_ms / 1000)
        if error != ErrorCode.NONE:
            raise AppendFailed(error, f"the batch at offset {written.first_offset} was not "
                                      f"replicated to the ISR: {error.name}")
    return written.first_offset
