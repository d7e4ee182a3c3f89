"""The kpy source: Kafka topics read into Spark, in batch and streaming queries."""

from .batch import KpyBatchReader
from .partition_reader import DataLossError
from .planning import OffsetRange
from .positions import OffsetResolutionError
from .stream import KpyStreamReader

__all__ = ["DataLossError", "KpyBatchReader", "KpyStreamReader", "OffsetRange",
           "OffsetResolutionError"]
