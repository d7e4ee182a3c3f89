"""``broker-lite console-producer`` and ``console-consumer`` as a user runs them: child
processes against a live broker, with real clients (confluent-kafka) on the other side."""

import signal
import struct
import subprocess
import sys
import threading
import time

import pyarrow as pa
import pytest
from confluent_kafka import Consumer, Producer
from confluent_kafka import TopicPartition as ConfluentPartition

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.client.producer.partitioner import murmur2_bytes
from broker_lite.common.tiers import needs
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from broker_lite.tools.testing import closed_port, run_tool

PROPERTIES = {"offsets.topic.num.partitions": "3", "transaction.state.log.num.partitions": "3",
              "group.initial.rebalance.delay.ms": "0"}
PRINT_ALL = ["--property", "print.timestamp=true", "--property", "print.partition=true",
             "--property", "print.offset=true", "--property", "print.headers=true",
             "--property", "print.key=true"]


@pytest.fixture
@needs("broker", "zookeeper")
def group_broker(zookeeper_connect, tmp_path):
    """A broker whose group and transaction coordinators load a few partitions only."""
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield brokers[0]
    stop_brokers(brokers)


@pytest.fixture
@needs("broker", "zookeeper")
def closed_broker(zookeeper_connect, tmp_path):
    """A broker that does not create topics on first use."""
    brokers = start_brokers(zookeeper_connect, tmp_path, 1,
                            {"auto.create.topics.enable": "false"})
    yield brokers[0]
    stop_brokers(brokers)


def create_topic(servers: str, topic: str, partitions: int = 1) -> None:
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([(topic, partitions, 1)])


def produce_lines(servers: str, topic: str, text: str, *options: str):
    return run_tool("console-producer", "--bootstrap-server", servers, "--topic", topic,
                    *options, stdin=text)


def consume(servers: str, topic: str, *options: str):
    return run_tool("console-consumer", "--bootstrap-server", servers, "--topic", topic,
                    "--timeout-ms", "3000", *options)


def end_offsets(servers: str, topic: str, partitions: int = 1) -> list[int]:
    with KafkaClient({"bootstrap.servers": servers}) as client:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        found = client.list_offsets(dict.fromkeys(tps, -1))
        return [found[tp] for tp in tps]


def batches_of(broker, topic: str) -> list[int]:
    """The record count of each batch in the topic's segment, as dump-log reports it."""
    log = f"{broker.config.log_dirs[0]}/{topic}-0/00000000000000000000.log"
    result = run_tool("dump-log", "--files", log)
    assert result.returncode == 0, result.stderr
    return [int(line.split(" count: ")[1].split()[0])
            for line in result.stdout.splitlines() if line.startswith("baseOffset:")]


# -- round trips ----------------------------------------------------------------------------------


def test_keys_and_headers_round_trip(broker):
    servers = bootstrap(broker)
    lines = "trace:1,app:web\tuser-1\tlogged in\n" \
            "trace:2\tuser-2\tpaid: 12 EUR\n" \
            "lang:fr\tuser-1\tr\u00e9sum\u00e9\n"
    produced = produce_lines(servers, "events", lines, "--property", "parse.key=true",
                             "--property", "parse.headers=true")
    assert produced.returncode == 0, produced.stderr
    assert produced.stdout == ""

    consumed = consume(servers, "events", "--from-beginning", *PRINT_ALL)
    assert consumed.returncode == 0, consumed.stderr
    fields = [line.split("\t") for line in consumed.stdout.splitlines()]
    assert [f[1:] for f in fields] == [
        ["Partition:0", "Offset:0", "trace:1,app:web", "user-1", "logged in"],
        ["Partition:0", "Offset:1", "trace:2", "user-2", "paid: 12 EUR"],
        ["Partition:0", "Offset:2", "lang:fr", "user-1", "r\u00e9sum\u00e9"],
    ]
    now = time.time() * 1000
    for f in fields:
        kind, ms = f[0].split(":")
        assert kind == "CreateTime" and now - 120_000 < int(ms) <= now
    assert consumed.stderr.strip().endswith("Processed a total of 3 messages")


