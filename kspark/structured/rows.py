"""The row schema of a structured read: Spark's Kafka schema with the key or value column of
the type its reader's schema maps to (a ``string`` side: a string column).

>>> from kspark.structured.options import parse_structured
>>> options = {"value.format": "avro", "value.avro.schema": '{"type": "record", "name": "R", '
...            '"fields": [{"name": "a", "type": ["null", "long"]}]}'}
>>> plan, schema = plan_rows(parse_structured(options.get, {}), ["t"], include_headers=False)
>>> schema["value"].simpleString()
'value:struct<a:bigint>'
"""

from __future__ import annotations

from collections.abc import Sequence

from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    IntegerType,
    LongType,
    StringType,
    StructField,
    StructType,
    TimestampType,
)

from .options import StructuredOptions
from .plan import StructuredPlan, plan_read

HEADERS = ArrayType(StructType([StructField("key", StringType()),
                                StructField("value", BinaryType())]))


def plan_rows(options: StructuredOptions, topics: Sequence[str], *, include_headers: bool
              ) -> tuple[StructuredPlan, StructType]:
    """The plan of a read's structured sides (a read of ``topics``), and its row schema."""
    plan = plan_read(options, topics)

    def side_type(side: str) -> DataType:
        side_plan = plan.sides.get(side)
        if side_plan is not None:
            return side_plan.spark_type
        fmt = options.key.format if side == "key" else options.value.format
        return StringType() if fmt == "string" else BinaryType()

    fields = [StructField("key", side_type("key")), StructField("value", side_type("value")),
              StructField("topic", StringType()), StructField("partition", IntegerType()),
              StructField("offset", LongType()), StructField("timestamp", TimestampType()),
              StructField("timestampType", IntegerType())]
    if include_headers:
        fields.append(StructField("headers", HEADERS))
    return plan, StructType(fields)
