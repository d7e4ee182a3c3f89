"""Bad input through ``df.write.format("kpy")`` and ``df.writeStream``: every failure names its
cause, and a failed write leaves nothing for read_committed readers, nor a transaction open.

Null values are not bad input: as in Spark's Kafka sink, a null ``value`` is written as a
record with a null value (a tombstone on compacted topics).
"""

import uuid

import pytest
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.errors import StreamingQueryException

from broker_lite.client import KafkaClient, TopicPartition
from broker_lite.server.testing import bootstrap, start_brokers, stop_brokers
from kspark.testing.tiers import needs

LATEST = -1


@pytest.fixture
def servers(broker) -> str:
    return bootstrap(broker)


@pytest.fixture
@needs("broker", "zookeeper")
def strict_servers(zookeeper_connect, tmp_path) -> str:
    """A broker that does not create topics on first use."""
    brokers = start_brokers(zookeeper_connect, tmp_path / "strict", 1,
                            {"auto.create.topics.enable": "false"})
    yield bootstrap(brokers)
    stop_brokers(brokers)


def create_topic(servers: str, partitions: int = 2, **configs: str) -> str:
    topic = f"bad-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})
    admin.create_topics([NewTopic(topic, partitions, 1, config=configs)])[topic].result(30)
    return topic


def committed_records(messages) -> list[tuple]:
    """``(partition, key, value)`` of read_committed messages."""
    return [(m.partition(), m.key(), m.value()) for m in messages]


def read_with_spark(spark, servers: str, topic: str) -> list:
    return (spark.read.format("kpy").option("kafka.bootstrap.servers", servers)
            .option("subscribe", topic).load().select("key", "value").collect())


def assert_nothing_left_open(servers: str, topic: str, partitions: int) -> None:
    """No transaction is left open on ``topic``: the last stable offset of every partition
    (what read_committed readers may read up to) is its end offset."""
    tps = {TopicPartition(topic, p): LATEST for p in range(partitions)}
    with KafkaClient({"bootstrap.servers": servers}) as client:
        stable = client.list_offsets(tps, isolation_level="read_committed")
        end = client.list_offsets(tps, isolation_level="read_uncommitted")
    assert stable == end


def assert_nothing_written(servers: str, topic: str, partitions: int) -> None:
    with KafkaClient({"bootstrap.servers": servers}) as client:
        end = client.list_offsets({TopicPartition(topic, p): LATEST
                                   for p in range(partitions)})
    assert set(end.values()) == {0}


def write(df, servers: str, topic: str | None = None, guarantee: str = "exactly_once",
          **options: str) -> None:
    writer = df.write.format("kpy").option("kafka.bootstrap.servers", servers) \
        .option("kpy.sink.guarantee", guarantee)
    if topic is not None:
        writer = writer.option("topic", topic)
    for name, value in options.items():
        writer = writer.option(name, value)
    writer.mode("append").save()


# -- null values --------------------------------------------------------------------------------


@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
def test_null_values_are_written_as_tombstones(spark, servers, guarantee, read_committed):
    topic = create_topic(servers)
    rows = [(f"k{i}", None if i % 3 == 0 else f"v{i}") for i in range(60)]
    write(spark.createDataFrame(rows, "key string, value string"), servers, topic, guarantee)

    seen = committed_records(read_committed(servers, topic, len(rows)))
    assert sorted((k, v) for _, k, v in seen) == sorted(
        (k.encode(), None if v is None else v.encode()) for k, v in rows)
    back = {r.key: r.value for r in read_with_spark(spark, servers, topic)}
    assert back == {k.encode(): None if v is None else v.encode() for k, v in rows}


# -- wrong types: refused before any task runs ---------------------------------------------------


