"""``broker-lite delete-records``: delete the records of partitions below given offsets, as
``kafka-delete-records.sh``.

    broker-lite delete-records --bootstrap-server 127.0.0.1:9092 --offset-json-file offsets.json

The offset file is Kafka's::

    {"partitions": [{"topic": "events", "partition": 0, "offset": 4}], "version": 1}

``version`` may be left out (1, the only version); an offset of -1 means the partition's high
watermark (every record goes). Each partition's log start offset moves to its offset (the records
below it are no longer read; the segments wholly below it are deleted by the broker).

Output (stdout), as Kafka's tool prints it, one line per partition (sorted here; Kafka's order is
its hash map's), a tab between the fields::

    Executing records delete operation
    Records delete operation completed:
    partition: events-0	low_watermark: 4
    partition: events-1	error: OFFSET_OUT_OF_RANGE (1) for events-1: The requested offset ...

A partition's error (the broker's error code and text, e.g. an offset beyond the high watermark,
an unknown partition) is reported on its line and does not fail the others; the exit status is
0 then, as Kafka's. Errors (stderr, exit status 1): an offset file that cannot be read, is not
JSON, lacks ``partitions``, names another ``version``, has an entry without ``topic``,
``partition`` and ``offset`` of the right types, or names a partition twice
(``Offset json file contains duplicate topic partitions: events-0``).
"""

import argparse
import json
from collections import Counter

from broker_lite.client.admin.records import delete_records
from broker_lite.client.errors import KafkaClientError
from broker_lite.common.vocabulary import TopicPartition

from .admin_support import client_errors
from .common import ToolError, add_bootstrap_server, kafka_client

NAME = "delete-records"
HELP = "delete the records of partitions below given offsets (kafka-delete-records)"

OFFSET_JSON_VERSION = 1
OFFSET_JSON_FORMAT = '{"partitions": [{"topic": "foo", "partition": 1, "offset": 1}], "version": 1}'


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    parser.add_argument("--offset-json-file", required=True, metavar="PATH",
                        help=f"the offset per partition, as {OFFSET_JSON_FORMAT}")


def parse_offset_json(text: str) -> list[tuple[TopicPartition, int]]:
    """The ``(partition, offset)`` entries of Kafka's offset JSON, in file order (duplicates
    kept); :class:`ToolError` when it is not that format.

    >>> parse_offset_json('{"partitions": [{"topic": "t", "partition": 0, "offset": 4}]}')
    [(TopicPartition(topic='t', partition=0), 4)]
    >>> parse_offset_json('{"version": 2, "partitions": []}')
    Traceback (most recent call last):
    ...
    broker_lite.tools.common.ToolError: Not supported version field value 2
    """
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ToolError("The input string is not a valid JSON") from exc
    if not isinstance(document, dict):
        raise ToolError(f"the offset JSON must be an object, as {OFFSET_JSON_FORMAT}")
    version = document.get("version", OFFSET_JSON_VERSION)
    if version != OFFSET_JSON_VERSION:
        raise ToolError(f"Not supported version field value {version}")
    if "partitions" not in document:
        raise ToolError("Missing partitions field")
    if not isinstance(document["partitions"], list):
        raise ToolError("the partitions field must be a JSON array")
    return [_entry(entry) for entry in document["partitions"]]


def _entry(entry: object) -> tuple[TopicPartition, int]:
    fields = (("topic", str), ("partition", int), ("offset", int))
    if not isinstance(entry, dict):
        raise ToolError(f"a partitions entry must be an object, got {json.dumps(entry)}")
    for field, kind in fields:
        value = entry.get(field)
        if not isinstance(value, kind) or isinstance(value, bool):
            raise ToolError(f"partitions entry {json.dumps(entry)}: {field!r} must be a "
                            f"{'string' if kind is str else 'number'}")
    return TopicPartition(entry["topic"], entry["partition"]), entry["offset"]


def run(args: argparse.Namespace) -> int:
    try:
        with open(args.offset_json_file, encoding="utf-8") as file:
            text = file.read()
    except OSError as exc:
        raise ToolError(f"cannot read {args.offset_json_file}: {exc.strerror}") from exc
    entries = parse_offset_json(text)
    duplicates = [tp for tp, count in Counter(tp for tp, _ in entries).items() if count > 1]
    if duplicates:
        raise ToolError("Offset json file contains duplicate topic partitions: "
                        + ",".join(str(tp) for tp in duplicates))
    with kafka_client(args) as client, client_errors():
        print("Executing records delete operation", flush=True)
        results = delete_records(client.admin.cluster, dict(entries))
    print("Records delete operation completed:")
    for tp in sorted(results):
        print(f"partition: {tp}\t{_outcome(results[tp])}")
    return 0


def _outcome(outcome: int | KafkaClientError) -> str:
    if isinstance(outcome, KafkaClientError):
        return f"error: {outcome}"
    return f"low_watermark: {outcome}"
