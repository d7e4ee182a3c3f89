"""Kafka record batches to and from Arrow columns in Spark's Kafka row schema.

The schema (:mod:`.schema`) imports without the decoder: each name below is imported from its
module when first asked for (:mod:`broker_lite.common.lazy_exports`), so the Spark driver, which
states the schema but decodes nothing, does not load :mod:`.decode` and the record codecs.
"""

from broker_lite.common.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    ".decode": ("batches_to_arrow",),
    ".schema": ("HEADERS_TYPE", "RECORD_SCHEMA", "RECORD_SCHEMA_WITH_HEADERS", "record_schema"),
})

__all__ = ["batches_to_arrow", "HEADERS_TYPE", "RECORD_SCHEMA", "RECORD_SCHEMA_WITH_HEADERS",
           "record_schema"]
