"""``spark.read.format("kpy")`` against a real broker_lite and ZooKeeper: what Spark reads
equals what was produced, for every codec and message format, with every way of bounding the
read."""

import time

import pytest
from chispa import assert_df_equality
from pyspark.sql import functions as F

from broker_lite.protocol import ApiKey
from broker_lite.records import CompressionType, build_message_set
from broker_lite.server.testing import bootstrap

from .conftest import Produced, create_topic, produce, sample_rows

COLUMNS = "key binary, value binary, topic string, partition int, offset long, ts long, " \
          "timestampType int, headers array<struct<key: string, value: binary>>"


def expected_df(spark, produced: list[Produced]):
    return spark.createDataFrame(
        [(p.key, p.value, p.topic, p.partition, p.offset, p.timestamp_ms, p.timestamp_type,
          [(k, v) for k, v in p.headers] or None) for p in produced], COLUMNS)


def comparable(df):
    columns = ["key", "value", "topic", "partition", "offset",
               F.unix_millis("timestamp").alias("ts"), "timestampType"]
    return df.select(*columns, *(["headers"] if "headers" in df.columns else []))


def read(spark, servers, **options):
    reader = spark.read.format("kpy").option("kafka.bootstrap.servers", servers)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader.load()


@pytest.mark.parametrize("codec", ["none", "gzip", "snappy", "lz4", "zstd"])
def test_batch_read_equals_what_was_produced(spark, servers, topic_name, codec):
    create_topic(servers, topic_name, 3)
    produced = produce(servers, topic_name, sample_rows(600, codec), compression=codec)
    assert {p.partition for p in produced} == {0, 1, 2}
    df = read(spark, servers, subscribe=topic_name, includeHeaders="true")
    assert_df_equality(comparable(df), expected_df(spark, produced), ignore_row_order=True,
                       ignore_nullable=True)


def test_batch_read_of_every_message_format(spark, broker, topic_name, kafka_call):
    """Records that pre-0.11 clients sent as v0 and v1 message sets (plain and compressed), which
    the broker up-converts to v2 batches as Kafka 3.x does, and v2 batches after them."""
    servers = bootstrap(broker)
    create_topic(servers, topic_name, 1)
    expected, offset = [], 0
    for magic, codec in [(0, CompressionType.NONE), (0, CompressionType.GZIP),
                         (1, CompressionType.NONE), (1, CompressionType.SNAPPY),
                         (1, CompressionType.LZ4)]:
        rows = [(f"k{magic}{codec.name}{i}".encode(), f"v{i}".encode()) for i in range(4)]
        data = build_message_set(rows, magic=magic, compression=codec,
                                 timestamp=1_600_000_000_000)
        # message sets travel in Produce v0-v2, as pre-0.11 clients sent them
        response = kafka_call(broker.port, ApiKey.PRODUCE, 2, {
            "acks": 1, "timeout_ms": 5000,
            "topic_data": [{"name": topic_name, "partition_data": [
                {"index": 0, "records": data}]}]})
        assert response["responses"][0]["partition_responses"][0]["error_code"] == 0
        for key, value in rows:
            # v0 messages have no timestamp: up-converted, they are CreateTime records of -1 ms
            expected.append(Produced(key, value, topic_name, 0, offset,
                                     -1 if magic == 0 else 1_600_000_000_000, timestamp_type=0))
            offset += 1
    expected += produce(servers, topic_name, [(b"v2", b"new", [], 1_700_000_000_000)])
    df = read(spark, servers, subscribe=topic_name, includeHeaders="true")
    assert_df_equality(comparable(df), expected_df(spark, expected), ignore_row_order=True,
                       ignore_nullable=True)


def test_starting_and_ending_offsets_bound_the_read(spark, servers, topic_name):
    create_topic(servers, topic_name, 2)
    produced = produce(servers, topic_name, sample_rows(200))
    by_partition = {p: [r for r in produced if r.partition == p] for p in (0, 1)}
    sizes = {p: len(rows) for p, rows in by_partition.items()}
    df = read(spark, servers, subscribe=topic_name,
              startingOffsets=f'{{"{topic_name}": {{"0": 10, "1": -2}}}}',
              endingOffsets=f'{{"{topic_name}": {{"0": -1, "1": {sizes[1] - 5}}}}}')
    got = sorted((r.partition, r.offset) for r in df.select("partition", "offset").collect())
    assert got == sorted([(0, o) for o in range(10, sizes[0])]
                         + [(1, o) for o in range(0, sizes[1] - 5)])


