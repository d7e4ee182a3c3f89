"""A stand-in broker for unit tests of the client: a real listening socket whose answers are
written by the test, one function per API, encoded with broker_lite.protocol.

A handler ``(header, body) -> response`` returns a response body dict, ``CLOSE`` (close the
connection without answering), ``SILENT`` (never answer), or ``bytes`` (sent as is, a whole
frame with its size). ApiVersions is answered from ``api_versions`` (``{key: (min, max)}``)
unless a handler is given; like Kafka, a request in an ApiVersions version above the advertised
maximum gets UNSUPPORTED_VERSION in version 0 with the list.

:class:`ScriptedLog` is a partition's log built in the test, and :func:`serve_logs` answers
Fetch and ListOffsets from such logs as Kafka does.
"""

from __future__ import annotations

import socket
import struct
import threading
import time
from collections.abc import Callable

from broker_lite.protocol import (
    API_SCHEMAS,
    ZERO_UUID,
    ApiKey,
    ErrorCode,
    encode_response,
    parse_request,
)
from broker_lite.records import CompressionType, build_batch
from broker_lite.server.testing import recv_exactly

CLOSE = object()
SILENT = object()
Handler = Callable[[object, dict], object]


def all_versions() -> dict[int, tuple[int, int]]:
    """Every API broker_lite.protocol knows, in every version it knows."""
    return {int(k): (a.valid_versions.lo, a.valid_versions.hi) for k, a in API_SCHEMAS.items()}


class ScriptedBroker:
    def __init__(self, handlers: dict[int, Handler] | None = None, *,
                 api_versions: dict[int, tuple[int, int]] | None = None, node_id: int = 1):
        self.handlers = dict(handlers or {})
        self.api_versions = all_versions() if api_versions is None else api_versions
        self.node_id = node_id
        self.requests: list[tuple[object, dict]] = []  # (header, body), in arrival order
        self.arrived_at: list[float] = []  # monotonic arrival time of each of the requests
        self.connections = 0
        self.accepted_at: list[float] = []  # monotonic time each connection was accepted
        self._record_lock = threading.Lock()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._open: list[socket.socket] = []
        self._stopped = threading.Event()
        threading.Thread(target=self._accept, daemon=True).start()

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.port}"

    def requests_for(self, api_key: int) -> list[dict]:
        return [body for header, body in self.requests if header.api_key == api_key]

    def arrivals_of(self, api_key: int) -> list[float]:
        """When each request of ``api_key`` arrived (monotonic clock)."""
        # strict=False: a request may be timed and not yet recorded (the broker's thread)
        return [at for (header, _), at in zip(self.requests, self.arrived_at, strict=False)
                if header.api_key == api_key]

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()
        for sock in list(self._open):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            sock.close()

    def __enter__(self) -> ScriptedBroker:
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def drop_connections(self) -> None:
        """Close every open connection (as a broker's idle timeout would)."""
        for sock in list(self._open):
            try:
                sock.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def _accept(self) -> None:
        while not self._stopped.is_set():
            try:
                sock, _ = self._listener.accept()
            except OSError:
                return
            self.accepted_at.append(time.monotonic())
            self.connections += 1
            self._open.append(sock)
            threading.Thread(target=self._serve, args=(sock,), daemon=True).start()

    def _serve(self, sock: socket.socket) -> None:
        try:
            while True:
                (size,) = struct.unpack(">i", recv_exactly(sock, 4))
                header, body = parse_request(recv_exactly(sock, size))
                with self._record_lock:  # both lists in the same order
                    self.arrived_at.append(time.monotonic())
                    self.requests.append((header, body))
                answer = self._answer(header, body)
                if answer is CLOSE:
                    return
                if answer is SILENT:
                    self._stopped.wait()  # hold the connection, never answer
                    return
                if isinstance(answer, bytes):
                    sock.sendall(answer)
                    continue
                version = 0 if getattr(answer, "v0", False) else header.api_version
                sock.sendall(b"".join(encode_response(header.api_key, version,
                                                      header.correlation_id, answer)))
        except (OSError, ConnectionError):
            pass
        finally:
            sock.close()
            if sock in self._open:
                self._open.remove(sock)

    def _answer(self, header, body):
        handler = self.handlers.get(header.api_key)
        if handler is not None:
            return handler(header, body)
        if header.api_key == ApiKey.API_VERSIONS:
            return self._api_versions(header)
        return CLOSE  # as Kafka does for an API it does not serve

    def _api_versions(self, header):
        listed = [{"api_key": k, "min_version": lo, "max_version": hi}
                  for k, (lo, hi) in sorted(self.api_versions.items())]
        _low, high = self.api_versions.get(ApiKey.API_VERSIONS, (0, 0))
        if header.api_version > high:
            return V0Body(error_code=ErrorCode.UNSUPPORTED_VERSION, api_keys=listed)
        return {"error_code": 0, "api_keys": listed, "throttle_time_ms": 0}

    # -- canned bodies ------------------------------------------------------------------------

    def metadata(self, topics: dict[str, int], *, leader: int | None = None,
                 brokers: list[tuple[int, int]] | None = None,
                 topic_ids: dict | None = None) -> Handler:
        """A Metadata handler: this broker (or ``brokers`` as (node id, port)), and ``topics``
        (name -> partition count) led by ``leader`` (default: this broker), with ``topic_ids``
        when given; other topics are unknown."""
        def handle(header, body):
            names = [t["name"] for t in body["topics"]] if body["topics"] is not None \
                else list(topics)
            return {
                "brokers": [{"node_id": n, "host": "127.0.0.1", "port": p, "rack": None}
                            for n, p in (brokers or [(self.node_id, self.port)])],
                "cluster_id": "scripted", "controller_id": self.node_id,
                "topics": [self._topic(name, topics.get(name), leader or self.node_id,
                                       (topic_ids or {}).get(name)) for name in names],
            }
        return handle

    @staticmethod
    def _topic(name: str, count: int | None, leader: int, topic_id) -> dict:
        if count is None:
            return {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": name,
                    "partitions": []}
        return {"error_code": 0, "name": name, "is_internal": False,
                "topic_id": topic_id or ZERO_UUID, "partitions": [
            {"error_code": 0, "partition_index": p, "leader_id": leader, "leader_epoch": 0,
             "replica_nodes": [leader], "isr_nodes": [leader]} for p in range(count)]}


