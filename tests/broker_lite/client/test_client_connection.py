"""One broker connection, and the client around it, against unhelpful peers: closed ports,
listeners that never answer, connections dropped mid-request or while idle, responses that
answer another request; and one connection shared by threads."""

import socket
import threading
import time

import pyarrow as pa
import pytest
from scripted_broker import CLOSE, SILENT, ScriptedBroker, full_listener, sequence

from broker_lite.client import (
    BrokerNotAvailableError,
    ClientClosedError,
    ClientConfig,
    InvalidResponseError,
    KafkaClient,
    KafkaConnectionError,
    KafkaTimeoutError,
)
from broker_lite.client.cluster.connection import (
    _POOLED_FRAME_BYTES,
    BrokerConnection,
    _recv_exactly,
    _send_request,
)
from broker_lite.client.retry import Deadline
from broker_lite.protocol import ApiKey, encode_request, encode_request_parts, encode_response
from broker_lite.zk.testing import join_all, wait_until

# Bounds on "fails within the configured timeout": the timeout plus room for a loaded machine.
SLACK_S = 10


def closed_port() -> int:
    with socket.create_server(("127.0.0.1", 0)) as sock:
        return sock.getsockname()[1]


def connection(broker: ScriptedBroker, **settings) -> BrokerConnection:
    config = ClientConfig({"bootstrap.servers": broker.bootstrap, **settings})
    return BrokerConnection("127.0.0.1", broker.port, config)


def metadata_body(conn: BrokerConnection) -> dict:
    return conn.request(ApiKey.METADATA, {"topics": None}, Deadline(5000))[1]


def test_a_closed_port_fails_within_the_timeout_naming_the_servers():
    port = closed_port()
    client = KafkaClient({"bootstrap.servers": f"127.0.0.1:{port}", "request.timeout.ms": "1500",
                          "retry.backoff.ms": "50"})
    started = time.monotonic()
    with pytest.raises(KafkaTimeoutError) as info:
        client.topics()
    elapsed = time.monotonic() - started
    assert 1.4 <= elapsed < 1.5 + SLACK_S  # retried until the deadline, not beyond
    message = str(info.value)
    assert "within 1500 ms" in message
    assert f"bootstrap.servers=127.0.0.1:{port}" in message and "refused" in message
    assert isinstance(info.value.last_error, BrokerNotAvailableError)
    client.close()


def test_a_connection_that_cannot_be_set_up_fails_within_the_setup_timeout():
    """A listener with a full accept queue drops new SYNs: the connect hangs until
    socket.connection.setup.timeout.ms, then the client tries again until request.timeout.ms."""
    listener, queued = full_listener()
    port = listener.getsockname()[1]
    try:
        client = KafkaClient({"bootstrap.servers": f"127.0.0.1:{port}",
                              "socket.connection.setup.timeout.ms": "300",
                              "request.timeout.ms": "1000", "retry.backoff.ms": "10"})
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            client.topics()
        assert time.monotonic() - started < 1 + SLACK_S
        client.close()
    finally:
        for sock in [*queued, listener]:
            sock.close()
    assert isinstance(info.value.last_error, BrokerNotAvailableError)
    assert f"cannot connect to broker 127.0.0.1:{port}: no answer within" in str(info.value)


def test_a_listener_that_never_answers_times_out_naming_the_broker():
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never reads or writes
        port = silent.getsockname()[1]
        client = KafkaClient({"bootstrap.servers": f"127.0.0.1:{port}",
                              "request.timeout.ms": "1000"})
        started = time.monotonic()
        with pytest.raises(KafkaTimeoutError) as info:
            client.partitions("events")
        assert time.monotonic() - started < 1 + SLACK_S
        client.close()
    message = str(info.value)
    assert f"broker 127.0.0.1:{port} did not answer ApiVersions v3" in message
    assert "partitions('events') did not complete within 1000 ms" in message


def test_a_connection_closed_mid_request_raises_a_retriable_error_and_reconnects():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = sequence(CLOSE, broker.metadata({"t": 1}))
        conn = connection(broker)
        with pytest.raises(KafkaConnectionError) as info:
            metadata_body(conn)
        assert info.value.retriable and not conn.connected
        assert f"connection to broker {broker.bootstrap} lost during Metadata v12" in \
            str(info.value)
        assert metadata_body(conn)["topics"][0]["name"] == "t"
        assert broker.connections == 2


