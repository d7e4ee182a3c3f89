"""``broker-lite console-producer``: send lines of stdin as records, as
``kafka-console-producer.sh``.

    printf 'k1:hello\\nk2:world\\n' | broker-lite console-producer \\
        --bootstrap-server 127.0.0.1:9092 --topic events \\
        --property parse.key=true --property key.separator=:

Each line is one record, read by :class:`.line_reader.LineReader` (Kafka's LineMessageReader:
``--property parse.key``, ``key.separator``, ``parse.headers``, ``headers.delimiter``,
``headers.separator``, ``headers.key.separator``, ``ignore.error``, ``null.marker``). Lines are
sent in batches, not one request per line: a batch goes out when ``--batch-size`` lines are
waiting, when the first of them has waited ``--timeout`` ms (so typing at a terminal still sends
each line promptly), and at the end of the input; ``--sync`` sends every line on its own and
waits for it. Records with a key go to the partition its murmur2 hash picks, records without
one to a partition picked per batch, as Kafka's default partitioner does. Every batch is
acknowledged before the next one is read (``--request-required-acks``: all or 1).

``--value-format`` and ``--key-format`` (``avro``, ``protobuf``, ``json-schema``) read the
value and key as JSON and send them in Confluent's wire format, as
``kafka-avro-console-producer`` and its siblings do, with the schema registry of
``--property schema.registry.url=...`` and the schema of ``--property value.schema=...``
(``value.schema.file``, ``value.schema.id``, ``key.*``; see :mod:`.schema_formats`)::

    echo '{"name": "ada"}' | broker-lite console-producer --bootstrap-server 127.0.0.1:9092 \\
        --topic users --value-format avro --property schema.registry.url=http://127.0.0.1:8081 \\
        --property value.schema.file=user.avsc

Exit status 1, with the reason on stderr, when a line cannot be read as asked (the lines before
it were sent), when the topic does not exist and the broker does not create it, or when the
cluster cannot be reached.
"""

import argparse
import os
import select
import sys
import time
from typing import TYPE_CHECKING

import pyarrow as pa

from broker_lite.client import KafkaClientError, UnknownTopicOrPartitionError
from broker_lite.records.arrow.schema import HEADERS_TYPE

from . import properties
from .common import ToolError, add_bootstrap_server, kafka_client
from .line_reader import LineFormatError, LineReader
from .schema_formats import PayloadError, add_format_arguments

if TYPE_CHECKING:
    from .schema_codec import SchemaFormat

NAME = "console-producer"
HELP = "send lines of stdin to a topic as records (kafka-console-producer)"

CODECS = ("none", "gzip", "snappy", "lz4", "zstd")
DEFAULT_BATCH_LINES = 16384
DEFAULT_LINGER_MS = 1000
DEFAULT_RETRIES = 3


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    parser.add_argument("--topic", required=True, help="the topic to send to")
    parser.add_argument("--property", type=properties.key_value, action="append",
                        metavar="KEY=VALUE",
                        help="a line reader property: parse.key, key.separator, parse.headers, "
                             "headers.delimiter, headers.separator, headers.key.separator, "
                             "ignore.error, null.marker")
    add_format_arguments(parser)
    parser.add_argument("--reader-config", metavar="PATH",
                        help="a properties file of line reader properties")
    parser.add_argument("--compression-codec", nargs="?", const="gzip", choices=CODECS,
                        help="compress batches with this codec (gzip when given without one)")
    parser.add_argument("--request-required-acks", choices=("all", "-1", "1"),
                        help="acknowledgements a batch needs: all (-1, the default) or 1")
    parser.add_argument("--request-timeout-ms", type=int, metavar="MS",
                        help="how long to wait for each answer (default: --timeout-ms)")
    parser.add_argument("--message-send-max-retries", type=int, metavar="N",
                        help=f"retries of a batch after retriable errors "
                             f"(default {DEFAULT_RETRIES})")
    parser.add_argument("--retry-backoff-ms", type=int, metavar="MS",
                        help="wait before the first retry")
    parser.add_argument("--sync", action="store_true",
                        help="send each line on its own and wait for its acknowledgement")
    parser.add_argument("--batch-size", type=int, default=DEFAULT_BATCH_LINES, metavar="N",
                        help=f"lines sent together at most (default {DEFAULT_BATCH_LINES})")
    parser.add_argument("--timeout", type=int, default=DEFAULT_LINGER_MS, metavar="MS",
                        help="longest a line waits for its batch to fill "
                             f"(default {DEFAULT_LINGER_MS})")
    parser.add_argument("--producer-property", type=properties.key_value, action="append",
                        metavar="KEY=VALUE", help="a producer setting, with Kafka's name")
    parser.add_argument("--producer.config", dest="producer_config", metavar="PATH",
                        help="a properties file of producer settings")
    parser.set_defaults(usage_error=parser.error)