def test_custom_separators_and_null_marker(broker):
    servers = bootstrap(broker)
    produced = produce_lines(servers, "custom", "a=1;b=2|k1::v1\n-|-::v2\n", "--property",
                             "parse.key=true", "--property", "key.separator=::",
                             "--property", "parse.headers=true", "--property",
                             "headers.delimiter=|", "--property", "headers.separator=;",
                             "--property", "headers.key.separator==", "--property",
                             "null.marker=-")
    assert produced.returncode == 0, produced.stderr
    consumed = consume(servers, "custom", "--offset", "earliest", "--partition", "0",
                       "--property", "print.key=true", "--property", "print.headers=true",
                       "--property", "key.separator= | ", "--property", "null.literal=<null>")
    assert consumed.stdout.splitlines() == ["a:1,b:2 | k1 | v1", "NO_HEADERS | <null> | v2"]


def test_records_of_confluent_kafka_in_kafkas_format(broker):
    servers = bootstrap(broker)
    producer = Producer({"bootstrap.servers": servers, "linger.ms": 5, "log_level": 3})
    producer.produce("cf", partition=0, key=b"k0", value=b"first",
                     headers=[("a", b"1"), ("b", b"two")], timestamp=1_700_000_000_000)
    producer.produce("cf", partition=0, key=None, value=b"no key", timestamp=1_700_000_000_001)
    producer.produce("cf", partition=0, key=b"k2", value=None, headers=[("n", None)],
                     timestamp=1_700_000_000_002)
    assert producer.flush(30) == 0

    consumed = consume(servers, "cf", "--from-beginning", *PRINT_ALL)
    assert consumed.returncode == 0, consumed.stderr
    assert consumed.stdout == (
        "CreateTime:1700000000000\tPartition:0\tOffset:0\ta:1,b:two\tk0\tfirst\n"
        "CreateTime:1700000000001\tPartition:0\tOffset:1\tNO_HEADERS\tnull\tno key\n"
        "CreateTime:1700000000002\tPartition:0\tOffset:2\tn:null\tk2\tnull\n")

    values_only = consume(servers, "cf", "--from-beginning", "--max-messages", "2")
    assert values_only.stdout == "first\nno key\n"
    assert "Processed a total of 2 messages" in values_only.stderr


def test_console_producer_records_read_by_confluent_kafka(broker):
    servers = bootstrap(broker)
    lines = "".join(f"key-{i % 5}\tvalue-{i}\n" for i in range(200))
    assert produce_lines(servers, "to-cf", lines, "--property", "parse.key=true",
                         "--compression-codec", "lz4").returncode == 0
    consumer = Consumer({"bootstrap.servers": servers, "group.id": "reader",
                         "enable.auto.commit": False, "log_level": 3})
    consumer.assign([ConfluentPartition("to-cf", 0, 0)])
    try:
        messages = []
        deadline = time.monotonic() + 30
        while len(messages) < 200 and time.monotonic() < deadline:
            message = consumer.poll(0.5)
            if message is not None:
                assert message.error() is None, message.error()
                messages.append((message.key(), message.value()))
    finally:
        consumer.close()
    assert messages == [(f"key-{i % 5}".encode(), f"value-{i}".encode()) for i in range(200)]


def test_lines_go_in_batches_unless_sync(broker):
    servers = bootstrap(broker)
    lines = "".join(f"line {i}\n" for i in range(300))
    assert produce_lines(servers, "batched", lines).returncode == 0
    assert batches_of(broker, "batched") == [300]
    assert produce_lines(servers, "batched", lines, "--batch-size", "100").returncode == 0
    assert batches_of(broker, "batched") == [300, 100, 100, 100]
    assert produce_lines(servers, "synced", "a\nb\nc", "--sync").returncode == 0
    assert batches_of(broker, "synced") == [1, 1, 1]  # the last line needs no terminator


def test_keys_pick_partitions_like_kafka(broker):
    servers = bootstrap(broker)
    create_topic(servers, "keyed", 4)
    keys = [f"customer-{i}" for i in range(40)]
    lines = "".join(f"{key}\t{i}\n" for i, key in enumerate(keys))
    assert produce_lines(servers, "keyed", lines, "--property", "parse.key=true").returncode == 0

    consumed = consume(servers, "keyed", "--from-beginning", "--property", "print.key=true",
                       "--property", "print.partition=true")
    placed = {key: int(partition.removeprefix("Partition:"))
              for partition, key, _ in (line.split("\t") for line in consumed.stdout.splitlines())}
    # Kafka's default partitioner: the positive murmur2 hash of the key, modulo the partitions
    assert placed == {key: (murmur2_bytes(key.encode()) & 0x7FFFFFFF) % 4 for key in keys}
    assert sum(end_offsets(servers, "keyed", 4)) == 40


