"""The network layer over real sockets, with a trivial echo handler (the protocol is elsewhere):
framing, order, concurrency, sendfile, limits on sizes, idleness, slow clients, back-pressure,
and the threads it runs on."""

import socket
import struct
import threading
import time

import pytest

from broker_lite.log.segment import FileRegion
from broker_lite.server.network import (
    RESPONDS_LATER,
    CloseConnection,
    Listener,
    NetworkConfig,
    RequestHandlerPool,
    SocketServer,
)
from broker_lite.server.network import transport as transport_module
from broker_lite.server.network.processor import MAX_HELD_RESPONSES
from broker_lite.server.testing import recv_exactly
from broker_lite.zk.testing import join_all, wait_until


def frame(payload: bytes) -> bytes:
    return struct.pack(">i", len(payload)) + payload


def read_frame(sock: socket.socket) -> bytes:
    size = struct.unpack(">i", recv_exactly(sock, 4))[0]
    return recv_exactly(sock, size)


class EchoServer:
    """A socket server and its request handlers, answering each payload with itself, except:
    ``close`` closes the connection, ``sleepS`` answers after S seconds (holding a handler),
    ``wait`` answers once ``release`` is set (holding a handler),
    ``laterS`` answers after S seconds from another thread (holding none), ``silent`` answers
    nothing, ``file`` and ``big`` answer file regions, ``size:N`` answers N bytes."""

    def __init__(self, tmp_path, **settings):
        self.served: list[tuple[bytes, str]] = []  # (payload, handler thread's name) in turn
        self.slept: list[bytes] = []  # the ``sleepS`` payloads whose sleep is over
        self.release = threading.Event()  # what ``wait`` waits for
        path = tmp_path / "data"
        path.write_bytes(b"0123456789" * 1000)
        big = tmp_path / "big"
        big.write_bytes(bytes(range(256)) * (40 * 4096))  # 40 MiB: far beyond a socket buffer
        self.big_file = open(big, "rb")  # noqa: SIM115 (served from until close())
        self.small_file = open(path, "rb")  # noqa: SIM115 (served from until close())
        config = NetworkConfig(**{"socket_request_max_bytes": 1000,
                                  "connections_max_idle_ms": 500, "num_network_threads": 2,
                                  "num_io_threads": 2, **settings})
        self.handled = 0
        self.server = SocketServer([Listener("PLAINTEXT", "127.0.0.1", 0)], config).start()
        self.handlers = RequestHandlerPool(self.server.request_channel, self.handle,
                                           config.num_io_threads).start()
        self.server.enable_request_processing()

    @property
    def port(self) -> int:
        return self.server.port

    def handle(self, request):
        self.handled += 1
        text = bytes(request.payload)
        self.served.append((text, threading.current_thread().name))
        if text == b"wait":
            assert self.release.wait(10)
        if text == b"close":
            raise CloseConnection("asked to")
        if text.startswith(b"sleep"):
            time.sleep(float(text[5:]))
            self.slept.append(text)
            return [frame(text)]
        if text.startswith(b"later"):
            timer = threading.Timer(float(text[5:]), request.send_response, [[frame(text)]])
            timer.start()
            return RESPONDS_LATER
        if text == b"silent":
            return None
        if text == b"file":
            region = FileRegion(self.small_file.fileno(), 10, 9990)
            return [struct.pack(">i", 9990), region]
        if text == b"big":
            size = 40 * 4096 * 256 - 3
            return [struct.pack(">i", size), FileRegion(self.big_file.fileno(), 3, size)]
        if text.startswith(b"size:"):
            return [frame(bytes(int(text[5:])))]
        return [frame(text)]

    def stop(self) -> None:
        self.server.stop()
        self.handlers.stop()
        self.small_file.close()
        self.big_file.close()


@pytest.fixture
def server(tmp_path):
    server = EchoServer(tmp_path)
    yield server
    server.stop()


def connect(server, timeout: float = 5):
    return socket.create_connection(("127.0.0.1", server.port), timeout=timeout)


