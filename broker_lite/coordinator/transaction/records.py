"""The records of ``__transaction_state``: Kafka's key and value schemas, as data.

One record per change of a transactional id's metadata; the key is the transactional id, so
compaction keeps the latest state of each. Key and value both start with an int16 version::

    TransactionLogKey    v0  transactionalId: string
    TransactionLogValue  v0  producerId: int64, producerEpoch: int16,
                             transactionTimeoutMs: int32, transactionStatus: int8,
                             transactionPartitions: [topic: string, partitionIds: [int32]]
                                                    (nullable),
                             transactionLastUpdateTimestampMs: int64,
                             transactionStartTimestampMs: int64
                         v1  flexible; tagged: 0 previousProducerId, 1 nextProducerId,
                             2 clientTransactionVersion (transaction version 2, KIP-890)

``transactionStatus`` is the state's id (:class:`.state.TxnState`). A null value (tombstone)
removes the transactional id. Value version 0 is written, as a Kafka 3.9 broker without
transaction version 2 writes it; both versions are read.

>>> key = transaction_log_key("tx")
>>> key.hex()
'000000027478'
>>> parse_transaction_log_key(key)
'tx'
"""

from dataclasses import dataclass

from broker_lite.common.vocabulary import NO_PRODUCER_ID, TopicPartition
from broker_lite.protocol.schema import INT8, INT16, INT32, INT64, STRING, A, F, Message

from ..common.record_codec import data_schema, decode_versioned, encode_versioned

TRANSACTION_LOG_KEY = data_schema("TransactionLogKey", "0", "none", [
    F("TransactionalId", STRING, "0"),
])

TRANSACTION_LOG_VALUE = data_schema("TransactionLogValue", "0-1", "1+", [
    F("ProducerId", INT64, "0+"),
    F("PreviousProducerId", INT64, "1+", default=-1, tag=0, tagged="1+"),
    F("NextProducerId", INT64, "1+", default=-1, tag=1, tagged="1+"),
    F("ProducerEpoch", INT16, "0+"),
    F("TransactionTimeoutMs", INT32, "0+"),
    F("TransactionStatus", INT8, "0+"),
    A("TransactionPartitions", "PartitionsSchema", "0+", [
        F("Topic", STRING, "0+"),
        A("PartitionIds", INT32, "0+"),
    ], nullable="0+"),
    F("TransactionLastUpdateTimestampMs", INT64, "0+"),
    F("TransactionStartTimestampMs", INT64, "0+"),
    F("ClientTransactionVersion", INT16, "1+", default=0, tag=2, tagged="1+"),
])

SCHEMAS = {s.name: s for s in (TRANSACTION_LOG_KEY, TRANSACTION_LOG_VALUE)}

KEY_VERSION = 0
VALUE_VERSION = 0


class TransactionLogRecordError(ValueError):
    """Bytes of ``__transaction_state`` that are not a record of any known version."""


@dataclass(frozen=True)
class TxnRecord:
    """What one TransactionLogValue says about a transactional id."""

    producer_id: int
    producer_epoch: int
    timeout_ms: int
    state_id: int
    partitions: frozenset[TopicPartition]
    last_update_timestamp_ms: int
    start_timestamp_ms: int
    previous_producer_id: int = NO_PRODUCER_ID


def transaction_log_key(transactional_id: str) -> bytes:
    return encode_versioned(TRANSACTION_LOG_KEY, KEY_VERSION,
                            {"transactional_id": transactional_id})


def transaction_log_value(record: TxnRecord) -> bytes:
    by_topic: dict[str, list[int]] = {}
    for tp in sorted(record.partitions):
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return encode_versioned(TRANSACTION_LOG_VALUE, VALUE_VERSION, {
        "producer_id": record.producer_id,
        "previous_producer_id": record.previous_producer_id,
        "producer_epoch": record.producer_epoch,
        "transaction_timeout_ms": record.timeout_ms,
        "transaction_status": record.state_id,
        "transaction_partitions": [{"topic": topic, "partition_ids": partitions}
                                   for topic, partitions in by_topic.items()],
        "transaction_last_update_timestamp_ms": record.last_update_timestamp_ms,
        "transaction_start_timestamp_ms": record.start_timestamp_ms,
    })


def _read(schema: Message, data, what: str) -> dict:
    if data is None or len(data) < 2:
        raise TransactionLogRecordError(f"a {what} without a version")
    return decode_versioned(schema, data, what, TransactionLogRecordError)[1]


def parse_transaction_log_key(data) -> str:
    return _read(TRANSACTION_LOG_KEY, data, "transaction log key")["transactional_id"]


def parse_transaction_log_value(data) -> TxnRecord | None:
    """The record, or None for a tombstone."""
    if data is None:
        return None
    body = _read(TRANSACTION_LOG_VALUE, data, "transaction log value")
    partitions = frozenset(TopicPartition(p["topic"], index)
                           for p in body["transaction_partitions"] or ()
                           for index in p["partition_ids"])
    return TxnRecord(body["producer_id"], body["producer_epoch"],
                     body["transaction_timeout_ms"], body["transaction_status"], partitions,
                     body["transaction_last_update_timestamp_ms"],
                     body["transaction_start_timestamp_ms"], body["previous_producer_id"])