@pytest.mark.parametrize("columns, message", [
    pytest.param(["array('a', 'b') as key", "'v' as value"],
                 "column 'key': must be string or binary, not array<string>", id="key-array"),
    pytest.param(["'v' as value", "array(struct('h' as key, 'text' as value)) as headers"],
                 "column 'headers': must be array<struct<key: string, value: binary>>, not "
                 "array<struct<key:string,value:string>>", id="headers-string-values"),
    pytest.param(["'v' as value", "struct('h' as key, cast('x' as binary) as value) as headers"],
                 "column 'headers': must be array<struct<key: string, value: binary>>, not "
                 "struct<key:string,value:binary>", id="headers-not-an-array"),
    pytest.param(["'v' as value", "7 as topic"], "column 'topic': must be string, not int",
                 id="topic-int"),
    pytest.param(["'v' as value", "'1' as partition"],
                 "column 'partition': must be int, not string", id="partition-string"),
])
def test_wrong_column_types_fail_before_any_write_naming_the_column(
        spark, servers, columns, message, read_committed):
    topic = create_topic(servers)
    df = spark.range(10).selectExpr(*columns)
    with pytest.raises(Exception) as raised:
        write(df, servers, None if "as topic" in columns[-1] else topic)
    assert message in str(raised.value)
    assert_nothing_written(servers, topic, 2)


# Failures late in a task. Spark hands a task its rows in Arrow batches of 10,000
# (spark.sql.execution.arrow.maxRecordsPerBatch), and the sink sends them in chunks of eight
# batch.size: with 100-byte values and a batch.size of 8 KiB, each Arrow batch is sent on its
# own. The bad row comes in the second Arrow batch of the second task, after the first was
# written; the other task succeeds.
ROWS, BAD_ROW = 30_000, 27_000
SMALL_SENDS = {"kafka.batch.size": "8192"}
PADDED = "lpad(cast(id as string), 100, '0')"
VALUE = f"{PADDED} as value"


def two_tasks(spark):
    return spark.range(0, ROWS, 1, numPartitions=2)


def assert_failed_write_left_nothing(spark, read_committed, servers: str, topic: str) -> None:
    """Rows were written before the failure, and aborted: read_committed readers see none of
    them, and nothing is left open."""
    with KafkaClient({"bootstrap.servers": servers}) as client:
        end = client.list_offsets({TopicPartition(topic, p): LATEST for p in range(2)})
    assert sum(end.values()) >= 10_000  # at least the failed task's first Arrow batch
    assert committed_records(read_committed(servers, topic)) == []
    assert read_with_spark(spark, servers, topic) == []
    assert_nothing_left_open(servers, topic, 2)


def test_a_header_with_a_null_key_fails_the_write_and_nothing_is_visible(
        spark, servers, read_committed):
    topic = create_topic(servers)
    df = two_tasks(spark).selectExpr(
        VALUE, f"array(struct(case when id = {BAD_ROW} then null else 'h' end as key, "
               "cast('x' as binary) as value)) as headers")
    with pytest.raises(Exception, match="column 'headers' has a header with a null key"):
        write(df, servers, topic, **SMALL_SENDS)
    assert_failed_write_left_nothing(spark, read_committed, servers, topic)


def test_a_null_topic_without_a_topic_option_fails_naming_the_column(
        spark, servers, read_committed):
    topic = create_topic(servers)
    df = two_tasks(spark).selectExpr(
        VALUE, f"case when id = {BAD_ROW} then null else '{topic}' end as topic")
    with pytest.raises(Exception, match="rows have a null topic and no 'topic' option"):
        write(df, servers, **SMALL_SENDS)
    assert_failed_write_left_nothing(spark, read_committed, servers, topic)


# -- topics that do not exist --------------------------------------------------------------------


def test_an_unknown_topic_without_auto_creation_fails_naming_the_topic(spark, strict_servers):
    missing = f"missing-{uuid.uuid4().hex[:8]}"
    df = spark.range(100).selectExpr("cast(id as string) as value")
    with pytest.raises(Exception, match=f"topic {missing}: .*does not exist"):
        write(df, strict_servers, missing)
    with KafkaClient({"bootstrap.servers": strict_servers}) as client:
        assert missing not in client.topics()


