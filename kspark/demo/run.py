"""One run of the demo, start to finish, and its shutdown.

1. ZooKeeper and broker_lite start in this process (:class:`broker_lite.local.LocalKafka`),
   with their data in the data directory;
2. the topics are created: ``page-views`` (the input; ``retention.ms=-1``, since the sample
   events are dated in the past and time retention would delete them) and ``page-view-counts``
   (the output), both with ``partitions`` partitions;
3. Spark starts, and the streaming query (:mod:`.pipeline`) with it, its checkpoint in
   ``<data dir>/checkpoint``;
4. the feed (:mod:`.feed`) produces the page views in the background while the query runs,
   and the progress (:mod:`.progress`) shows;
5. the run is complete when the feed has sent everything, the query has read as many records
   as were sent, and a micro-batch has run with a watermark past the last window's end (after
   the one that read the heartbeats, Spark runs one more to close the windows): every window is
   then written and committed. The query stops;
6. the output topic is read back and checked (:mod:`.verify`), and the summary printed.

Everything started is stopped in reverse order on the way out, whether the run completed,
failed or was interrupted (Ctrl-C or SIGTERM, taken at the next safe point, see
:mod:`.signals`): the feed, the query (a running micro-batch gets :data:`STOP_GRACE_S` to
finish), Spark, the broker, ZooKeeper. The data directory is removed unless it was given.
Spark's JVM, started by PySpark, exits with this process.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from broker_lite.client import KafkaClient, KafkaClientError, NewTopic
from broker_lite.local import LocalKafka

from .aggregates import ExpectedAggregates
from .avro import AvroViews, output_as_json
from .batches import MicroBatches
from .feed import Feed
from .generator import EVENT_SPAN_MS, EVENT_START_MS, PageViews
from .lag import group_lag
from .pipeline import (
    GROUP_ID,
    INPUT_TOPIC,
    OUTPUT_TOPIC,
    TRIGGER_INTERVAL,
    start_query,
)
from .progress import ProgressDisplay, Snapshot
from .signals import StopRequest
from .summary import Summary
from .verify import (
    Check,
    check_aggregates,
    check_records,
    check_written_once,
    parse_output,
    read_output,
)

#: The end of the last window: a batch that ran with a watermark at or past it wrote them all.
LAST_WINDOW_END_MS = EVENT_START_MS + EVENT_SPAN_MS
POLL_S = 0.5
#: A query that runs no micro-batch for this long is stuck: the run fails.
STALL_S = 300
#: On the way out, how long a running micro-batch may take to finish before it is interrupted.
STOP_GRACE_S = 5
EXIT_OK, EXIT_FAILED, EXIT_INTERRUPTED = 0, 1, 130

SPARK_CONFIG = {
    # window starts and ends are written as UTC instants
    "spark.sql.session.timeZone": "UTC",
    # the aggregation's state in two partitions (two state stores, two sink tasks per batch):
    # on a laptop's few cores, more only adds per-batch work
    "spark.sql.shuffle.partitions": "2",
}


class DemoError(Exception):
    """The demo could not run to the end (a bad setting, a failed query or producer)."""


@dataclass(frozen=True)
class Settings:
    """What ``kpy demo`` was asked for."""

    records: int = 300_000
    partitions: int = 4
    data_dir: Path | None = None
    seed: int = 0
    rate: float = 10_000
    quiet: bool = False
    format: str = "json"  # of the values: json, or avro (with a schema registry)


def run_demo(settings: Settings, out: TextIO | None = None) -> int:
    """Run the demo; returns the exit status (0: verified, 1: failed, 130: interrupted)."""
    out = out or sys.stdout
    started = time.monotonic()
    cleanup: list[tuple[str, Callable[[], None]]] = []
    stop = StopRequest()

    def say(text: str = "") -> None:
        print(text, file=out, flush=True)

    try:
        stop.install()
        _check_data_dir(settings.data_dir)
        return _run(settings, say, out, cleanup, stop, started)
    except KeyboardInterrupt:
        say("\nInterrupted: shutting down.")
        return EXIT_INTERRUPTED
    except (DemoError, KafkaClientError) as exc:
        print(f"kpy demo: {exc}", file=sys.stderr, flush=True)
        return EXIT_FAILED
    finally:
        _shut_down(cleanup)
        stop.restore()


def _run(settings: Settings, say, out: TextIO, cleanup: list, stop: StopRequest,
         started: float) -> int:
    say("kpy demo: page views per page per minute, Kafka to Kafka through Spark, exactly once")
    avro = settings.format == "avro"
    kafka = LocalKafka(settings.data_dir, schema_registry=avro)
    checkpoint = kafka.directory / "checkpoint"
    cleanup.append(("broker_lite and ZooKeeper", kafka.stop))
    kafka.start()
    stop.check()
    servers = kafka.bootstrap_servers
    _announce(settings, kafka, checkpoint, say)
    client = KafkaClient({"bootstrap.servers": servers, "client.id": "kpy-demo"})
    cleanup.append(("the admin client", client.close))
    client.admin.create_topics([
        NewTopic(INPUT_TOPIC, settings.partitions, 1, {"retention.ms": "-1"}),
        NewTopic(OUTPUT_TOPIC, settings.partitions, 1)])

    say("Starting Spark...")
    import kspark

    # A stop requested while Spark starts is taken once it runs: a JVM interrupted before it
    # is connected to this process would outlive it.
    spark = kspark.session("kpy-demo", config=SPARK_CONFIG)
    cleanup.append(("Spark", spark.stop))
    stop.install()  # SIGINT back from PySpark's own handler
    stop.check()
    # Spark warns on every micro-batch that takes longer than the trigger interval, which would
    # break the progress line.
    spark.sparkContext.setLogLevel("ERROR")
    registry_url = kafka.schema_registry_url if avro else None
    # the page views' schema is registered before the query starts, which reads with it
    avro_views = AvroViews(registry_url, f"{INPUT_TOPIC}-value") if registry_url else None
    query = start_query(spark, servers, str(checkpoint), registry_url=registry_url)
    cleanup.append(("the streaming query", lambda: _stop_query(spark, query)))
    query_started = time.monotonic()
    views = PageViews(settings.records, settings.seed)
    feed = Feed(servers, INPUT_TOPIC, views, settings.partitions, settings.rate, avro_views)
    cleanup.append(("the producer", feed.stop))
    feed.start()
    say(f"Streaming: page views arrive while the query runs a micro-batch every "
        f"{TRIGGER_INTERVAL}...")
    display = ProgressDisplay(feed.total, settings.quiet, out)
    cleanup.append(("the progress display", display.close))
    batches = _watch(query, feed, client, display, stop, settings.partitions)
    query_s = time.monotonic() - query_started
    display.close()
    query.stop()
    stop.check()

    say("Verifying: reading the output back (read_committed) and counting the page views "
        "without Spark...")
    checks = _verify(spark, servers, views, feed, batches, settings.partitions, registry_url)
    summary = Summary(
        page_views=feed.produced, heartbeats=feed.heartbeats, partitions=settings.partitions,
        records_in=batches.records_in, records_out=batches.records_out,
        batch_durations_ms=batches.durations_ms,
        dropped_by_watermark=batches.dropped_by_watermark,
        wall_s=time.monotonic() - started, query_s=query_s)
    say()
    for line in summary.lines():
        say(line)
    say("Verification")
    for check in checks:
        say(f"  {check}")
    return EXIT_OK if all(check.ok for check in checks) else EXIT_FAILED


def _announce(settings: Settings, kafka: LocalKafka, checkpoint: Path, say) -> None:
    kept = "kept" if settings.data_dir is not None else "removed at the end"
    pace = f"{settings.rate:,.0f} records/s" if settings.rate else "full speed"
    say(f"  data      {kafka.directory} ({kept})")
    if settings.format == "avro":
        say(f"  registry  {kafka.schema_registry_url}: page views and counts in Avro, "
            "Confluent's framing")
    say(f"  Kafka     broker_lite on {kafka.bootstrap_servers}, ZooKeeper on "
        f"{kafka.zookeeper_connect}")
    say(f"  input     {INPUT_TOPIC}, {settings.partitions} partitions: {settings.records:,} page "
        f"views at {pace} (seed {settings.seed}), then a heartbeat per partition")
    parse = "value.format=avro" if settings.format == "avro" else "from_json"
    say(f"  query     readStream.format(\"kpy\") -> {parse} -> views per page per one-minute "
        "event-time window, watermark 1 minute -> writeStream.format(\"kpy\"), append mode, "
        "exactly once")
    say(f"  output    {OUTPUT_TOPIC}, {settings.partitions} partitions; checkpoint {checkpoint}")


def _verify(spark, servers: str, views: PageViews, feed: Feed, batches: MicroBatches,
            partitions: int, registry_url: str | None) -> list[Check]:
    """The checks of :mod:`.verify`: the output read back (Avro values decoded by fastavro
    with their writers' schemas from the registry), the expected counts computed from the page
    views generated anew from their seed."""
    records = read_output(spark, servers, OUTPUT_TOPIC)
    if registry_url is not None:
        records = output_as_json(records, registry_url)
    output = parse_output(records, partitions)
    expected = ExpectedAggregates()
    for chunk in views.chunks():
        expected.add(chunk)
    return [check_records(batches.records_in, feed.produced, feed.heartbeats),
            check_written_once(output),
            check_aggregates(expected.result(), output.latest)]


def _watch(query, feed: Feed, client: KafkaClient, display: ProgressDisplay,
           stop: StopRequest, partitions: int) -> MicroBatches:
    """Show progress until the run is complete (see the module docstring); raises DemoError
    when the producer or the query fails, or the query stalls."""
    batches = MicroBatches()
    last_batch_at = time.monotonic()
    while True:
        stop.check()
        if feed.error is not None:
            raise DemoError(f"producing the page views failed: {feed.error!r}")
        if not query.isActive:
            raise DemoError(f"the streaming query stopped: {query.exception() or 'no error'}")
        new = batches.update(query.recentProgress)
        now = time.monotonic()
        if new:
            last_batch_at = now
        try:
            lag = group_lag(client, GROUP_ID, INPUT_TOPIC, partitions).total
        except KafkaClientError:
            lag = None  # shown as unknown; the broker may be busy
        display.show(Snapshot(feed.produced, batches.records_in, batches.records_out, lag,
                              batches.last, batches.watermark_ms), new)
        if feed.complete and batches.records_in >= feed.total and \
                (batches.watermark_ms or 0) >= LAST_WINDOW_END_MS:
            return batches
        if now - last_batch_at > STALL_S:
            raise DemoError(f"the streaming query ran no micro-batch for {STALL_S} s")
        stop.sleep(POLL_S)


def _stop_query(spark, query, grace_s: float = STOP_GRACE_S) -> None:
    """Stop ``query``, letting a running micro-batch finish first (for up to ``grace_s``), so
    that stopping does not interrupt its tasks."""
    if not query.isActive:
        return
    deadline = time.monotonic() + grace_s
    while query.isActive and query.status["isTriggerActive"] and time.monotonic() < deadline:
        time.sleep(0.1)
    if query.isActive and query.status["isTriggerActive"]:
        spark.sparkContext.setLogLevel("OFF")  # the interrupted batch's errors are expected
    query.stop()


def _check_data_dir(data_dir: Path | None) -> None:
    if data_dir is None:
        return
    if data_dir.exists() and not data_dir.is_dir():
        raise DemoError(f"--data-dir {data_dir} is not a directory")
    if data_dir.is_dir() and any(data_dir.iterdir()):
        raise DemoError(f"--data-dir {data_dir} is not empty (a run starts from an empty "
                        "directory; it keeps the topics and the checkpoint for a look "
                        "afterwards)")
    existing = next(p for p in (data_dir.absolute(), *data_dir.absolute().parents) if p.exists())
    if not os.access(existing, os.W_OK):
        raise DemoError(f"--data-dir {data_dir} is not writable")


def _shut_down(cleanup: list[tuple[str, Callable[[], None]]]) -> None:
    """Undo every step in reverse; a step that fails (or is interrupted) does not keep the
    others from running."""
    while cleanup:
        what, step = cleanup.pop()
        try:
            step()
        except BaseException as exc:  # keep shutting down the rest
            print(f"kpy demo: stopping {what} failed: {exc!r}", file=sys.stderr, flush=True)
