"""``broker-lite consumer-perf-test``: measure consuming, as ``kafka-consumer-perf-test.sh``.

    broker-lite consumer-perf-test --bootstrap-server 127.0.0.1:9092 --topic perf \\
        --messages 100000

Reads ``--messages`` records from every partition of ``--topic`` at once (one Fetch per leader
per round, :class:`.topic_reader.TopicReader`), decoding each fetch into Arrow columns as the
Spark source does (``FetchedChunk.to_arrow``), and prints Kafka's header and CSV line::

    start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, \\
rebalance.time.ms, fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec

``data.consumed`` counts key and value bytes. There is no group membership, so
``rebalance.time.ms`` is the time taken to find the partitions and their starting offsets
(the committed ones of ``--group`` when it has some, else the earliest, or the latest with
``--from-latest``); ``fetch.time.ms`` is the rest. It stops after ``--messages`` records or after
``--timeout`` ms without a record (with Kafka's warning on stderr). With
``--show-detailed-stats`` it prints a line per ``--reporting-interval`` instead of the total.
With ``--group`` the final positions are committed for that group.
"""

import argparse
import re
import sys
import time
from datetime import datetime

import pyarrow.compute as pc

from broker_lite.client import EARLIEST, LATEST, KafkaClientError
from broker_lite.common.vocabulary import now_ms

from . import properties
from .common import ToolError, add_bootstrap_server, kafka_client, progress
from .topic_reader import TopicReader, start_positions, topic_partitions

NAME = "consumer-perf-test"
HELP = "measure consuming throughput (kafka-consumer-perf-test)"

MB = 1024 * 1024
DEFAULT_DATE_FORMAT = "yyyy-MM-dd HH:mm:ss:SSS"
_HEADER = "data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, " \
          "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec"
_DATE_TOKEN = re.compile(r"'([^']*)'|(y+|M+|d+|H+|m+|s+|S+)|([A-Za-z])|([^A-Za-z']+)")


def date_format(pattern: str):
    """A function formatting epoch milliseconds (local time) with a Java SimpleDateFormat
    pattern: the letters y, M, d, H, m, s, S (repeated for zero padding; ``yy`` is the year's
    last two digits) and 'quoted text'.

    >>> format_utc = date_format("yyyy-MM-dd HH:mm:ss:SSS 'UTC'")
    >>> len(format_utc(1700000000123)), format_utc(1700000000123)[-7:]
    (27, '123 UTC')
    """
    fields: list[tuple[str, int] | str] = []
    for quoted, field, unknown, literal in _DATE_TOKEN.findall(pattern):
        if unknown:
            raise argparse.ArgumentTypeError(
                f"unsupported letter {unknown!r} in date format {pattern!r} (supported: y, M, "
                "d, H, m, s, S and 'quoted text')")
        fields.append((field[0], len(field)) if field else quoted or literal)

    def fmt(epoch_ms: int) -> str:
        moment = datetime.fromtimestamp(epoch_ms / 1000)
        values = {"y": moment.year, "M": moment.month, "d": moment.day, "H": moment.hour,
                  "m": moment.minute, "s": moment.second, "S": epoch_ms % 1000}
        out = []
        for item in fields:
            if isinstance(item, str):
                out.append(item)
                continue
            letter, width = item
            value = values[letter] % 100 if (letter, width) == ("y", 2) else values[letter]
            out.append(f"{value:0{width}d}")
        return "".join(out)
    return fmt


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    parser.add_argument("--topic", required=True, help="the topic to consume")
    parser.add_argument("--messages", type=int, required=True, metavar="N",
                        help="how many records to consume")
    parser.add_argument("--timeout", type=int, default=10_000, metavar="MS",
                        help="stop when no record came for this long (default 10000)")
    parser.add_argument("--group", help="start from this group's committed offsets and commit "
                                        "the final positions for it")
    parser.add_argument("--from-latest", action="store_true",
                        help="start at the latest offset when there is no committed offset")
    parser.add_argument("--fetch-size", type=int, metavar="BYTES",
                        help="bytes to fetch per partition per request "
                             "(max.partition.fetch.bytes)")
    parser.add_argument("--consumer.config", dest="consumer_config", metavar="PATH",
                        help="a properties file of consumer settings")
    parser.add_argument("--show-detailed-stats", action="store_true",
                        help="print a line every --reporting-interval instead of the total")
    parser.add_argument("--reporting-interval", type=int, default=5000, metavar="MS",
                        help="the interval of --show-detailed-stats lines (default 5000)")
    parser.add_argument("--date-format", type=date_format, default=DEFAULT_DATE_FORMAT,
                        metavar="PATTERN",
                        help=f"a Java SimpleDateFormat pattern (default {DEFAULT_DATE_FORMAT})")
    parser.add_argument("--hide-header", action="store_true", help="do not print the header")
    parser.set_defaults(usage_error=parser.error)


