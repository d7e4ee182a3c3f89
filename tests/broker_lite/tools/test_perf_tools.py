"""``broker-lite producer-perf-test`` and ``consumer-perf-test`` against a live broker: what
they print (Kafka's lines), and that what they claim to have sent and read is what the topic
holds. Figures are parsed, never compared with speed expectations."""

import re
import time

import pytest

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.common.tiers import needs
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.tools.testing import closed_port, run_tool

PROPERTIES = {"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
              "group.initial.rebalance.delay.ms": "0"}
TOTAL = re.compile(
    r"(\d+) records sent, ([\d.]+) records/sec \(([\d.]+) MB/sec\), ([\d.]+) ms avg latency, "
    r"([\d.]+) ms max latency, (\d+) ms 50th, (\d+) ms 95th, (\d+) ms 99th, (\d+) ms 99\.9th\.")
HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, "
          "rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
CSV = re.compile(rf"({DATE}), ({DATE}), ([\d.]+), ([\d.]+), (\d+), ([\d.]+), (\d+), (\d+), "
                 r"([\d.]+), ([\d.]+)")


@pytest.fixture
@needs("broker", "zookeeper")
def perf_broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield brokers[0]
    stop_brokers(brokers)


def producer_perf(servers: str, topic: str, records: int, *options: str,
                  props: tuple[str, ...] = ()):
    return run_tool("producer-perf-test", "--topic", topic, "--num-records", records,
                    "--throughput", "-1", *options, "--producer-props",
                    f"bootstrap.servers={servers}", *props)


def consumer_perf(servers: str, topic: str, messages: int, *options: str):
    return run_tool("consumer-perf-test", "--bootstrap-server", servers, "--topic", topic,
                    "--messages", messages, "--timeout", "3000", *options)


def topic_values(servers: str, topic: str, isolation: str = "read_uncommitted") -> list:
    result = run_tool("console-consumer", "--bootstrap-server", servers, "--topic", topic,
                      "--from-beginning", "--timeout-ms", "3000", "--isolation-level",
                      isolation)
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_producer_perf_test_sends_what_it_reports(perf_broker):
    servers = bootstrap(perf_broker)
    result = producer_perf(servers, "perf", 5000, "--record-size", "100")
    assert result.returncode == 0, result.stderr
    total = TOTAL.fullmatch(result.stdout.splitlines()[-1])
    assert total is not None, result.stdout
    count, rate, mb_rate, avg, top, p50, p95, p99, p999 = total.groups()
    assert int(count) == 5000
    assert float(rate) > 0 and float(mb_rate) >= 0
    assert int(p50) <= int(p95) <= int(p99) <= int(p999) <= float(top)
    assert float(avg) <= float(top)

    values = topic_values(servers, "perf")
    assert len(values) == 5000
    assert len(set(values)) == 1  # Kafka's payload: one random string of capital letters
    assert re.fullmatch("[A-Z]{100}", values[0])


def test_producer_settings_and_payload_file(perf_broker, tmp_path):
    servers = bootstrap(perf_broker)
    payloads = tmp_path / "payloads.txt"
    payloads.write_text("alpha|beta|gamma")
    result = producer_perf(servers, "payloads", 300, "--payload-file", str(payloads),
                           "--payload-delimiter", "|", props=("compression.type=gzip", "acks=1"))
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[:2] == [f"Reading payloads from: {payloads}",
                                              "Number of messages read: 3"]
    values = topic_values(servers, "payloads")
    assert len(values) == 300 and set(values) == {"alpha", "beta", "gamma"}
    log = f"{perf_broker.config.log_dirs[0]}/payloads-0/00000000000000000000.log"
    dumped = run_tool("dump-log", "--files", log).stdout
    assert "compresscodec: gzip" in dumped and "compresscodec: none" not in dumped


def test_throughput_is_capped(perf_broker):
    servers = bootstrap(perf_broker)
    started = time.monotonic()
    result = run_tool("producer-perf-test", "--topic", "capped", "--num-records", "60",
                      "--record-size", "10", "--throughput", "100", "--bootstrap-server",
                      servers)
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started >= 0.55  # 60 records at 100/s: the cap made it wait
    assert TOTAL.fullmatch(result.stdout.splitlines()[-1]).group(1) == "60"


def test_transactional_producer_perf_test(perf_broker):
    servers = bootstrap(perf_broker)
    result = producer_perf(servers, "perf-txn", 500, "--record-size", "8",
                           "--transactional-id", "perf-tx", "--transaction-duration-ms", "50")
    assert result.returncode == 0, result.stderr
    assert len(topic_values(servers, "perf-txn", "read_committed")) == 500
    log = f"{perf_broker.config.log_dirs[0]}/perf-txn-0/00000000000000000000.log"
    dumped = run_tool("dump-log", "--files", log, "--deep-iteration").stdout
    assert "isTransactional: true" in dumped and "endTxnMarker: COMMIT" in dumped


