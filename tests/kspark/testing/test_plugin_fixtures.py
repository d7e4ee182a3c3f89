"""The kpy pytest plugin (kspark.testing.plugin): each fixture and helper against a real
ZooKeeper, broker_lite and SparkSession, records checked with confluent-kafka, and whole
projects that use nothing but the plugin run by pytester in a fresh process."""

import importlib.metadata
import textwrap
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest
from confluent_kafka import Producer as ConfluentProducer
from kazoo.client import KazooClient

import kspark.testing.plugin
from broker_lite.client import (
    KafkaClient,
    KafkaClientError,
    SaslAuthenticationFailedError,
    TopicPartition,
    UnknownTopicOrPartitionError,
)
from broker_lite.records import CompressionType, iter_batches
from broker_lite.records.arrow.schema import RECORD_SCHEMA, RECORD_SCHEMA_WITH_HEADERS
from broker_lite.zk.client import parse_connect_string
from kspark.testing.topics import TopicFactory

pytest_plugins = ["pytester"]

EXAMPLE = Path(__file__).with_name("test_plugin_example.py")


def committed_records(messages) -> list:
    """(partition, offset, key, value, headers, timestamp ms) of read_committed messages, sorted
    by partition and offset."""
    return sorted((m.partition(), m.offset(), m.key(), m.value(), tuple(m.headers() or ()),
                   m.timestamp()[1]) for m in messages)


# -- registration ---------------------------------------------------------------------------------


def test_the_plugin_is_registered_through_its_entry_point(pytestconfig):
    entry_points = {ep.name: ep for ep in importlib.metadata.entry_points(group="pytest11")}
    assert entry_points["kpy"].value == "kspark.testing.plugin"
    assert entry_points["kpy"].load() is kspark.testing.plugin
    assert pytestconfig.pluginmanager.get_plugin("kpy") is kspark.testing.plugin


# -- ZooKeeper ------------------------------------------------------------------------------------


def test_the_zookeeper_is_the_embedded_server(kpy_zookeeper, kpy_zookeeper_server):
    assert kpy_zookeeper.server is kpy_zookeeper_server
    assert kpy_zookeeper_server.running
    assert kpy_zookeeper.connect_string == kpy_zookeeper_server.connect_string


def test_the_suite_and_the_plugin_share_one_zookeeper(kpy_zookeeper_server, zookeeper_server,
                                                      zookeeper_ensemble):
    assert zookeeper_server is kpy_zookeeper_server
    assert zookeeper_ensemble == kpy_zookeeper_server.connect_string


def test_each_test_gets_a_chroot_of_its_own(kpy_zookeeper, kpy_zookeeper_connect):
    parsed = parse_connect_string(kpy_zookeeper_connect)
    assert parsed.hosts_string == parse_connect_string(kpy_zookeeper.connect_string).hosts_string
    assert parsed.chroot.startswith("/kpy-tests/")
    assert kpy_zookeeper.chroot() != kpy_zookeeper.chroot()
    assert kpy_zookeeper.chroot("named") == f"{kpy_zookeeper.connect_string}/kpy-tests/named"


# -- brokers --------------------------------------------------------------------------------------


def test_a_broker_of_the_tests_own_registers_in_its_chroot(kpy_broker, kpy_zookeeper_connect,
                                                          kpy_bootstrap_servers):
    assert kpy_broker.zookeeper_connect == kpy_zookeeper_connect
    assert kpy_bootstrap_servers == kpy_broker.bootstrap_servers == f"127.0.0.1:{kpy_broker.port}"
    parsed = parse_connect_string(kpy_zookeeper_connect)
    zk = KazooClient(parsed.hosts_string)
    zk.start(timeout=10)
    try:
        assert zk.get_children(f"{parsed.chroot}/brokers/ids") == [str(kpy_broker.broker.broker_id)]
    finally:
        zk.stop()
        zk.close()
    with KafkaClient({"bootstrap.servers": kpy_broker.bootstrap_servers}) as client:
        assert client.topics() == {}


def test_brokers_have_single_machine_settings(kpy_broker):
    config = kpy_broker.broker.config
    assert config["offsets.topic.num.partitions"] == 5
    assert config["offsets.topic.replication.factor"] == 1
    assert config["transaction.state.log.num.partitions"] == 5
    assert config["group.initial.rebalance.delay.ms"] == 0


