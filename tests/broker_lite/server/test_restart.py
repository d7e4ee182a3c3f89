"""A broker process started by the real command line, stopped with SIGTERM or killed with
SIGKILL, and started again: every acknowledged record is still there and offsets continue."""

import signal
import subprocess
import sys
import time

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition

from broker_lite.common.tiers import needs
from broker_lite.local.cluster import BrokerProcess
from broker_lite.log.files import CLEAN_SHUTDOWN_MARKER

SESSION_TIMEOUT_MS = 6000


@pytest.fixture
@needs("broker", "zookeeper")
def broker_process(tmp_path, zookeeper_connect):
    process = BrokerProcess(1, tmp_path, {
        "zookeeper.connect": zookeeper_connect,
        "zookeeper.session.timeout.ms": str(SESSION_TIMEOUT_MS), "num.partitions": "1",
        "log.flush.interval.messages": "1"})
    yield process
    process.kill()


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
    broker_process.start()
    first = [b"before-%d" % i for i in range(200)]
    produce(broker_process.port, "durable", first)
    code = broker_process.stop() if signum == signal.SIGTERM else broker_process.kill()
    marker = broker_process.directory / "logs" / CLEAN_SHUTDOWN_MARKER
    if signum == signal.SIGTERM:
        assert code == 0 and marker.exists()
    else:
        assert code == -signal.SIGKILL and not marker.exists()

    broker_process.start()  # after SIGKILL, waits for the dead session's registration to expire
    second = [b"after-%d" % i for i in range(50)]
    produce(broker_process.port, "durable", second)
    assert consume_all(broker_process.port, "durable", 250) == list(enumerate(first + second))
    assert broker_process.stop() == 0


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
