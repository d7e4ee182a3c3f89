"""kspark against brokers it was not written with: librdkafka's mock cluster, and broker_lite
serving only what Kafka 2.1, 2.8 or 3.9 served. The same scenarios run against each, on the
session's plain local SparkSession: a batch read, a Trigger.AvailableNow streaming read that
commits its progress to ``kafka.group.id``, and an exactly-once ``df.write``; against the old
releases also an exactly-once streaming write. What goes in and what comes out is produced and
read with librdkafka (read_committed), not with kpy's client.

The mock cluster lacks what the exactly-once streaming sink needs, and writes transaction
markers without valid CRCs (``MOCK_LACKS``): that sink is not run against it, the first gap is
checked, so that it is known which is which, and its markers are read without CRC checks.
"""

from __future__ import annotations

import pytest

from broker_lite.client import KafkaClient
from broker_lite.client.errors import InvalidResponseError

from .conftest import MOCK_LACKS, committed, consume, produce, unique


def kafka(cluster) -> dict[str, str]:
    return {"kafka.bootstrap.servers": cluster.bootstrap_servers,
            "kafka.request.timeout.ms": "30000"}


def batch_read(spark, cluster, tmp_path) -> None:
    topic = unique("read")
    produced = produce(cluster.bootstrap_servers, topic, 60)
    rows = (spark.read.format("kpy").options(**kafka(cluster), subscribe=topic).load()
            .select("partition", "offset", "key", "value").collect())
    got = sorted((r.partition, r.offset, r.key, r.value) for r in rows)
    assert got == [(r.partition, r.offset, r.key, r.value) for r in produced], cluster.name


def stream_read_with_group_commits(spark, cluster, tmp_path) -> None:
    topic, group, table = unique("stream"), unique("kpy-query"), unique("stream_out")
    produced = produce(cluster.bootstrap_servers, topic, 45)
    query = (spark.readStream.format("kpy").options(**kafka(cluster)).option("subscribe", topic)
             .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "20")
             .option("kafka.group.id", group).load()
             .select("partition", "offset", "value").writeStream.format("memory")
             .queryName(table.replace("-", "_"))
             .option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    try:
        assert query.awaitTermination(180), f"{cluster.name}: the query did not finish"
        assert query.exception() is None, query.exception()
        rows = spark.sql(f"select * from {table.replace('-', '_')}").collect()
        batches = [p["numInputRows"] for p in query.recentProgress if p["numInputRows"]]
    finally:
        query.stop()
    assert sorted((r.partition, r.offset, r.value) for r in rows) == [
        (r.partition, r.offset, r.value) for r in produced]
    assert len(batches) >= 3, batches  # maxOffsetsPerTrigger: several micro-batches
    ends: dict[int, int] = {}
    for record in produced:
        ends[record.partition] = max(ends.get(record.partition, 0), record.offset + 1)
    assert committed(cluster.bootstrap_servers, group, topic, sorted(ends)) == ends


def exactly_once_write(spark, cluster, tmp_path) -> None:
    topic = unique("written")
    rows = [(f"k{i % 5}", f"w{i}") for i in range(40)]
    (spark.createDataFrame(rows, "key string, value string").write.format("kpy")
     .options(**kafka(cluster), topic=topic).mode("append").save())
    expected = sorted((k.encode(), v.encode()) for k, v in rows)
    read = {level: consume(cluster.bootstrap_servers, topic, level,
                           check_crcs=cluster.marker_crcs)
            for level in ("read_committed", "read_uncommitted")}
    assert sorted((r.key, r.value) for r in read["read_committed"]) == expected, cluster.name
    # nothing aborted, nothing left open: read_uncommitted sees the very same records
    assert read["read_uncommitted"] == read["read_committed"]


def exactly_once_stream_write(spark, cluster, tmp_path) -> None:
    source, sink = unique("stream-in"), unique("stream-out")
    produced = produce(cluster.bootstrap_servers, source, 30)
    query = (spark.readStream.format("kpy").options(**kafka(cluster)).option("subscribe", source)
             .option("startingOffsets", "earliest").option("maxOffsetsPerTrigger", "12").load()
             .select("key", "value").writeStream.format("kpy").options(**kafka(cluster))
             .option("topic", sink).option("checkpointLocation", str(tmp_path / "checkpoint"))
             .trigger(availableNow=True).start())
    assert query.awaitTermination(180), f"{cluster.name}: the query did not finish"
    assert query.exception() is None, query.exception()
    written = consume(cluster.bootstrap_servers, sink, "read_committed",
                      check_crcs=cluster.marker_crcs)
    assert sorted((r.key, r.value) for r in written) == sorted((r.key, r.value)
                                                                for r in produced)


SCENARIOS = [batch_read, stream_read_with_group_commits, exactly_once_write]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=lambda s: s.__name__)
def test_librdkafka_mock_cluster(spark, mock_cluster, scenario, tmp_path):
    scenario(spark, mock_cluster, tmp_path)


@pytest.mark.parametrize("scenario", [*SCENARIOS, exactly_once_stream_write],
                         ids=lambda s: s.__name__)
def test_old_kafka_release(spark, old_kafka, scenario, tmp_path):
    scenario(spark, old_kafka, tmp_path)


def test_what_the_mock_cluster_lacks_is_refused_naming_api_version_and_field(mock_cluster):
    """OffsetFetch of all of a group's partitions: the mock answers with a null topics array,
    which Java's client refuses too; the refusal names the API, its version and the field."""
    assert any(lacking.startswith("OffsetFetch of all") for lacking in MOCK_LACKS)
    with KafkaClient({"bootstrap.servers": mock_cluster.bootstrap_servers}) as client, \
            pytest.raises(InvalidResponseError) as refused:
        client.committed(unique("kpy-sink"), None)
    assert "OffsetFetch v6 response that does not decode" in str(refused.value)
    assert "(field topics" in str(refused.value)