def test_responses_come_back_in_request_order(server):
    with connect(server) as sock:
        sock.sendall(frame(b"sleep0.2") + frame(b"second") + frame(b"silent")
                     + frame(b"later0.2") + frame(b"third"))
        assert [read_frame(sock) for _ in range(4)] == [b"sleep0.2", b"second", b"later0.2",
                                                         b"third"]


def test_pipelined_requests_are_served_by_the_handler_that_answered_the_first(server):
    """A client pipelining on a plaintext connection: each handler goes on with the next
    request read, writing the responses itself, rather than through the request queue."""
    payloads = [b"request-%d" % i for i in range(20)]
    with connect(server) as sock:
        sock.sendall(b"".join(frame(p) for p in payloads))
        assert [read_frame(sock) for _ in payloads] == payloads
    assert [text for text, _ in server.served] == payloads
    assert len({thread for _, thread in server.served}) == 1


@pytest.fixture
def writes(monkeypatch):
    """The gathering writes of every plaintext connection, as lists of their buffers."""
    calls: list[list[bytes]] = []
    original = transport_module.PlaintextTransport.__init__

    def counting(self, sock):
        original(self, sock)
        send = sock.sendmsg
        self.send_buffers = lambda buffers: (calls.append([bytes(b) for b in buffers]),
                                             send(buffers))[1]

    monkeypatch.setattr(transport_module.PlaintextTransport, "__init__", counting)
    return calls


def test_responses_to_pipelined_requests_go_out_together(server, writes):
    """Requests read in one go are answered in few writes: each response waits for those of
    the requests read with it, MAX_HELD_RESPONSES at most, and all keep their order."""
    payloads = [b"request-%d" % i for i in range(40)]
    with connect(server) as sock:
        sock.sendall(b"".join(frame(p) for p in payloads))
        assert [read_frame(sock) for _ in payloads] == payloads
    assert b"".join(b"".join(w) for w in writes) == b"".join(frame(p) for p in payloads)
    assert len(payloads) / (MAX_HELD_RESPONSES + 1) <= len(writes) < len(payloads) / 4
    assert max(len(w) for w in writes) == MAX_HELD_RESPONSES + 1


def test_a_lone_request_is_answered_at_once(server, writes):
    """Nothing is held back when no other request is read: a client waiting for its answer
    gets it."""
    with connect(server) as sock:
        for i in range(3):
            sock.sendall(frame(b"one-%d" % i))
            assert read_frame(sock) == b"one-%d" % i
    assert [b"".join(w) for w in writes] == [frame(b"one-%d" % i) for i in range(3)]


@pytest.mark.parametrize("last", [b"silent", b"later0.2", b"close"])
def test_responses_held_back_go_out_before_a_request_answered_otherwise(server, last):
    """A run of pipelined requests ending in one answered with nothing, answered later, or
    closing the connection: the responses held back for it are written first."""
    with connect(server) as sock:
        sock.sendall(frame(b"first") + frame(b"second") + frame(last))
        assert [read_frame(sock), read_frame(sock)] == [b"first", b"second"]
        if last == b"later0.2":
            assert read_frame(sock) == last
        elif last == b"close":
            assert sock.recv(1) == b""
        else:  # nothing for it: the next response is the next request's
            sock.sendall(frame(b"after"))
            assert read_frame(sock) == b"after"


def test_pipelined_requests_take_turns_with_other_connections(tmp_path):
    """With another connection's request waiting in the request queue, a connection's next
    request goes to the back of the queue: its handler does not keep it."""
    server = EchoServer(tmp_path, num_io_threads=1)
    try:
        with connect(server) as first, connect(server) as second:
            first.sendall(frame(b"wait") + frame(b"first-2") + frame(b"first-3"))
            wait_until(lambda: server.served, message="the first request handled")
            second.sendall(frame(b"second-1"))
            wait_until(lambda: server.server.request_channel.request_queue_size == 1,
                       message="the second connection's request queued")
            server.release.set()
            assert [read_frame(first) for _ in range(3)] == [b"wait", b"first-2", b"first-3"]
            assert read_frame(second) == b"second-1"
        assert [text for text, _ in server.served] == [b"wait", b"second-1", b"first-2",
                                                       b"first-3"]
    finally:
        server.release.set()
        server.stop()


