"""``broker-lite console-consumer``: print records of a topic, as ``kafka-console-consumer.sh``.

    broker-lite console-consumer --bootstrap-server 127.0.0.1:9092 --topic events \\
        --from-beginning --property print.key=true --property print.timestamp=true

Records are printed by :class:`.message_formatter.MessageFormatter` (Kafka's
DefaultMessageFormatter: its ``--property`` names and output), one partition's records after
another as each fetch round brings them. Where to start, per partition: ``--offset`` (with
``--partition``), else the offset ``--group`` committed, else the earliest offset with
``--from-beginning`` and the latest without. The tool stops after ``--max-messages``, after
``--timeout-ms`` without a new record, or on Ctrl-C or SIGTERM (between two records; exit status
130 or 143), and then prints ``Processed a total of N messages`` on stderr, as Kafka's does.
With ``--group`` it commits the position after the last record printed (every
``auto.commit.interval.ms`` and at the end), outside any group membership, so
``consumer-groups`` shows the group's offsets and lag.
"""

import argparse
import re
import signal
import sys
import time
from typing import TYPE_CHECKING

from tqdm import tqdm

from broker_lite.client import EARLIEST, LATEST, KafkaClient, KafkaClientError

from . import properties
from .admin_support import include_list
from .common import DEFAULT_TIMEOUT_MS, ToolError, kafka_client, progress
from .message_formatter import FormatError, MessageFormatter
from .schema_formats import add_format_arguments
from .topic_reader import TopicReader, start_positions, topic_partitions

if TYPE_CHECKING:
    from .schema_codec import SchemaFormat

NAME = "console-consumer"
HELP = "print the records of a topic (kafka-console-consumer)"

FORMATTERS = ("kafka.tools.DefaultMessageFormatter",
              "org.apache.kafka.tools.consumer.DefaultMessageFormatter")
DEFAULT_AUTO_COMMIT_INTERVAL_MS = 5000


def offset_spec(text: str) -> int:
    """``earliest`` / ``latest`` / an offset >= 0, as EARLIEST, LATEST or the offset."""
    value = text.strip().lower()
    if value == "earliest":
        return EARLIEST
    if value == "latest":
        return LATEST
    try:
        offset = int(value)
    except ValueError:
        offset = -1
    if offset < 0:
        raise argparse.ArgumentTypeError(f"expected earliest, latest or an offset >= 0, "
                                         f"got {text!r}")
    return offset


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--bootstrap-server", required=True, metavar="HOST:PORT",
                        help="the broker(s) to connect to")
    what = parser.add_mutually_exclusive_group(required=True)
    what.add_argument("--topic", help="the topic to consume")
    what.add_argument("--include", metavar="REGEX",
                      help="consume every topic whose whole name matches this regular expression "
                           "(Kafka's include list: ',' separates alternatives)")
    parser.add_argument("--partition", type=int, help="consume only this partition")
    start = parser.add_mutually_exclusive_group()
    start.add_argument("--offset", type=offset_spec, metavar="OFFSET",
                       help="where to start: earliest, latest or an offset (needs --partition)")
    start.add_argument("--from-beginning", action="store_true",
                       help="start at the earliest offset when the group has no committed one")
    parser.add_argument("--max-messages", type=int, metavar="N",
                        help="exit after this many records")
    parser.add_argument("--timeout-ms", type=int, metavar="MS",
                        help="exit when no record came for this long")
    parser.add_argument("--group", help="the consumer group whose offsets to use and commit")
    parser.add_argument("--isolation-level", choices=("read_uncommitted", "read_committed"),
                        help="read_committed hides records of aborted and open transactions")
    parser.add_argument("--property", type=properties.key_value, action="append",
                        metavar="KEY=VALUE",
                        help="a formatter property: print.key, print.timestamp, print.partition,"
                             " print.offset, print.headers, print.value, key.separator, "
                             "line.separator, headers.separator, headers.key.separator, "
                             "null.literal, key.deserializer, value.deserializer")
    parser.add_argument("--formatter", choices=FORMATTERS, default=FORMATTERS[0],
                        help="the record formatter (Kafka's default one)")
    add_format_arguments(parser)
    parser.add_argument("--formatter-config", metavar="PATH",
                        help="a properties file of formatter properties")
    parser.add_argument("--key-deserializer", metavar="CLASS",
                        help="a Kafka deserializer class for keys")
    parser.add_argument("--value-deserializer", metavar="CLASS",
                        help="a Kafka deserializer class for values")
    parser.add_argument("--skip-message-on-error", action="store_true",
                        help="skip a record its deserializer cannot read instead of stopping")
    parser.add_argument("--consumer-property", type=properties.key_value, action="append",
                        metavar="KEY=VALUE", help="a consumer setting, with Kafka's name")
    parser.add_argument("--consumer.config", dest="consumer_config", metavar="PATH",
                        help="a properties file of consumer settings")
    parser.set_defaults(usage_error=parser.error)


