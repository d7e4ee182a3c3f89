"""The options of structured keys and values, checked up front, as tables: each mistake fails
naming the option; and Spark's DDL types parsed without Spark (``value.format=json``)."""

import pyarrow as pa
import pytest

from kspark.options import OptionError
from kspark.sink import parse_sink_options
from kspark.source.options import parse_source_options
from kspark.structured.ddl import arrow_of_ddl

BASE = {"kafka.bootstrap.servers": "b:9092", "subscribe": "t"}


@pytest.mark.parametrize(("options", "message"), [
    ({"value.format": "xml"}, "option 'value.format': 'xml' is none of binary, string, avro, "
                              "protobuf, json-schema, json"),
    ({"value.format": "avro"}, "option 'value.format': avro needs a schema registry "
                               "(schema.registry.url) or a schema (value.avro.schema)"),
    ({"key.format": "protobuf"}, "option 'key.format': protobuf needs a schema registry "
                                 "(schema.registry.url) or a schema (key.protobuf.descriptor)"),
    ({"value.format": "json"}, "option 'value.schema': value.format json needs the Spark type"),
    ({"value.avro.schema": '"long"'}, "option 'value.avro.schema': applies only with "
                                      "value.format avro, protobuf, json-schema or json"),
    ({"value.format": "avro", "schema.registry.url": "http://r", "mode": "lenient"},
     "option 'mode': 'lenient' is none of FAILFAST, PERMISSIVE"),
    ({"value.format": "avro", "schema.registry.url": "http://r",
      "value.subject.name.strategy": "ByTopic"},
     "option 'value.subject.name.strategy': 'ByTopic' is none of TopicNameStrategy"),
    ({"value.format": "avro", "schema.registry.url": "http://r", "value.schema.version": "0"},
     "option 'value.schema.version': "),
    ({"value.format": "avro", "schema.registry.url": "http://r", "value.schema.version": "1",
      "value.schema.id": "2"}, "option 'value.schema.id': give value.schema.version or "
                               "value.schema.id, not both"),
    ({"value.format": "avro", "schema.registry.urls": "http://r"},
     "option 'schema.registry.urls': not a setting of the schema registry client"),
    ({"value.format": "avro", "schema.registry.url": "http://r",
      "auto.register.schemas": "true"}, "option 'auto.register.schemas': unknown option of "
                                        "the kpy source"),
])
def test_a_mistake_in_the_structured_options_of_a_read_names_the_option(options, message):
    with pytest.raises(OptionError) as raised:
        parse_source_options({**BASE, **options})
    assert str(raised.value).startswith(message)
    if "auto.register.schemas" in options:
        assert str(raised.value).endswith("('auto.register.schemas' is an option of the sink)")


def test_the_registry_settings_and_the_strategies_are_read_as_confluent_names_them():
    options = parse_source_options({
        **BASE, "value.format": "avro", "key.format": "string",
        "schema.registry.url": "https://etl:pw@registry:8081",
        "schema.registry.basic.auth.user.info": "etl:secret",
        "value.subject.name.strategy":
            "io.confluent.kafka.serializers.subject.TopicRecordNameStrategy",
        "value.record.name": "kpy.Reading", "MODE": "permissive"}).structured
    assert options.value.strategy == "TopicRecordNameStrategy" and options.permissive
    assert options.value.subject_for("t", None) == "t-kpy.Reading"
    assert options.key.format == "string" and not options.key.structured
    printed = repr(options)
    assert "secret" not in printed and "pw@" not in printed


def test_the_sinks_structured_options():
    options = parse_sink_options({"kafka.bootstrap.servers": "b:9092", "topic": "t",
                                  "value.format": "avro", "schema.registry.url": "http://r",
                                  "auto.register.schemas": "false",
                                  "use.latest.version": "true"}).structured_options
    assert (options.auto_register, options.use_latest_version) == (False, True)
    with pytest.raises(OptionError, match=r"option 'use\.latest\.version': "):
        parse_sink_options({"kafka.bootstrap.servers": "b:9092", "topic": "t",
                            "value.format": "avro", "schema.registry.url": "http://r",
                            "use.latest.version": "perhaps"})


@pytest.mark.parametrize(("ddl", "arrow"), [
    ("a int, b STRING", "struct<a: int32, b: string>"),
    ("`odd name` bigint NOT NULL COMMENT 'x'", "struct<odd name: int64 not null>"),
    ("a: array<struct<x: double, y: date>>",
     "struct<a: list<element: struct<x: double, y: date32[day]>>>"),
    ("m map<string, decimal(12, 3)>, t timestamp_ntz",
     "struct<m: map<string, decimal128(12, 3)>, t: timestamp[us]>"),
    ("array<short>", "list<element: int16>"),
])
def test_spark_ddl_parses_into_arrow_types(ddl, arrow):
    assert str(arrow_of_ddl(ddl)) == arrow


@pytest.mark.parametrize("ddl", ["", "a", "a int,", "a array<int", "a map<int>", "a int b"])
def test_bad_ddl_is_refused(ddl):
    with pytest.raises(ValueError):
        arrow_of_ddl(ddl)


def test_a_ddl_struct_type_is_an_arrow_struct():
    assert pa.types.is_struct(arrow_of_ddl("a int"))