def test_connections_are_served_concurrently(server):
    with connect(server) as slow, connect(server) as fast:
        slow.sendall(frame(b"sleep3"))
        wait_until(lambda: server.served, message="the slow request is being handled")
        fast.sendall(frame(b"quick"))
        assert read_frame(fast) == b"quick"
        assert server.slept == []  # answered while the slow request's handler still sleeps
        assert read_frame(slow) == b"sleep3"


def test_requests_answered_later_hold_no_handler(server):
    """Ten requests waiting for their answers, with two handler threads: others still pass."""
    waiting = [connect(server) for _ in range(10)]
    try:
        for sock in waiting:
            sock.sendall(frame(b"later3.0"))
        with connect(server) as other:
            started = time.monotonic()
            other.sendall(frame(b"quick"))
            assert read_frame(other) == b"quick"
            assert time.monotonic() - started < 2  # long before the others' answers
        assert all(read_frame(sock) == b"later3.0" for sock in waiting)
    finally:
        for sock in waiting:
            sock.close()


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


def test_a_region_beyond_the_end_of_its_file_is_padded(server, tmp_path):
    """A segment truncated after the read (retention, a truncation): the response keeps its
    announced size, as a client must be able to frame what follows."""
    short = tmp_path / "short"
    short.write_bytes(b"abc")
    with open(short, "rb") as file:
        def answer(request):
            return [struct.pack(">i", 8), FileRegion(file.fileno(), 0, 8)]
        server.handlers._handler = answer
        with connect(server) as sock:
            sock.sendall(frame(b"x"))
            assert read_frame(sock) == b"abc" + bytes(5)


@pytest.mark.parametrize("size", [1001, 2**31 - 1, -5])
def test_oversized_or_negative_sizes_close_the_connection_before_reading(server, size):
    with connect(server) as sock:
        sock.sendall(struct.pack(">i", size))
        assert sock.recv(1) == b""
    with connect(server) as other:  # the server keeps serving
        other.sendall(frame(b"still here"))
        assert read_frame(other) == b"still here"


def test_frames_split_anywhere_are_put_together(server):
    data = frame(b"x" * 900) + frame(b"second") + frame(b"third")
    with connect(server) as sock:
        for i in range(0, len(data), 7):
            sock.sendall(data[i:i + 7])
        assert [read_frame(sock) for _ in range(3)] == [b"x" * 900, b"second", b"third"]


def test_handler_can_close_its_connection(server):
    with connect(server) as sock:
        sock.sendall(frame(b"close"))
        assert sock.recv(1) == b""


def test_idle_connections_are_closed(server):
    with connect(server) as sock:
        time.sleep(0.8)
        assert sock.recv(1) == b""
    wait_until(lambda: server.server.connection_count == 0, 2, "the idle connection is gone")


def test_a_connection_reset_while_its_request_is_handled_is_closed_at_once(server):
    """A connection waiting for its answer reads nothing, yet its reset is noticed now (not
    when the answer is ready) and costs the others nothing."""
    sock = connect(server)
    sock.sendall(frame(b"sleep3"))
    wait_until(lambda: server.server.connection_count == 1, 5, "the connection accepted")
    time.sleep(0.2)  # the request is being handled: the connection is muted
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    sock.close()  # a reset
    wait_until(lambda: server.server.connection_count == 0, 2, "the reset connection closed")
    assert_served_promptly(server, 10, 2)  # its handler sleeps 3 s


def test_a_connection_waiting_for_its_answer_is_not_idle(server):
    with connect(server) as sock:
        sock.sendall(frame(b"later1.0"))  # twice connections.max.idle.ms
        assert read_frame(sock) == b"later1.0"


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

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(30)]
    for t in threads:
        t.start()
    join_all(threads, 120, "client threads still running after 120 s")
    assert errors == []


