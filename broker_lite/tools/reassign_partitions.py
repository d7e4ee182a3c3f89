"""``broker-lite reassign-partitions``: move partition replicas between brokers, as
``kafka-reassign-partitions.sh``.

    broker-lite reassign-partitions --bootstrap-server 127.0.0.1:9092 --generate \\
        --topics-to-move-json-file topics.json --broker-list 1,2,3
    broker-lite reassign-partitions --bootstrap-server 127.0.0.1:9092 --execute \\
        --reassignment-json-file plan.json [--additional]
    broker-lite reassign-partitions --bootstrap-server 127.0.0.1:9092 --verify \\
        --reassignment-json-file plan.json
    broker-lite reassign-partitions --bootstrap-server 127.0.0.1:9092 --list
    broker-lite reassign-partitions --bootstrap-server 127.0.0.1:9092 --cancel \\
        --reassignment-json-file plan.json

Kafka's JSON files: the topics to move, ``{"topics": [{"topic": "events"}], "version": 1}``; a
reassignment, ``{"version": 1, "partitions": [{"topic": "events", "partition": 0, "replicas":
[2, 3], "log_dirs": ["any", "any"]}]}`` (``log_dirs`` may be left out; only ``any``: broker_lite
does not move replicas between log directories).

Exactly one action:

``--generate``
    Proposes a reassignment of the topics' partitions over ``--broker-list`` with Kafka's
    rack-unaware round robin (random start, as Kafka's), keeping each topic's replication
    factor, and prints the current assignment and the proposal, as Kafka's tool::

        Current partition replica assignment
        {"version":1,"partitions":[{"topic":"events","partition":0,"replicas":[1,2],...}]}

        Proposed partition reassignment configuration
        {"version":1,"partitions":[...]}

``--execute``
    Starts the reassignment (AlterPartitionReassignments, key 45, to the controller), after
    printing the current assignment of its partitions to keep for a rollback; refused while
    other reassignments run unless ``--additional``, and when it names an unknown broker::

        Current partition replica assignment

        {"version":1,"partitions":[...]}

        Save this to use as the --reassignment-json-file option during rollback
        Successfully started partition reassignments for events-0,events-1

``--verify``
    ``Status of partition reassignment:``, then per partition ``Reassignment of partition
    events-0 is completed.`` or ``... is still in progress.`` (or that no reassignment runs but
    the replicas differ from the plan).
``--list``
    ``Current partition reassignments:`` and a line per partition (``events-0: replicas:
    2,3,1. adding: 3. removing: 1.``), or ``No partition reassignments found.``
``--cancel``
    Cancels the plan's running reassignments (their partitions go back to their original
    replicas): ``Successfully cancelled partition reassignments for: events-0`` or ``None of
    the specified partition reassignments are active.``

Kafka's replication throttles are not there (broker_lite has no replication quotas): no
``--throttle``, and ``--verify`` has none to clear. Errors (stderr, exit status 1): files that
are not Kafka's format, duplicate partitions or replicas, unknown brokers or topics, a
reassignment the controller refused (``Error reassigning partition(s):`` and a line each).
"""

import argparse
import json
from collections import Counter

from broker_lite.client.admin.replicas import (
    alter_partition_reassignments,
    list_partition_reassignments,
)
from broker_lite.common.vocabulary import TopicPartition
from broker_lite.zk.assignment import assign_replicas

from .admin_support import client_errors
from .common import ToolError, add_bootstrap_server, kafka_client

NAME = "reassign-partitions"
HELP = "move partition replicas between brokers (kafka-reassign-partitions)"

