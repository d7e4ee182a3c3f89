"""``broker-lite metrics``: the tables it prints from a metrics document, and its errors."""

import json
import socket

import pytest

from broker_lite.cli import main as cli
from broker_lite.config.parsers import ConfigError
from broker_lite.server.metrics import MetricsListener

DOCUMENT = {
    "broker_id": 3, "time_ms": 1_700_000_000_000,
    "process": {"threads": 31, "rss_bytes": 84_200_000, "open_files": 57},
    "network": {"connections": 12, "connections_per_processor": {"0": 4, "1": 4, "2": 4},
                "connections_created": 40, "connections_closed": 28, "request_queue_size": 0,
                "response_queue_sizes": {"0": 0, "1": 1, "2": 0}},
    "requests": {"Produce": {"requests": 7101, **{stage: {"p50": 0.4, "p99": 1.8, "p999": 4.3,
                                                          "max": 7.7} for stage in (
        "TotalTimeMs", "RequestQueueTimeMs", "LocalTimeMs", "RemoteTimeMs",
        "ResponseQueueTimeMs", "ResponseSendTimeMs")}}},
    "purgatory": {"Fetch": {"delayed": 2, "watched_keys": 2},
                  "Produce": {"delayed": 0, "watched_keys": 0},
                  "Rebalance": {"delayed": 1, "watched_keys": 1}},
}


class Canned:
    def snapshot(self) -> dict:
        return DOCUMENT


@pytest.fixture
def listener():
    listener = MetricsListener("http://127.0.0.1:0", Canned()).start()
    yield listener
    listener.stop()


def test_the_tables(listener, capsys):
    assert cli(["metrics", "--metrics-listener", listener.url]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == ("broker 3: 12 connections (3 processors: 4 4 4), 31 threads, "
                        "84.2 MB resident, 57 open files")
    assert lines[1] == ("request queue 0, response queues 0 1 0; connections created 40, "
                        "closed 28")
    assert lines[3].split() == ["API", "REQUESTS", "TOTAL-P50", "TOTAL-P99", "TOTAL-P999",
                                "QUEUE-P99", "LOCAL-P99", "REMOTE-P99", "RESPONSE-QUEUE-P99",
                                "SEND-P99"]
    assert lines[4].split() == ["Produce", "7101", "0.4", "1.8", "4.3", "1.8", "1.8", "1.8",
                                "1.8", "1.8"]
    assert [line.split() for line in lines[6:]] == [
        ["PURGATORY", "DELAYED", "KEYS"], ["Fetch", "2", "2"], ["Produce", "0", "0"],
        ["Rebalance", "1", "1"]]


def test_json_prints_the_document_as_served(listener, capsys):
    assert cli(["metrics", "--metrics-listener", listener.url + "/metrics", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == DOCUMENT


def test_a_listener_that_cannot_be_reached_is_an_error(capsys):
    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    assert cli(["metrics", "--metrics-listener", f"http://127.0.0.1:{port}"]) == 1
    assert "broker-lite metrics: error: cannot read the metrics" in capsys.readouterr().err


@pytest.mark.parametrize("url", ["127.0.0.1:9404", "https://127.0.0.1:9404", "http://h:x",
                                 "http://127.0.0.1:9404/other"])
def test_a_malformed_metrics_listener_names_the_setting(url):
    with pytest.raises(ConfigError, match=r"metrics\.listener"):
        MetricsListener(url, Canned())