def test_thread_count_does_not_grow_with_connections(tmp_path):
    server = EchoServer(tmp_path, connections_max_idle_ms=60_000)
    before = set(threading.enumerate())
    sockets = [connect(server) for _ in range(200)]
    try:
        wait_until(lambda: server.server.connection_count == 200, 30, "all accepted")
        for sock in sockets[::20]:
            sock.sendall(frame(b"ping"))
            assert read_frame(sock) == b"ping"
        # Only threads started since (an earlier test's thread ending does not count).
        started = [t.name for t in set(threading.enumerate()) - before]
        assert started == []
    finally:
        for sock in sockets:
            sock.close()
        server.stop()


def assert_served_promptly(server, requests: int, limit_s: float) -> None:
    """Another client's ``requests`` round trips each take less than ``limit_s``."""
    with connect(server) as other:
        for i in range(requests):
            started = time.monotonic()
            other.sendall(frame(b"ping-%d" % i))
            assert read_frame(other) == b"ping-%d" % i
            assert time.monotonic() - started < limit_s


def test_a_client_that_never_reads_does_not_stall_the_others(tmp_path):
    """It asks for large responses and reads none: its connection fills up and waits, muted,
    while the same processor (one network thread) serves everyone else."""
    server = EchoServer(tmp_path, num_network_threads=1, socket_send_buffer_bytes=4096,
                        socket_receive_buffer_bytes=4096)
    try:
        stuck = connect(server)
        stuck.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        stuck.sendall(b"".join(frame(b"size:900") for _ in range(200)))
        time.sleep(0.3)
        assert_served_promptly(server, 50, 2)
        assert server.handled < 200  # the stuck client's requests wait in its socket
        stuck.close()
    finally:
        server.stop()


def test_a_client_sending_a_byte_a_second_does_not_stall_the_others(tmp_path):
    server = EchoServer(tmp_path, num_network_threads=1, num_io_threads=1,
                        connections_max_idle_ms=5000)
    try:
        trickle = connect(server)
        data = frame(b"slowly" * 4)  # 28 bytes, one every 0.2 s
        stop = threading.Event()

        def send_slowly():  # the frame takes 5.6 s
            for byte in data:
                if stop.wait(0.2):
                    return
                trickle.sendall(bytes([byte]))

        sender = threading.Thread(target=send_slowly, daemon=True)
        sender.start()
        assert_served_promptly(server, 20, 2)
        sender.join(30)  # 5.6 s
        assert not sender.is_alive(), "the slow sender still sending after 30 s"
        assert read_frame(trickle) == b"slowly" * 4
        trickle.close()
    finally:
        stop.set()
        server.stop()


def test_a_full_request_queue_stops_reading_and_resumes(tmp_path):
    """queued.max.requests=2 with one handler busy: further requests wait in the sockets, none
    is lost, and all are answered in order once the handler is free."""
    server = EchoServer(tmp_path, queued_max_requests=2, num_io_threads=1)
    try:
        sockets = [connect(server) for _ in range(6)]
        sockets[0].sendall(frame(b"sleep0.5"))
        time.sleep(0.1)
        for i, sock in enumerate(sockets[1:], 1):
            sock.sendall(frame(b"one-%d" % i) + frame(b"two-%d" % i))
        time.sleep(0.2)
        assert server.server.request_channel.request_queue_size <= 2
        assert read_frame(sockets[0]) == b"sleep0.5"
        for i, sock in enumerate(sockets[1:], 1):
            assert [read_frame(sock), read_frame(sock)] == [b"one-%d" % i, b"two-%d" % i]
        for sock in sockets:
            sock.close()
    finally:
        server.stop()


def test_requests_are_served_only_once_enabled(tmp_path):
    """Bound by start(), served after enable_request_processing(): a client connecting in
    between waits (in the backlog) and is then served."""
    config = NetworkConfig(num_network_threads=1, num_io_threads=1)
    server = SocketServer([Listener("PLAINTEXT", "127.0.0.1", 0)], config).start()
    handlers = RequestHandlerPool(server.request_channel, lambda r: [frame(b"ok")], 1).start()
    try:
        with socket.create_connection(("127.0.0.1", server.port), timeout=5) as sock:
            sock.sendall(frame(b"hello"))
            sock.settimeout(0.3)
            with pytest.raises(TimeoutError):
                sock.recv(1)
            server.enable_request_processing()
            sock.settimeout(5)
            assert read_frame(sock) == b"ok"
    finally:
        server.stop()
        handlers.stop()