# -- where to start, when to stop -----------------------------------------------------------------


def test_offsets_partitions_and_latest(broker):
    servers = bootstrap(broker)
    create_topic(servers, "numbers", 2)
    with KafkaClient({"bootstrap.servers": servers}) as client, client.producer() as producer:
        for partition in (0, 1):
            producer.send_batch("numbers", partition,
                                pa.table({"value": [f"p{partition}-{i}".encode()
                                                    for i in range(10)]}))
    from_offset = consume(servers, "numbers", "--partition", "1", "--offset", "7")
    assert from_offset.stdout == "p1-7\np1-8\np1-9\n"
    latest = consume(servers, "numbers", "--timeout-ms", "1000")  # the default: only new ones
    assert latest.returncode == 0 and latest.stdout == ""
    assert "Processed a total of 0 messages" in latest.stderr
    everything = consume(servers, "numbers", "--from-beginning")
    assert sorted(everything.stdout.splitlines()) == sorted(
        f"p{p}-{i}" for p in (0, 1) for i in range(10))


def test_group_offsets_are_committed_and_resumed(group_broker):
    servers = bootstrap(group_broker)
    produce_lines(servers, "orders", "".join(f"order {i}\n" for i in range(10)))
    first = consume(servers, "orders", "--group", "billing", "--from-beginning",
                    "--max-messages", "4")
    assert first.stdout.splitlines() == [f"order {i}" for i in range(4)]
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert client.committed("billing", [TopicPartition("orders", 0)]) == {
            TopicPartition("orders", 0): 4}
    rest = consume(servers, "orders", "--group", "billing", "--from-beginning")
    assert rest.stdout.splitlines() == [f"order {i}" for i in range(4, 10)]
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert client.committed("billing", [TopicPartition("orders", 0)]) == {
            TopicPartition("orders", 0): 10}


def test_read_committed_hides_aborted_transactions(group_broker):
    servers = bootstrap(group_broker)
    create_topic(servers, "txn")
    producer = Producer({"bootstrap.servers": servers, "transactional.id": "console-txn",
                         "log_level": 3})
    producer.init_transactions(30)
    for values, commit in ((["a1", "a2"], True), (["b1", "b2"], False), (["c1"], True)):
        producer.begin_transaction()
        for value in values:
            producer.produce("txn", partition=0, value=value.encode())
        producer.flush(30)
        (producer.commit_transaction if commit else producer.abort_transaction)(30)

    committed = consume(servers, "txn", "--from-beginning", "--isolation-level",
                        "read_committed")
    assert committed.stdout.splitlines() == ["a1", "a2", "c1"]
    everything = consume(servers, "txn", "--from-beginning")
    assert everything.stdout.splitlines() == ["a1", "a2", "b1", "b2", "c1"]


def test_include_pattern_and_deserializers(broker):
    servers = bootstrap(broker)
    producer = Producer({"bootstrap.servers": servers, "log_level": 3})
    for topic, number in (("metrics-cpu", 7), ("metrics-mem", -3), ("other", 1)):
        producer.produce(topic, partition=0, value=struct.pack(">q", number))
    assert producer.flush(30) == 0
    consumed = run_tool("console-consumer", "--bootstrap-server", servers, "--include",
                        "metrics-.*", "--from-beginning", "--timeout-ms", "3000",
                        "--value-deserializer",
                        "org.apache.kafka.common.serialization.LongDeserializer")
    assert sorted(consumed.stdout.splitlines()) == ["-3", "7"]


# -- failures ---------------------------------------------------------------------------------


def test_unknown_topic_without_auto_creation(closed_broker):
    servers = bootstrap(closed_broker)
    produced = produce_lines(servers, "missing", "hello\n", "--timeout-ms", "3000")
    assert produced.returncode == 1
    assert produced.stderr.startswith("broker-lite console-producer: error: topic missing "
                                      "does not exist")
    consumed = consume(servers, "missing")
    assert consumed.returncode == 1
    assert "broker-lite console-consumer: error: topic missing does not exist" in consumed.stderr
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert "missing" not in client.topics()


