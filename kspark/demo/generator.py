"""Sample page views for the demo: a deterministic stream of website visits, as Arrow.

One page view is one Kafka record::

    key        the user id, UTF-8                  b"u01234"
    value      a JSON object, UTF-8                {"event": "page_view", "user": "u01234",
                                                    "page": "/pricing",
                                                    "ts": "2025-03-14T09:02:17.250Z",
                                                    "referrer": "search", "device": "mobile",
                                                    "country": "DE", "duration_ms": 5320}
    timestamp  the event time (``ts``) in ms, as producers that stamp events with their own
               time do (CreateTime)

The strings come from fixed lists of plain ASCII words, so the JSON needs no escaping and is
assembled column-wise with Arrow compute, without per-record Python.

Event time
----------
The page views cover :data:`EVENT_SPAN_MS` (ten minutes) from :data:`EVENT_START_MS`, however
many there are: view ``i`` of ``n`` happens on time at ``start + i * span / n``, and is stamped
earlier by a random lateness of at most :data:`MAX_LATENESS_MS` (mostly little: phones upload
buffered events). Views are produced in :data:`CHUNKS` chunks of consecutive positions (five
seconds of event time each); a chunk is produced only after the one before it was acknowledged.
So a view that reaches Kafka after another is at most ``chunk span + MAX_LATENESS_MS``
(25 seconds) older than it: the disorder is bounded, and a watermark delay above that bound
drops nothing.

When the views end, the producer sends one :func:`heartbeats` record to every partition: an
event with no page, stamped :data:`HEARTBEAT_TS_MS`, whose only effect is to move the consumer's
event-time watermark past the last window (what real collectors send when a partition goes idle).

Determinism
-----------
Pages and users follow Zipf-like popularity (a few pages and users make most of the traffic, as
on real sites). Chunk ``k`` is drawn from its own generator seeded with ``(seed, k)``, so the
same seed and record count give the same stream, whether produced in one go or chunk by chunk.

>>> views = PageViews(records=5, seed=7)
>>> chunk = views.chunk(0)
>>> chunk.num_rows, chunk.schema.names
(1, ['user', 'page', 'ts', 'referrer', 'device', 'country', 'duration_ms'])
>>> import json; sorted(json.loads(to_kafka_rows(chunk).column("value")[0].as_py()))
['country', 'device', 'duration_ms', 'event', 'page', 'referrer', 'ts', 'user']
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

#: Event time of the first page view: 2025-03-14T09:00:00Z. Fixed, so a seed gives the same
#: stream on every run (the demo's input topic keeps records whatever their age).
EVENT_START_MS = 1_741_942_800_000
EVENT_SPAN_MS = 10 * 60_000
MAX_LATENESS_MS = 20_000
#: Chunks of the stream (one ``send_arrow`` call each): five seconds of event time apiece.
CHUNKS = 120
#: Event time of the end-of-stream heartbeats: two minutes after the last page view's window.
HEARTBEAT_TS_MS = EVENT_START_MS + EVENT_SPAN_MS + 2 * 60_000

PAGES = (
    "/", "/pricing", "/docs", "/docs/quickstart", "/docs/streaming", "/docs/sink",
    "/blog", "/blog/kafka-on-a-laptop", "/blog/exactly-once", "/about", "/careers", "/contact",
    "/login", "/signup", "/search", "/cart", "/checkout",
    *(f"/products/{n}" for n in range(1, 24)),
)
USERS = 5_000
REFERRERS = ("direct", "search", "social", "newsletter", "partner")
DEVICES = ("desktop", "mobile", "tablet")
COUNTRIES = ("US", "DE", "GB", "FR", "IN", "BR", "JP", "CA", "NL", "ES")

TS_TYPE = pa.timestamp("ms", tz="UTC")
SCHEMA = pa.schema([
    pa.field("user", pa.string()),
    pa.field("page", pa.string()),
    pa.field("ts", TS_TYPE),
    pa.field("referrer", pa.string()),
    pa.field("device", pa.string()),
    pa.field("country", pa.string()),
    pa.field("duration_ms", pa.int64()),
])


def _zipf_weights(count: int, exponent: float) -> np.ndarray:
    weights = 1.0 / np.arange(1, count + 1) ** exponent
    return weights / weights.sum()


_PAGE_WEIGHTS = _zipf_weights(len(PAGES), 1.1)
_USER_WEIGHTS = _zipf_weights(USERS, 0.8)
_REFERRER_WEIGHTS = np.array([0.35, 0.35, 0.15, 0.1, 0.05])
_DEVICE_WEIGHTS = np.array([0.45, 0.48, 0.07])
_COUNTRY_WEIGHTS = _zipf_weights(len(COUNTRIES), 0.9)


@dataclass(frozen=True)
class PageViews:
    """``records`` page views drawn from ``seed``, in the order they reach Kafka.

    Parameters
    ----------
    records
        How many page views in all (at least one).
    seed
        Everything is a function of it (and of ``records``).
    """

    records: int
    seed: int = 0

    def __post_init__(self):
        if self.records < 1:
            raise ValueError(f"records must be >= 1, got {self.records}")

    @property
    def chunk_count(self) -> int:
        return min(CHUNKS, self.records)

    def chunk_bounds(self, index: int) -> tuple[int, int]:
        """Positions ``[first, end)`` of the views in chunk ``index``."""
        if not 0 <= index < self.chunk_count:
            raise IndexError(f"chunk {index} is out of range (there are {self.chunk_count})")
        return (index * self.records // self.chunk_count,
                (index + 1) * self.records // self.chunk_count)

    def chunks(self) -> Iterator[pa.RecordBatch]:
        """The page views, chunk after chunk, as RecordBatches of :data:`SCHEMA`."""
        for index in range(self.chunk_count):
            yield self.chunk(index)

    def chunk(self, index: int) -> pa.RecordBatch:
        """Chunk ``index`` alone."""
        first, end = self.chunk_bounds(index)
        n = end - first
        rng = np.random.default_rng([self.seed, index])
        on_time = EVENT_START_MS + np.arange(first, end, dtype=np.int64) * EVENT_SPAN_MS \
            // self.records
        lateness = np.minimum(rng.exponential(1_500.0, n), MAX_LATENESS_MS).astype(np.int64)
        ts = np.maximum(on_time - lateness, EVENT_START_MS)
        users = pa.array(rng.choice(USERS, size=n, p=_USER_WEIGHTS)).cast(pa.string())
        return pa.record_batch([
            pc.binary_join_element_wise("u", pc.utf8_lpad(users, 5, "0"), ""),
            _pick(PAGES, rng.choice(len(PAGES), size=n, p=_PAGE_WEIGHTS)),
            pa.array(ts).cast(TS_TYPE),
            _pick(REFERRERS, rng.choice(len(REFERRERS), size=n, p=_REFERRER_WEIGHTS)),
            _pick(DEVICES, rng.choice(len(DEVICES), size=n, p=_DEVICE_WEIGHTS)),
            _pick(COUNTRIES, rng.choice(len(COUNTRIES), size=n, p=_COUNTRY_WEIGHTS)),
            pa.array(np.round(rng.lognormal(8.5, 1.0, n)).astype(np.int64)),  # median ~5 s
        ], schema=SCHEMA)


def _pick(values: tuple[str, ...], indices: np.ndarray) -> pa.Array:
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()),
                                          pa.array(values)).cast(pa.string())


def to_kafka_rows(views: pa.RecordBatch) -> pa.RecordBatch:
    """Page views as producer rows: ``key`` (user id), ``value`` (JSON), ``timestamp`` (the
    event time), for :meth:`broker_lite.client.Producer.send_arrow`."""
    ts = pc.strftime(views.column("ts"), format="%Y-%m-%dT%H:%M:%SZ")  # %S carries the ms

    def text(name: str) -> list:
        return [f',"{name}":"', views.column(name), '"']

    value = pc.binary_join_element_wise(
        '{"event":"page_view"', *text("user"), *text("page"), ',"ts":"', ts, '"',
        *text("referrer"), *text("device"), *text("country"), ',"duration_ms":',
        views.column("duration_ms").cast(pa.string()), "}", "")
    return pa.record_batch({
        "key": views.column("user").cast(pa.binary()),
        "value": value.cast(pa.binary()),
        "timestamp": views.column("ts"),
    })


def heartbeats(partitions: int) -> pa.RecordBatch:
    """One end-of-stream heartbeat per partition (explicit ``partition``, no key)::

        {"event": "heartbeat", "ts": "2025-03-14T09:12:00.000Z"}
    """
    ts = pa.array([HEARTBEAT_TS_MS] * partitions).cast(TS_TYPE)
    value = pc.binary_join_element_wise('{"event":"heartbeat","ts":"',
                                        pc.strftime(ts, format="%Y-%m-%dT%H:%M:%SZ"), '"}', "")
    return pa.record_batch({
        "value": value.cast(pa.binary()),
        "partition": pa.array(range(partitions), pa.int32()),
        "timestamp": ts,
    })
