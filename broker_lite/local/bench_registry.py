"""Benchmark: the schema registry under 8 concurrent clients. Schema lookups by id per second
and their p99 latency, re-registrations of an already registered schema per second, and new
registrations' p99 latency; against, in the same run, the ceiling of the same clients on this
machine: a bare HTTP server of the standard library answering one fixed body.

    python -m broker_lite.local.bench_registry [--clients 8] [--seconds 5] [--schemas 100]
        [--new 200]

The registry runs in this process on a local Kafka (:class:`broker_lite.local.LocalKafka`, one
broker); the clients are two processes of ``--clients / 2`` threads each, every thread on one
keep-alive connection of its own, sending requests one after another (as serializers do), so
that neither side's interpreter lock serializes the other. Lookups ask for ``--schemas``
registered ids in turn (``GET /schemas/ids/{id}``: a deserializer meeting a new id);
re-registrations post one of them again (``POST /subjects/{s}/versions``: a serializer with
``auto.register.schemas``); new registrations (one client, one after another) each wait until
the ``_schemas`` topic has the schema (acks=all) and the registry has read it back.

Targets (the issue's, for a 2-core machine): at least 5,000 lookups/s with p99 under 10 ms, and
a new schema registered in under 50 ms p99.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import socket
import statistics
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from broker_lite.local.kafka import LocalKafka

TARGET_LOOKUPS = 5000
TARGET_LOOKUP_P99_MS = 10.0
TARGET_REGISTER_P99_MS = 50.0


class _Connection:
    """One keep-alive HTTP/1.1 connection, requests written and answers read by hand (the
    clients' cost kept low, so the figures are the server's)."""

    def __init__(self, host: str, port: int):
        self.sock = socket.create_connection((host, port))
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buffer = b""

    def call(self, request: bytes) -> tuple[int, bytes]:
        self.sock.sendall(request)
        while b"\r\n\r\n" not in self.buffer:
            self._read()
        head, _, self.buffer = self.buffer.partition(b"\r\n\r\n")
        status = int(head[9:12])
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        while len(self.buffer) < length:
            self._read()
        body, self.buffer = self.buffer[:length], self.buffer[length:]
        return status, body

    def _read(self) -> None:
        chunk = self.sock.recv(65536)
        if not chunk:
            raise ConnectionError("the server closed the connection")
        self.buffer += chunk


def _get(path: str) -> bytes:
    return f"GET {path} HTTP/1.1\r\nHost: bench\r\nAccept: */*\r\n\r\n".encode()


def _post(path: str, body: bytes) -> bytes:
    return (f"POST {path} HTTP/1.1\r\nHost: bench\r\n"
            f"Content-Type: application/vnd.schemaregistry.v1+json\r\n"
            f"Content-Length: {len(body)}\r\n\r\n").encode() + body


def _client_process(port: int, requests: list[bytes], threads: int, seconds: float,
                    start_at: float, results: Any) -> None:
    """``threads`` clients sending ``requests`` in turn until ``seconds`` have passed."""
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()

    def client(offset: int) -> None:
        connection = _Connection("127.0.0.1", port)
        mine: list[float] = []
        while time.time() < start_at:
            time.sleep(0.001)
        end = time.perf_counter() + seconds
        index = offset
        while (now := time.perf_counter()) < end:
            status, _ = connection.call(requests[index % len(requests)])
            mine.append(time.perf_counter() - now)
            if status != 200:
                errors.append(f"HTTP {status}")
                break
            index += 1
        with lock:
            latencies.extend(mine)

    workers = [threading.Thread(target=client, args=(i * 7,)) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    results.put((latencies, errors))


def run_clients(port: int, requests: list[bytes], clients: int, seconds: float
                ) -> tuple[float, float]:
    """Requests per second and p99 latency (ms) of ``clients`` concurrent clients."""
    context = multiprocessing.get_context("spawn")
    results = context.Queue()
    processes = 2 if clients > 1 else 1
    start_at = time.time() + 3.0  # every process started and connected by then
    workers = [context.Process(target=_client_process,
                               args=(port, requests, clients // processes + (i < clients %
                                                                             processes),
                                     seconds, start_at, results))
               for i in range(processes)]
    for worker in workers:
        worker.start()
    latencies: list[float] = []
    for _ in workers:
        found, errors = results.get(timeout=seconds + 120)
        if errors:
            raise RuntimeError(f"a client failed: {errors[0]}")
        latencies.extend(found)
    for worker in workers:
        worker.join(timeout=30)
    return len(latencies) / seconds, _p99(latencies)


def _p99(latencies: list[float]) -> float:
    return statistics.quantiles(latencies, n=100)[98] * 1000 if len(latencies) > 1 else 0.0


class _Fixed(BaseHTTPRequestHandler):
    """The peer: the standard library's HTTP server answering one fixed body, as the registry
    answers (one write, TCP_NODELAY), doing nothing else."""

    protocol_version = "HTTP/1.1"
    body = b'{"schema":"\\"string\\""}'
    answer = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
              b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    def setup(self) -> None:
        super().setup()
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def do_GET(self) -> None:
        self.wfile.write(self.answer)

    def log_message(self, format: str, *args: Any) -> None:
        pass


def _schema(index: int) -> bytes:
    schema = {"type": "record", "name": f"Bench{index}", "namespace": "bench",
              "fields": [{"name": "id", "type": "long"}, {"name": "name", "type": "string"},
                         {"name": f"f{index}", "type": ["null", "int"], "default": None}]}
    return json.dumps({"schema": json.dumps(schema)}).encode()


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--schemas", type=int, default=100)
    parser.add_argument("--new", type=int, default=200, help="new schemas registered")
    args = parser.parse_args(argv)
    print(f"{args.clients} concurrent clients, {args.seconds:g} s a measure, "
          f"{args.schemas} schemas, this machine", flush=True)

    peer = ThreadingHTTPServer(("127.0.0.1", 0), _Fixed)
    peer.daemon_threads = True
    threading.Thread(target=peer.serve_forever, daemon=True).start()
    peer_rate, peer_p99 = run_clients(peer.server_port, [_get("/")], args.clients, args.seconds)
    peer.shutdown()
    peer.server_close()
    print(f"peer (a bare http.server, one fixed body): {peer_rate:,.0f} requests/s, "
          f"p99 {peer_p99:.2f} ms", flush=True)

    with LocalKafka(schema_registry=True) as kafka:
        registry = kafka.schema_registry
        assert registry is not None
        port = int(registry.url.rsplit(":", 1)[1])
        connection = _Connection("127.0.0.1", port)
        ids, registrations = [], []
        for index in range(args.schemas):
            status, body = connection.call(_post(f"/subjects/bench-{index}/versions",
                                                 _schema(index)))
            assert status == 200, body
            ids.append(json.loads(body)["id"])
            registrations.append(_post(f"/subjects/bench-{index}/versions", _schema(index)))
        # the new schemas are versions of one subject that checks nothing (each is another
        # record), so that what is timed is the write and its reading back
        level = b'{"compatibility": "NONE"}'
        status, _ = connection.call(_post("/config/bench-new", level).replace(b"POST", b"PUT",
                                                                               1))
        assert status == 200
        latencies = []
        for index in range(args.schemas, args.schemas + args.new):
            start = time.perf_counter()
            status, body = connection.call(_post("/subjects/bench-new/versions",
                                                 _schema(index)))
            latencies.append(time.perf_counter() - start)
            assert status == 200, body
        new_p99 = _p99(latencies)
        print(f"new schemas registered: {args.new}, p99 {new_p99:.2f} ms "
              f"(median {statistics.median(latencies) * 1000:.2f} ms)", flush=True)

        lookups, lookup_p99 = run_clients(port, [_get(f"/schemas/ids/{i}") for i in ids],
                                          args.clients, args.seconds)
        print(f"lookups by id: {lookups:,.0f}/s, p99 {lookup_p99:.2f} ms "
              f"({lookups / peer_rate:.2f}x the peer)", flush=True)
        again, again_p99 = run_clients(port, registrations, args.clients, args.seconds)
        print(f"re-registrations of registered schemas: {again:,.0f}/s, p99 "
              f"{again_p99:.2f} ms ({again / peer_rate:.2f}x the peer)", flush=True)
    met = lookups >= TARGET_LOOKUPS and lookup_p99 < TARGET_LOOKUP_P99_MS
    print(f"target lookups >= {TARGET_LOOKUPS:,}/s with p99 < {TARGET_LOOKUP_P99_MS:g} ms: "
          f"{'met' if met else 'NOT met'}")
    print(f"target new registration p99 < {TARGET_REGISTER_P99_MS:g} ms: "
          f"{'met' if new_p99 < TARGET_REGISTER_P99_MS else 'NOT met'}")


if __name__ == "__main__":
    main()
