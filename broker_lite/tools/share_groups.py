"""``broker-lite share-groups``: describe share groups (KIP-932), reset and delete their offsets,
as Kafka 4.2's ``kafka-share-groups.sh``.

    broker-lite share-groups --bootstrap-server 127.0.0.1:9092 --describe --group G \\
        [--members [--verbose] | --state | --offsets]
    broker-lite share-groups --bootstrap-server 127.0.0.1:9092 --reset-offsets --group G \\
        --topic events --to-earliest|--to-latest|--to-offset N [--dry-run | --execute]
    broker-lite share-groups --bootstrap-server 127.0.0.1:9092 --delete-offsets --group G \\
        --topic events

Exactly one action. Tables have Kafka's columns, left-aligned, padded to at least 15:

``--describe`` (``--offsets``, the default)
    ``GROUP TOPIC PARTITION START-OFFSET``: the share-partition start offset of each partition
    of the topics the group's members subscribe to (``-`` when not yet initialized).
``--describe --members``
    ``GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS`` (``ASSIGNMENT`` last with ``--verbose``,
    as ``topic:0,1``).
``--describe --state``
    ``GROUP COORDINATOR (ID) STATE #MEMBERS``, the coordinator as ``host:port  (id)``.
``--reset-offsets``
    ``GROUP TOPIC PARTITION NEW-OFFSET``. Nothing is changed without ``--execute``. The group
    must have no member (Kafka's refusal otherwise: exit status 1).
``--delete-offsets``
    ``GROUP TOPIC STATUS``, the state of each topic deleted.

Errors (exit status 1): a group that does not exist, a group with members for
``--reset-offsets`` and ``--delete-offsets``, a broker that cannot be reached. Not done:
``--list`` (ListGroups by group type is KIP-848's half of the group protocol work) and
``--delete``.
"""

import argparse
import sys

from broker_lite.client import EARLIEST, LATEST, TopicPartition
from broker_lite.client.admin.share_groups import ShareGroupsAdmin

from .admin_support import MISSING, client_errors, column_width, table
from .common import ToolError, add_bootstrap_server, kafka_client

NAME = "share-groups"
HELP = "describe share groups, reset and delete their offsets (kafka-share-groups)"

ACTIONS = ("describe", "reset_offsets", "delete_offsets")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    actions = parser.add_mutually_exclusive_group(required=True)
    actions.add_argument("--describe", action="store_true",
                         help="describe a group: start offsets (default), members or state")
    actions.add_argument("--reset-offsets", action="store_true",
                         help="start the group's share-partitions again elsewhere")
    actions.add_argument("--delete-offsets", action="store_true",
                         help="forget the group's state of some topics")
    parser.add_argument("--group", required=True, help="the share group")
    parser.add_argument("--topic", action="append", default=[], help="a topic (repeatable)")
    parser.add_argument("--members", action="store_true", help="--describe: the members")
    parser.add_argument("--offsets", action="store_true",
                        help="--describe: the start offsets (the default)")
    parser.add_argument("--state", action="store_true", help="--describe: the group's state")
    parser.add_argument("--verbose", action="store_true",
                        help="--describe --members: each member's partitions too")
    scenarios = parser.add_mutually_exclusive_group()
    scenarios.add_argument("--to-earliest", action="store_true", help="to the log start")
    scenarios.add_argument("--to-latest", action="store_true", help="to the log end")
    scenarios.add_argument("--to-offset", type=int, metavar="N", help="to offset N")
    run_mode = parser.add_mutually_exclusive_group()
    run_mode.add_argument("--dry-run", action="store_true",
                          help="--reset-offsets: only print the plan (the default)")
    run_mode.add_argument("--execute", action="store_true",
                          help="--reset-offsets: change the offsets")
    parser.set_defaults(usage_error=parser.error)


