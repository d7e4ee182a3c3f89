"""``broker-lite topics``: create, list, describe, grow and delete topics, as ``kafka-topics.sh``.

    broker-lite topics --bootstrap-server 127.0.0.1:9092 --create --topic events \\
        --partitions 3 --replication-factor 1 --config retention.ms=86400000
    broker-lite topics --bootstrap-server 127.0.0.1:9092 --list
    broker-lite topics --bootstrap-server 127.0.0.1:9092 --describe --topic events
    broker-lite topics --bootstrap-server 127.0.0.1:9092 --alter --topic events --partitions 6
    broker-lite topics --bootstrap-server 127.0.0.1:9092 --delete --topic events

Exactly one action: ``--create``, ``--list``, ``--describe``, ``--alter`` or ``--delete``. Except
with ``--create``, ``--topic`` is Kafka's include list: a regular expression that must match
whole names (``,`` separates alternatives), so ``--topic 'logs-.*'`` describes every ``logs-``
topic. Topic configs are changed with ``broker-lite configs`` (Kafka moved that to
``kafka-configs.sh`` too); ``--alter`` only adds partitions.

Output (stdout), stable for scripts:

``--create``
    ``Created topic <name>.`` (nothing when ``--if-not-exists`` finds it there).
``--list``
    The topic names, sorted, one a line; internal topics (``__consumer_offsets``) included
    unless ``--exclude-internal``.
``--describe``
    Per topic, sorted by name, Kafka's lines: a topic line, then one line per partition
    starting with a tab; fields are separated by tabs (shown here as ``|``)::

        Topic: events|TopicId: 9CqjPLxIQsuSPDy1Dzks6w|PartitionCount: 2|ReplicationFactor: 1|...
        |Topic: events|Partition: 0|Leader: 1|Replicas: 1|Isr: 1
        |Topic: events|Partition: 1|Leader: 1|Replicas: 1|Isr: 1

    where ``...`` is ``Configs: retention.ms=86400000`` for a topic with that override.
    ``Configs`` lists the configs whose value is not the default, as ``name=value`` joined by
    ``,`` (topic overrides and settings from server.properties); ``Leader: none`` when a
    partition has no leader. A partition with replicas on brokers that are not alive ends with
    ``|Offline: 3`` (those replicas, as the Metadata response's offline replicas list them; the
    field Confluent's kafka-topics prints), and one being reassigned with Kafka's
    ``|Adding Replicas: 4|Removing Replicas: 1``. ``--under-replicated-partitions``,
    ``--unavailable-partitions``, ``--under-min-isr-partitions`` and ``--at-min-isr-partitions``
    print only the partition lines of such partitions; ``--topics-with-overrides`` only the
    topic lines of topics with a non-default config.
``--alter``, ``--delete``
    Nothing.

Errors (stderr, exit status 1): a topic that does not exist (``Topic 'x' does not exist as
expected``, unless ``--if-exists``), one that already exists (unless ``--if-not-exists``), an
invalid partition count or config (the broker's reason), a broker that cannot be reached within
``--timeout-ms``. Options that do not fit the action are usage errors (exit status 2).
"""

import argparse
import re
import sys
from dataclasses import dataclass

from broker_lite.client.admin.admin import Admin, NewTopic
from broker_lite.client.admin.configs import ConfigResource
from broker_lite.client.admin.replicas import PartitionReassignment, list_partition_reassignments
from broker_lite.client.cluster.metadata import PartitionMetadata, TopicMetadata
from broker_lite.client.errors import KafkaClientError, TopicAlreadyExistsError
from broker_lite.common.vocabulary import TopicPartition
from broker_lite.protocol import ZERO_UUID
from broker_lite.protocol.config_entry import ConfigEntry
from broker_lite.zk.layout import encode_uuid

from .admin_support import client_errors, include_list
from .common import ToolError, add_bootstrap_server, kafka_client, key_values

NAME = "topics"
HELP = "create, list, describe, alter and delete topics (kafka-topics)"

ACTIONS = ("create", "list", "describe", "alter", "delete")
# --describe's partition reports: option (as an attribute) -> PartitionReport method
REPORTS = {"under_replicated_partitions": "under_replicated",
           "unavailable_partitions": "unavailable",
           "under_min_isr_partitions": "under_min_isr", "at_min_isr_partitions": "at_min_isr"}