def test_without_kpy_broker_the_helpers_use_the_session_broker(kpy_session_broker,
                                                               kpy_bootstrap_servers,
                                                               kpy_client):
    assert kpy_bootstrap_servers == kpy_session_broker.bootstrap_servers
    name = f"session-{uuid.uuid4().hex[:8]}"
    kpy_client.admin.create_topics([(name, 2, 1)])
    with KafkaClient({"bootstrap.servers": kpy_session_broker.bootstrap_servers}) as client:
        assert client.topics()[name] == 2
    kpy_client.admin.delete_topics([name])


# -- topics ---------------------------------------------------------------------------------------


def test_a_topic_is_created_with_partitions_and_config(kpy_topic, kpy_client, request):
    name = kpy_topic(partitions=4, config={"cleanup.policy": "compact", "retention.ms": 60000})
    assert name.startswith("test_a_topic_is_created_with_partitions_and_config-")
    assert kpy_client.partitions(name) == [0, 1, 2, 3]
    configs = kpy_client.admin.describe_configs(name)
    assert configs["cleanup.policy"] == "compact"
    assert configs["retention.ms"] == "60000"
    assert kpy_topic(partitions=1) != kpy_topic(partitions=1)
    assert kpy_topic(1, name="chosen-name") == "chosen-name"


def test_created_topics_are_deleted_unless_kept(kpy_client):
    factory = TopicFactory(kpy_client, "factory")
    dropped, kept = factory(partitions=1), factory(partitions=1, keep=True)
    assert {dropped, kept} <= set(kpy_client.topics())
    factory.delete_created()
    topics = kpy_client.topics()
    assert dropped not in topics and kept in topics
    with pytest.raises(UnknownTopicOrPartitionError):
        kpy_client.partitions(dropped)
    factory.delete_created()  # nothing left to delete


# -- producing and reading ------------------------------------------------------------------------


def test_produced_rows_reach_a_kafka_consumer(kpy_broker, kpy_topic, kpy_produce,
                                              read_committed):
    topic = kpy_topic(partitions=3)
    moment = datetime(2024, 5, 1, tzinfo=UTC)
    written = kpy_produce(topic, [
        "plain",
        ("key-1", b"pair"),
        {"key": "k", "value": "dict", "headers": [("h", b"1")], "partition": 2,
         "timestamp": moment},
        {"value": None, "partition": 2, "timestamp": 1_700_000_000_000},
    ])
    assert sum(count for _, count in written.values()) == 4
    assert written[TopicPartition(topic, 2)][1] >= 2

    seen = committed_records(read_committed(kpy_broker.bootstrap_servers, topic, 4,
                                            timeout_s=30, settle_s=0))
    in_partition_2 = [(key, value, headers, timestamp)
                      for partition, _, key, value, headers, timestamp in seen if partition == 2]
    assert in_partition_2[-2:] == [(b"k", b"dict", (("h", b"1"),), 1_714_521_600_000),
                                   (None, None, (), 1_700_000_000_000)]
    keys = {value: key for _, _, key, value, _, _ in seen}
    assert keys[b"plain"] is None and keys[b"pair"] == b"key-1"


def test_arrow_and_pandas_rows_are_produced(kpy_topic, kpy_produce, kpy_read):
    topic = kpy_topic(partitions=1)
    kpy_produce(topic, pa.table({"key": ["a", "b"], "value": [b"1", b"2"]}))
    kpy_produce(topic, pd.DataFrame({"key": ["c"], "value": ["3"]}))
    assert [(r["key"], r["value"]) for r in kpy_read(topic)] == \
        [(b"a", b"1"), (b"b", b"2"), (b"c", b"3")]


def test_producer_settings_are_passed_on(kpy_broker, kpy_topic, kpy_produce, kpy_read):
    topic = kpy_topic(partitions=1)
    tp = TopicPartition(topic, 0)
    kpy_produce(topic, ["in a transaction"], transactional_id=f"txn-{uuid.uuid4().hex}",
                compression="zstd")
    assert [r["value"] for r in kpy_read(topic)] == [b"in a transaction"]
    with KafkaClient({"bootstrap.servers": kpy_broker.bootstrap_servers}) as client:
        batches = list(iter_batches(client.fetch({tp: 0})[tp].records))
    assert len(batches) == 2, batches  # read_committed above saw the record: the marker is in
    data, marker = batches
    assert data.compression == CompressionType.ZSTD and data.is_transactional
    assert marker.is_control_batch  # the transaction was committed