def test_consumer_perf_test_reads_what_is_there(perf_broker):
    servers = bootstrap(perf_broker)
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([("wide", 3, 1)])
    assert producer_perf(servers, "wide", 3000, "--record-size", "50").returncode == 0

    result = consumer_perf(servers, "wide", 3000)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == HEADER
    row = CSV.fullmatch(lines[1])
    assert row is not None, lines
    (start, end, mb, _mb_rate, messages, _rate, rebalance, fetch, _fetch_mb,
     _fetch_rate) = row.groups()
    assert start <= end
    assert int(messages) == 3000
    assert float(mb) == pytest.approx(3000 * 50 / 1024 / 1024, abs=1e-4)
    assert int(rebalance) >= 0 and int(fetch) >= 0
    assert len(lines) == 2


def test_consumer_perf_test_stops_at_the_timeout_and_commits(perf_broker):
    servers = bootstrap(perf_broker)
    assert producer_perf(servers, "short", 120, "--record-size", "10").returncode == 0
    result = consumer_perf(servers, "short", 1000, "--group", "perf-readers", "--hide-header",
                           "--timeout", "1000")
    assert result.returncode == 0, result.stderr
    assert "WARNING: Exiting before consuming the expected number of messages: timeout " \
           "(1000 ms) exceeded." in result.stderr
    (line,) = result.stdout.splitlines()
    assert CSV.fullmatch(line).group(5) == "120"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert client.committed("perf-readers", [TopicPartition("short", 0)]) == {
            TopicPartition("short", 0): 120}
    again = consumer_perf(servers, "short", 10, "--group", "perf-readers", "--hide-header",
                          "--timeout", "500")
    assert CSV.fullmatch(again.stdout.strip()).group(5) == "0"  # it starts where it stopped


def test_detailed_stats_and_date_format(perf_broker):
    servers = bootstrap(perf_broker)
    assert producer_perf(servers, "detailed", 50, "--record-size", "10").returncode == 0
    result = consumer_perf(servers, "detailed", 100, "--show-detailed-stats",
                           "--reporting-interval", "200", "--timeout", "1000",
                           "--date-format", "yyyy/MM/dd'T'HH:mm")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("time, threadId, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, "
                        "nMsg.sec, rebalance.time.ms, fetch.time.ms, fetch.MB.sec, "
                        "fetch.nMsg.sec")
    # the records come at once, then a second of waiting: interval lines, all at 50 records
    assert len(lines) >= 2
    for line in lines[1:]:
        assert re.fullmatch(r"\d{4}/\d\d/\d\dT\d\d:\d\d, 0, [\d.]+, [\d.]+, 50, [\d.]+, \d+, "
                            r"-?\d+, [\d.]+, [\d.]+", line), line


@pytest.mark.broker
@pytest.mark.zookeeper
def test_failures(zookeeper_connect, tmp_path):
    down = f"127.0.0.1:{closed_port()}"
    result = producer_perf(down, "t", 10, "--record-size", "5",
                           props=("request.timeout.ms=1500",))
    assert result.returncode == 1
    assert result.stderr.startswith("broker-lite producer-perf-test: error: ")
    assert "cannot reach any broker" in result.stderr
    result = consumer_perf(down, "t", 10, "--timeout-ms", "1500")
    assert result.returncode == 1
    assert "broker-lite consumer-perf-test: error: " in result.stderr

    closed = start_brokers(zookeeper_connect, tmp_path / "closed", 1,
                           {"auto.create.topics.enable": "false"})
    try:
        result = producer_perf(bootstrap(closed), "missing", 10, "--record-size", "5")
        assert result.returncode == 1
        assert "UNKNOWN_TOPIC_OR_PARTITION" in result.stderr and "missing" in result.stderr
        result = consumer_perf(bootstrap(closed), "missing", 10)
        assert result.returncode == 1
        assert "error: topic missing does not exist" in result.stderr
    finally:
        stop_brokers(closed)


@pytest.mark.parametrize("tool, options", [
    ("producer-perf-test", ["--topic", "t", "--num-records", "5", "--record-size", "1",
                            "--producer-props", "bootstrap.servers=127.0.0.1:9092"]),
    ("producer-perf-test", ["--topic", "t", "--num-records", "5", "--throughput", "-1",
                            "--producer-props", "bootstrap.servers=127.0.0.1:9092"]),
    ("producer-perf-test", ["--topic", "t", "--num-records", "5", "--throughput", "-1",
                            "--record-size", "1", "--payload-file", "x",
                            "--producer-props", "bootstrap.servers=127.0.0.1:9092"]),
    ("producer-perf-test", ["--topic", "t", "--num-records", "5", "--throughput", "-1",
                            "--record-size", "1"]),  # no bootstrap servers anywhere
    ("producer-perf-test", ["--topic", "t", "--num-records", "0", "--throughput", "-1",
                            "--record-size", "1", "--bootstrap-server", "127.0.0.1:9092"]),
    ("consumer-perf-test", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t"]),
    ("consumer-perf-test", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                            "--messages", "5", "--date-format", "EEE"]),
])
def test_bad_usage(tool, options):
    result = run_tool(tool, *options)
    assert result.returncode == 2, result.stderr
    assert f"broker-lite {tool}: error: " in result.stderr
