"""Request metrics as Kafka's RequestChannel keeps them: per API, how many requests were served
and how long each stage took (milliseconds), recorded when the response is sent.

========================  =================================================================
stage                     time between
========================  =================================================================
``RequestQueueTimeMs``    the request was read and a handler took it from the request queue
``LocalTimeMs``           the handler took it and returned
``RemoteTimeMs``          the handler returned and the response was ready (purgatory waits)
``ResponseQueueTimeMs``   the response was ready and its processor took it
``ResponseSendTimeMs``    the processor took the response and sent its last byte
``TotalTimeMs``           the request was read and its response sent
========================  =================================================================

Percentiles (p50, p99, p999) and the maximum are computed from the latest
:data:`SAMPLES` requests of each API when asked (:meth:`RequestMetrics.snapshot`), so recording
costs an append. A request answered without a response (acks=0) or by closing its connection
counts when it is answered, with no send stages. Requests answered together with another (a
producer's pipelined Produce requests, see :mod:`.processor`) each count, with its times.

>>> metrics = RequestMetrics()
>>> class Done:  # the times a request records as it travels (nanoseconds)
...     payload = b"\\0\\3"  # Metadata
...     folded = ()  # no request answered with it
...     received, dequeued, handled, answered, sending, sent = 0, 1e6, 3e6, 3e6, 3.5e6, 4e6
>>> metrics.record(Done())
>>> snapshot = metrics.snapshot()["Metadata"]
>>> snapshot["requests"], snapshot["TotalTimeMs"]["p50"], snapshot["LocalTimeMs"]["max"]
(1, 4.0, 2.0)
"""

import struct
import threading
from collections import deque

from broker_lite.protocol import api_for

SAMPLES = 4096  # per API: the latest requests' stage times
STAGES = ("RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs", "ResponseQueueTimeMs",
          "ResponseSendTimeMs", "TotalTimeMs")
PERCENTILES = (("p50", 0.50), ("p99", 0.99), ("p999", 0.999))
_API_KEY = struct.Struct(">h")


class _ApiMetrics:
    __slots__ = ("requests", "samples")

    def __init__(self):
        self.requests = 0
        self.samples: deque[tuple[int, ...]] = deque(maxlen=SAMPLES)  # stage times (ns)


def api_name(api_key: int) -> str:
    """Kafka's request name for an API key (``Produce``, ``ApiVersions``, ...)."""
    api = api_for(api_key)
    return api.name if api is not None else f"Unknown{api_key}"


class RequestMetrics:
    """Per-API request counts and stage times, recorded by the processors."""

    def __init__(self):
        self._lock = threading.Lock()
        self._apis: dict[int, _ApiMetrics] = {}

    def record(self, request) -> None:
        """Record a request whose response was sent (or that was answered without one): its
        stage times, turned into durations when asked (:meth:`snapshot`)."""
        answered = request.answered
        sending = request.sending or answered
        times = (request.received, request.dequeued, request.handled, answered, sending,
                 request.sent or sending)
        with self._lock:
            self._add(request.payload, times)
            for payload in request.folded:  # answered with it: the same times
                self._add(payload, times)

    def _add(self, payload, times: tuple[int, ...]) -> None:
        api_key = _API_KEY.unpack_from(payload)[0] if len(payload) >= 2 else -1
        api = self._apis.get(api_key)
        if api is None:
            api = self._apis[api_key] = _ApiMetrics()
        api.requests += 1
        api.samples.append(times)

    @property
    def total_requests(self) -> int:
        with self._lock:
            return sum(api.requests for api in self._apis.values())

    def snapshot(self) -> dict[str, dict]:
        """Per API name: ``requests`` served, and each stage's percentiles and maximum over the
        latest samples."""
        with self._lock:
            copies = {key: (api.requests, list(api.samples)) for key, api in self._apis.items()}
        result = {}
        for api_key, (requests, samples) in sorted(copies.items()):
            entry: dict = {"requests": requests}
            durations = [_durations(sample) for sample in samples]
            for index, stage in enumerate(STAGES):
                values = sorted(sample[index] for sample in durations)
                entry[stage] = _summary(values)
            result[api_name(api_key)] = entry
        return result


def _durations(times: tuple[int, ...]) -> tuple[float, ...]:
    """Each stage's milliseconds (:data:`STAGES`) from the times a request passed them."""
    received, dequeued, handled, answered, sending, sent = times
    ms = 1e-6
    return ((dequeued - received) * ms, (handled - dequeued) * ms, (answered - handled) * ms,
            (sending - answered) * ms, (sent - sending) * ms, (sent - received) * ms)


def _summary(values: list[float]) -> dict[str, float]:
    if not values:
        return {name: 0.0 for name, _ in PERCENTILES} | {"max": 0.0}
    last = len(values) - 1
    summary = {name: round(values[min(int(q * len(values)), last)], 3)
               for name, q in PERCENTILES}
    summary["max"] = round(values[-1], 3)
    return summary
