"""Python exceptions of the storage, records, config and topic administration layers, as the
Kafka error codes clients expect."""

from broker_lite.config.parsers import ConfigError
from broker_lite.log import InvalidRecordError, KafkaStorageError, OffsetOutOfRangeError
from broker_lite.log.errors import (
    InvalidProducerEpochError,
    OutOfOrderSequenceError,
    TransactionCoordinatorFencedError,
    UnsupportedForMessageFormatError,
)
from broker_lite.protocol import ErrorCode
from broker_lite.records import (
    CorruptRecordError,
    InvalidTimestampError,
    RecordTooLargeError,
    UnsupportedCompressionError,
)
from broker_lite.zk.errors import (
    ConflictingTopicSettingsError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidReplicationFactorError,
    InvalidTopicError,
    ProducerIdsUnavailableError,
    ReassignmentInProgressError,
    TopicAlreadyMarkedForDeletionError,
    TopicExistsError,
    UnknownTopicError,
    ZooKeeperUnreachableError,
)

from .services import ClusterView

# Most specific first: InvalidRecordError is a CorruptRecordError.
_CODES = [
    # appending
    (InvalidRecordError, ErrorCode.INVALID_RECORD),
    (InvalidTimestampError, ErrorCode.INVALID_TIMESTAMP),
    (RecordTooLargeError, ErrorCode.MESSAGE_TOO_LARGE),
    (UnsupportedCompressionError, ErrorCode.UNSUPPORTED_COMPRESSION_TYPE),
    (UnsupportedForMessageFormatError, ErrorCode.UNSUPPORTED_FOR_MESSAGE_FORMAT),
    (CorruptRecordError, ErrorCode.CORRUPT_MESSAGE),
    (OutOfOrderSequenceError, ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER),
    (InvalidProducerEpochError, ErrorCode.INVALID_PRODUCER_EPOCH),
    (TransactionCoordinatorFencedError, ErrorCode.TRANSACTION_COORDINATOR_FENCED),
    (OffsetOutOfRangeError, ErrorCode.OFFSET_OUT_OF_RANGE),
    (KafkaStorageError, ErrorCode.KAFKA_STORAGE_ERROR),
    # topic administration and configs
    (InvalidTopicError, ErrorCode.INVALID_TOPIC_EXCEPTION),
    (TopicAlreadyMarkedForDeletionError, ErrorCode.INVALID_TOPIC_EXCEPTION),
    (TopicExistsError, ErrorCode.TOPIC_ALREADY_EXISTS),
    (UnknownTopicError, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION),
    (InvalidPartitionsError, ErrorCode.INVALID_PARTITIONS),
    (InvalidReplicationFactorError, ErrorCode.INVALID_REPLICATION_FACTOR),
    (InvalidReplicaAssignmentError, ErrorCode.INVALID_REPLICA_ASSIGNMENT),
    (ConflictingTopicSettingsError, ErrorCode.INVALID_REQUEST),
    (ReassignmentInProgressError, ErrorCode.REASSIGNMENT_IN_PROGRESS),
    (ConfigError, ErrorCode.INVALID_CONFIG),
    # producer ids
    (ProducerIdsUnavailableError, ErrorCode.COORDINATOR_NOT_AVAILABLE),
    # cut off from ZooKeeper: no controller; the client finds the one elsewhere
    (ZooKeeperUnreachableError, ErrorCode.NOT_CONTROLLER),
]


def error_code_for(exc: BaseException) -> ErrorCode:
    for kind, code in _CODES:
        if isinstance(exc, kind):
            return code
    return ErrorCode.UNKNOWN_SERVER_ERROR


def not_served_error(cluster: ClusterView, topic: str, partition: int) -> ErrorCode:
    """Why this broker has no leader log for a partition: it does not exist, or another broker
    leads it (the client refreshes its metadata and goes there)."""
    count = cluster.partition_count(topic)
    if count is None or partition >= count:
        return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    return ErrorCode.NOT_LEADER_OR_FOLLOWER


class ApiError(Exception):
    """An error code and message for one resource of a request (Kafka's ``ApiError``)."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message
