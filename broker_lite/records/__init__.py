"""Kafka's message formats as pure bytes: v0/v1 message sets, v2 record batches, codecs.

Nothing here does I/O: buffers in, batches and records out, and the reverse.
"""

from .compression import CompressionType, compress, decompress
from .control import ControlRecordType, EndTransactionMarker, decode_end_transaction_marker
from .errors import (
    CorruptRecordError,
    InvalidTimestampError,
    RecordsError,
    RecordTooLargeError,
    UnsupportedCompressionError,
)
from .message_set import LegacyRecordBatch, MessageSetBuilder, build_message_set
from .reader import BatchReader, iter_batches, iter_records
from .record import Header, Record, TimestampType
from .record_batch import (
    RecordBatch,
    RecordBatchBuilder,
    assemble_batch,
    build_batch,
    build_control_batch,
)

__all__ = [
    "BatchReader", "CompressionType", "ControlRecordType", "CorruptRecordError",
    "EndTransactionMarker", "Header", "InvalidTimestampError", "LegacyRecordBatch",
    "MessageSetBuilder", "Record",
    "RecordBatch", "RecordBatchBuilder", "RecordTooLargeError", "RecordsError", "TimestampType",
    "UnsupportedCompressionError", "assemble_batch", "build_batch", "build_control_batch",
    "build_message_set", "compress", "decode_end_transaction_marker", "decompress",
    "iter_batches", "iter_records",
]
