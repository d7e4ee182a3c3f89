"""The one way coordinator records reach the log of an internal topic's partition.

Group metadata, offset commits and their tombstones are all written here: one v2 batch per call,
``CreateTime`` timestamps, the codec of ``offsets.topic.compression.codec``, stamped with the
partition's leader epoch. Commits written inside a transaction (TxnOffsetCommit) pass the
producer's id and epoch and are marked transactional; everything else carries no producer.

The append is local and synchronous (partitions here have no followers to wait for), so when
:func:`append_records` returns the records are in the log, and a commit can be answered.
"""

from collections.abc import Sequence

from broker_lite.log import KafkaStorageError, Log, LogError
from broker_lite.log.producer_state import AppendOrigin
from broker_lite.protocol import ErrorCode
from broker_lite.records import (
    CompressionType,
    RecordBatchBuilder,
    RecordsError,
    RecordTooLargeError,
)


class AppendFailed(Exception):
    """The records were not appended; ``code`` is the error a Produce would have got."""

    def __init__(self, code: ErrorCode, message: str = ""):
        super().__init__(message or code.name)
        self.code = code


def append_records(log: Log | None, leader_epoch: int,
                   records: Sequence[tuple[bytes, bytes | None]], *, timestamp_ms: int,
                   compression: CompressionType = CompressionType.NONE,
                   producer_id: int = -1, producer_epoch: int = -1, base_sequence: int = -1,
                   transactional: bool = False) -> int:
    """Append ``(key, value)`` records (``value`` None: a tombstone) as one batch; the offset of
    its first record. ``log`` None means this broker does not lead the partition."""
    if log is None:
        raise AppendFailed(ErrorCode.NOT_LEADER_OR_FOLLOWER)
    builder = RecordBatchBuilder(compression=compression, producer_id=producer_id,
                                 producer_epoch=producer_epoch, base_sequence=base_sequence,
                                 is_transactional=transactional)
    for key, value in records:
        builder.append(value, key=key, timestamp=timestamp_ms)
    try:
        return log.append(builder.build(), partition_leader_epoch=leader_epoch,
                          origin=AppendOrigin.COORDINATOR).first_offset
    except RecordTooLargeError as exc:
        raise AppendFailed(ErrorCode.MESSAGE_TOO_LARGE, str(exc)) from exc
    except KafkaStorageError as exc:
        raise AppendFailed(ErrorCode.KAFKA_STORAGE_ERROR, str(exc)) from exc
    except (LogError, RecordsError) as exc:
        raise AppendFailed(ErrorCode.UNKNOWN_SERVER_ERROR, str(exc)) from exc