def test_rows_for_an_unknown_topic_fail_the_whole_write(spark, strict_servers, read_committed):
    topic, missing = create_topic(strict_servers), f"missing-{uuid.uuid4().hex[:8]}"
    df = two_tasks(spark).selectExpr(
        VALUE, f"case when id = {BAD_ROW} then '{missing}' else '{topic}' end as topic")
    with pytest.raises(Exception, match=f"topic {missing}: .*does not exist"):
        write(df, strict_servers, **SMALL_SENDS)
    assert_failed_write_left_nothing(spark, read_committed, strict_servers, topic)


def test_a_partition_the_topic_does_not_have_fails_the_whole_write(spark, servers, read_committed):
    topic = create_topic(servers)
    df = two_tasks(spark).selectExpr(
        VALUE, f"cast(case when id = {BAD_ROW} then 5 else id % 2 end as int) as partition")
    with pytest.raises(Exception, match=f"UNKNOWN_TOPIC_OR_PARTITION .* for {topic}-5: "
                                        "the topic has 2 partitions"):
        write(df, servers, topic, **SMALL_SENDS)
    assert_failed_write_left_nothing(spark, read_committed, servers, topic)


# -- records too large ---------------------------------------------------------------------------


def value_too_large_in_row(row: int) -> str:
    return f"case when id = {row} then repeat('x', 20000) else {PADDED} end as value"


def test_a_record_over_max_request_size_fails_the_write_all_or_nothing(
        spark, servers, read_committed):
    topic = create_topic(servers)
    df = two_tasks(spark).selectExpr(value_too_large_in_row(BAD_ROW))
    with pytest.raises(Exception, match=r"larger than max\.request\.size \(10000\)"):
        write(df, servers, topic, **SMALL_SENDS, **{"kafka.max.request.size": "10000"})
    assert_failed_write_left_nothing(spark, read_committed, servers, topic)


def test_a_record_over_the_topics_max_message_bytes_fails_the_write_all_or_nothing(
        spark, servers, read_committed):
    topic = create_topic(servers, **{"max.message.bytes": "10000"})
    df = two_tasks(spark).selectExpr(value_too_large_in_row(BAD_ROW))
    with pytest.raises(Exception, match=r"MESSAGE_TOO_LARGE .*max\.message\.bytes"):
        write(df, servers, topic, **SMALL_SENDS)
    assert_failed_write_left_nothing(spark, read_committed, servers, topic)


def test_a_streaming_batch_with_a_record_too_large_fails_without_exposing_part_of_it(
        spark, servers, tmp_path, read_committed):
    source, target = create_topic(servers, partitions=1), create_topic(servers)
    # One input partition, so each micro-batch is one write task: batch 0 is rows 0-11,999,
    # batch 1 rows 12,000-23,999, the bad row in the task's second Arrow batch.
    rows = spark.range(0, ROWS, 1, numPartitions=1).selectExpr(value_too_large_in_row(23_000))
    write(rows, servers, source, **{"kafka.max.request.size": "100000"})

    query = (spark.readStream.format("kpy").option("kafka.bootstrap.servers", servers)
             .option("subscribe", source).option("startingOffsets", "earliest")
             .option("maxOffsetsPerTrigger", "12000").load()
             .select("value")
             .writeStream.format("kpy").option("kafka.bootstrap.servers", servers)
             .option("topic", target).option("kafka.max.request.size", "10000")
             .option("kafka.batch.size", SMALL_SENDS["kafka.batch.size"])
             .option("checkpointLocation", str(tmp_path / "cp"))
             .trigger(availableNow=True).start())
    with pytest.raises(StreamingQueryException,
                       match=r"larger than max\.request\.size \(10000\)"):
        query.awaitTermination(180)

    seen = committed_records(read_committed(servers, target, 12_000))
    assert sorted(v for _, _, v in seen) == [f"{i:0>100}".encode() for i in range(12_000)]
    with KafkaClient({"bootstrap.servers": servers}) as client:
        end = client.list_offsets({TopicPartition(target, p): LATEST for p in range(2)})
    assert sum(end.values()) - 12_000 >= 10_000  # batch 1 wrote its first Arrow batch
    assert_nothing_left_open(servers, target, 2)