def run(args: argparse.Namespace) -> int:
    if args.offset is not None and args.partition is None:
        args.usage_error("the partition is required when offset is specified (--partition)")
    for option in ("max_messages", "timeout_ms"):
        value = getattr(args, option)
        if value is not None and value <= 0:
            args.usage_error(f"--{option.replace('_', '-')} must be > 0, got {value}")
    formatter = _formatter(args)
    settings = properties.merged(args.consumer_config, "--consumer.config",
                                 args.consumer_property)
    group = args.group or settings.get("group.id")
    if args.group and settings.get("group.id", args.group) != args.group:
        args.usage_error(f"--group {args.group} and group.id={settings['group.id']} differ")
    reset = settings.pop("auto.offset.reset", "earliest" if args.from_beginning else "latest")
    try:
        auto_commit_ms = int(settings.get("auto.commit.interval.ms",
                                          DEFAULT_AUTO_COMMIT_INTERVAL_MS))
    except ValueError:
        raise ToolError("auto.commit.interval.ms must be an integer") from None
    with kafka_client(properties.client_args(args.bootstrap_server, settings,
                                             DEFAULT_TIMEOUT_MS)) as client:
        isolation = args.isolation_level or client.config.isolation_level
        consumer = _Consumer(client, formatter, group=group, max_messages=args.max_messages,
                             timeout_ms=args.timeout_ms, skip_errors=args.skip_message_on_error,
                             auto_commit_ms=auto_commit_ms)
        try:
            tps = topic_partitions(client, _topics(client, args), args.partition)
            positions = start_positions(client, tps, EARLIEST if args.from_beginning else LATEST,
                                        explicit=args.offset, group=group,
                                        isolation_level=isolation)
            reader = TopicReader(client, positions, isolation_level=isolation, reset=reset)
        except KafkaClientError as exc:
            raise ToolError(str(exc)) from exc
        return consumer.consume(reader)


def _formatter(args: argparse.Namespace) -> MessageFormatter:
    settings = properties.merged(args.formatter_config, "--formatter-config", args.property)
    if args.key_deserializer:
        settings["key.deserializer"] = args.key_deserializer
    if args.value_deserializer:
        settings["value.deserializer"] = args.value_deserializer
    try:
        formatter = MessageFormatter(settings)
        key, value = _formats(args.topic or "", args, settings)
    except FormatError as exc:
        raise ToolError(str(exc)) from exc
    if key is not None:
        formatter.key_deserializer = key.decode
    if value is not None:
        formatter.value_deserializer = value.decode
    return formatter


def _topics(client: KafkaClient, args: argparse.Namespace) -> list[str]:
    if args.topic is not None:
        return [args.topic]
    try:
        pattern = include_list(args.include)
    except re.error as exc:
        args.usage_error(f"--include is not a valid regular expression: {exc}")
    topics = sorted(t for t in client.topics() if pattern.fullmatch(t))
    if not topics:
        raise ToolError(f"no topic matches --include {args.include}")
    return topics