MAX_REPLICATION_FACTOR = 32767  # a Java short
DEFAULT_MIN_ISR = "1"  # Kafka's min.insync.replicas default, for brokers that do not report it
COLLISION_WARNING = ("WARNING: Due to limitations in metric names, topics with a period ('.') or "
                     "underscore ('_') could collide. To avoid issues it is best to use either, "
                     "but not both.")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    actions = parser.add_mutually_exclusive_group(required=True)
    actions.add_argument("--create", action="store_true", help="create a new topic")
    actions.add_argument("--list", action="store_true", help="list all available topics")
    actions.add_argument("--describe", action="store_true",
                         help="list details for the given topics")
    actions.add_argument("--alter", action="store_true",
                         help="add partitions (to alter topic configs use `broker-lite configs`)")
    actions.add_argument("--delete", action="store_true", help="delete a topic")
    parser.add_argument("--topic", help="the topic; except with --create a regular expression "
                                        "matching whole names")
    parser.add_argument("--partitions", type=int, metavar="N",
                        help="the number of partitions (--create: the broker's default if unset)")
    parser.add_argument("--replication-factor", type=int, metavar="N",
                        help="replicas per partition (--create: the broker's default if unset)")
    parser.add_argument("--config", action="append", default=[], metavar="NAME=VALUE",
                        help="a topic config override for --create (repeatable)")
    parser.add_argument("--delete-config", action="append", metavar="NAME",
                        help=argparse.SUPPRESS)  # Kafka's old option: say where it went
    parser.add_argument("--if-exists", action="store_true",
                        help="--alter/--delete/--describe: do nothing when the topic is missing")
    parser.add_argument("--if-not-exists", action="store_true",
                        help="--create: do not fail when the topic exists")
    parser.add_argument("--exclude-internal", action="store_true",
                        help="--list/--describe: leave out internal topics")
    parser.add_argument("--under-replicated-partitions", action="store_true",
                        help="--describe: only partitions whose ISR is smaller than the replicas")
    parser.add_argument("--unavailable-partitions", action="store_true",
                        help="--describe: only partitions without a live leader")
    parser.add_argument("--under-min-isr-partitions", action="store_true",
                        help="--describe: only partitions whose ISR is below min.insync.replicas")
    parser.add_argument("--at-min-isr-partitions", action="store_true",
                        help="--describe: only partitions whose ISR is min.insync.replicas")
    parser.add_argument("--topics-with-overrides", action="store_true",
                        help="--describe: only topics with non-default configs, no partitions")
    parser.set_defaults(usage_error=parser.error)


def check_usage(args: argparse.Namespace) -> None:
    """Kafka's rules for which options go with which action (exit status 2 otherwise)."""
    action = next(a for a in ACTIONS if getattr(args, a))
    configs_tool = "to alter topic configs use `broker-lite configs --entity-type topics`"
    if args.delete_config:
        args.usage_error(f"--delete-config is not supported here; {configs_tool}")
    if args.topic is None and action not in ("list", "describe"):
        args.usage_error(f"--{action} needs --topic")
    if args.config and action != "create":
        args.usage_error(f"--config goes only with --create; {configs_tool}")
    if args.partitions is not None and action not in ("create", "alter"):
        args.usage_error("--partitions goes only with --create or --alter")
    if action == "alter" and args.partitions is None:
        args.usage_error("--alter needs --partitions")
    if args.replication_factor is not None and action != "create":
        args.usage_error("--replication-factor goes only with --create")
    if args.if_exists and action not in ("alter", "delete", "describe"):
        args.usage_error("--if-exists goes only with --alter, --delete or --describe")
    if args.if_not_exists and action != "create":
        args.usage_error("--if-not-exists goes only with --create")
    if args.exclude_internal and action not in ("list", "describe"):
        args.usage_error("--exclude-internal goes only with --list or --describe")
    reports = [r for r in REPORTS if getattr(args, r)]
    if (reports or args.topics_with_overrides) and action != "describe":
        args.usage_error("the partition reports and --topics-with-overrides go only with "
                         "--describe")
    if reports and args.topics_with_overrides:
        args.usage_error("--topics-with-overrides does not go with the partition reports")
    if action != "create" and args.topic is not None:
        try:
            include_list(args.topic)
        except re.error as exc:
            args.usage_error(f"--topic {args.topic!r} is not a valid regular expression: {exc}")


def run(args: argparse.Namespace) -> int:
    check_usage(args)
    with kafka_client(args) as client, client_errors():
        admin = client.admin
        if args.create:
            create(admin, args)
        elif args.list:
            for name in matching(admin, args.topic, args.exclude_internal):
                print(name)
        elif args.describe:
            describe(admin, args)
        elif args.alter:
            counts = {name: args.partitions for name in existing(admin, args)}
            if counts:
                admin.create_partitions(counts)
        else:
            delete(admin, args)
    return 0


# -- actions --------------------------------------------------------------------------------------


def create(admin: Admin, args: argparse.Namespace) -> None:
    if args.replication_factor is not None and \
            not 1 <= args.replication_factor <= MAX_REPLICATION_FACTOR:
        raise ToolError(f"The replication factor must be between 1 and "
                        f"{MAX_REPLICATION_FACTOR} inclusive")
    if args.partitions is not None and args.partitions < 1:
        raise ToolError("The partitions must be greater than 0")
    if "." in args.topic and "_" in args.topic:
        print(COLLISION_WARNING, file=sys.stderr)
    topic = NewTopic(args.topic, -1 if args.partitions is None else args.partitions,
                     -1 if args.replication_factor is None else args.replication_factor,
                     key_values(args.config, "--config"))
    try:
        admin.create_topics([topic])
    except TopicAlreadyExistsError:
        if args.if_not_exists:
            return
        raise
    print(f"Created topic {args.topic}.")


