"""The kpy source: Kafka topics read into Spark, in batch and streaming queries.

Each name is imported from its module when first asked for
(:mod:`broker_lite.common.lazy_exports`): stating a source's schema needs only its options
(:mod:`.options`), not the readers, the client's connections or Arrow.
"""

from broker_lite.common.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    ".batch": ("KpyBatchReader",),
    ".partition_reader": ("DataLossError",),
    ".planning": ("OffsetRange",),
    ".positions": ("OffsetResolutionError",),
    ".stream": ("KpyStreamReader",),
})

__all__ = ["DataLossError", "KpyBatchReader", "KpyStreamReader", "OffsetRange",
           "OffsetResolutionError"]
