"""The record-level rules of an append, reported per record (KIP-467), as Kafka's ``LogValidator``
checks them.

Two rules look inside a batch:

- a compacted topic takes only records with a key (INVALID_RECORD);
- with ``message.timestamp.type=CreateTime``, a record's timestamp must lie within
  [now - ``message.timestamp.before.max.ms``, now + ``message.timestamp.after.max.ms``]
  (INVALID_TIMESTAMP; records without a timestamp, magic 0, are not checked); a batch that a
  producer marked LogAppendTime is refused (INVALID_TIMESTAMP) for every record the time
  range does not judge.

A batch breaking either rule is refused whole, and the error names each bad record by its index
in the batch (its ``batch_index``) with Kafka's message; the Produce response carries them as
``record_errors`` (v8+), the client fails those records with the error and the batch's others
with a generic one, and resends nothing. Records are decoded only when a rule needs them: on a
compacted topic, when a time bound is set, or for a batch marked LogAppendTime; otherwise this
costs nothing per record.

>>> from broker_lite.records import RecordBatch, build_batch
>>> batch = RecordBatch(build_batch([(b"k", b"v"), (None, b"v")], timestamp=1))
>>> try:
...     check_records(batch, RecordRules(partition="events-0", compacted=True))
... except InvalidRecordsError as exc:
...     print(exc.record_errors[0])
RecordError(batchIndex=1, message='Compacted topic cannot accept message without key in topic \
partition events-0.')
"""

from dataclasses import dataclass

from broker_lite.common.vocabulary import INT64_MAX, NO_TIMESTAMP
from broker_lite.records import InvalidTimestampError, Record, TimestampType

from .errors import InvalidRecordError

NO_BOUND = INT64_MAX  # message.timestamp.{before,after}.max.ms unset


@dataclass(frozen=True)
class RecordError:
    """One refused record: its index in its batch and why (ProduceResponse's RecordError)."""

    batch_index: int
    message: str

    def __str__(self) -> str:
        return f"RecordError(batchIndex={self.batch_index}, message='{self.message}')"


class RecordValidationError(Exception):
    """A batch refused for some of its records, each named in ``record_errors`` (Kafka's
    ``RecordValidationException``)."""

    def __init__(self, message: str, record_errors: list[RecordError]):
        super().__init__(message)
        self.record_errors = tuple(record_errors)


class InvalidRecordsError(RecordValidationError, InvalidRecordError):
    """Records that break a rule of the log (INVALID_RECORD)."""


class InvalidTimestampsError(RecordValidationError, InvalidTimestampError):
    """Records whose timestamps the topic does not accept (INVALID_TIMESTAMP)."""


@dataclass(frozen=True)
class RecordRules:
    """What an append's records are checked against: the partition (``topic-partition``, for
    the messages), whether the topic is compacted, its timestamp type and bounds, and the
    broker's clock."""

    partition: str
    compacted: bool = False
    timestamp_type: str = "CreateTime"
    timestamp_before_max_ms: int = NO_BOUND
    timestamp_after_max_ms: int = NO_BOUND
    now_ms: int = 0

    @property
    def checks_create_times(self) -> bool:
        return self.timestamp_type == "CreateTime" and \
            (self.timestamp_before_max_ms < NO_BOUND or self.timestamp_after_max_ms < NO_BOUND)


def check_records(batch, rules: RecordRules) -> None:
    """Raise :class:`InvalidRecordsError` or :class:`InvalidTimestampsError` naming every bad
    record of ``batch`` (a v2 batch or a legacy entry), as Kafka's ``processRecordErrors``."""
    marked_log_append = batch.timestamp_type is TimestampType.LOG_APPEND_TIME
    if not (rules.compacted or rules.checks_create_times or marked_log_append):
        return
    errors: list[tuple[RecordError, bool]] = []  # (error, is a timestamp error)
    for index, record in enumerate(batch):
        if rules.compacted and record.key is None:
            errors.append((RecordError(index, "Compacted topic cannot accept message without key "
                                              f"in topic partition {rules.partition}."), False))
            continue
        message = _timestamp_error(record, marked_log_append, rules)
        if message is not None:
            errors.append((RecordError(index, message), True))
    if not errors:
        return
    record_errors = [e for e, _ in errors]
    if any(is_timestamp for _, is_timestamp in errors):
        raise InvalidTimestampsError(
            "One or more records have been rejected due to invalid timestamp", record_errors)
    shown = ", ".join(str(e) for e in record_errors[:3])
    raise InvalidRecordsError(
        f"One or more records have been rejected due to {len(record_errors)} record errors in "
        f"total, and only showing the first three errors at most: [{shown}]", record_errors)


def _timestamp_error(record: Record, marked_log_append: bool, rules: RecordRules) -> str | None:
    """Kafka's ``validateTimestamp``."""
    if rules.timestamp_type == "CreateTime" and record.timestamp != NO_TIMESTAMP:
        earliest = rules.now_ms - rules.timestamp_before_max_ms
        latest = rules.now_ms + rules.timestamp_after_max_ms
        if not earliest <= record.timestamp <= latest:
            return (f"Timestamp {record.timestamp} of message with offset {record.offset} is out "
                    f"of range. The timestamp should be within [{earliest}, {latest}]")
    elif marked_log_append:
        return (f"Invalid timestamp type in message {_describe(record)}. Producer should not set "
                f"timestamp type to LogAppendTime.")
    return None


def _describe(record: Record) -> str:
    """A record as Kafka's ``DefaultRecord.toString`` shows it."""
    return (f"DefaultRecord(offset={record.offset}, timestamp={record.timestamp}, "
            f"key={len(record.key or b'')} bytes, value={len(record.value or b'')} bytes)")