class V0Body(dict):
    """A response body to send in version 0 whatever the request's version (ApiVersions'
    answer to an unsupported version)."""

    v0 = True

    def __init__(self, **fields):
        super().__init__(fields)


def sequence(*answers) -> Handler:
    """A handler giving ``answers`` in turn (the last one again when they run out); an answer
    may be a function ``(header, body) -> answer``."""
    queue = list(answers)

    def handle(header, body):
        answer = queue.pop(0) if len(queue) > 1 else queue[0]
        return answer(header, body) if callable(answer) else answer
    return handle


class ScriptedLog:
    """Batches of ``sizes[i]`` records each, offsets from 0, compressed like real topics."""

    def __init__(self, sizes, *, value_bytes=100, compression=CompressionType.NONE):
        self.batches, self.records, offset = [], [], 0
        for n in sizes:
            records = [(b"k%d" % (offset + i), b"v%d-" % (offset + i) + b"x" * value_bytes)
                       for i in range(n)]
            self.batches.append((offset, build_batch(records, timestamp=1000 + offset,
                                                     base_offset=offset, compression=compression)))
            self.records += records
            offset += n
        self.data = b"".join(b for _, b in self.batches)
        self.high_watermark = offset

    def corrupt(self, index: int) -> int:
        """Turn the last ``x`` of the last value of batch ``index`` (uncompressed) into a
        ``y``: its CRC no longer matches, yet it decodes; returns the batch's base offset."""
        end = sum(len(b) for _, b in self.batches[:index + 1])
        data = bytearray(self.data)
        assert data[end - 2:end] == b"x\x00"  # the value's last byte, then no headers
        data[end - 2] ^= ord("x") ^ ord("y")
        self.data = bytes(data)
        return self.batches[index][0]

    def locate(self, offset: int) -> tuple[int, int] | None:
        """(index, byte position) of the batch holding ``offset``; None past the end."""
        pos = 0
        for index, (_, batch) in enumerate(self.batches):
            end = self.batches[index + 1][0] if index + 1 < len(self.batches) \
                else self.high_watermark
            if offset < end:
                return index, pos
            pos += len(batch)
        return None

    def answer(self, part: dict, isolation_level: int, *, whole_first_batch=True,
               last_stable_offset=None, aborted=None, error=0) -> dict:
        """The partition of a Fetch response, as Kafka gives it: ``partition_max_bytes``
        bytes from the batch holding the fetch offset (so the last batch may be cut short),
        the first batch whole unless ``whole_first_batch`` is False (brokers before KIP-74)."""
        offset, limit = part["fetch_offset"], part["partition_max_bytes"]
        found = self.locate(offset)
        records, code, pos = b"", error, 0
        if offset > self.high_watermark:
            code = ErrorCode.OFFSET_OUT_OF_RANGE
        elif found is not None and not code:
            index, pos = found
            first = len(self.batches[index][1])
            size = max(limit, first) if whole_first_batch else limit
            records = self.data[pos:pos + size]
        lso = self.high_watermark if last_stable_offset is None else last_stable_offset
        if isolation_level == 1:  # read_committed: nothing at or past the LSO
            stable = self.locate(lso)
            stable_end = stable[1] if stable is not None else len(self.data)
            records = records[:max(stable_end - pos, 0)]
        return {"partition_index": part["partition"], "error_code": code,
                "high_watermark": self.high_watermark, "last_stable_offset": lso,
                "log_start_offset": 0, "aborted_transactions": aborted, "records": records}

    def fetch_handler(self, topic: str = "events", **answer) -> Handler:
        """A Fetch handler serving this log as partition 0 of ``topic``; ``answer`` as in
        :meth:`answer`."""
        return serve_logs(topic, {0: self}, **answer)[ApiKey.FETCH]


def serve_logs(topic: str, logs: dict[int, ScriptedLog], **answer) -> dict[int, Handler]:
    """Fetch and ListOffsets handlers serving ``logs`` (partition -> log) of ``topic``;
    ``answer`` as in :meth:`ScriptedLog.answer`."""
    def fetch(header, body):
        return {"responses": [{"topic": topic, "topic_id": t["topic_id"], "partitions": [
            logs[part["partition"]].answer(part, body["isolation_level"], **answer)
            for part in t["partitions"]]} for t in body["topics"]]}

    def list_offsets(header, body):
        return {"topics": [{"name": t["name"], "partitions": [
            {"partition_index": p["partition_index"], "error_code": 0, "timestamp": -1,
             "offset": 0 if p["timestamp"] == -2 else logs[p["partition_index"]].high_watermark}
            for p in t["partitions"]]} for t in body["topics"]]}

    return {ApiKey.FETCH: fetch, ApiKey.LIST_OFFSETS: list_offsets}


def full_listener() -> tuple[socket.socket, list[socket.socket]]:
    """A listener whose accept queue is full, so that new connections hang."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(0)
    port = listener.getsockname()[1]
    queued = []
    for _ in range(4):
        sock = socket.socket()
        sock.setblocking(False)
        try:
            sock.connect(("127.0.0.1", port))
        except BlockingIOError:
            pass
        queued.append(sock)
    return listener, queued
