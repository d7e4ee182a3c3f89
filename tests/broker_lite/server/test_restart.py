"""A broker process started by the real command line, stopped with SIGTERM or killed with
SIGKILL, and started again: every acknowledged record is still there and offsets continue."""

import signal
import socket
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from broker_lite.log.files import CLEAN_SHUTDOWN_MARKER
from kspark.testing.tiers import needs

SESSION_TIMEOUT_MS = 6000


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class BrokerProcess:
    def __init__(self, tmp_path, zookeeper_connect):
        self.port = free_port()
        self.log_dir = tmp_path / "logs"
        self.properties = tmp_path / "server.properties"
        self.properties.write_text(
            f"broker.id=1\nlisteners=PLAINTEXT://127.0.0.1:{self.port}\nlog.dirs={self.log_dir}\n"
            f"zookeeper.connect={zookeeper_connect}\n"
            f"zookeeper.session.timeout.ms={SESSION_TIMEOUT_MS}\nnum.partitions=1\n")
        self.process = None

    def start(self) -> str:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "broker_lite", "start", str(self.properties),
             "--override", "log.flush.interval.messages=1"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.process.stdout.readline()
        assert "listening on" in line, self.process.stderr.read()
        return line

    def stop(self, signum) -> int:
        self.process.send_signal(signum)
        return self.process.wait(timeout=30)


@pytest.fixture
@needs("broker", "zookeeper")
def broker_process(tmp_path, zookeeper_connect):
    process = BrokerProcess(tmp_path, zookeeper_connect)
    yield process
    if process.process is not None and process.process.poll() is None:
        process.process.kill()
        process.process.wait()


def produce(port: int, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{port}", "acks": "all",
                         "log_level": 3})
    errors = []
    for value in values:
        producer.produce(topic, partition=0, value=value,
                         on_delivery=lambda err, msg: errors.append(err))
    assert producer.flush(30) == 0
    assert errors == [None] * len(values)


def consume_all(port: int, topic: str, count: int) -> list[tuple[int, bytes]]:
    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{port}", "group.id": "restart",
                         "enable.auto.commit": False, "log_level": 3})
    consumer.assign([TopicPartition(topic, 0, 0)])
    got, deadline = [], time.monotonic() + 30
    try:
        while len(got) < count and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None and message.error() is None:
                got.append((message.offset(), message.value()))
    finally:
        consumer.close()
    return got


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGKILL])
def test_acknowledged_records_survive_a_restart(broker_process, signum):
    line = broker_process.start()
    assert f"127.0.0.1:{broker_process.port}" in line
    first = [b"before-%d" % i for i in range(200)]
    produce(broker_process.port, "durable", first)
    code = broker_process.stop(signum)
    marker = broker_process.log_dir / CLEAN_SHUTDOWN_MARKER
    if signum == signal.SIGTERM:
        assert code == 0 and marker.exists()
    else:
        assert code == -signal.SIGKILL and not marker.exists()

    broker_process.start()  # after SIGKILL, waits for the dead session's registration to expire
    second = [b"after-%d" % i for i in range(50)]
    produce(broker_process.port, "durable", second)
    assert consume_all(broker_process.port, "durable", 250) == list(enumerate(first + second))
    assert broker_process.stop(signal.SIGTERM) == 0


@pytest.mark.broker
def test_bad_properties_give_a_usage_error(tmp_path):
    done = subprocess.run([sys.executable, "-m", "broker_lite", "start", str(tmp_path / "none")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "no such properties file" in done.stderr
    bad = tmp_path / "bad.properties"
    bad.write_text("num.partitions=zero\n")
    done = subprocess.run([sys.executable, "-m", "broker_lite", "start", str(bad)],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "num.partitions" in done.stderr
