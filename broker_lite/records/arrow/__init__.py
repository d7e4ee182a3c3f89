"""Kafka record batches to and from Arrow columns in Spark's Kafka row schema."""

from .decode import batches_to_arrow
from .schema import HEADERS_TYPE, RECORD_SCHEMA, RECORD_SCHEMA_WITH_HEADERS, record_schema

__all__ = ["batches_to_arrow", "HEADERS_TYPE", "RECORD_SCHEMA", "RECORD_SCHEMA_WITH_HEADERS",
           "record_schema"]
