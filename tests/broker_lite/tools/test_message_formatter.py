"""The console consumer's formatter: Kafka's DefaultMessageFormatter output, as cases."""

import struct
import uuid

import pytest

from broker_lite.records import Record, TimestampType
from broker_lite.tools.message_formatter import FormatError, MessageFormatter

RECORD = Record(42, 1700000000000, TimestampType.CREATE_TIME, b"key", b"value",
                (("h1", b"v1"), ("h2", None)))
ALL = {"print.timestamp": "true", "print.partition": "true", "print.offset": "true",
       "print.headers": "true", "print.key": "true"}


@pytest.mark.parametrize("properties, record, expected", [
    ({}, RECORD, b"value\n"),
    ({"print.key": "true"}, RECORD, b"key\tvalue\n"),
    (ALL, RECORD, b"CreateTime:1700000000000\tPartition:3\tOffset:42\th1:v1,h2:null\tkey\tvalue\n"),
    ({**ALL, "print.value": "false"}, RECORD,
     b"CreateTime:1700000000000\tPartition:3\tOffset:42\th1:v1,h2:null\tkey\n"),
    ({"print.timestamp": "true", "print.value": "false"}, RECORD, b"CreateTime:1700000000000\n"),
    ({"print.value": "false"}, RECORD, b"\n"),
    ({"print.timestamp": "true"},
     Record(0, 5, TimestampType.LOG_APPEND_TIME, None, b"v"), b"LogAppendTime:5\tv\n"),
    ({"print.timestamp": "true"},
     Record(0, -1, TimestampType.NO_TIMESTAMP_TYPE, None, b"v"), b"NO_TIMESTAMP\tv\n"),
    ({"print.key": "true", "print.headers": "true"},
     Record(0, 0, TimestampType.CREATE_TIME, None, None), b"NO_HEADERS\tnull\tnull\n"),
    ({"print.key": "true", "null.literal": "<nil>"},
     Record(0, 0, TimestampType.CREATE_TIME, None, b"v"), b"<nil>\tv\n"),
    ({"print.key": "true", "print.headers": "true", "key.separator": " | ",
      "line.separator": "\r\n", "headers.separator": ";", "headers.key.separator": "="},
     RECORD, b"h1=v1;h2=null | key | value\r\n"),
    ({}, Record(0, 0, TimestampType.CREATE_TIME, None, b"\xff\x00raw"), b"\xff\x00raw\n"),
])
def test_format(properties, record, expected):
    assert MessageFormatter(properties).format(record, 3) == expected


@pytest.mark.parametrize("deserializer, data, text", [
    ("org.apache.kafka.common.serialization.StringDeserializer", "\u00e9t\u00e9".encode(),
     "\u00e9t\u00e9"),
    ("org.apache.kafka.common.serialization.LongDeserializer", struct.pack(">q", -7), "-7"),
    ("IntegerDeserializer", struct.pack(">i", 123456), "123456"),
    ("ShortDeserializer", struct.pack(">h", -2), "-2"),
    ("DoubleDeserializer", struct.pack(">d", 2.5), "2.5"),
    ("UUIDDeserializer", b"7e0c3bcb-1b7a-4a39-9c3f-0b6f3a9d2a10",
     str(uuid.UUID("7e0c3bcb-1b7a-4a39-9c3f-0b6f3a9d2a10"))),
])
def test_deserializers(deserializer, data, text):
    formatter = MessageFormatter({"value.deserializer": deserializer})
    assert formatter.format(Record(0, 0, TimestampType.CREATE_TIME, None, data), 0) == \
        text.encode() + b"\n"


def test_a_value_its_deserializer_cannot_read():
    formatter = MessageFormatter({"key.deserializer": "LongDeserializer", "print.key": "true"})
    with pytest.raises(FormatError, match="Size of data received by LongDeserializer is not 8"):
        formatter.format(Record(0, 0, TimestampType.CREATE_TIME, b"abc", b"v"), 0)


@pytest.mark.parametrize("properties, message", [
    ({"print.key": "maybe"}, "print.key must be true or false"),
    ({"value.deserializer": "com.example.AvroDeserializer"}, "unsupported deserializer"),
])
def test_bad_properties(properties, message):
    with pytest.raises(FormatError, match=message):
        MessageFormatter(properties)