def run(args: argparse.Namespace) -> int:
    action = next(a for a in ACTIONS if getattr(args, a))
    if action != "describe" and not args.topic:
        args.usage_error(f"--{action.replace('_', '-')} needs --topic")
    if action == "reset_offsets" and not (args.to_earliest or args.to_latest or
                                          args.to_offset is not None):
        args.usage_error("--reset-offsets needs --to-earliest, --to-latest or --to-offset")
    if sum((args.members, args.offsets, args.state)) > 1:
        args.usage_error("--members, --offsets and --state do not go together")
    with kafka_client(args) as client, client_errors():
        admin = ShareGroupsAdmin(client.cluster)
        if action == "describe":
            print(_describe(admin, client, args))
        elif action == "reset_offsets":
            print(_reset(admin, client, args))
        else:
            admin.delete_offsets(args.group, args.topic)
            rows = [["GROUP", "TOPIC", "STATUS"]] + [[args.group, t, "Successful"]
                                                     for t in args.topic]
            print(table(rows, [column_width([args.group]), column_width(args.topic), 0]))
    return 0


def _describe(admin: ShareGroupsAdmin, client, args: argparse.Namespace) -> str:
    group = admin.describe(args.group)
    if group.state == "Dead":
        raise ToolError(f"Share group '{args.group}' does not exist.")
    if args.state:
        coordinator_id, host, port = group.coordinator
        rows = [["GROUP", "COORDINATOR (ID)", "STATE", "#MEMBERS"],
                [args.group, f"{host}:{port}  ({coordinator_id})", group.state,
                 len(group.members)]]
        return table(rows, [column_width([args.group]), 25, 15, 0])
    if args.members:
        header = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
        if args.verbose:
            header.append("ASSIGNMENT")
        rows = [header]
        for member in group.members:
            row = [args.group, member.member_id, member.client_host or MISSING,
                   member.client_id or MISSING, len(member.assignment)]
            if args.verbose:
                by_topic: dict[str, list[int]] = {}
                for topic, partition in sorted(member.assignment):
                    by_topic.setdefault(topic, []).append(partition)
                row.append(", ".join(f"{t}:{','.join(map(str, p))}" for t, p in by_topic.items())
                           or MISSING)
            rows.append(row)
        if not group.members:
            print(f"Share group '{args.group}' has no active members.", file=sys.stderr)
        return table(rows, [column_width([args.group]),
                            column_width([m.member_id for m in group.members]), 15, 15,
                            12, 0][:len(header)])
    topics = {t: client.partitions(t) for t in args.topic} if args.topic else None
    offsets = admin.offsets(args.group, topics)
    rows = [["GROUP", "TOPIC", "PARTITION", "START-OFFSET"]] + [
        [args.group, o.topic, o.partition, o.start_offset if o.start_offset >= 0 else MISSING]
        for o in offsets]
    return table(rows, [column_width([args.group]), column_width([o.topic for o in offsets]),
                        10, 0])


def _reset(admin: ShareGroupsAdmin, client, args: argparse.Namespace) -> str:
    plan: dict[tuple[str, int], int] = {}
    for topic in args.topic:
        partitions = [TopicPartition(topic, p) for p in client.partitions(topic)]
        if args.to_offset is not None:
            plan.update({(tp.topic, tp.partition): args.to_offset for tp in partitions})
        else:
            spec = EARLIEST if args.to_earliest else LATEST
            found = client.list_offsets(dict.fromkeys(partitions, spec))
            plan.update({(tp.topic, tp.partition): offset for tp, offset in found.items()
                         if offset is not None})
    if args.execute:
        admin.alter_offsets(args.group, plan)
    else:
        print("WARN: No action will be performed as the --execute option is missing.",
              file=sys.stderr)
    rows = [["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"]] + [
        [args.group, topic, partition, offset] for (topic, partition), offset in sorted(
            plan.items())]
    return table(rows, [column_width([args.group]), column_width([t for t, _ in plan]), 10, 0])
