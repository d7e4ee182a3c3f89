"""What a user sees when a read cannot go ahead: Spark's refusal of a user-specified schema, and
option errors of streaming reads with their own message (PySpark 4.3 would show an
``UnboundLocalError`` for an error raised while it makes the stream reader)."""

import pytest

from .conftest import create_topic, produce, sample_rows

USER_SCHEMA = "KpyDataSource source does not support user-specified schema"


def kpy(reader, servers, topic, **options):
    reader = reader.format("kpy").option("kafka.bootstrap.servers", servers) \
        .option("subscribe", topic)
    for name, value in options.items():
        reader = reader.option(name, value)
    return reader


def streaming_failure(df, checkpoint) -> str:
    """The error of a streaming query over ``df``, raised by start() or by the query."""
    try:
        query = (df.writeStream.format("noop").option("checkpointLocation", str(checkpoint))
                 .trigger(availableNow=True).start())
        query.awaitTermination(120)  # raises the query's error
    except Exception as exc:  # Spark raises its own error types
        return str(exc)
    raise AssertionError(f"the query did not fail: {query.exception()}")


@pytest.mark.parametrize("schema", [
    "value binary",
    "key binary, value binary, topic string, partition int, offset long, "
    "timestamp timestamp, timestampType int"])  # even Spark's Kafka schema: as Spark refuses it
def test_a_user_specified_schema_is_refused_as_spark_refuses_it(spark, servers, topic_name,
                                                                schema):
    create_topic(servers, topic_name, 1)
    produce(servers, topic_name, sample_rows(3))
    df = kpy(spark.read, servers, topic_name).schema(schema).load()
    with pytest.raises(Exception, match=USER_SCHEMA) as raised:
        df.collect()
    assert "DATA_SOURCE_RETURN_SCHEMA_MISMATCH" not in str(raised.value)


def test_a_streaming_read_refuses_a_user_specified_schema(spark, servers, topic_name,
                                                          tmp_path):
    create_topic(servers, topic_name, 1)
    df = kpy(spark.readStream, servers, topic_name).schema("value binary").load()
    assert USER_SCHEMA in streaming_failure(df, tmp_path / "cp")


def test_a_streaming_option_error_is_shown_with_its_message(spark, servers, topic_name,
                                                            tmp_path):
    create_topic(servers, topic_name, 1)
    df = kpy(spark.readStream, servers, topic_name, endingOffsets="latest").load()
    message = streaming_failure(df, tmp_path / "cp")
    assert "option 'endingOffsets': ending positions apply to batch reads only" in message
    assert "UnboundLocalError" not in message
