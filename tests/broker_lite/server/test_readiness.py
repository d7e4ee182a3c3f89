"""A broker serves no request before it is ready: its listener is bound early (the port goes into
its ZooKeeper registration), but requests are processed only once ZooKeeper lists the broker and
names a controller, so a client's first Metadata answer already shows both (Kafka's
``SocketServer.enableRequestProcessing``, called last in a broker's start-up)."""

import socket
import struct
import threading
import time

import pytest

from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, encode_request, parse_response
from broker_lite.server.broker import Broker
from broker_lite.server.metadata import BrokerInfo, ClusterMetadata
from broker_lite.server.testing import broker_config, recv_exactly
from broker_lite.zk.cluster import ensure_persistent_paths
from broker_lite.zk.endpoints import EndPoint
from broker_lite.zk.layout import BrokerRegistration
from broker_lite.zk.registration import register_broker
from broker_lite.zk.server import free_port

METADATA_VERSION = 12


def metadata_request() -> bytes:
    return encode_request(ApiKey.METADATA, METADATA_VERSION, 1, "readiness",
                          {"topics": None, "allow_auto_topic_creation": False})


def read_metadata(sock: socket.socket) -> dict:
    (size,) = struct.unpack(">i", recv_exactly(sock, 4))
    return parse_response(ApiKey.METADATA, METADATA_VERSION, recv_exactly(sock, size))[1]


def connect_when_bound(port: int, timeout_s: float = 60) -> socket.socket:
    """A connection to ``port`` as soon as something listens there."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=timeout_s)
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.001)


class StartInThread:
    """``Broker(config).start()`` on a thread of its own, as a process's main thread would."""

    def __init__(self, config):
        self.broker = Broker(config)
        self.started = threading.Event()
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.broker.start()
        except BaseException as exc:
            self.error = exc
        finally:
            self.started.set()

    def join(self) -> Broker:
        assert self.started.wait(60) and self.error is None, self.error
        return self.broker


@pytest.fixture
@needs("broker", "zookeeper")
def start_on_port(zookeeper_connect, tmp_path):
    """``start_on_port(port) -> StartInThread``: broker 4 starting; stopped at the end."""
    started: list[StartInThread] = []

    def start(port: int) -> StartInThread:
        started.append(StartInThread(broker_config(
            zookeeper_connect, tmp_path, 4, {"listeners": f"PLAINTEXT://127.0.0.1:{port}"})))
        return started[-1]

    yield start
    for starting in started:
        starting.started.wait(60)
        starting.broker.stop()


def assert_shows_broker_and_controller(answer: dict, broker: Broker, port: int) -> None:
    assert [(b["node_id"], b["host"], b["port"]) for b in answer["brokers"]] == [
        (4, "127.0.0.1", port)]
    assert answer["controller_id"] == 4
    assert answer["cluster_id"] == broker.services.cluster_id is not None


def test_a_request_sent_during_start_up_is_answered_once_the_broker_is_ready(start_on_port,
                                                                             monkeypatch):
    ready = threading.Event()
    shows_itself = ClusterMetadata.shows_itself
    monkeypatch.setattr(ClusterMetadata, "shows_itself",
                        lambda self: ready.is_set() and shows_itself(self))
    port = free_port()
    starting = start_on_port(port)
    try:
        with connect_when_bound(port) as sock:
            sock.sendall(metadata_request())
            sock.settimeout(1)
            with pytest.raises(TimeoutError):
                sock.recv(1)  # the port is bound, the broker not ready: no answer
            assert not starting.started.is_set()
            ready.set()
            sock.settimeout(30)
            answer = read_metadata(sock)
    finally:
        ready.set()
    assert_shows_broker_and_controller(answer, starting.join(), port)


def test_the_first_metadata_answer_lists_this_broker_and_the_controller(start_on_port):
    """A client that connects the moment the port is bound, with nothing held back."""
    port = free_port()
    starting = start_on_port(port)
    with connect_when_bound(port) as sock:
        sock.sendall(metadata_request())
        answer = read_metadata(sock)
    assert_shows_broker_and_controller(answer, starting.join(), port)


@pytest.mark.zookeeper
def test_the_live_brokers_include_this_one_even_when_zookeeper_does_not(zookeeper_client):
    ensure_persistent_paths(zookeeper_client)
    cluster = ClusterMetadata(zookeeper_client)
    assert cluster.brokers() == [] and not cluster.shows_itself()
    cluster.local_broker = BrokerInfo(7, "127.0.0.1", 9097, None)
    assert cluster.brokers() == [cluster.local_broker]
    assert not cluster.shows_itself()  # neither registered nor a controller
    register_broker(zookeeper_client, BrokerRegistration(
        broker_id=3, endpoints=(EndPoint("PLAINTEXT", "127.0.0.1", 9093, "PLAINTEXT"),),
        timestamp_ms=0, rack=None))
    assert [b.broker_id for b in cluster.brokers()] == [3, 7]
    assert cluster.registered_brokers() == [BrokerInfo(3, "127.0.0.1", 9093, None)]
