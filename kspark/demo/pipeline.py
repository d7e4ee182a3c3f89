"""The demo's streaming query: views per page per one-minute event-time window, from the topic
of page views to the topic of counts, exactly once::

    spark.readStream.format("kpy")        page-views: JSON page views (see .generator)
      .select(from_json(value))           event, user, page, ts, referrer, device, ...
      .withWatermark("ts", "1 minute")
      .groupBy(window("ts", "1 minute"), "page")
      .agg(count(*) AS views, sum(duration_ms) AS dwell_ms)
      .writeStream.format("kpy")          page-view-counts, output mode append

Output records
--------------
One record per (window, page)::

    key    "2025-03-14T09:03:00Z /pricing"
    value  {"window_start": "2025-03-14T09:03:00Z", "window_end": "2025-03-14T09:04:00Z",
            "page": "/pricing", "views": 412, "dwell_ms": 2712039}

(instants in the session time zone, with their offset; the demo's session runs in UTC). The
sink puts a key where Kafka's default partitioner (murmur2) does.

Output mode: append
-------------------
A window's counts are written once, final, when the watermark passes the window's end; until
then they live in the query's state. So the output topic holds exactly one record per key:
readers need no "last value wins", and a second record for a key would be a visible breach of
exactly-once. (Update mode, which writes a window's running count after every micro-batch, is
not open to Python data sources: Spark allows it only for sinks that declare they take updates
as appends, as its own Kafka sink does. Complete mode rewrites the whole result every batch,
asking the sink to truncate first, which a topic cannot.)
The price is latency: a window comes out one watermark delay after it ends.

Watermark and lateness
----------------------
The watermark trails the largest event time seen by one minute; views older than it would be
dropped. The generated stream is out of order by at most 25 seconds (see .generator), and every
micro-batch takes everything that has arrived (no ``maxOffsetsPerTrigger``, which could let one
partition run ahead of the others in event time), so nothing is dropped: the expected counts
are exactly those of the generated views.

The stream ends with a heartbeat per partition, stamped two minutes after the last window
ends: it moves the watermark past every window, and Spark's next (empty) micro-batch writes the
last windows. Heartbeats have no page; they fall in a window of their own that the watermark never
passes, so they never reach the output. They are deliberately not filtered out: a filter that
does not mention the event-time column is pushed by Spark's optimizer below ``withWatermark``,
and the watermark would then never see the heartbeats (and the last windows never close).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pyspark.sql import DataFrame, SparkSession
    from pyspark.sql.streaming import StreamingQuery

INPUT_TOPIC = "page-views"
OUTPUT_TOPIC = "page-view-counts"
#: The source's consumer group (``kafka.group.id``): where its progress shows as lag.
GROUP_ID = "page-view-counts"
QUERY_NAME = "page-view-counts"
WINDOW = "1 minute"
WATERMARK_DELAY = "1 minute"
TRIGGER_INTERVAL = "1 second"

VIEW_SCHEMA = ("event STRING, user STRING, page STRING, ts TIMESTAMP, referrer STRING, "
               "device STRING, country STRING, duration_ms BIGINT")
_INSTANT = "yyyy-MM-dd'T'HH:mm:ssXXX"


def page_views(spark: SparkSession, bootstrap_servers: str,
               topic: str = INPUT_TOPIC, registry_url: str | None = None) -> DataFrame:
    """The page views of ``topic`` from its beginning, parsed (columns of :data:`VIEW_SCHEMA`):
    JSON, or Avro of the registry at ``registry_url`` (``kpy demo --format avro``)."""
    from pyspark.sql import functions as F

    reader = (spark.readStream.format("kpy")
              .option("kafka.bootstrap.servers", bootstrap_servers)
              .option("subscribe", topic)
              .option("startingOffsets", "earliest")
              .option("kafka.group.id", GROUP_ID))
    if registry_url is not None:
        return (reader.options(**avro_options(registry_url)).load()
                .select("value.*").drop("event"))
    return (reader.load()
            .select(F.from_json(F.col("value").cast("string"), VIEW_SCHEMA).alias("view"))
            .select("view.*"))


def avro_options(registry_url: str) -> dict[str, str]:
    """The options of Avro values through the registry at ``registry_url``."""
    return {"value.format": "avro", "schema.registry.url": registry_url}


def views_per_window(views: DataFrame, avro: bool = False) -> DataFrame:
    """Views and summed dwell time per page per window, as output records (``key``, ``value``:
    JSON text, or with ``avro`` a struct the sink writes as Avro)."""
    from pyspark.sql import functions as F

    counts = (views.withWatermark("ts", WATERMARK_DELAY)
              .groupBy(F.window("ts", WINDOW), "page")
              .agg(F.count(F.lit(1)).alias("views"), F.sum("duration_ms").alias("dwell_ms")))
    window_start = F.date_format("window.start", _INSTANT)
    value = F.struct(window_start.alias("window_start"),
                     F.date_format("window.end", _INSTANT).alias("window_end"),
                     "page", "views", "dwell_ms")
    return counts.select(F.concat_ws(" ", window_start, "page").alias("key"),
                         (value if avro else F.to_json(value)).alias("value"))


def start_query(spark: SparkSession, bootstrap_servers: str, checkpoint: str, *,
                input_topic: str = INPUT_TOPIC, output_topic: str = OUTPUT_TOPIC,
                registry_url: str | None = None) -> StreamingQuery:
    """Start the query (a micro-batch every :data:`TRIGGER_INTERVAL` while data keeps coming);
    ``checkpoint`` is its checkpoint directory. With ``registry_url``, values in and out are
    Avro (``kpy demo --format avro``)."""
    views = page_views(spark, bootstrap_servers, input_topic, registry_url)
    return (views_per_window(views, avro=registry_url is not None)
            .writeStream.format("kpy")
            .queryName(QUERY_NAME)
            .outputMode("append")
            .option("kafka.bootstrap.servers", bootstrap_servers)
            .option("topic", output_topic)
            .option("checkpointLocation", checkpoint)
            .options(**(avro_options(registry_url) if registry_url is not None else {}))
            .trigger(processingTime=TRIGGER_INTERVAL)
            .start())
