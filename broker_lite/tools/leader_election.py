"""``broker-lite leader-election``: elect partition leaders, as ``kafka-leader-election.sh``.

    broker-lite leader-election --bootstrap-server 127.0.0.1:9092 --election-type PREFERRED \\
        --all-topic-partitions
    broker-lite leader-election --bootstrap-server 127.0.0.1:9092 --election-type UNCLEAN \\
        --topic events --partition 0
    broker-lite leader-election --bootstrap-server 127.0.0.1:9092 --election-type PREFERRED \\
        --path-to-json-file partitions.json

``PREFERRED`` moves each partition's leadership to its preferred replica (the first of its
replicas) when that replica is alive and in sync; ``UNCLEAN`` elects a leader for a partition
without a live one, from the ISR if it can, else from any live replica (records the new leader
lacks are lost). The partitions: one (``--topic`` and ``--partition``), those of Kafka's JSON
file (``{"partitions": [{"topic": "events", "partition": 0}]}``), or every partition
(``--all-topic-partitions``). The request is ElectLeaders (key 43), answered by the controller.

Output (stdout), Kafka's lines, partitions sorted here (Kafka's order is its hash set's)::

    Successfully completed leader election (PREFERRED) for partitions events-0, events-2
    Valid replica already elected for partitions events-1
    Error completing leader election (PREFERRED) for partition: events-3: <the error>

Exit status 1 when a partition could not be elected (``N replica(s) could not be elected`` on
stderr), as Kafka's tool; 2 for a usage error (no election type, none or several ways of naming
partitions, a JSON file that is not Kafka's).
"""

import argparse
import json
from collections import Counter

from broker_lite.client.admin.replicas import PREFERRED, UNCLEAN, elect_leaders
from broker_lite.client.errors import ElectionNotNeededError
from broker_lite.common.vocabulary import TopicPartition

from .admin_support import client_errors
from .common import ToolError, add_bootstrap_server, kafka_client

NAME = "leader-election"
HELP = "elect preferred or unclean partition leaders (kafka-leader-election)"

ELECTION_TYPES = {"PREFERRED": PREFERRED, "UNCLEAN": UNCLEAN}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    parser.add_argument("--election-type", required=True, type=str.upper,
                        choices=sorted(ELECTION_TYPES),
                        help="PREFERRED: the preferred replica; UNCLEAN: any live replica for "
                             "partitions without a leader")
    parser.add_argument("--topic", help="the topic of --partition")
    parser.add_argument("--partition", type=int, help="the partition of --topic")
    parser.add_argument("--all-topic-partitions", action="store_true",
                        help="every partition of every topic")
    parser.add_argument("--path-to-json-file", metavar="PATH",
                        help='the partitions, as {"partitions": [{"topic": "foo", '
                             '"partition": 1}]}')
    parser.set_defaults(usage_error=parser.error)


def parse_election_json(text: str) -> list[TopicPartition]:
    """The partitions of Kafka's replica election JSON; :class:`ToolError` otherwise.

    >>> parse_election_json('{"partitions": [{"topic": "t", "partition": 1}]}')
    [TopicPartition(topic='t', partition=1)]
    """
    try:
        document = json.loads(text)
    except ValueError as exc:
        raise ToolError("Replica election data is not valid JSON") from exc
    if not isinstance(document, dict) or "partitions" not in document:
        raise ToolError('Replica election data is missing "partitions" field')
    entries = document["partitions"]
    if not isinstance(entries, list):
        raise ToolError('the "partitions" field must be a JSON array')
    partitions = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str) or \
                not isinstance(entry.get("partition"), int) or \
                isinstance(entry.get("partition"), bool):
            raise ToolError(f"a partitions entry needs a string topic and a number partition, "
                            f"got {json.dumps(entry)}")
        partitions.append(TopicPartition(entry["topic"], entry["partition"]))
    duplicates = sorted(tp for tp, count in Counter(partitions).items() if count > 1)
    if duplicates:
        raise ToolError("Replica election data contains duplicate partitions: "
                        + ",".join(f"{t}-{p}" for t, p in duplicates))
    return partitions


def _partitions(args: argparse.Namespace) -> list[TopicPartition] | None:
    ways = [args.all_topic_partitions, args.path_to_json_file is not None,
            args.topic is not None or args.partition is not None]
    if sum(ways) != 1:
        args.usage_error("exactly one of --all-topic-partitions, --path-to-json-file or "
                         "--topic with --partition is required")
    if args.all_topic_partitions:
        return None
    if args.path_to_json_file is not None:
        try:
            with open(args.path_to_json_file, encoding="utf-8") as file:
                return parse_election_json(file.read())
        except OSError as exc:
            raise ToolError(f"cannot read {args.path_to_json_file}: {exc.strerror}") from exc
    if args.topic is None or args.partition is None:
        args.usage_error("--topic and --partition go together")
    return [TopicPartition(args.topic, args.partition)]


def run(args: argparse.Namespace) -> int:
    partitions = _partitions(args)
    kind = args.election_type
    with kafka_client(args) as client, client_errors():
        results = elect_leaders(client.admin.cluster, ELECTION_TYPES[kind], partitions)
    succeeded = sorted(tp for tp, error in results.items() if error is None)
    noop = sorted(tp for tp, error in results.items()
                  if isinstance(error, ElectionNotNeededError))
    failed = {tp: error for tp, error in sorted(results.items())
              if error is not None and not isinstance(error, ElectionNotNeededError)}
    if succeeded:
        print(f"Successfully completed leader election ({kind}) for partitions "
              + ", ".join(f"{t}-{p}" for t, p in succeeded))
    if noop:
        print("Valid replica already elected for partitions "
              + ", ".join(f"{t}-{p}" for t, p in noop))
    for (topic, partition), error in failed.items():
        print(f"Error completing leader election ({kind}) for partition: {topic}-{partition}: "
              f"{error}")
    if failed:
        raise ToolError(f"{len(failed)} replica(s) could not be elected")
    return 0