ACTIONS = ("generate", "execute", "verify", "list", "cancel")
ANY_LOG_DIR = "any"
EXISTING_MESSAGE = ("Cannot execute because there is an existing partition assignment.  Use "
                    "--additional to override this and create a new partition assignment in "
                    "addition to the existing one. The --additional flag can also be used to "
                    "change the throttle by resubmitting the current reassignment.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    actions = parser.add_mutually_exclusive_group(required=True)
    for action in ACTIONS:
        actions.add_argument(f"--{action}", action="store_true")
    parser.add_argument("--topics-to-move-json-file", metavar="PATH",
                        help='--generate: {"topics": [{"topic": "foo"}], "version": 1}')
    parser.add_argument("--broker-list", metavar="IDS",
                        help="--generate: the brokers to spread the replicas over, 1,2,3")
    parser.add_argument("--reassignment-json-file", metavar="PATH",
                        help="--execute, --verify, --cancel: the reassignment plan")
    parser.add_argument("--additional", action="store_true",
                        help="--execute: start it while other reassignments run")
    parser.add_argument("--disable-rack-aware", action="store_true",
                        help="--generate: accepted; the proposal is always rack-unaware")
    parser.set_defaults(usage_error=parser.error)


def _dump(document: dict) -> str:
    return json.dumps(document, separators=(",", ":"))


def format_reassignment(assignment: dict[TopicPartition, list[int]]) -> str:
    """Kafka's reassignment JSON, partitions sorted.

    >>> format_reassignment({TopicPartition("t", 0): [1, 2]})
    '{"version":1,"partitions":[{"topic":"t","partition":0,"replicas":[1,2],"log_dirs":["any","any"]}]}'
    """
    return _dump({"version": 1, "partitions": [
        {"topic": tp.topic, "partition": tp.partition, "replicas": list(replicas),
         "log_dirs": [ANY_LOG_DIR] * len(replicas)}
        for tp, replicas in sorted(assignment.items())]})


def _load(path: str | None, option: str, args: argparse.Namespace) -> object:
    if path is None:
        args.usage_error(f"this action needs {option}")
    try:
        with open(path, encoding="utf-8") as file:
            return json.loads(file.read())
    except OSError as exc:
        raise ToolError(f"cannot read {path}: {exc.strerror}") from exc
    except ValueError as exc:
        raise ToolError(f"{path} is not valid JSON: {exc}") from exc


def parse_reassignment(document: object) -> dict[TopicPartition, list[int]]:
    """The plan of Kafka's reassignment JSON, checked as Kafka's tool checks it."""
    if not isinstance(document, dict):
        raise ToolError("the reassignment JSON must be an object")
    version = document.get("version", 1)
    if version != 1:
        raise ToolError(f"Not supported version field value {version}")
    entries = document.get("partitions", [])
    if not isinstance(entries, list):
        raise ToolError('the "partitions" field must be a JSON array')
    plan: list[tuple[TopicPartition, list[int]]] = []
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("topic"), str) or \
                not _is_int(entry.get("partition")) or \
                not isinstance(entry.get("replicas"), list) or \
                not all(_is_int(r) for r in entry["replicas"]):
            raise ToolError(f"a partitions entry needs a string topic, a number partition and "
                            f"a list of replicas, got {json.dumps(entry)}")
        tp = TopicPartition(entry["topic"], entry["partition"])
        replicas = entry["replicas"]
        log_dirs = entry.get("log_dirs", [ANY_LOG_DIR] * len(replicas))
        if not isinstance(log_dirs, list) or len(log_dirs) != len(replicas):
            raise ToolError(f"Size of replicas list {replicas} is different from size of log dirs "
                            f"list {log_dirs} for partition {tp.topic}-{tp.partition}")
        if any(d != ANY_LOG_DIR for d in log_dirs):
            raise ToolError(f"partition {tp.topic}-{tp.partition}: broker_lite does not move "
                            f"replicas between log directories (log_dirs must be \"any\")")
        plan.append((tp, replicas))
    if not plan:
        raise ToolError("Partition reassignment list cannot be empty")
    if any(not replicas for _, replicas in plan):
        raise ToolError("Partition replica list cannot be empty")
    repeated = sorted(tp for tp, n in Counter(tp for tp, _ in plan).items() if n > 1)
    if repeated:
        raise ToolError("Partition reassignment contains duplicate topic partitions: "
                        + ",".join(f"{t}-{p}" for t, p in repeated))
    doubled = [f"{t}-{p} contains multiple entries for "
               + ",".join(str(r) for r, n in sorted(Counter(replicas).items()) if n > 1)
               for (t, p), replicas in plan if len(set(replicas)) != len(replicas)]
    if doubled:
        raise ToolError("Partition replica lists may not contain duplicate entries: "
                        + ". ".join(doubled))
    return dict(plan)


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse_topics_to_move(document: object) -> list[str]:
    """The topics of Kafka's topics-to-move JSON."""
    if not isinstance(document, dict) or document.get("version", 1) != 1:
        raise ToolError('the topics JSON must be {"topics": [{"topic": "foo"}], "version": 1}')
    entries = document.get("topics", [])
    if not isinstance(entries, list) or not all(
            isinstance(e, dict) and isinstance(e.get("topic"), str) for e in entries):
        raise ToolError('the "topics" field must list objects with a string "topic"')
    topics = [e["topic"] for e in entries]
    repeated = sorted(t for t, n in Counter(topics).items() if n > 1)
    if repeated:
        raise ToolError(f"List of topics to reassign contains duplicate entries: {repeated}")
    return topics


def _current(client, partitions) -> dict[TopicPartition, list[int]]:
    topics = sorted({tp.topic for tp in partitions})
    described = client.admin.describe_topics(topics)
    current = {}
    for tp in partitions:
        topic = described.get(tp.topic)
        if topic is None or tp.partition not in topic.partitions:
            raise ToolError(f"Topic {tp.topic} not found." if topic is None
                            else f"Unable to find partition: {tp.topic}-{tp.partition}")
        current[tp] = list(topic.partitions[tp.partition].replicas)
    return current


