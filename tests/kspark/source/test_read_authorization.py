"""A streaming read whose principal may not Read its consumer group fails, with an error that
names the group (a real SparkSession, a broker with Kafka's ACL authorizer; and the source's
driver side as Spark drives it); with Read on the group the same query runs and commits its
progress there."""

import uuid

import pytest
from confluent_kafka import Consumer
from confluent_kafka import TopicPartition as KafkaTopicPartition
from pyspark.sql.streaming.datasource import ReadAllAvailable

from broker_lite.client.errors import GroupAuthorizationFailedError
from broker_lite.protocol.enums import AclOperation, ResourceType
from broker_lite.server.testing import bootstrap
from kspark.source import KpyStreamReader
from kspark.source.options import parse_source_options

from .conftest import create_topic, produce, sample_rows


def stream_into_noop(spark, servers, topic, group, checkpoint):
    df = (spark.readStream.format("kpy").option("kafka.bootstrap.servers", servers)
          .option("subscribe", topic).option("startingOffsets", "earliest")
          .option("kafka.group.id", group).load())
    return (df.writeStream.format("noop").option("checkpointLocation", str(checkpoint))
            .trigger(availableNow=True).start())


def test_a_query_without_read_on_its_group_fails_naming_the_group(spark, acl_broker, tmp_path):
    servers, topic = bootstrap(acl_broker), f"t-{uuid.uuid4().hex[:8]}"
    group = f"kpy-refused-{uuid.uuid4().hex[:6]}"
    create_topic(servers, topic, 2)
    produce(servers, topic, sample_rows(20))
    query = stream_into_noop(spark, servers, topic, group, tmp_path / "refused")
    with pytest.raises(Exception) as raised:  # Spark raises its own error types
        query.awaitTermination(120)
    message = str(raised.value)
    assert "GROUP_AUTHORIZATION_FAILED" in message
    assert f"consumer group {group!r} (kafka.group.id)" in message
    assert f"principal User:ANONYMOUS needs Read on group {group!r}" in message


def test_with_read_on_its_group_the_query_commits_there(spark, acl_broker, grant, tmp_path):
    servers, topic = bootstrap(acl_broker), f"t-{uuid.uuid4().hex[:8]}"
    group = f"kpy-allowed-{uuid.uuid4().hex[:6]}"
    create_topic(servers, topic, 1)
    produce(servers, topic, sample_rows(20))
    grant(acl_broker, AclOperation.READ, ResourceType.GROUP, group)
    query = stream_into_noop(spark, servers, topic, group, tmp_path / "allowed")
    assert query.awaitTermination(120) and query.exception() is None
    consumer = Consumer({"bootstrap.servers": servers, "group.id": group, "log_level": 3})
    try:
        [committed] = consumer.committed([KafkaTopicPartition(topic, 0)], timeout=20)
    finally:
        consumer.close()
    assert committed.offset == 20


def test_the_refused_commit_is_raised_by_the_driver_naming_the_group(acl_broker):
    servers, topic = bootstrap(acl_broker), f"t-{uuid.uuid4().hex[:8]}"
    create_topic(servers, topic, 1)
    produce(servers, topic, sample_rows(5))
    source = KpyStreamReader(parse_source_options({
        "kafka.bootstrap.servers": servers, "subscribe": topic, "startingOffsets": "earliest",
        "kafka.group.id": "etl-progress"}))
    try:
        start = source.initialOffset()
        with pytest.raises(GroupAuthorizationFailedError) as raised:
            source.latestOffset(start, ReadAllAvailable())  # commits the finished batches first
        assert str(raised.value).startswith(
            "the query's progress cannot be committed to its consumer group 'etl-progress' "
            "(kafka.group.id): GROUP_AUTHORIZATION_FAILED (30) for group etl-progress")
    finally:
        source.stop()
