"""``df.write.format("kpy")`` and ``df.writeStream.format("kpy")`` against a real broker_lite,
ZooKeeper and SparkSession, read back with a read_committed confluent-kafka consumer and with
``spark.read.format("kpy")``."""

import uuid

import pytest
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic
from pyspark.sql import functions as F

from broker_lite.server.testing import bootstrap


@pytest.fixture
def servers(broker) -> str:
    return bootstrap(broker)


def create_topic(servers: str, partitions: int = 3) -> str:
    topic = f"out-{uuid.uuid4().hex[:8]}"
    admin = AdminClient({"bootstrap.servers": servers})  # kept alive until the topic exists
    admin.create_topics([NewTopic(topic, partitions, 1)])[topic].result(30)
    return topic


def committed_rows(messages) -> list:
    """(partition, key, value, headers) of read_committed messages."""
    return [(m.partition(), m.key(), m.value(), tuple(m.headers() or ())) for m in messages]


def read_back(spark, servers, topic):
    return (spark.read.format("kpy").option("kafka.bootstrap.servers", servers)
            .option("subscribe", topic).option("includeHeaders", "true").load())


ROWS = [(f"key-{i % 50}", f"value-{i}", i % 3) for i in range(300)]


@pytest.mark.parametrize("columns", [
    "value", "key,value", "key,value,headers", "value,topic", "key,value,partition",
    "key,value,headers,topic,partition"])
@pytest.mark.parametrize("guarantee", ["exactly_once", "at_least_once"])
def test_batch_write_of_every_column_combination(
        spark, servers, columns, guarantee, read_committed):
    topic = create_topic(servers)
    wanted = columns.split(",")
    df = spark.createDataFrame(ROWS, "key string, value string, p int") \
        .withColumn("headers", F.array(F.struct(F.lit("n").alias("key"),
                                                F.col("value").cast("binary").alias("value")))) \
        .withColumn("topic", F.lit(topic)).withColumnRenamed("p", "partition") \
        .select(*wanted)
    writer = df.write.format("kpy").option("kafka.bootstrap.servers", servers) \
        .option("kpy.sink.guarantee", guarantee)
    if "topic" not in wanted:
        writer = writer.option("topic", topic)
    writer.mode("append").save()

    seen = committed_rows(read_committed(servers, topic, len(ROWS)))
    assert sorted(v for _, _, v, _ in seen) == sorted(v.encode() for _, v, _ in ROWS)
    by_value = {v.encode(): (k.encode(), p) for k, v, p in ROWS}
    for partition, key, value, headers in seen:
        assert key == (by_value[value][0] if "key" in wanted else None)
        assert headers == ((("n", value),) if "headers" in wanted else ())
        if "partition" in wanted:
            assert partition == by_value[value][1]
    assert read_back(spark, servers, topic).count() == len(ROWS)


def test_keys_land_where_the_java_partitioner_puts_them(spark, servers):
    topic = create_topic(servers, partitions=7)
    keys = [f"user-{i}" for i in range(2000)]
    spark.createDataFrame([(k, "v") for k in keys], "key string, value string") \
        .write.format("kpy").option("kafka.bootstrap.servers", servers) \
        .option("topic", topic).mode("append").save()
    ours = {r.key.decode(): r.partition
            for r in read_back(spark, servers, topic).select("key", "partition").collect()}
    theirs, producer = {}, Producer({"bootstrap.servers": servers,
                                     "partitioner": "murmur2_random", "log_level": 3})
    other = create_topic(servers, partitions=7)
    for k in keys:
        producer.produce(other, key=k, value=b"v",
                         on_delivery=lambda err, msg: theirs.__setitem__(msg.key().decode(),
                                                                         msg.partition()))
    assert producer.flush(30) == 0
    assert ours == theirs


def test_bad_columns_fail_before_anything_is_written(spark, servers):
    topic = create_topic(servers)
    df = spark.createDataFrame([(1, "x")], "value long, key string")
    with pytest.raises(Exception, match="column 'value': must be string or binary"):
        df.write.format("kpy").option("kafka.bootstrap.servers", servers) \
            .option("topic", topic).mode("append").save()
    _low, high = Consumer({"bootstrap.servers": servers, "group.id": "x", "log_level": 3}) \
        .get_watermark_offsets(TopicPartition(topic, 0), timeout=10)
    assert high == 0


def test_a_failed_batch_write_leaves_nothing_visible(spark, servers, read_committed):
    topic = create_topic(servers)

    def explode(value):  # fails every attempt of the task that holds this row
        if value == "value-250":
            raise ValueError("boom")
        return value

    fail = F.udf(explode, "string")
    df = spark.createDataFrame([(f"value-{i}",) for i in range(300)], "value string") \
        .repartition(2).withColumn("value", fail("value"))
    with pytest.raises(Exception, match="boom"):
        df.write.format("kpy").option("kafka.bootstrap.servers", servers) \
            .option("topic", topic).mode("append").save()
    # The failed write's transactions were aborted, not left open: a later write is visible
    # at once (an open transaction would hold read_committed consumers back).
    spark.createDataFrame([("after",)], "value string").write.format("kpy") \
        .option("kafka.bootstrap.servers", servers).option("topic", topic) \
        .mode("append").save()
    seen = committed_rows(read_committed(servers, topic, 1, timeout_s=20))
    assert [v for _, _, v, _ in seen] == [b"after"]


def stream_copy(spark, servers, source, target, checkpoint, transform=None):
    df = (spark.readStream.format("kpy").option("kafka.bootstrap.servers", servers)
          .option("subscribe", source).option("startingOffsets", "earliest")
          .option("maxOffsetsPerTrigger", "100").load()
          .select("key", F.upper(F.col("value").cast("string")).alias("value")))
    if transform is not None:
        df = df.withColumn("value", transform(F.col("value")))
    query = (df.writeStream.format("kpy").option("kafka.bootstrap.servers", servers)
             .option("topic", target).option("checkpointLocation", str(checkpoint))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(180), f"the copy still running after 180 s: {query.status}"
    return query


def produce_input(servers, topic, start, count):
    producer = Producer({"bootstrap.servers": servers, "log_level": 3})
    for i in range(start, start + count):
        producer.produce(topic, key=f"k{i % 17}".encode(), value=f"record-{i}".encode())
    assert producer.flush(30) == 0


def test_streaming_copy_is_exactly_once_across_a_task_failure_and_a_restart(
        spark, servers, tmp_path, read_committed):
    source, target = create_topic(servers), create_topic(servers)
    produce_input(servers, source, 0, 400)

    def fail_first_attempt(value):
        from pyspark import TaskContext

        context = TaskContext.get()
        if context.attemptNumber() == 0 and value == "RECORD-123":
            raise RuntimeError("injected failure of a first attempt")
        return value

    query = stream_copy(spark, servers, source, target, tmp_path / "cp",
                        F.udf(fail_first_attempt, "string"))
    assert query.exception() is None, query.exception()
    produce_input(servers, source, 400, 200)
    query = stream_copy(spark, servers, source, target, tmp_path / "cp")
    assert query.exception() is None, query.exception()
    seen = committed_rows(read_committed(servers, target, 600))
    assert sorted(v for _, _, v, _ in seen) == sorted(f"RECORD-{i}".encode()
                                                      for i in range(600))
