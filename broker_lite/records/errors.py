"""Errors raised by the record codecs.

Every failure to understand record bytes is a :class:`RecordsError`; callers that read untrusted
input (a Fetch response, a Produce request, a log segment after a crash) catch that one class.
"""


class RecordsError(ValueError):
    """Base class for every error of :mod:`broker_lite.records`."""


class CorruptRecordError(RecordsError):
    """Record bytes fail validation: bad size, magic, CRC, varint or layout.

    The message names what was wrong and the byte position where it was found, relative to the
    start of the buffer that was being read.
    """


class UnsupportedCompressionError(RecordsError):
    """A compression codec id that is unknown, or not allowed with the batch's magic."""


class RecordTooLargeError(RecordsError):
    """A batch larger than allowed (Kafka's MESSAGE_TOO_LARGE), or decompressed data that would
    exceed the configured limit (a guard against compression bombs)."""


class InvalidTimestampError(RecordsError):
    """A record timestamp outside the range the reader can represent (Kafka's INVALID_TIMESTAMP)."""
