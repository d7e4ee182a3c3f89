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