def delete(admin: Admin, args: argparse.Namespace) -> None:
    names = existing(admin, args)
    internal = [name for name, topic in admin.describe_topics(names).items() if topic.is_internal]
    if internal:
        raise ToolError(f"Topic {internal[0]} is a kafka internal topic and is not allowed to be "
                        f"marked for deletion.")
    if names:
        admin.delete_topics(names)


def matching(admin: Admin, pattern: str | None, exclude_internal: bool) -> list[str]:
    """The topics ``pattern`` (an include list; None: all) matches, sorted."""
    topics = admin.list_topics(include_internal=not exclude_internal)
    if pattern is None:
        return sorted(topics)
    allowed = include_list(pattern)
    return sorted(name for name in topics if allowed.fullmatch(name))


def existing(admin: Admin, args: argparse.Namespace) -> list[str]:
    """The topics ``--topic`` matches; none is an error unless ``--if-exists``."""
    names = matching(admin, args.topic, args.exclude_internal)
    if not names and args.topic and not args.if_exists:
        raise ToolError(f"Topic '{args.topic}' does not exist as expected")
    return names


# -- describing -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class PartitionReport:
    """What ``--describe`` knows of one partition, for its report filters."""

    partition: PartitionMetadata
    live_brokers: frozenset[int]
    min_isr: int

    @property
    def has_leader(self) -> bool:
        return self.partition.leader >= 0

    def under_replicated(self) -> bool:
        return len(self.partition.replicas) - len(self.partition.isr) > 0

    def unavailable(self) -> bool:
        return not self.has_leader or self.partition.leader not in self.live_brokers

    def under_min_isr(self) -> bool:
        return not self.has_leader or len(self.partition.isr) < self.min_isr

    def at_min_isr(self) -> bool:
        return len(self.partition.isr) == self.min_isr


def describe(admin: Admin, args: argparse.Namespace) -> None:
    names = existing(admin, args)
    if not names:
        return
    topics = admin.describe_topics(names)
    configs = admin.configs.describe([ConfigResource.topic(name) for name in names])
    live = frozenset(admin.cluster.metadata.brokers())
    reports = [r for r in REPORTS if getattr(args, r)]
    reassigning = _reassignments(admin, names)
    for name in names:
        entries = configs[ConfigResource.topic(name)]
        overridden = [e for e in entries if not e.is_default]
        if not reports and (not args.topics_with_overrides or overridden):
            print(topic_line(topics[name], overridden))
        if args.topics_with_overrides:
            continue
        min_isr = int(_value(entries, "min.insync.replicas") or DEFAULT_MIN_ISR)
        for number in sorted(topics[name].partitions):
            partition = topics[name].partitions[number]
            report = PartitionReport(partition, live, min_isr)
            if not reports or any(getattr(report, REPORTS[r])() for r in reports):
                print(partition_line(name, partition,
                                     reassigning.get(TopicPartition(name, number))))


def topic_line(topic: TopicMetadata, overridden: list[ConfigEntry]) -> str:
    first = topic.partitions[min(topic.partitions)] if topic.partitions else None
    fields = [f"Topic: {topic.name}"]
    if topic.topic_id != ZERO_UUID:
        fields.append(f"TopicId: {encode_uuid(topic.topic_id)}")
    fields += [f"PartitionCount: {topic.partition_count}",
               f"ReplicationFactor: {len(first.replicas) if first else 0}",
               "Configs: " + ",".join(f"{e.name}={e.value}" for e in overridden)]
    return "\t".join(fields)


def partition_line(topic: str, partition: PartitionMetadata,
                   reassignment: PartitionReassignment | None = None) -> str:
    leader = partition.leader if partition.leader >= 0 else "none"
    line = (f"\tTopic: {topic}\tPartition: {partition.partition}\tLeader: {leader}"
            f"\tReplicas: {','.join(map(str, partition.replicas))}"
            f"\tIsr: {','.join(map(str, partition.isr))}")
    if partition.offline_replicas:
        line += f"\tOffline: {','.join(map(str, partition.offline_replicas))}"
    if reassignment is not None:
        line += (f"\tAdding Replicas: {','.join(map(str, reassignment.adding_replicas))}"
                 f"\tRemoving Replicas: {','.join(map(str, reassignment.removing_replicas))}")
    return line


def _reassignments(admin: Admin, names: list[str]
                   ) -> dict[TopicPartition, PartitionReassignment]:
    """The reassignments in progress among ``names``' partitions; none when the cluster cannot
    tell (Kafka's tool, too, describes topics without them then)."""
    try:
        return {tp: r for tp, r in list_partition_reassignments(admin.cluster).items()
                if tp.topic in names}
    except KafkaClientError:
        return {}


def _value(entries: list[ConfigEntry], name: str) -> str | None:
    return next((e.value for e in entries if e.name == name), None)
