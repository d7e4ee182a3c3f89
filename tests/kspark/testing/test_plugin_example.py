from chispa import assert_df_equality
from pyspark.sql import functions as F


def test_uppercase_pipeline(kpy_spark, kpy_broker, kpy_topic, kpy_produce, kpy_read):
    kafka = {"kafka.bootstrap.servers": kpy_broker.bootstrap_servers}
    source, sink = kpy_topic(partitions=3), kpy_topic(partitions=1)
    kpy_produce(source, [("k1", "hello"), ("k2", "kafka"), ("k3", "spark")])
    df = kpy_spark.read.format("kpy").options(**kafka, subscribe=source).load()
    upper = df.select("key", F.upper(F.col("value").cast("string")).alias("value"))
    upper.write.format("kpy").options(**kafka, topic=sink).mode("append").save()
    got = kpy_spark.createDataFrame(kpy_read(sink, as_table=True)).select("key", "value")
    expected = kpy_spark.createDataFrame(
        [(b"k1", b"HELLO"), (b"k2", b"KAFKA"), (b"k3", b"SPARK")], "key binary, value binary")
    assert_df_equality(got, expected, ignore_row_order=True)