def test_stop_closes_everything(server):
    sock = connect(server)
    sock.sendall(frame(b"x"))
    read_frame(sock)
    server.server.stop()
    assert sock.recv(1) == b""
    with pytest.raises(OSError):
        connect(server)


def test_stop_waits_for_requests_being_handled(server):
    sock = connect(server)
    sock.sendall(frame(b"sleep0.5"))
    wait_until(lambda: server.served, message="a handler is sleeping")
    server.server.stop()
    server.handlers.stop()
    assert server.slept == [b"sleep0.5"]  # returned only once the handler was done
    assert not any(t.name.startswith("broker-request-handler") and t.is_alive()
                   for t in server.handlers._threads)


def test_drop_connections_cuts_every_connection(server):
    sockets = [connect(server) for _ in range(3)]
    wait_until(lambda: server.server.connection_count == 3, 5, "all accepted")
    assert server.server.drop_connections() == 3
    for sock in sockets:
        assert sock.recv(1) == b""
        sock.close()
    with connect(server) as other:  # the listener keeps accepting
        other.sendall(frame(b"again"))
        assert read_frame(other) == b"again"


def answered(sock: socket.socket, within_s: float) -> bool:
    """Whether a request on ``sock`` is answered within ``within_s`` (False: no answer yet)."""
    sock.sendall(frame(b"are you there"))
    sock.settimeout(within_s)
    try:
        return read_frame(sock) == b"are you there"
    except TimeoutError:
        return False
    finally:
        sock.settimeout(5)


def test_max_connections_makes_newcomers_wait_for_a_slot(tmp_path):
    """Kafka's max.connections (KIP-402): at the limit the acceptor accepts no more; the
    newcomer waits in the listen backlog and is served once a connection closes, while the
    connected clients keep working."""
    server = EchoServer(tmp_path, max_connections=2, connections_max_idle_ms=60_000)
    try:
        first, second = connect(server), connect(server)
        assert answered(first, 5) and answered(second, 5)
        third = connect(server)  # the kernel completes the handshake: it waits in the backlog
        assert not answered(third, 0.5)
        assert server.server.connection_count == 2
        assert answered(first, 5)  # the others are not held up
        second.close()
        assert read_frame(third) == b"are you there"  # accepted now, its request answered
        assert server.server.connection_count == 2
        first.close()
        third.close()
    finally:
        server.stop()


def test_max_connections_per_ip_closes_the_extra_connection_at_once(tmp_path):
    server = EchoServer(tmp_path, max_connections_per_ip=2, connections_max_idle_ms=60_000)
    try:
        allowed = [connect(server), connect(server)]
        refused = connect(server)
        assert refused.recv(1) == b""  # closed by the broker as soon as it was accepted
        refused.close()
        assert all(answered(sock, 5) for sock in allowed)
        allowed.pop().close()
        wait_until(lambda: server.server.connection_count == 1, 5, "the slot is free again")
        with connect(server) as again:
            assert answered(again, 5)
        allowed[0].close()
    finally:
        server.stop()


def test_max_connections_per_ip_overrides_name_addresses_with_their_own_limit(tmp_path):
    server = EchoServer(tmp_path, max_connections_per_ip=1, connections_max_idle_ms=60_000,
                        max_connections_per_ip_overrides="127.0.0.2:3")

    def connect_from(address):
        return socket.create_connection(("127.0.0.1", server.port), timeout=5,
                                        source_address=(address, 0))

    try:
        many = [connect_from("127.0.0.2") for _ in range(3)]
        one = connect_from("127.0.0.1")
        assert all(answered(sock, 5) for sock in [*many, one])
        for address in ("127.0.0.2", "127.0.0.1"):
            with connect_from(address) as extra:
                assert extra.recv(1) == b""
        for sock in [*many, one]:
            sock.close()
    finally:
        server.stop()
