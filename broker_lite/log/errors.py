"""Errors of the log, each matching the Kafka error a broker answers with."""

from broker_lite.records import CorruptRecordError


class LogError(Exception):
    """Base class for errors of :mod:`broker_lite.log`."""


class OffsetOutOfRangeError(LogError):
    """A read outside [log start offset, log end offset] (Kafka's OFFSET_OUT_OF_RANGE)."""


class KafkaStorageError(LogError):
    """The disk failed an operation (full, read-only, I/O error); the append was undone
    (Kafka's KAFKA_STORAGE_ERROR)."""


class OutOfOrderSequenceError(LogError):
    """A producer's batch does not continue its sequence: a gap, a batch older than the ones
    remembered, or a new epoch not starting at 0 (Kafka's OUT_OF_ORDER_SEQUENCE_NUMBER)."""


class InvalidProducerEpochError(LogError):
    """A batch from an epoch older than the producer's current one: a fenced, zombie writer
    (Kafka's INVALID_PRODUCER_EPOCH)."""


class TransactionCoordinatorFencedError(LogError):
    """A transaction marker from a coordinator epoch older than one already seen
    (Kafka's TRANSACTION_COORDINATOR_FENCED)."""


class UnsupportedForMessageFormatError(LogError):
    """A batch the log's message format cannot hold: idempotent, transactional or with headers
    for a log kept in message format v0 or v1 (Kafka's UNSUPPORTED_FOR_MESSAGE_FORMAT)."""


class InvalidRecordError(CorruptRecordError):
    """A well-formed batch that breaks a rule of the log (Kafka's INVALID_RECORD)."""
