"""Kafka's log: partitions as directories of segments with offset and time indexes."""

from .errors import KafkaStorageError, LogError, OffsetOutOfRangeError
from .log import Log
from .segment import FileRegion, LogSegment
from .validator import InvalidRecordError, ValidatedRecords

__all__ = ["FileRegion", "InvalidRecordError", "KafkaStorageError", "Log", "LogError",
           "LogSegment", "OffsetOutOfRangeError", "ValidatedRecords"]
