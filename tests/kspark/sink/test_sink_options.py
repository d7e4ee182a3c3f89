"""The sink's options and columns: Spark's Kafka sink names, and every mistake named."""

import pytest
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    IntegerType,
    LongType,
    StringType,
    StructType,
)

from broker_lite.client.java_settings import JAVA_PRODUCER_SETTINGS
from kspark.options import OptionError, unused_kafka_settings
from kspark.sink import ColumnError, check_columns, parse_sink_options
from kspark.sink.options import SINK_KAFKA_SETTINGS

BOOT = {"kafka.bootstrap.servers": "127.0.0.1:9092"}
HEADERS = ArrayType(StructType().add("key", StringType()).add("value", BinaryType()))


def test_defaults_and_settings():
    options = parse_sink_options({**BOOT, "topic": " out ", "kafka.compression.type": "zstd"})
    assert (options.topic, options.guarantee, options.exactly_once) == ("out", "exactly_once",
                                                                        True)
    assert options.client["compression.type"] == "zstd"
    # Transactions must outlive a driver restart between the tasks' writes and the commit.
    assert options.client["transaction.timeout.ms"] == "900000"
    relaxed = parse_sink_options({**BOOT, "kpy.sink.guarantee": "AT_LEAST_ONCE"})
    assert not relaxed.exactly_once and "transaction.timeout.ms" not in relaxed.client
    # Spark passes the checkpoint location of a streaming query along with the options.
    assert parse_sink_options({**BOOT, "checkpointLocation": "/tmp/cp"}).topic is None


@pytest.mark.parametrize("options, option", [
    ({"topic": "t"}, "kafka.bootstrap.servers"),
    ({**BOOT, "kpy.sink.guarantee": "maybe"}, "kpy.sink.guarantee"),
    ({**BOOT, "topic": "  "}, "topic"),
    ({**BOOT, "subscribe": "t"}, "subscribe"),
    ({**BOOT, "kafka.acks": "some"}, "kafka.acks"),
    ({**BOOT, "kafka.key.serializer": "x"}, "kafka.key.serializer"),
])
def test_option_mistakes_name_the_option(options, option):
    with pytest.raises(OptionError) as raised:
        parse_sink_options(options)
    assert raised.value.option == option


GOOD = StructType().add("key", StringType()).add("value", BinaryType()) \
    .add("headers", HEADERS).add("topic", StringType()).add("partition", IntegerType()) \
    .add("ignored", LongType())


def test_every_column_kpy_writes_is_accepted_and_others_ignored():
    check_columns(GOOD, parse_sink_options(BOOT))
    check_columns(StructType().add("value", StringType()),
                  parse_sink_options({**BOOT, "topic": "t"}))


@pytest.mark.parametrize("schema, column", [
    (StructType().add("key", StringType()), "value"),
    (StructType().add("value", LongType()).add("topic", StringType()), "value"),
    (StructType().add("value", StringType()).add("key", IntegerType())
     .add("topic", StringType()), "key"),
    (StructType().add("value", StringType()).add("topic", BinaryType()), "topic"),
    (StructType().add("value", StringType()).add("topic", StringType())
     .add("partition", LongType()), "partition"),
    (StructType().add("value", StringType()).add("topic", StringType())
     .add("headers", ArrayType(StringType())), "headers"),
    (StructType().add("value", StringType()), "topic"),
])
def test_column_mistakes_name_the_column(schema, column):
    with pytest.raises(ColumnError) as raised:
        check_columns(schema, parse_sink_options(BOOT))
    assert raised.value.column == column
    assert f"column '{column}'" in str(raised.value)


def test_every_setting_of_kafkas_java_producer_is_accepted():
    # Kafka 3.9's ProducerConfig; the serializers and transactional.id are the sink's own, as in
    # Spark's Kafka sink, and TLS is not supported yet.
    refused = {"key.serializer", "value.serializer", "transactional.id", "interceptor.classes",
               "security.protocol"}
    values = {"acks": "all", "compression.type": "lz4", "enable.idempotence": "true",
              "bootstrap.servers": "h:1"}
    for name in sorted(JAVA_PRODUCER_SETTINGS - refused):
        options = parse_sink_options({**BOOT, "topic": "t",
                                      f"kafka.{name}": values.get(name, "1000")})
        assert options.client[name] == values.get(name, "1000")
    options = parse_sink_options({**BOOT, "topic": "t", "kafka.linger.ms": "5",
                                  "kafka.buffer.memory": "1", "kafka.batch.size": "100"})
    assert unused_kafka_settings(options.client, SINK_KAFKA_SETTINGS) == [
        "kafka.buffer.memory", "kafka.linger.ms"]
    with pytest.raises(OptionError, match=r"did you mean kafka\.linger\.ms"):
        parse_sink_options({**BOOT, "topic": "t", "kafka.linger.msec": "5"})
