"""The ``_schemas`` topic as the registry's store, through broker_lite's own Kafka client.

As Confluent's ``KafkaStore`` does, the store

- makes sure the topic exists, with one partition, ``cleanup.policy=compact`` and
  ``kafkastore.topic.replication.factor`` replicas (fewer when the cluster has fewer brokers,
  with a warning), and refuses a topic of several partitions or that is not compacted;
- reads it from the start in a thread of its own (long-polling fetches: the broker answers
  as soon as records come, so a write made by any registry process is read within moments)
  and applies every record to a :class:`~.state.RegistryState`, in offset order, under
  :attr:`KafkaStore.lock`;
- is ready (:meth:`KafkaStore.start` returns) only once it has read the topic up to the end
  it had when it started: as Confluent's store does, it writes a ``NOOP`` record and reads
  until it meets it;
- writes records with acks=all and returns once its own reader has applied them
  (:meth:`KafkaStore.write`), so the writer's next read sees them;
- catches up on demand (:meth:`KafkaStore.catch_up`): reads up to the topic's current end,
  which a process that forwarded a write to the primary does before it answers.

It speaks only standard Kafka APIs, so the cluster may be any Kafka, secured or not (the
client's settings are the ``kafkastore.*`` ones, see :mod:`.config`).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from broker_lite.client import KafkaClient, KafkaClientError, TopicPartition
from broker_lite.client.consumer.partition_reader import scan_batches
from broker_lite.client.types import LATEST

from .errors import StoreError, StoreTimeout
from .records import (
    Key,
    NoopKey,
    RecordFormatError,
    Value,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from .state import RegistryState

logger = logging.getLogger(__name__)

POLL_WAIT_MS = 500  # a fetch waits this long for new records before the loop goes round


class KafkaStore:
    """The registry's state, kept from the topic ``topic`` of the cluster ``client_settings``
    reach (Kafka's client setting names)."""

    def __init__(self, client_settings: Mapping[str, Any], topic: str = "_schemas",
                 replication_factor: int = 3, timeout_ms: int = 60000,
                 write_timeout_ms: int = 10000):
        self.client = KafkaClient(dict(client_settings))
        self._client_settings = dict(client_settings)
        self.topic = topic
        self.tp = TopicPartition(topic, 0)
        self.replication_factor = replication_factor
        self.timeout_ms = timeout_ms
        self.write_timeout_s = write_timeout_ms / 1000
        self.state = RegistryState()
        self.lock = threading.RLock()
        self._applied = threading.Condition(self.lock)
        self.position = 0  # the next offset to read
        self._producer: Any = None
        self._thread: threading.Thread | None = None
        self._stopping = threading.Event()
        self._failure: BaseException | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def start(self) -> KafkaStore:
        """Create or check the topic, read it to its end, and keep reading."""
        self._ensure_topic()
        from broker_lite.client import Producer

        # connections of its own: a fetch waiting for records holds its connection, and a
        # write must not queue behind it
        self._producer = Producer(self._client_settings, acks="all")
        self._thread = threading.Thread(target=self._read_loop, daemon=True,
                                        name=f"registry-store-{self.topic}")
        self._thread.start()
        # As Confluent's KafkaStore starts: a NOOP record written and read back marks the
        # end of the topic as it is now (and readies the producer for the first write).
        self.write([(NoopKey(), None)], self.timeout_ms / 1000)
        return self

    def stop(self) -> None:
        self._stopping.set()
        if self._thread is not None:
            self._thread.join(timeout=10)
        if self._producer is not None:
            self._producer.close()
        self.client.close()

    def _ensure_topic(self) -> None:
        from broker_lite.client import NewTopic
        from broker_lite.client.admin.configs import ConfigResource

        admin = self.client.admin
        topics = self.client.topics(include_internal=True)
        if self.topic not in topics:
            brokers = len(self.client.cluster.metadata.brokers()) or 1
            replicas = min(self.replication_factor, brokers)
            if replicas < self.replication_factor:
                logger.warning("creating %s with %d replicas: the cluster has %d brokers "
                               "(kafkastore.topic.replication.factor=%d)", self.topic,
                               replicas, brokers, self.replication_factor)
            admin.create_topics([NewTopic(self.topic, 1, replicas,
                                          {"cleanup.policy": "compact"})], exist_ok=True)
            return
        if topics[self.topic] != 1:
            raise StoreError(f"The schema topic {self.topic} should have only 1 partition "
                             f"but has {topics[self.topic]}.")
        resource = ConfigResource.topic(self.topic)
        entries = admin.configs.describe([resource])[resource]
        policy = next((e.value for e in entries if e.name == "cleanup.policy"), None)
        if policy is not None and "compact" not in policy:
            raise StoreError(f"The retention policy of the schema topic {self.topic} is "
                             f"incorrect. You must configure the topic to 'compact' cleanup "
                             f"policy to avoid Kafka deleting your schemas after a week.")

    # -- reading --------------------------------------------------------------------------------

    def _read_loop(self) -> None:
        while not self._stopping.is_set():
            position = self.position
            try:
                fetched = self.client.fetch({self.tp: position},
                                            max_wait_ms=POLL_WAIT_MS)[self.tp]
                if fetched.error is not None:
                    raise fetched.error
                batches, next_position, _ = scan_batches(self.tp, fetched.records, position)
                self._apply((record for batch in batches for record in batch
                             if record.offset >= position), next_position)
            except KafkaClientError as exc:
                if self._stopping.is_set():
                    return
                logger.warning("reading %s failed, retrying: %s", self.topic, exc)
                self._stopping.wait(0.5)
            except Exception as exc:  # a bug must not silently stop the registry's reads
                logger.exception("reading %s stopped", self.topic)
                with self.lock:
                    self._failure = exc
                    self._applied.notify_all()
                return

    def _apply(self, records: Any, next_position: int) -> None:
        with self.lock:
            for record in records:
                if record.key is None:
                    continue
                try:
                    key = decode_key(record.key)
                    value = decode_value(key, record.value)
                except RecordFormatError as exc:
                    logger.warning("skipping %s offset %d: %s", self.topic, record.offset, exc)
                    continue
                self.state.apply(key, value)
            self.position = max(self.position, next_position)
            self._applied.notify_all()

    def wait_for(self, offset: int, timeout_s: float) -> None:
        """Wait until every record before ``offset`` is applied; :class:`StoreTimeout` after
        ``timeout_s``."""
        deadline = time.monotonic() + timeout_s
        with self.lock:
            while self.position < offset:
                if self._failure is not None:
                    raise StoreError(f"Reading the schema topic failed: {self._failure}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise StoreTimeout(f"Timed out waiting for the schema topic to reach offset "
                                       f"{offset} (read up to {self.position})")
                self._applied.wait(left)

    def end_offset(self) -> int:
        try:
            found = self.client.list_offsets({self.tp: LATEST})[self.tp]
        except KafkaClientError as exc:
            raise StoreError(f"Cannot read the end of the schema topic: {exc}") from None
        return found or 0

    def catch_up(self, timeout_s: float | None = None) -> None:
        """Read the topic up to its end as it is now."""
        self.wait_for(self.end_offset(), self.timeout_ms / 1000 if timeout_s is None
                      else timeout_s)

    # -- writing --------------------------------------------------------------------------------

    def write(self, records: Sequence[tuple[Key, Value]], timeout_s: float | None = None
              ) -> None:
        """Write ``records`` in one batch and wait until they are read back (at most
        ``timeout_s``, by default ``kafkastore.timeout.ms``)."""
        if not records:
            return
        rows = pa.record_batch({
            "key": pa.array([encode_key(k) for k, _ in records], pa.binary()),
            "value": pa.array([encode_value(v) for _, v in records], pa.binary())})
        try:
            base, count = self._producer.send_batch(self.topic, 0, rows)
        except KafkaClientError as exc:
            raise StoreError(f"Error while writing to the schema topic {self.topic}: "
                             f"{exc}") from None
        self.wait_for(base + count, self.write_timeout_s if timeout_s is None else timeout_s)
