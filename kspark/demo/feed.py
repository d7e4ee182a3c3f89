"""Producing the page views in the background while the query runs, as a website's event
collector would: chunk after chunk at a steady rate, then an end-of-stream heartbeat per
partition (see :mod:`.generator`).

The producer is kspark's own (:meth:`broker_lite.client.Producer.send_arrow`: idempotent, acks=all,
lz4-compressed v2 batches, keys placed by murmur2). Each chunk is sent only once the previous
one was acknowledged, which is what bounds the disorder of the stream.
"""

from __future__ import annotations

import threading
import time

from broker_lite.client import KafkaClient

from .avro import AvroViews
from .generator import PageViews, heartbeats, to_kafka_rows

COMPRESSION = "lz4"


class Feed(threading.Thread):
    """A thread producing ``views`` to ``topic`` (of ``partitions`` partitions) at ``rate``
    records per second (0: as fast as the broker takes them).

    ``produced`` counts the acknowledged page views, ``heartbeats`` the heartbeats; ``finished``
    is set when everything was sent, or when producing failed (``error`` then says why).
    """

    def __init__(self, bootstrap_servers: str, topic: str, views: PageViews, partitions: int,
                 rate: float, avro: AvroViews | None = None):
        super().__init__(name="kpy-demo-feed", daemon=True)
        if rate < 0:
            raise ValueError(f"rate must be >= 0, got {rate}")
        self.bootstrap_servers = bootstrap_servers
        self.topic = topic
        self.views = views
        self.partitions = partitions
        self.rate = rate
        self.avro = avro  # values in Avro (kpy demo --format avro), else JSON
        self.produced = 0
        self.heartbeats = 0
        self.error: BaseException | None = None
        self.finished = threading.Event()
        self.started_at: float | None = None
        self.finished_at: float | None = None
        self._stopping = threading.Event()

    @property
    def total(self) -> int:
        """Records the feed sends in all: the page views and a heartbeat per partition."""
        return self.views.records + self.partitions

    @property
    def complete(self) -> bool:
        """Every record was sent and acknowledged."""
        return self.finished.is_set() and self.heartbeats == self.partitions

    def run(self) -> None:
        self.started_at = time.monotonic()
        try:
            with KafkaClient({"bootstrap.servers": self.bootstrap_servers,
                              "client.id": "kpy-demo-feed"}) as client, \
                    client.producer(compression=COMPRESSION) as producer:
                for index in range(self.views.chunk_count):
                    first, _ = self.views.chunk_bounds(index)
                    if self.rate and self._stopping.wait(
                            self.started_at + first / self.rate - time.monotonic()):
                        return
                    if self._stopping.is_set():
                        return
                    chunk = self.views.chunk(index)
                    rows = to_kafka_rows(chunk)
                    producer.send_arrow(self.topic, rows if self.avro is None
                                        else self.avro.rows(rows, chunk))
                    self.produced += chunk.num_rows
                beats = heartbeats(self.partitions)
                producer.send_arrow(self.topic, beats if self.avro is None
                                    else self.avro.rows(beats, None))
                self.heartbeats = self.partitions
        except BaseException as exc:  # reported by the demo, which stops
            self.error = exc
        finally:
            self.finished_at = time.monotonic()
            self.finished.set()

    def stop(self, timeout: float = 30) -> None:
        """Stop producing (after the chunk being sent) and wait for the thread."""
        self._stopping.set()
        if self.is_alive():
            self.join(timeout)