def run(args: argparse.Namespace) -> int:
    if args.messages <= 0:
        args.usage_error(f"--messages must be > 0, got {args.messages}")
    if args.timeout <= 0 or args.reporting_interval <= 0:
        args.usage_error("--timeout and --reporting-interval must be > 0")
    formatted = args.date_format  # argparse applies date_format to the default too
    settings = properties.load(args.consumer_config, "--consumer.config")
    if args.fetch_size is not None:
        settings["max.partition.fetch.bytes"] = str(args.fetch_size)
    reset = settings.pop("auto.offset.reset", "latest" if args.from_latest else "earliest")
    group = args.group or settings.get("group.id")
    client_args = properties.client_args(args.bootstrap_server, settings, args.timeout_ms)
    client_args.command_property += args.command_property
    client_args.command_config = args.command_config
    if not args.hide_header:
        first = "time, threadId" if args.show_detailed_stats else "start.time, end.time"
        print(f"{first}, {_HEADER}", flush=True)
    with kafka_client(client_args) as client:
        try:
            start_ms = now_ms()
            isolation = client.config.isolation_level
            tps = topic_partitions(client, [args.topic])
            positions = start_positions(client, tps, LATEST if args.from_latest else EARLIEST,
                                        group=group, isolation_level=isolation)
            reader = TopicReader(client, positions, isolation_level=isolation, reset=reset)
            assigned_ms = now_ms()
            run_stats = _consume(reader, args, formatted, start_ms, assigned_ms - start_ms)
            if group is not None:
                client.commit(group, reader.positions)
        except KafkaClientError as exc:
            raise ToolError(str(exc)) from exc
    end_ms = now_ms()
    messages, size = run_stats
    if not args.show_detailed_stats:
        rebalance_ms = assigned_ms - start_ms
        elapsed_s = max(end_ms - start_ms, 1) / 1000
        fetch_s = max(end_ms - start_ms - rebalance_ms, 1) / 1000
        mb = size / MB
        # Kafka's own line, in its printf format
        print("%s, %s, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f" % (  # noqa: UP031
            formatted(start_ms), formatted(end_ms), mb, mb / elapsed_s, messages,
            messages / elapsed_s, rebalance_ms, int(fetch_s * 1000), mb / fetch_s,
            messages / fetch_s), flush=True)
    return 0


def _consume(reader: TopicReader, args: argparse.Namespace, formatted, start_ms: int,
             rebalance_ms: int) -> tuple[int, int]:
    """Read until ``--messages`` or ``--timeout``; (records, key and value bytes) read."""
    messages = size = 0
    last_messages = last_size = 0
    last_consumed = last_report = time.monotonic()
    report_start_ms = start_ms
    wait_ms = reader.client.config.fetch_max_wait_ms
    with progress(args.messages, "Consuming", "messages") as bar:
        while messages < args.messages:
            idle_s = time.monotonic() - last_consumed
            if idle_s * 1000 > args.timeout:
                print(f"WARNING: Exiting before consuming the expected number of messages: "
                      f"timeout ({args.timeout} ms) exceeded. You can use the --timeout option "
                      "to increase the timeout.", file=sys.stderr, flush=True)
                break
            remaining_ms = int(args.timeout - idle_s * 1000) + 1
            for chunk in reader.poll(min(wait_ms, remaining_ms)):
                rows = chunk.to_arrow().slice(0, args.messages - messages)
                if not rows.num_rows:
                    continue
                messages += rows.num_rows
                size += _bytes(rows)
                bar.update(rows.num_rows)
                last_consumed = time.monotonic()
                if messages >= args.messages:
                    break
            if args.show_detailed_stats and \
                    (time.monotonic() - last_report) * 1000 >= args.reporting_interval:
                report_end_ms = now_ms()
                _print_progress(formatted, report_start_ms, report_end_ms, messages,
                                last_messages, size, last_size, rebalance_ms)
                rebalance_ms = 0  # counted in the first interval only
                report_start_ms, last_report = report_end_ms, time.monotonic()
                last_messages, last_size = messages, size
    return messages, size


def _print_progress(formatted, start_ms: int, end_ms: int, messages: int, last_messages: int,
                    size: int, last_size: int, rebalance_ms: int) -> None:
    """One --show-detailed-stats line, as Kafka prints it (thread id 0)."""
    elapsed_ms = max(end_ms - start_ms, 1)
    interval_mb = (size - last_size) / MB
    fetch_ms = end_ms - start_ms - rebalance_ms
    fetch_rates = (1000 * interval_mb / fetch_ms, 1000 * (messages - last_messages) / fetch_ms) \
        if fetch_ms > 0 else (0.0, 0.0)
    # Kafka's own line, in its printf format
    print("%s, %d, %.4f, %.4f, %d, %.4f, %d, %d, %.4f, %.4f" % (  # noqa: UP031
        formatted(end_ms), 0, size / MB, 1000 * interval_mb / elapsed_ms, messages,
        1000 * (messages - last_messages) / elapsed_ms, rebalance_ms, fetch_ms, *fetch_rates),
        flush=True)


def _bytes(rows) -> int:
    return sum(pc.sum(pc.binary_length(rows.column(name))).as_py() or 0
               for name in ("key", "value"))


