"""Python exceptions of the storage and records layers, as the Kafka error codes clients expect."""

from broker_lite.log import InvalidRecordError, KafkaStorageError, OffsetOutOfRangeError
from broker_lite.protocol import ErrorCode
from broker_lite.records import (
    CorruptRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
    UnsupportedCompressionError,
)

# Most specific first: InvalidRecordError is a CorruptRecordError.
_CODES = [
    (InvalidRecordError, ErrorCode.INVALID_RECORD),
    (InvalidTimestampError, ErrorCode.INVALID_TIMESTAMP),
    (RecordTooLargeError, ErrorCode.MESSAGE_TOO_LARGE),
    (UnsupportedCompressionError, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
    (CorruptRecordError, ErrorCode.CORRUPT_MESSAGE),
    (OffsetOutOfRangeError, ErrorCode.OFFSET_OUT_OF_RANGE),
    (KafkaStorageError, ErrorCode.KAFKA_STORAGE_ERROR),
]


def error_code_for(exc: BaseException) -> ErrorCode:
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    return ErrorCode.UNKNOWN_SERVER_ERROR


def not_served_error(services, topic: str, partition: int) -> ErrorCode:
    """Why this broker has no leader log for a partition: it does not exist, or another broker
    leads it (the client refreshes its metadata and goes there)."""
    partitions = services.cluster.partitions(topic)
    if partitions is None or partition >= len(partitions):
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return ErrorCode.NOT_LEADER_OR_FOLLOWER