def test_the_client_retries_a_lost_connection_transparently():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = sequence(CLOSE, CLOSE, broker.metadata({"t": 3}))
        with KafkaClient({"bootstrap.servers": broker.bootstrap,
                          "retry.backoff.ms": "10"}) as client:
            assert client.partitions("t") == [0, 1, 2]
        assert len(broker.requests_for(ApiKey.METADATA)) == 3


def test_a_connection_the_broker_closed_while_idle_is_reopened_before_sending():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({"t": 1})
        conn = connection(broker)
        metadata_body(conn)
        broker.drop_connections()
        wait_until(lambda: not broker._open, message="the broker closed the connection")
        metadata_body(conn)  # no error: the closed connection was noticed and replaced
        assert broker.connections == 2


def test_a_response_to_another_request_resets_the_connection():
    def wrong_id(header, body):
        return b"".join(encode_response(ApiKey.METADATA, header.api_version,
                                        header.correlation_id + 100, {"brokers": [], "topics": []}))

    with ScriptedBroker({ApiKey.METADATA: wrong_id}) as broker:
        conn = connection(broker)
        with pytest.raises(InvalidResponseError, match="answered correlation id"):
            metadata_body(conn)
        assert not conn.connected


def test_a_response_that_does_not_decode_is_an_invalid_response():
    def garbage(header, body):
        payload = header.correlation_id.to_bytes(4, "big") + b"\x00\x01"  # body cut short
        return len(payload).to_bytes(4, "big") + payload

    with ScriptedBroker({ApiKey.METADATA: garbage}) as broker:
        with pytest.raises(InvalidResponseError, match="does not decode"):
            metadata_body(connection(broker))


def test_a_slow_response_times_out_and_the_late_answer_is_never_read():
    with ScriptedBroker() as broker:
        broker.handlers[ApiKey.METADATA] = sequence(SILENT, broker.metadata({"t": 1}))
        conn = connection(broker)
        with pytest.raises(KafkaTimeoutError, match="did not answer Metadata v12 within"):
            conn.request(ApiKey.METADATA, {"topics": None}, Deadline(300))
        assert not conn.connected  # a late answer would be out of step
        assert metadata_body(conn)["topics"][0]["name"] == "t"


def test_one_connection_serves_many_threads_in_order():
    def echo(header, body):
        time.sleep(0.002)  # let requests pile up
        return {"brokers": [], "topics": [{"error_code": 0, "name": t["name"], "partitions": []}
                                          for t in body["topics"]]}

    with ScriptedBroker({ApiKey.METADATA: echo}) as broker:
        conn = connection(broker)
        answers, failures = {}, []

        def worker(n: int) -> None:
            try:
                for i in range(20):
                    name = f"t{n}-{i}"
                    body = conn.request(ApiKey.METADATA, {"topics": [{"name": name}]},
                                        Deadline(20000))[1]
                    answers[name] = body["topics"][0]["name"]
            except Exception as exc:  # reported below
                failures.append(exc)

        threads = [threading.Thread(target=worker, args=(n,), daemon=True) for n in range(8)]
        for t in threads:
            t.start()
        join_all(threads, 120, "worker threads still running after 120 s")
        assert failures == []
        assert len(answers) == 160 and all(k == v for k, v in answers.items())
        assert broker.connections == 1


def test_closing_unblocks_a_request_in_progress():
    with ScriptedBroker({ApiKey.METADATA: lambda header, body: SILENT}) as broker:
        conn = connection(broker)
        outcome = []

        def blocked() -> None:
            try:
                metadata_body(conn)
            except Exception as exc:  # checked below
                outcome.append(exc)

        thread = threading.Thread(target=blocked)
        thread.start()
        wait_until(lambda: broker.requests_for(ApiKey.METADATA), message="request sent")
        conn.close()
        thread.join(timeout=5)
        assert not thread.is_alive(), "the request still blocked 5 s after the close"
        assert isinstance(outcome[0], ClientClosedError)
        with pytest.raises(ClientClosedError):
            metadata_body(conn)


