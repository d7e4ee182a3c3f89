"""Kafka's message formats as pure bytes: v0/v1 message sets, v2 record batches, codecs.

Nothing here does I/O: buffers in, batches and records out, and the reverse.

Each name below is imported from its module when first asked for
(:mod:`broker_lite.common.lazy_exports`): a process that needs only the errors or the varints (the
wire protocol's codec, a Spark driver) does not load the compression codecs and the CRC-32C with
them.
"""

from broker_lite.common.lazy_exports import lazy_exports

_NAMES = {  # module: the public names it gives
    ".compression": ("CompressionType", "compress", "decompress"),
    ".control": ("ControlRecordType", "EndTransactionMarker", "decode_end_transaction_marker"),
    ".errors": ("CorruptRecordError", "InvalidTimestampError", "RecordsError",
                "RecordTooLargeError", "UnsupportedCompressionError"),
    ".message_set": ("LegacyRecordBatch", "MessageSetBuilder", "build_message_set"),
    ".reader": ("BatchReader", "iter_batches", "iter_records"),
    ".record": ("Header", "Record", "TimestampType"),
    ".record_batch": ("RecordBatch", "RecordBatchBuilder", "assemble_batch", "build_batch",
                      "build_control_batch"),
}
__getattr__, __dir__ = lazy_exports(__name__, _NAMES)

__all__ = [
    "BatchReader", "CompressionType", "ControlRecordType", "CorruptRecordError",
    "EndTransactionMarker", "Header", "InvalidTimestampError", "LegacyRecordBatch",
    "MessageSetBuilder", "Record",
    "RecordBatch", "RecordBatchBuilder", "RecordTooLargeError", "RecordsError", "TimestampType",
    "UnsupportedCompressionError", "assemble_batch", "build_batch", "build_control_batch",
    "build_message_set", "compress", "decode_end_transaction_marker", "decompress",
    "iter_batches", "iter_records",
]
