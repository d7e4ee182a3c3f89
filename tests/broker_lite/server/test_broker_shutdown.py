"""Stopping a broker while clients are connected: long-polling fetches answer at once, and no
request is still running when the logs and ZooKeeper close under it."""

import logging
import threading
import time

import pytest
from confluent_kafka import Consumer, TopicPartition

from broker_lite.client import KafkaClient
from broker_lite.server.testing import bootstrap, start_brokers
from broker_lite.zk.testing import wait_until


@pytest.mark.broker
@pytest.mark.zookeeper
def test_stop_ends_long_polls_without_errors(zookeeper_connect, tmp_path, caplog):
    (broker,) = start_brokers(zookeeper_connect, tmp_path)
    with KafkaClient({"bootstrap.servers": bootstrap(broker)}) as client:
        client.admin.create_topics([("quiet", 1, 1)])
    consumer = Consumer({"bootstrap.servers": bootstrap(broker), "group.id": "idle",
                         "fetch.wait.max.ms": 60_000, "topic.metadata.refresh.interval.ms": 60_000,
                         "log_level": 0})
    consumer.assign([TopicPartition("quiet", 0, 0)])
    polling = threading.Event()

    def poll() -> None:
        polling.set()
        while polling.is_set():
            consumer.poll(0.2)

    poller = threading.Thread(target=poll, daemon=True)
    poller.start()
    try:
        wait_until(polling.is_set, 10, "the consumer never polled")
        time.sleep(1.5)  # the consumer is long-polling the empty partition now
        with caplog.at_level(logging.WARNING, logger="broker_lite"):
            started = time.monotonic()
            broker.stop()
            took = time.monotonic() - started
        errors = [r for r in caplog.records if r.levelno >= logging.ERROR]
        assert errors == [], [r.getMessage() for r in errors]
        assert took < 30  # not held for the fetch's 60 s wait
    finally:
        polling.clear()
        poller.join(10)
        consumer.close()
    assert not poller.is_alive(), "the consumer still polling 10 s after its stop"