def run(args: argparse.Namespace) -> int:
    action = next(a for a in ACTIONS if getattr(args, a))
    with kafka_client(args) as client, client_errors():
        cluster = client.admin.cluster
        if action == "generate":
            generate(client, args)
        elif action == "execute":
            plan = parse_reassignment(_load(args.reassignment_json_file,
                                            "--reassignment-json-file", args))
            if not args.additional and list_partition_reassignments(cluster):
                raise ToolError(EXISTING_MESSAGE)
            cluster.refresh_metadata((), cluster.deadline())
            known = set(cluster.metadata.brokers())
            unknown = sorted({r for replicas in plan.values() for r in replicas} - known)
            if unknown:
                raise ToolError(f"Unknown broker id {unknown[0]}")
            print("Current partition replica assignment\n\n"
                  f"{format_reassignment(_current(client, plan))}\n\n"
                  "Save this to use as the --reassignment-json-file option during rollback")
            errors = {tp: e for tp, e in alter_partition_reassignments(cluster, plan).items()
                      if e is not None}
            if errors:
                raise ToolError("Error reassigning partition(s):\n" + "\n".join(
                    f"{t}-{p}: {error}" for (t, p), error in sorted(errors.items())))
            print(f"Successfully started partition reassignment{'' if len(plan) == 1 else 's'} "
                  f"for {','.join(f'{t}-{p}' for t, p in sorted(plan))}")
        elif action == "verify":
            plan = parse_reassignment(_load(args.reassignment_json_file,
                                            "--reassignment-json-file", args))
            verify(client, plan)
        elif action == "list":
            ongoing = list_partition_reassignments(cluster)
            if not ongoing:
                print("No partition reassignments found.")
            else:
                print("Current partition reassignments:")
                for (topic, partition), r in sorted(ongoing.items()):
                    adding = f" adding: {_ids(r.adding_replicas)}." if r.adding_replicas else ""
                    removing = f" removing: {_ids(r.removing_replicas)}." \
                        if r.removing_replicas else ""
                    print(f"{topic}-{partition}: replicas: {_ids(r.replicas)}.{adding}{removing}")
        else:
            plan = parse_reassignment(_load(args.reassignment_json_file,
                                            "--reassignment-json-file", args))
            cancel(cluster, plan)
    return 0


def _ids(ids) -> str:
    return ",".join(map(str, ids))


def generate(client, args: argparse.Namespace) -> None:
    if args.broker_list is None:
        args.usage_error("--generate needs --broker-list")
    topics = parse_topics_to_move(_load(args.topics_to_move_json_file,
                                        "--topics-to-move-json-file", args))
    try:
        brokers = [int(b) for b in args.broker_list.split(",")]
    except ValueError:
        raise ToolError(f"--broker-list must be broker ids separated by commas, got "
                        f"{args.broker_list!r}") from None
    repeated = sorted(b for b, n in Counter(brokers).items() if n > 1)
    if repeated:
        raise ToolError(f"Broker list contains duplicate entries: {repeated}")
    described = client.admin.describe_topics(topics)
    missing = [t for t in topics if t not in described]
    if missing:
        raise ToolError(f"Topic {missing[0]} not found.")
    current, proposed = {}, {}
    for name in topics:
        partitions = described[name].partitions
        for number, partition in partitions.items():
            current[TopicPartition(name, number)] = list(partition.replicas)
        factor = len(partitions[min(partitions)].replicas)
        for number, replicas in assign_replicas(brokers, len(partitions), factor).items():
            proposed[TopicPartition(name, number)] = list(replicas)
    print(f"Current partition replica assignment\n{format_reassignment(current)}\n\n"
          f"Proposed partition reassignment configuration\n{format_reassignment(proposed)}")


def verify(client, plan: dict[TopicPartition, list[int]]) -> None:
    ongoing = list_partition_reassignments(client.admin.cluster, sorted(plan))
    current = _current(client, [tp for tp in plan if tp not in ongoing])
    print("Status of partition reassignment:")
    for tp, target in sorted(plan.items()):
        name = f"{tp.topic}-{tp.partition}"
        if tp in ongoing:
            print(f"Reassignment of partition {name} is still in progress.")
        elif current[tp] == list(target):
            print(f"Reassignment of partition {name} is completed.")
        else:
            print(f"There is no active reassignment of partition {name}, but replica set is "
                  f"{_ids(current[tp])} rather than {_ids(target)}.")


def cancel(cluster, plan: dict[TopicPartition, list[int]]) -> None:
    active = sorted(list_partition_reassignments(cluster, sorted(plan)))
    if not active:
        print("None of the specified partition reassignments are active.")
        return
    errors = {tp: e for tp, e in alter_partition_reassignments(
        cluster, {tp: None for tp in active}).items() if e is not None}
    if errors:
        raise ToolError(
            f"Error cancelling partition reassignment{'' if len(errors) == 1 else 's'} for:\n"
            + "\n".join(f"{t}-{p}: {e}" for (t, p), e in sorted(errors.items())))
    print(f"Successfully cancelled partition reassignment{'' if len(active) == 1 else 's'} for: "
          + ",".join(f"{t}-{p}" for t, p in active))
