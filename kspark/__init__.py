"""kspark: Kafka-protocol topics as a Spark data source and sink (``format("kpy")``)::

    import kspark

    spark = kspark.session()
    df = (spark.read.format("kpy")
          .option("kafka.bootstrap.servers", "127.0.0.1:9092")
          .option("subscribe", "events")
          .load())
"""

from .session import register, session

__all__ = ["register", "session"]
