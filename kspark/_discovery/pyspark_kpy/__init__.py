"""Installed as the top-level module ``pyspark_kpy``: Spark looks for modules named
``pyspark_*`` that define ``DefaultSource`` and registers them, so ``format("kpy")`` works in any
new SparkSession without a registration call."""

from kspark.datasource import KpyDataSource as DefaultSource

__all__ = ["DefaultSource"]