def test_read_returns_every_record_in_sparks_kafka_schema(kpy_broker, kpy_topic, kpy_read):
    topic = kpy_topic(partitions=2)
    producer = ConfluentProducer({"bootstrap.servers": kpy_broker.bootstrap_servers,
                                  "log_level": 3})
    for i in range(6):
        producer.produce(topic, key=f"k{i}".encode(), value=f"v{i}".encode(), partition=i % 2,
                         headers=[("n", str(i).encode())], timestamp=1_700_000_000_000 + i)
    assert producer.flush(30) == 0

    rows = kpy_read(topic)
    assert [(r["partition"], r["offset"], r["key"], r["value"]) for r in rows] == [
        (0, 0, b"k0", b"v0"), (0, 1, b"k2", b"v2"), (0, 2, b"k4", b"v4"),
        (1, 0, b"k1", b"v1"), (1, 1, b"k3", b"v3"), (1, 2, b"k5", b"v5")]
    first = rows[0]
    assert first["topic"] == topic
    assert first["headers"] == [{"key": "n", "value": b"0"}]
    assert first["timestamp"] == datetime.fromtimestamp(1_700_000_000, UTC)
    assert first["timestampType"] == 0

    table = kpy_read(topic, as_table=True)
    assert table.schema == RECORD_SCHEMA_WITH_HEADERS and table.num_rows == 6
    assert kpy_read(topic, include_headers=False, as_table=True).schema == RECORD_SCHEMA
    assert kpy_read(kpy_topic(partitions=3)) == []


def test_read_is_read_committed_unless_asked(kpy_broker, kpy_topic, kpy_produce, kpy_read):
    topic = kpy_topic(partitions=1)
    kpy_produce(topic, ["before"])
    with KafkaClient({"bootstrap.servers": kpy_broker.bootstrap_servers}) as client:
        with client.producer(transactional_id=f"aborted-{uuid.uuid4().hex}") as producer:
            producer.init_transactions()
            producer.begin_transaction()
            producer.send_arrow(topic, pa.table({"value": [b"aborted-1", b"aborted-2"]}))
            producer.abort_transaction()
    kpy_produce(topic, ["after"])
    assert [r["value"] for r in kpy_read(topic)] == [b"before", b"after"]
    assert [r["value"] for r in kpy_read(topic, isolation_level="read_uncommitted")] == \
        [b"before", b"aborted-1", b"aborted-2", b"after"]


# -- Spark ----------------------------------------------------------------------------------------


def test_the_spark_session_is_local_small_quiet_and_in_utc(kpy_spark, tmp_path_factory):
    conf = kpy_spark.conf
    assert kpy_spark.sparkContext.master == "local[2, 4]"
    assert conf.get("spark.sql.shuffle.partitions") == "2"
    assert conf.get("spark.sql.session.timeZone") == "UTC"
    assert conf.get("spark.ui.enabled") == "false"
    warehouse = conf.get("spark.sql.warehouse.dir").removeprefix("file:")
    assert Path(warehouse).resolve().is_relative_to(tmp_path_factory.getbasetemp().resolve())
    assert kpy_spark.sql("SELECT timestamp'2024-01-01 00:00:00' AS t").first().t == \
        datetime(2024, 1, 1)


def test_the_spark_session_reads_and_writes_kpy(kpy_spark, kpy_topic, kpy_produce, kpy_read,
                                                kpy_bootstrap_servers):
    source, sink = kpy_topic(partitions=2), kpy_topic(partitions=1)
    kpy_produce(source, [("a", "1"), ("b", "2")])
    df = (kpy_spark.read.format("kpy").option("kafka.bootstrap.servers", kpy_bootstrap_servers)
          .option("subscribe", source).load())
    assert sorted(r.value for r in df.collect()) == [b"1", b"2"]
    df.select("key", "value").write.format("kpy") \
        .option("kafka.bootstrap.servers", kpy_bootstrap_servers).option("topic", sink) \
        .mode("append").save()
    assert sorted(r["value"] for r in kpy_read(sink)) == [b"1", b"2"]


def test_the_suites_spark_is_the_plugins(kpy_spark, spark):
    assert spark is kpy_spark


# -- projects using only the plugin ---------------------------------------------------------------

