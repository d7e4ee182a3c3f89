"""The row schema of Spark's Kafka source, which kpy keeps so ``format("kafka")`` jobs move over
unchanged::

    key binary, value binary, topic string, partition int, offset long, timestamp timestamp,
    timestampType int[, headers array<struct<key: string, value: binary>>]

As in Spark's, ``headers`` is null (not an empty array) for a record without headers.
"""

import pyarrow as pa

HEADER_TYPE = pa.struct([pa.field("key", pa.string()), pa.field("value", pa.binary())])
HEADERS_TYPE = pa.list_(pa.field("element", HEADER_TYPE))

# Spark's TimestampType is microseconds since the epoch, UTC.
TIMESTAMP_TYPE = pa.timestamp("us", tz="UTC")

_FIELDS = [
    pa.field("key", pa.binary()),
    pa.field("value", pa.binary()),
    pa.field("topic", pa.string()),
    pa.field("partition", pa.int32()),
    pa.field("offset", pa.int64()),
    pa.field("timestamp", TIMESTAMP_TYPE),
    pa.field("timestampType", pa.int32()),
]

RECORD_SCHEMA = pa.schema(_FIELDS)
RECORD_SCHEMA_WITH_HEADERS = pa.schema([*_FIELDS, pa.field("headers", HEADERS_TYPE)])


def record_schema(include_headers: bool) -> pa.Schema:
    return RECORD_SCHEMA_WITH_HEADERS if include_headers else RECORD_SCHEMA