def test_a_closed_client_refuses_calls():
    client = KafkaClient({"bootstrap.servers": "127.0.0.1:9"})
    client.close()
    with pytest.raises(ClientClosedError):
        client.topics()


def received_frame(n: int):
    """A frame of ``n`` bytes sent over a socket pair, as ``_recv_exactly`` receives it."""
    payload = bytes(range(256)) * (n // 256) + bytes(n % 256)
    ours, theirs = socket.socketpair()
    with ours, theirs:
        sender = threading.Thread(target=theirs.sendall, args=(payload,))
        sender.start()
        frame = _recv_exactly(ours, n, Deadline(10_000))
        sender.join()
    return payload, frame


def test_a_large_frame_is_received_into_arrows_pool_and_a_small_one_into_a_bytearray():
    n = _POOLED_FRAME_BYTES + 12_345
    pooled_before = pa.total_allocated_bytes()
    payload, frame = received_frame(n)
    # the pool's memory is kept mapped between frames, where a bytearray's is zeroed and
    # faulted in again for every fetch (see _frame_buffer)
    assert pa.total_allocated_bytes() - pooled_before >= n
    assert isinstance(frame, memoryview) and frame.format == "B" and not frame.readonly
    assert frame == payload and frame[7] == payload[7]  # bytes, not signed chars
    payload, frame = received_frame(_POOLED_FRAME_BYTES - 1)
    assert isinstance(frame, bytearray) and frame == payload


class CountedWrites:
    """A socket whose writes are counted: ``writes`` holds (method, bytes written)."""

    def __init__(self, sock: socket.socket):
        self.sock, self.writes = sock, []

    def settimeout(self, seconds: float) -> None:
        self.sock.settimeout(seconds)

    def sendall(self, data) -> None:
        self.sock.sendall(data)
        self.writes.append(("sendall", len(data)))

    def sendmsg(self, buffers) -> int:
        sent = self.sock.sendmsg(buffers)
        self.writes.append(("sendmsg", sent))
        return sent


def sent_request(parts: list, *, gather: bool) -> tuple[bytes, list]:
    """What the peer reads while ``_send_request`` sends ``parts``, and the writes it took."""
    total = sum(map(len, parts))
    got = bytearray()
    ours, theirs = socket.socketpair()
    with ours, theirs:
        ours.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 65_536)
        counted = CountedWrites(ours)

        def read() -> None:
            while len(got) < total:
                time.sleep(0.001)  # a slow reader: the sender's writes go out in pieces
                got.extend(theirs.recv(65_536))

        reader = threading.Thread(target=read)
        reader.start()
        _send_request(counted, parts, Deadline(10_000), gather=gather)  # type: ignore[arg-type]
        reader.join(SLACK_S)
    return bytes(got), counted.writes


def test_a_large_request_goes_out_as_its_parts_and_arrives_whole():
    records = bytearray(bytes(range(256)) * 8192)  # 2 MiB, as the compiled encoder gives them
    body = {"transactional_id": None, "acks": -1, "timeout_ms": 1000, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": records},
                                         {"index": 1, "records": b""}]}]}
    frame = encode_request(ApiKey.PRODUCE, 9, 7, "kpy", body)
    parts = encode_request_parts(ApiKey.PRODUCE, 9, 7, "kpy", body)
    assert any(part is records for part in parts)  # not copied into the frame
    got, writes = sent_request(parts, gather=True)
    assert got == frame
    # gathering writes only, resumed after partial ones
    assert {method for method, _ in writes} == {"sendmsg"} and len(writes) > 1
    assert sum(sent for _, sent in writes) == len(frame)
    # without gathering (TLS), and for a small request, the parts are joined and sent at once
    assert sent_request(parts, gather=False) == (frame, [("sendall", len(frame))])
    small = encode_request_parts(ApiKey.METADATA, 1, 8, "kpy", {"topics": None})
    joined = b"".join(small)
    assert sent_request(small, gather=True) == (joined, [("sendall", len(joined))])
