"""Records to text, as Kafka's console consumer prints them (its ``DefaultMessageFormatter``).

Each record is one output "line": the enabled fields in this order, separated by
``key.separator`` and ended by ``line.separator``::

    CreateTime:1700000000000  Partition:0  Offset:42  h1:v1,h2:v2  key  value

The formatter properties, with Kafka's names and defaults::

    print.timestamp        false  CreateTime:<ms>, LogAppendTime:<ms>, or NO_TIMESTAMP (magic 0)
    print.partition        false  Partition:<n>
    print.offset           false  Offset:<n>
    print.headers          false  key:value pairs, or NO_HEADERS
    print.key              false
    print.value            true
    key.separator          \\t     between fields
    line.separator         \\n     after each record
    headers.separator      ,      between header pairs
    headers.key.separator  :      between a header's key and its value
    null.literal           null   printed for a null key, value or header value
    key.deserializer, value.deserializer, headers.deserializer
                                  a Kafka deserializer class (see :data:`DESERIALIZERS`);
                                  without one the bytes are printed as they are

>>> from broker_lite.records import Record, TimestampType
>>> formatter = MessageFormatter({"print.key": "true", "print.timestamp": "true"})
>>> formatter.format(Record(3, 1700000000000, TimestampType.CREATE_TIME, b"k", b"v"), 0)
b'CreateTime:1700000000000\\tk\\tv\\n'
"""

import struct
import uuid
from collections.abc import Callable, Mapping

from broker_lite.records import Record, TimestampType

_TIMESTAMP_NAMES = {TimestampType.CREATE_TIME: "CreateTime",
                    TimestampType.LOG_APPEND_TIME: "LogAppendTime"}


class FormatError(ValueError):
    """Formatter properties that cannot be used, or a value its deserializer cannot read."""


def _number(fmt: str, name: str) -> Callable[[bytes], str]:
    codec = struct.Struct(fmt)

    def decode(data: bytes) -> str:
        if len(data) != codec.size:
            raise FormatError(f"Size of data received by {name} is not {codec.size}")
        value = codec.unpack(data)[0]
        return repr(value) if isinstance(value, float) else str(value)
    return decode


def _uuid(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    try:
        return str(uuid.UUID(text))
    except ValueError:
        raise FormatError(f"Error parsing data into UUID: {text!r}") from None


_SERIALIZATION = "org.apache.kafka.common.serialization."
#: Kafka deserializer classes by name (with or without their package) -> bytes to text.
DESERIALIZERS: dict[str, Callable[[bytes], str]] = {
    "StringDeserializer": lambda data: data.decode("utf-8", "replace"),
    "ByteArrayDeserializer": lambda data: data.decode("utf-8", "surrogateescape"),
    "LongDeserializer": _number(">q", "LongDeserializer"),
    "IntegerDeserializer": _number(">i", "IntegerDeserializer"),
    "ShortDeserializer": _number(">h", "ShortDeserializer"),
    "DoubleDeserializer": _number(">d", "DoubleDeserializer"),
    "FloatDeserializer": _number(">f", "FloatDeserializer"),
    "UUIDDeserializer": _uuid,
}


def deserializer(class_name: str | None, what: str) -> Callable[[bytes], str] | None:
    """The decoder for a Kafka deserializer class name (None: print the bytes unchanged)."""
    if class_name is None:
        return None
    short = class_name.removeprefix(_SERIALIZATION)
    if short not in DESERIALIZERS:
        raise FormatError(f"{what}: unsupported deserializer {class_name!r}; known: "
                          + ", ".join(_SERIALIZATION + name for name in DESERIALIZERS))
    return DESERIALIZERS[short]


def _flag(properties: Mapping[str, str], name: str, default: bool) -> bool:
    value = properties.get(name)
    if value is None:
        return default
    value = value.strip().lower()
    if value not in ("true", "false"):
        raise FormatError(f"property {name} must be true or false, got {value!r}")
    return value == "true"


def _utf8(text: str) -> bytes:
    return text.encode("utf-8", "surrogateescape")


class MessageFormatter:
    """Formats records under the properties above; :meth:`format` gives the bytes to write."""

    def __init__(self, properties: Mapping[str, str]):
        self.print_timestamp = _flag(properties, "print.timestamp", False)
        self.print_partition = _flag(properties, "print.partition", False)
        self.print_offset = _flag(properties, "print.offset", False)
        self.print_headers = _flag(properties, "print.headers", False)
        self.print_key = _flag(properties, "print.key", False)
        self.print_value = _flag(properties, "print.value", True)
        self.key_separator = _utf8(properties.get("key.separator", "\t"))
        self.line_separator = _utf8(properties.get("line.separator", "\n"))
        self.headers_separator = _utf8(properties.get("headers.separator", ","))
        self.headers_key_separator = _utf8(properties.get("headers.key.separator", ":"))
        self.null_literal = _utf8(properties.get("null.literal", "null"))
        self.key_deserializer = deserializer(properties.get("key.deserializer"),
                                             "key.deserializer")
        self.value_deserializer = deserializer(properties.get("value.deserializer"),
                                               "value.deserializer")
        self.headers_deserializer = deserializer(properties.get("headers.deserializer"),
                                                 "headers.deserializer")

    def format(self, record: Record, partition: int) -> bytes:
        """The output of one record, line separator included."""
        fields: list[bytes] = []
        if self.print_timestamp:
            name = _TIMESTAMP_NAMES.get(record.timestamp_type)
            fields.append(_utf8(f"{name}:{record.timestamp}") if name else b"NO_TIMESTAMP")
        if self.print_partition:
            fields.append(b"Partition:%d" % partition)
        if self.print_offset:
            fields.append(b"Offset:%d" % record.offset)
        if self.print_headers:
            fields.append(self.headers_separator.join(
                _utf8(key) + self.headers_key_separator
                + self._text(value, self.headers_deserializer)
                for key, value in record.headers) if record.headers else b"NO_HEADERS")
        if self.print_key:
            fields.append(self._text(record.key, self.key_deserializer))
        if self.print_value:
            fields.append(self._text(record.value, self.value_deserializer))
        return self.key_separator.join(fields) + self.line_separator

    def _text(self, data: bytes | None, decode: Callable[[bytes], str] | None) -> bytes:
        if data is None:
            return self.null_literal
        if decode is None:
            return data
        return _utf8(decode(data))
