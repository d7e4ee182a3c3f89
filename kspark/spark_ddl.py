"""The row schema of Spark's Kafka source (:mod:`broker_lite.records.arrow.schema`) in Spark's
DDL, the form a Python data source's ``schema()`` returns.

A module of its own, without pyarrow: Spark's Python process that makes the data source and asks
for its schema, at every ``load()``, needs these strings and nothing else, so it does not import
pyarrow and numpy for them.

>>> SPARK_DDL_WITH_HEADERS.endswith("timestampType int, headers array<struct<key: string, "
...                                 "value: binary>>")
True
"""

SPARK_DDL = (
    "key binary, value binary, topic string, partition int, offset long, timestamp timestamp, "
    "timestampType int"
)
SPARK_DDL_WITH_HEADERS = SPARK_DDL + ", headers array<struct<key: string, value: binary>>"