def run(args: argparse.Namespace) -> int:
    if args.batch_size <= 0 or args.timeout < 0:
        args.usage_error("--batch-size must be > 0 and --timeout >= 0")
    reader_properties = properties.merged(args.reader_config, "--reader-config", args.property)
    try:
        reader = LineReader(reader_properties)
        formats = _formats(args.topic, args, reader_properties)
    except (LineFormatError, PayloadError) as exc:
        raise ToolError(str(exc)) from exc
    settings = properties.merged(args.producer_config, "--producer.config",
                                 args.producer_property)
    settings.setdefault("retries", str(DEFAULT_RETRIES))
    for option, name in (("request_required_acks", "acks"), ("compression_codec",
                                                              "compression.type"),
                         ("request_timeout_ms", "request.timeout.ms"),
                         ("message_send_max_retries", "retries"),
                         ("retry_backoff_ms", "retry.backoff.ms")):
        if getattr(args, option) is not None:
            settings[name] = str(getattr(args, option))
    client_args = properties.client_args(args.bootstrap_server, settings, args.timeout_ms)
    client_args.command_property += args.command_property
    client_args.command_config = args.command_config
    with kafka_client(client_args) as client:
        try:
            producer = client.producer()
        except KafkaClientError as exc:
            raise ToolError(str(exc)) from exc
        sender = _Sender(producer, args.topic, reader, *formats)
        batch_size = 1 if args.sync else args.batch_size
        with producer:
            _produce_stdin(sender, batch_size, args.timeout / 1000)
    return 0


class _Sender:
    """Parses lines and sends them as one Arrow table per batch."""

    def __init__(self, producer, topic: str, reader: LineReader,
                 key_format: "SchemaFormat | None" = None,
                 value_format: "SchemaFormat | None" = None):
        self.producer = producer
        self.topic = topic
        self.reader = reader
        self.formats = (key_format, value_format)
        self.line_number = 0
        self.pending: list[tuple] = []

    def add(self, line: bytes) -> None:
        self.line_number += 1
        text = line.removesuffix(b"\r").decode("utf-8", "surrogateescape")
        try:
            key, value, headers = self.reader.read(text, self.line_number)
            key, value = (data if data is None or fmt is None else fmt.encode(data.decode())
                          for data, fmt in zip((key, value), self.formats, strict=True))
            self.pending.append((key, value, headers))
        except PayloadError as exc:
            self.send()
            raise ToolError(f"line {self.line_number}: {exc}") from exc
        except LineFormatError as exc:
            self.send()  # the lines before it go out, as they would have one by one
            raise ToolError(str(exc)) from exc

    def send(self) -> None:
        if not self.pending:
            return
        keys, values, headers = zip(*self.pending, strict=True)
        columns = {"key": pa.array(keys, pa.binary()), "value": pa.array(values, pa.binary())}
        if any(headers):
            columns["headers"] = pa.array(headers, HEADERS_TYPE)
        self.pending = []
        try:
            self.producer.send_arrow(self.topic, pa.table(columns))
        except UnknownTopicOrPartitionError as exc:
            raise ToolError(f"topic {self.topic} does not exist and was not created: "
                            f"{exc}") from exc
        except KafkaClientError as exc:
            raise ToolError(f"could not send to topic {self.topic}: {exc}") from exc


class _StdinLines:
    """Lines of a file descriptor as they arrive, without blocking past a timeout."""

    def __init__(self, fd: int):
        self.fd = fd
        self.buffer = b""
        self.eof = False

    def read(self, timeout_s: float | None) -> list[bytes]:
        """The complete lines that arrive within ``timeout_s`` (None: wait for some); at the
        end of the input, the last line even without a line terminator."""
        ready, _, _ = select.select([self.fd], [], [], timeout_s)
        if not ready:
            return []
        chunk = os.read(self.fd, 1 << 16)
        if not chunk:
            self.eof = True
            rest, self.buffer = self.buffer, b""
            return [rest] if rest else []
        *lines, self.buffer = (self.buffer + chunk).split(b"\n")
        return lines


def _produce_stdin(sender: _Sender, batch_size: int, linger_s: float) -> None:
    source = _StdinLines(sys.stdin.fileno())
    prompt = sys.stdin.isatty() and sys.stdout.isatty()
    first_at = 0.0
    while not source.eof:
        timeout = None
        if sender.pending:
            timeout = max(0.0, first_at + linger_s - time.monotonic())
        elif prompt and not source.buffer:
            print(">", end="", flush=True)
        lines = source.read(timeout)
        for line in lines:
            if not sender.pending:
                first_at = time.monotonic()
            sender.add(line)
            if len(sender.pending) >= batch_size:
                sender.send()
        if sender.pending and time.monotonic() >= first_at + linger_s:
            sender.send()
    sender.send()


def _formats(topic: str, args: argparse.Namespace, settings: dict[str, str]
             ) -> "tuple[SchemaFormat | None, SchemaFormat | None]":
    """The key's and value's formats asked for; the codecs are loaded only then."""
    if args.key_format is None and args.value_format is None:
        return None, None
    from .schema_codec import topic_formats

    return topic_formats(topic, args.key_format, args.value_format, settings)
