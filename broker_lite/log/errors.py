"""Errors of the log, each matching the Kafka error a broker answers with."""


class LogError(Exception):
    """Base class for errors of :mod:`broker_lite.log`."""


class OffsetOutOfRangeError(LogError):
    """A read outside [log start offset, log end offset] (Kafka's OFFSET_OUT_OF_RANGE)."""


class KafkaStorageError(LogError):
    """The disk failed an operation (full, read-only, I/O error); the append was undone
    (Kafka's KAFKA_STORAGE_ERROR)."""