class _Consumer:
    """The consume loop: poll, print, count, commit."""

    def __init__(self, client: KafkaClient, formatter: MessageFormatter, *, group: str | None,
                 max_messages: int | None, timeout_ms: int | None, skip_errors: bool,
                 auto_commit_ms: int):
        self.client = client
        self.formatter = formatter
        self.group = group
        self.max_messages = max_messages
        self.timeout_s = timeout_ms / 1000 if timeout_ms else None
        self.skip_errors = skip_errors
        self.auto_commit_s = auto_commit_ms / 1000
        self.count = 0
        self.consumed: dict = {}  # partition -> the offset after the last record printed
        self._committed: dict = {}
        self.stop = _Termination()

    def consume(self, reader: TopicReader) -> int:
        self.consumed = dict(reader.positions)
        out = sys.stdout.buffer
        # The records go to the terminal: a bar there would garble them.
        bar = tqdm(disable=True) if sys.stdout.isatty() else \
            progress(self.max_messages, "Consuming", "messages")
        interrupted = failed = False
        try:
            self.stop.install()
            self._loop(reader, out, bar)
        except KeyboardInterrupt:  # a second signal: stop at once
            interrupted = True
        except BrokenPipeError:
            _silence_stdout()
            print("Unable to write to standard out, closing consumer.", file=sys.stderr)
        except KafkaClientError as exc:
            failed = True
            raise ToolError(str(exc)) from exc
        except ToolError:
            failed = True
            raise
        finally:
            bar.close()
            if not failed:
                self._commit(final=True)
            print(f"Processed a total of {self.count} messages", file=sys.stderr, flush=True)
        if interrupted:
            raise KeyboardInterrupt
        return 128 + self.stop.signum if self.stop.signum else 0

    def _loop(self, reader: TopicReader, out, bar) -> None:
        wait_ms = self.client.config.fetch_max_wait_ms
        idle_until = time.monotonic() + self.timeout_s if self.timeout_s else None
        last_commit = time.monotonic()
        while not self.stop.signum and \
                (self.max_messages is None or self.count < self.max_messages):
            wait = wait_ms
            if idle_until is not None:
                remaining = idle_until - time.monotonic()
                if remaining <= 0:
                    return
                wait = min(wait, int(remaining * 1000) + 1)
            before = self.count
            done = self._print(reader.poll(wait), out)
            if not done:
                self.consumed.update(reader.positions)
            out.flush()
            bar.update(self.count - before)
            if self.count > before and idle_until is not None:
                idle_until = time.monotonic() + self.timeout_s
            if time.monotonic() - last_commit >= self.auto_commit_s:
                self._commit()
                last_commit = time.monotonic()
            if done:
                return

    def _print(self, chunks, out) -> bool:
        """Print the records of one round, one write per partition; True once
        ``max_messages`` are printed or a signal asked to stop."""
        for chunk in chunks:
            lines: list[bytes] = []
            try:
                done = self._format(chunk, lines)
            finally:
                out.write(b"".join(lines))
            if done:
                return True
            self.consumed[chunk.tp] = chunk.next_position
        return False

    def _format(self, chunk, lines: list[bytes]) -> bool:
        partition = chunk.tp.partition
        for record in chunk.records():
            if self.stop.signum:
                return True
            try:
                lines.append(self.formatter.format(record, partition))
            except FormatError as exc:
                if not self.skip_errors:
                    raise ToolError(f"{chunk.tp} at offset {record.offset}: {exc}") from exc
                print(f"Skipping {chunk.tp} at offset {record.offset}: {exc}", file=sys.stderr)
            self.count += 1
            self.consumed[chunk.tp] = record.offset + 1
            if self.max_messages is not None and self.count >= self.max_messages:
                return True
        return False

    def _commit(self, final: bool = False) -> None:
        if self.group is None:
            return
        changed = {tp: offset for tp, offset in self.consumed.items()
                   if self._committed.get(tp) != offset}
        if not changed:
            return
        try:
            self.client.commit(self.group, changed)
        except KafkaClientError as exc:
            if final:
                raise ToolError(f"could not commit the offsets of group {self.group}: "
                                f"{exc}") from exc
            print(f"Could not commit the offsets of group {self.group}: {exc}",
                  file=sys.stderr)
            return
        self._committed.update(changed)


def _silence_stdout() -> None:
    """Point stdout at /dev/null, so flushing it at exit does not fail again."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)


class _Termination:
    """SIGINT (Ctrl-C) and SIGTERM end the consume loop between two records, so every record
    printed is counted and committed; a second signal interrupts at once."""

    def __init__(self):
        self.signum: int | None = None

    def install(self) -> None:
        for signum in (signal.SIGINT, signal.SIGTERM):
            signal.signal(signum, self._handle)

    def _handle(self, signum: int, frame) -> None:
        if self.signum is not None:
            raise KeyboardInterrupt
        self.signum = signum


def _formats(topic: str, args: argparse.Namespace, settings: dict[str, str]
             ) -> "tuple[SchemaFormat | None, SchemaFormat | None]":
    """The key's and value's formats asked for; the codecs are loaded only then."""
    if args.key_format is None and args.value_format is None:
        return None, None
    from .schema_codec import topic_formats

    return topic_formats(topic, args.key_format, args.value_format, settings)