def test_timestamps_choose_the_first_offset_at_or_after_them(spark, servers, topic_name):
    create_topic(servers, topic_name, 1)
    rows = [(None, f"v{i}".encode(), [], 1_000_000 + 1000 * i) for i in range(50)]
    produce(servers, topic_name, rows, partition=0)
    df = read(spark, servers, subscribe=topic_name, startingTimestamp=str(1_000_000 + 10_500),
              endingOffsetsByTimestamp=f'{{"{topic_name}": {{"0": {1_000_000 + 20_000}}}}}')
    assert sorted(r.offset for r in df.select("offset").collect()) == list(range(11, 20))
    with pytest.raises(Exception, match="no record at or after the timestamp"):
        read(spark, servers, subscribe=topic_name, startingTimestamp="99999999999999").count()
    late = read(spark, servers, subscribe=topic_name, startingTimestamp="99999999999999",
                startingOffsetsByTimestampStrategy="latest")
    assert late.count() == 0


def test_min_partitions_and_max_records_split_partitions(spark, servers, topic_name):
    create_topic(servers, topic_name, 2)
    produced = produce(servers, topic_name, sample_rows(400))
    whole = read(spark, servers, subscribe=topic_name)
    split = read(spark, servers, subscribe=topic_name, minPartitions="8")
    capped = read(spark, servers, subscribe=topic_name, maxRecordsPerPartition="50")
    assert whole.rdd.getNumPartitions() == 2
    assert split.rdd.getNumPartitions() >= 8
    assert capped.rdd.getNumPartitions() >= 400 // 50
    for df in (split, capped):
        assert_df_equality(comparable(df).drop("headers"),
                           expected_df(spark, produced).drop("headers"),
                           ignore_row_order=True, ignore_nullable=True)


def test_assign_reads_only_the_assigned_partitions(spark, servers, topic_name):
    create_topic(servers, topic_name, 3)
    produced = produce(servers, topic_name, sample_rows(90))
    df = read(spark, servers, assign=f'{{"{topic_name}": [0, 2]}}')
    assert sorted((r.partition, r.offset) for r in df.collect()) == sorted(
        (p.partition, p.offset) for p in produced if p.partition in (0, 2))
    with pytest.raises(Exception, match=f"{topic_name}-7 do not exist"):
        read(spark, servers, assign=f'{{"{topic_name}": [7]}}').count()


def test_the_same_read_works_across_a_three_broker_cluster(spark, three_brokers, topic_name):
    servers = bootstrap(three_brokers)
    create_topic(servers, topic_name, 6)
    leaders = {p.state.leader for p in three_brokers[0].services.cluster.partitions(topic_name)}
    assert len(leaders) == 3
    produced = produce(servers, topic_name, sample_rows(600), compression="lz4")
    df = read(spark, bootstrap(three_brokers[0]), subscribe=topic_name, includeHeaders="true")
    assert_df_equality(comparable(df), expected_df(spark, produced), ignore_row_order=True,
                       ignore_nullable=True)


def test_option_errors_fail_at_load_naming_the_option(spark, servers):
    # Spark hands unknown options over lower-cased
    with pytest.raises(Exception, match=r"(?i)option 'maxOffsetPerTrigger': unknown"):
        read(spark, servers, subscribe="t", maxOffsetPerTrigger="5")
    with pytest.raises(Exception, match=r"option 'kafka\.bootstrap\.servers'"):
        spark.read.format("kpy").option("subscribe", "t").load()
    with pytest.raises(Exception, match=r"option 'startingOffsets'.*batch"):
        read(spark, servers, subscribe="t", startingOffsets="latest").count()


def test_a_wrong_bootstrap_server_fails_within_the_timeout(spark):
    import socket

    with socket.socket() as unused:
        unused.bind(("127.0.0.1", 0))
        port = unused.getsockname()[1]
    started = time.monotonic()
    with pytest.raises(Exception, match=f"127.0.0.1:{port}"):
        read(spark, f"127.0.0.1:{port}", subscribe="t",
             **{"kafka.request.timeout.ms": "3000",
                "kafka.socket.connection.setup.timeout.ms": "1000"}).count()
    assert time.monotonic() - started < 30