FIXTURES_PROJECT = textwrap.dedent('''
    def test_the_plugin_came_from_its_entry_point(request):
        assert request.config.pluginmanager.get_plugin("kpy") is not None

    def test_the_external_zookeeper_is_used(kpy_zookeeper, kpy_zookeeper_connect):
        assert kpy_zookeeper.server is None
        assert kpy_zookeeper_connect.startswith(kpy_zookeeper.connect_string + "/kpy-tests/")

    def test_creating_topics(kpy_topic, kpy_produce):
        kpy_produce(kpy_topic(name="kept-topic", keep=True), ["kept"])
        kpy_produce(kpy_topic(name="dropped-topic"), ["dropped"])

    def test_topics_were_deleted_unless_kept(kpy_client, kpy_read):
        assert "dropped-topic" not in kpy_client.topics()
        assert [r["value"] for r in kpy_read("kept-topic")] == [b"kept"]
''')


@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.zookeeper
def test_a_project_using_only_the_plugin_passes(pytester, kpy_zookeeper):
    pytester.makepyfile(test_pipeline=EXAMPLE.read_text(), test_fixtures=FIXTURES_PROJECT)
    result = pytester.runpytest_subprocess(
        f"--kpy-zookeeper-connect={kpy_zookeeper.connect_string}", "-p", "no:cacheprovider",
        timeout=480)
    result.assert_outcomes(passed=5)


@pytest.mark.spark
@pytest.mark.broker
@pytest.mark.zookeeper
def test_the_ini_file_sets_the_zookeeper_and_the_spark_master(pytester, kpy_zookeeper):
    pytester.makeini(f"""
        [pytest]
        kpy_zookeeper_connect = {kpy_zookeeper.connect_string}
        kpy_spark_master = local[1]
    """)
    pytester.makepyfile(test_ini="""
        def test_settings(kpy_zookeeper, kpy_spark):
            assert kpy_zookeeper.server is None
            assert kpy_spark.sparkContext.master == "local[1]"
    """)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=480)
    result.assert_outcomes(passed=1)


def test_a_malformed_zookeeper_connect_is_a_usage_error(pytester):
    pytester.makepyfile(test_nothing="def test_nothing(): pass")
    result = pytester.runpytest_subprocess("--kpy-zookeeper-connect=zk:notaport", timeout=120)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--kpy-zookeeper-connect: invalid zookeeper.connect*"])


def test_the_plugin_can_be_turned_off(pytester):
    pytester.makepyfile(test_off="""
        def test_no_kpy_fixtures(request):
            assert request.config.pluginmanager.get_plugin("kpy") is None
    """)
    result = pytester.runpytest_subprocess("-p", "no:kpy", timeout=120)
    result.assert_outcomes(passed=1)


def test_the_plugin_docstring_shows_the_example_test():
    example = EXAMPLE.read_text(encoding="utf-8")
    assert textwrap.indent(example, "    ") in kspark.testing.plugin.__doc__


def test_the_secured_session_broker_takes_its_users_only(kpy_secured_broker):
    security = kpy_secured_broker.security
    assert security.protocol == "SASL_SSL" and set(security.users) == {"alice", "bob"}
    for mechanism in ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"):
        with KafkaClient(kpy_secured_broker.client_settings("bob", mechanism)) as client:
            assert isinstance(client.topics(), dict)
    wrong = {**kpy_secured_broker.client_settings("alice", "SCRAM-SHA-512"),
             "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                 'required username="alice" password="guess";'}
    with KafkaClient(wrong) as client, pytest.raises(SaslAuthenticationFailedError):
        client.topics()
    plaintext = {"bootstrap.servers": kpy_secured_broker.bootstrap_servers,
                 "request.timeout.ms": "3000"}
    with KafkaClient(plaintext) as client, pytest.raises(KafkaClientError):
        client.topics()


def test_secured_brokers_of_a_tests_own(kpy_secured_brokers, tmp_path):
    cluster = kpy_secured_brokers("SSL", users={"carol": "unused"}, client_auth="required")
    with KafkaClient(cluster.client_settings("carol")) as client:
        client.admin.create_topics([("mtls", 1, 1)])
        assert client.topics() == {"mtls": 1}
    without_certificate = {**cluster.client_settings("carol"), "request.timeout.ms": "3000"}
    del without_certificate["ssl.keystore.certificate.chain"], \
        without_certificate["ssl.keystore.key"]
    with KafkaClient(without_certificate) as client, pytest.raises(KafkaClientError):
        client.topics()