def test_broker_down():
    servers = f"127.0.0.1:{closed_port()}"
    started = time.monotonic()
    produced = produce_lines(servers, "t", "hello\n", "--timeout-ms", "1500")
    assert produced.returncode == 1
    assert "cannot reach any broker" in produced.stderr
    assert produced.stderr.startswith("broker-lite console-producer: error: ")
    consumed = consume(servers, "t", "--consumer-property", "request.timeout.ms=1500")
    assert consumed.returncode == 1
    assert "broker-lite console-consumer: error: " in consumed.stderr
    assert "cannot reach any broker" in consumed.stderr
    assert time.monotonic() - started < 60  # both gave up on their own


def test_a_line_without_its_separator_stops_after_sending_the_lines_before(broker):
    servers = bootstrap(broker)
    produced = produce_lines(servers, "strict", "k1\tv1\nk2\tv2\nno separator\nk4\tv4\n",
                             "--property", "parse.key=true")
    assert produced.returncode == 1
    assert "No key separator found on line number 3: 'no separator'" in produced.stderr
    assert consume(servers, "strict", "--from-beginning").stdout == "v1\nv2\n"


@pytest.mark.parametrize("tool, options", [
    ("console-producer", ["--bootstrap-server", "127.0.0.1:9092"]),  # no --topic
    ("console-producer", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                          "--request-required-acks", "0"]),
    ("console-producer", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                          "--property", "parse.key"]),
    ("console-producer", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                          "--compression-codec", "brotli"]),
    ("console-consumer", ["--bootstrap-server", "127.0.0.1:9092"]),  # no --topic / --include
    ("console-consumer", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                          "--offset", "3"]),  # --offset needs --partition
    ("console-consumer", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                          "--partition", "0", "--offset", "soon"]),
    ("console-consumer", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                          "--partition", "0", "--offset", "1", "--from-beginning"]),
    ("console-consumer", ["--bootstrap-server", "127.0.0.1:9092", "--topic", "t",
                          "--max-messages", "0"]),
])
def test_bad_usage(tool, options):
    result = run_tool(tool, *options)
    assert result.returncode == 2, result.stderr
    assert f"broker-lite {tool}: error: " in result.stderr
    assert result.stdout == ""


def test_ctrl_c_commits_and_reports_the_total(group_broker):
    servers = bootstrap(group_broker)
    produce_lines(servers, "tail", "one\ntwo\nthree\n")
    consumer = subprocess.Popen(
        [sys.executable, "-m", "broker_lite", "console-consumer", "--bootstrap-server", servers,
         "--topic", "tail", "--from-beginning", "--group", "tailers"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    stuck = threading.Event()
    watchdog = threading.Timer(60, lambda: (stuck.set(), consumer.kill()))
    watchdog.start()
    try:
        lines = [consumer.stdout.readline() for _ in range(3)]  # it tails: no end of its own
        watchdog.cancel()
        consumer.send_signal(signal.SIGINT)
        _, stderr = consumer.communicate(timeout=60)
    finally:
        watchdog.cancel()
        consumer.kill()
    assert not stuck.is_set(), f"the console consumer printed {lines} in 60 s, not 3 lines"
    assert lines == ["one\n", "two\n", "three\n"]
    assert consumer.returncode == 130
    assert "Processed a total of 3 messages" in stderr, (lines, stderr)
    with KafkaClient({"bootstrap.servers": servers}) as client:
        assert client.committed("tailers", [TopicPartition("tail", 0)]) == {
            TopicPartition("tail", 0): 3}


def test_a_value_the_deserializer_cannot_read(broker):
    servers = bootstrap(broker)
    producer = Producer({"bootstrap.servers": servers, "log_level": 3})
    for value in (struct.pack(">q", 1), b"abc", struct.pack(">q", 3)):
        producer.produce("longs", partition=0, value=value)
    assert producer.flush(30) == 0
    options = ["--from-beginning", "--value-deserializer", "LongDeserializer"]
    stopped = consume(servers, "longs", *options)
    assert stopped.returncode == 1
    assert stopped.stdout == "1\n"
    assert "error: longs-0 at offset 1: Size of data received by LongDeserializer is not 8" \
        in stopped.stderr
    skipped = consume(servers, "longs", *options, "--skip-message-on-error")
    assert skipped.returncode == 0
    assert skipped.stdout == "1\n3\n"
    assert "Skipping longs-0 at offset 1: Size of data received by LongDeserializer" \
        in skipped.stderr
