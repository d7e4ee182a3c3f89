"""Topics for tests: create unique ones, write rows to them, read everything back.

All three speak only the Kafka protocol through :mod:`broker_lite.client`, so they work against
broker_lite and against a real Kafka cluster alike. Writing goes through the idempotent
producer (:meth:`broker_lite.client.Producer.send_arrow`); reading fetches each partition from its
log start to its end with the client's partition reader and decodes each fetch into Arrow,
skipping aborted transactions under ``read_committed``, exactly as the Spark source reads.
"""

from __future__ import annotations

import re
import uuid
from typing import Any

import pyarrow as pa

from broker_lite.client import EARLIEST, LATEST, KafkaClient, NewTopic, TopicPartition
from broker_lite.records.arrow.schema import record_schema

from .rows import to_arrow

_NOT_IN_TOPIC_NAMES = re.compile(r"[^a-zA-Z0-9._-]+")
MAX_NAME_PREFIX = 60  # of Kafka's 249 characters, leaving room for the unique suffix


def unique_topic_name(hint: str = "kpy") -> str:
    """``<hint>-<8 hex digits>``, ``hint`` reduced to the characters Kafka allows in a name.

    >>> unique_topic_name("test_orders[gzip]")[:-8]
    'test_orders-gzip-'
    """
    prefix = _NOT_IN_TOPIC_NAMES.sub("-", hint).strip("-.")[:MAX_NAME_PREFIX] or "kpy"
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


class TopicFactory:
    """Creates topics with unique names through ``client`` and deletes them on
    :meth:`delete_created` (those created with ``keep=True`` stay)."""

    def __init__(self, client: KafkaClient, name_hint: str = "kpy"):
        self.client = client
        self.name_hint = name_hint
        self.created: list[str] = []

    def __call__(self, partitions: int = 3, config: dict[str, Any] | None = None, *,
                 name: str | None = None, replication_factor: int = 1,
                 keep: bool = False) -> str:
        """Create a topic and return its name: ``name``, or a unique one made from the test's
        name; ``config`` holds topic settings with Kafka's names (``cleanup.policy``,
        ``retention.ms``, ...). The topic has leaders when this returns."""
        topic = name or unique_topic_name(self.name_hint)
        self.client.admin.create_topics([NewTopic(
            topic, partitions, replication_factor,
            {key: str(value) for key, value in (config or {}).items()})])
        if not keep:
            self.created.append(topic)
        return topic

    def delete_created(self) -> None:
        """Delete the topics created here without ``keep`` (ones already gone are fine)."""
        if self.created:
            self.client.admin.delete_topics(self.created, missing_ok=True)
            self.created.clear()


def produce(client: KafkaClient, topic: str, rows: Any,
            **producer_settings: Any) -> dict[TopicPartition, tuple[int, int]]:
    """Write ``rows`` (see :mod:`.rows`) to ``topic`` with an idempotent producer on
    ``client``; returns ``{partition: (first offset, record count)}``. ``producer_settings``
    are :class:`broker_lite.client.Producer` keyword arguments (``compression="zstd"``,
    ``acks="1"``, ``transactional_id=...``: the rows are then written in one committed
    transaction)."""
    table = to_arrow(rows)
    with client.producer(**producer_settings) as producer:
        if producer.transactional_id is None:
            return producer.send_arrow(topic, table)
        producer.init_transactions()
        producer.begin_transaction()
        try:
            written = producer.send_arrow(topic, table)
        except BaseException:
            producer.abort_transaction()
            raise
        producer.commit_transaction()
        return written


def read_topic(client: KafkaClient, topic: str, *, isolation_level: str = "read_committed",
               include_headers: bool = True, as_table: bool = False
               ) -> list[dict[str, Any]] | pa.Table:
    """Every record of ``topic`` that is there now, in Spark's Kafka row schema (``key``,
    ``value``, ``topic``, ``partition``, ``offset``, ``timestamp``, ``timestampType`` and
    ``headers``), ordered by partition, then offset.

    Reads from each partition's log start to its end: the high watermark, or under
    ``read_committed`` (the default) the last stable offset, without the records of aborted
    transactions. Returns a list of dicts, or with ``as_table`` a ``pyarrow.Table``
    (``spark.createDataFrame(table)`` makes it a DataFrame).
    """
    tps = [TopicPartition(topic, p) for p in client.partitions(topic)]
    starts = client.list_offsets(dict.fromkeys(tps, EARLIEST), isolation_level)
    ends = client.list_offsets(dict.fromkeys(tps, LATEST), isolation_level)
    batches = [chunk.to_arrow(include_headers=include_headers) for tp in tps
               for chunk in client.read_range(tp, starts[tp], ends[tp],
                                              isolation_level=isolation_level)]
    table = pa.Table.from_batches(batches, schema=record_schema(include_headers))
    return table if as_table else table.to_pylist()
