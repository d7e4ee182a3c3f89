"""The source's clients: ``kafkaConsumer.pollTimeoutMs`` bounds an executor's read, and the
driver's offset lookups are retried per ``fetchOffset.numRetries`` / ``retryIntervalMs``."""

import socket
import time

import pytest

from broker_lite.client.errors import ConfigError, KafkaClientError
from kspark.source import OffsetRange
from kspark.source.batch import read_partition
from kspark.source.connect import lease_client, with_offset_retries
from kspark.source.options import parse_source_options


def closed_port() -> int:
    with socket.socket() as s:  # bound, never listening: connections are refused at once
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def options(**extra):
    return parse_source_options({"kafka.bootstrap.servers": f"127.0.0.1:{closed_port()}",
                                 "subscribe": "t", **extra})


def test_poll_timeout_bounds_an_executors_read():
    quick = options(**{"kafkaConsumer.pollTimeoutMs": "300"})
    with lease_client(quick, reading=True) as client:
        assert client.config.request_timeout_ms == 300
    with lease_client(options(), reading=True) as client:  # without it, the client's own timeout
        assert client.config.request_timeout_ms == 30_000
    started = time.monotonic()
    with pytest.raises(KafkaClientError):
        list(read_partition(quick, OffsetRange("t", 0, 0, 10)))
    assert time.monotonic() - started < 10  # not request.timeout.ms (30 s)


def test_lookups_are_tried_as_often_as_fetch_offset_num_retries_says(monkeypatch):
    slept, resets, attempts = [], [], []
    monkeypatch.setattr("kspark.source.connect.sleep", slept.append)

    def lookup():
        attempts.append(1)
        if len(attempts) < 4:
            raise KafkaClientError("no leader")
        return "found"

    settings = {"fetchOffset.numRetries": "4", "fetchOffset.retryIntervalMs": "20"}
    assert with_offset_retries(options(**settings), lookup, lambda: resets.append(1)) == "found"
    assert (len(attempts), slept, len(resets)) == (4, [0.02] * 3, 3)


def test_mistakes_are_not_retried(monkeypatch):
    attempts = []

    def lookup():
        attempts.append(1)
        raise ConfigError("kafka.request.timeout.ms", "bad")

    with pytest.raises(ConfigError):
        with_offset_retries(options(), lookup)
    assert len(attempts) == 1
