"""kspark: Kafka-protocol topics as a Spark data source and sink (``format("kpy")``)::

    import kspark

    spark = kspark.session()
    df = (spark.read.format("kpy")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "events")
          .load())

``kspark.offsets_behind_latest(source_progress)`` gives a streaming query's lag as Spark's Kafka
source reports it (see :mod:`kspark.source.metrics`).
"""

from kspark.session import register, session

__all__ = ["offsets_behind_latest", "register", "session"]


def __getattr__(name: str):
    # Loaded on first use: the source imports pyspark and pyarrow, which ``import kspark``
    # (the command-line tools, say) does not need.
    if name == "offsets_behind_latest":
        from kspark.source.metrics import offsets_behind_latest

        return offsets_behind_latest
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
