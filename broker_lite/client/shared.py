"""Connections shared by the successive work of one process, such as Spark's Python workers.

Spark reuses its Python worker processes (``spark.python.worker.reuse``, on by default): one
worker runs task after task, micro-batch after micro-batch. A client per task would bootstrap
each time (a TCP connection, ApiVersions and Metadata per broker), and at one trigger a second
that is a new connection per broker per task every second; Spark's own Kafka connector keeps
its consumers per executor for the same reason. :func:`shared_client` lends clients over
connections kept for the life of the process instead:

* **Keyed by the connection settings** (:data:`.config.CONNECTION_SETTINGS`): leases with the
  same brokers and connection settings share one :class:`.cluster.Cluster` (one connection per
  broker, one metadata cache), whatever their other settings; each lease is a
  :class:`~.client.KafkaClient` with the caller's own settings over it (fetch sizes, isolation
  level, a producer's settings).
* **Never lent broken**: a connection the broker closed is noticed and opened again before the
  next request (:mod:`.connection`), one that fails mid-request is dropped; and a lease that ends
  in an error drops its cluster (closed once no other lease uses it), so the next piece of work
  starts on fresh connections rather than on whatever the failure left.
* **Closed when idle**: a cluster that no lease has used for its ``connections.max.idle.ms``
  (9 minutes by default, under the brokers' 10; -1: never) is closed by a background thread, so
  a worker that Spark keeps but no longer uses holds no connections open.
* **Per process**: a child forked from a process with shared clients (Spark forks its Python
  workers from a daemon) starts with none and never touches its parent's sockets.

Only connections and metadata are shared: what belongs to one piece of work, such as a
transactional producer with its producer id and epoch, is made per lease over them
(``Producer(client, transactional_id=...)``).

>>> settings = {"bootstrap.servers": "127.0.0.1:9"}
>>> with shared_client(settings) as one:
...     with shared_client({**settings, "max.partition.fetch.bytes": "8388608"}) as two:
...         one.cluster is two.cluster, two.config.max_partition_fetch_bytes
(True, 8388608)
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from .client import KafkaClient
from .cluster.cluster import Cluster
from .config import ClientConfig


@dataclass(eq=False)
class _Entry:
    cluster: Cluster
    idle_s: float | None  # closed after this long without a lease; None: never
    leases: int = 0
    released_at: float = 0.0  # monotonic
    dropped: bool = False  # out of the cache: closed when its last lease ends


class ClientCache:
    """Clusters by connection settings, lent as clients; thread-safe. See the module
    docstring; :func:`shared_client` uses the process's one cache."""

    def __init__(self):
        self._entries: dict[tuple, _Entry] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._reaper: threading.Thread | None = None

    def __len__(self) -> int:
        """How many clusters (sets of connections) the cache keeps."""
        with self._lock:
            return len(self._entries)

    @contextmanager
    def lease(self, settings: Mapping[str, Any] | ClientConfig) -> Iterator[KafkaClient]:
        """A client with ``settings`` over the shared connections of its connection settings,
        for the ``with`` block; an error escaping the block drops those connections (a
        generator closed early is no error)."""
        config = settings if isinstance(settings, ClientConfig) else ClientConfig(settings)
        entry = self._acquire(config)
        client = KafkaClient(config, cluster=entry.cluster)
        failed = True
        try:
            yield client
            failed = False
        except GeneratorExit:  # the caller stopped reading: nothing went wrong
            failed = False
            raise
        finally:
            client.close()
            self._release(config.connection_key, entry, failed)

    def close(self) -> None:
        """Close every cluster now, leased or not."""
        with self._lock:
            entries, self._entries = list(self._entries.values()), {}
        for entry in entries:
            entry.cluster.close()

    # -- internals ------------------------------------------------------------------------------

    def _acquire(self, config: ClientConfig) -> _Entry:
        key = config.connection_key
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry.cluster.closed:
                idle_ms = config.connections_max_idle_ms
                entry = self._entries[key] = _Entry(Cluster(config.connection_config()),
                                                    idle_ms / 1000 if idle_ms >= 0 else None)
            entry.leases += 1
            if self._reaper is None:
                self._reaper = threading.Thread(target=self._close_idle, daemon=True,
                                                name="kpy-shared-clients")
                self._reaper.start()
        return entry

    def _release(self, key: tuple, entry: _Entry, failed: bool) -> None:
        with self._lock:
            entry.leases -= 1
            entry.released_at = time.monotonic()
            if failed and self._entries.get(key) is entry:
                del self._entries[key]
                entry.dropped = True
            close = entry.dropped and entry.leases == 0
        if close:
            entry.cluster.close()
        self._wake.set()  # the idle deadlines changed

    def _close_idle(self) -> None:
        """The background thread: close clusters idle past their ``connections.max.idle.ms``,
        sleeping until the next one is due."""
        while True:
            self._wake.clear()
            now = time.monotonic()
            with self._lock:
                idle = [(key, entry, entry.idle_s) for key, entry in self._entries.items()
                        if entry.leases == 0 and entry.idle_s is not None]
                expired = [(key, entry) for key, entry, idle_s in idle
                           if now - entry.released_at >= idle_s]
                for key, _ in expired:
                    del self._entries[key]
                due = [entry.released_at + idle_s - now for key, entry, idle_s in idle
                       if (key, entry) not in expired]
            for _, entry in expired:
                entry.cluster.close()
            self._wake.wait(min(due) if due else None)

    def _forget(self) -> None:
        """In a forked child: the parent's clusters are not this process's to use or close
        (closing would shut the parent's connections down); drop them unused."""
        self._entries = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._reaper = None


_SHARED = ClientCache()
os.register_at_fork(after_in_child=_SHARED._forget)


def shared_client(settings: Mapping[str, Any] | ClientConfig):
    """A client with ``settings`` over this process's shared connections, for a ``with`` block
    (see the module docstring)::

        with shared_client({"bootstrap.servers": "b1:9092"}) as client:
            client.list_offsets(...)
    """
    return _SHARED.lease(settings)


def shared_clients() -> ClientCache:
    """This process's cache of shared connections (for inspection and tests)."""
    return _SHARED
