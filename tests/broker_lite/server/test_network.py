"""The network layer over real sockets, with a trivial echo handler (the protocol is elsewhere)."""

import socket
import struct
import threading
import time

import pytest

from broker_lite.log.segment import FileRegion
from broker_lite.server.network import CloseConnection, SocketServer
from broker_lite.server.testing import recv_exactly


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", recv_exactly(sock, 4))[0]
    return recv_exactly(sock, size)



@pytest.fixture
def server(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(b"0123456789" * 1000)
    big = tmp_path / "big"
    big.write_bytes(bytes(range(256)) * (40 * 4096))  # 40 MiB: far beyond a socket buffer
    big_holder = open(big, "rb")
    fd_holder = open(path, "rb")

    def handle(payload, connection):
        text = bytes(payload)
        if text == b"close":
            raise CloseConnection("asked to")
        if text.startswith(b"sleep"):
            time.sleep(float(text[5:]))
            return [frame(text)]
        if text == b"silent":
            return None
        if text == b"file":
            region = FileRegion(fd_holder.fileno(), 10, 9990)
            return [struct.pack(">i", 9990), region]
        if text == b"big":
            size = 40 * 4096 * 256 - 3
            return [struct.pack(">i", size), FileRegion(big_holder.fileno(), 3, size)]
        return [frame(text)]

    srv = SocketServer("127.0.0.1", 0, handle, max_request_bytes=1000, idle_timeout_ms=500)
    srv.start().enable_request_processing()
    yield srv
    srv.stop()
    fd_holder.close()
    big_holder.close()


def connect(server):
    return socket.create_connection(("127.0.0.1", server.port), timeout=5)


def test_responses_come_back_in_request_order(server):
    with connect(server) as sock:
        sock.sendall(frame(b"sleep0.2") + frame(b"second") + frame(b"silent") + frame(b"third"))
        assert [read_frame(sock) for _ in range(3)] == [b"sleep0.2", b"second", b"third"]


def test_connections_are_served_concurrently(server):
    with connect(server) as slow, connect(server) as fast:
        slow.sendall(frame(b"sleep0.5"))
        started = time.monotonic()
        fast.sendall(frame(b"quick"))
        assert read_frame(fast) == b"quick"
        assert time.monotonic() - started < 0.4
        assert read_frame(slow) == b"sleep0.5"


def test_a_region_larger_than_the_socket_buffers_arrives_whole(server):
    with connect(server) as sock:
        sock.sendall(frame(b"big"))
        time.sleep(0.2)  # let the send buffer fill before reading
        data = read_frame(sock)
    assert len(data) == 40 * 4096 * 256 - 3
    assert data == (bytes(range(256)) * (40 * 4096))[3:]


def test_file_regions_are_sent_with_sendfile(server):
    with connect(server) as sock:
        sock.sendall(frame(b"file"))
        assert read_frame(sock) == (b"0123456789" * 1000)[10:]


@pytest.mark.parametrize("size", [1001, 2**31 - 1, -5])
def test_oversized_or_negative_sizes_close_the_connection_before_reading(server, size):
    with connect(server) as sock:
        sock.sendall(struct.pack(">i", size))
        assert sock.recv(1) == b""
    with connect(server) as other:  # the server keeps serving
        other.sendall(frame(b"still here"))
        assert read_frame(other) == b"still here"


def test_handler_can_close_its_connection(server):
    with connect(server) as sock:
        sock.sendall(frame(b"close"))
        assert sock.recv(1) == b""


def test_idle_connections_are_closed(server):
    with connect(server) as sock:
        time.sleep(0.8)
        assert sock.recv(1) == b""
    deadline = time.monotonic() + 2
    while server.connection_count and time.monotonic() < deadline:
        time.sleep(0.01)
    assert server.connection_count == 0


def test_many_clients_at_once(server):
    errors = []

    def client(i):
        try:
            with connect(server) as sock:
                for j in range(20):
                    message = b"client-%d-%d" % (i, j)
                    sock.sendall(frame(message))
                    assert read_frame(sock) == message
        except Exception as exc:  # collected for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=client, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_stop_closes_everything(server):
    sock = connect(server)
    sock.sendall(frame(b"x"))
    read_frame(sock)
    server.stop()
    assert sock.recv(1) == b""
    with pytest.raises(OSError):
        connect(server)


def test_stop_waits_for_requests_being_handled(server):
    sock = connect(server)
    sock.sendall(frame(b"sleep0.5"))
    time.sleep(0.1)  # the handler is sleeping now
    # This connection's thread, by its client port: other servers' threads may still be ending.
    name = f"{server.name}-connection-{sock.getsockname()[1]}"
    (handler,) = [t for t in threading.enumerate() if t.name == name]
    server.stop()
    assert not handler.is_alive()  # returned only once the handler was done
