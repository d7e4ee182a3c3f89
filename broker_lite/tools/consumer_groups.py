"""``broker-lite consumer-groups``: list, describe, delete consumer groups and reset their
offsets, as ``kafka-consumer-groups.sh``.

    broker-lite consumer-groups --bootstrap-server 127.0.0.1:9092 --list [--state [STATES]] \
        [--type [TYPES]]
    broker-lite consumer-groups --bootstrap-server 127.0.0.1:9092 --describe --group G \\
        [--members [--verbose] | --state | --offsets]
    broker-lite consumer-groups --bootstrap-server 127.0.0.1:9092 --reset-offsets --group G \\
        --topic events[:0,1] --to-earliest [--dry-run | --execute]
    broker-lite consumer-groups --bootstrap-server 127.0.0.1:9092 --delete --group G

Exactly one action: ``--list``, ``--describe``, ``--delete`` or ``--reset-offsets``. ``--group``
may be repeated; ``--all-groups`` means every consumer group (groups of Kafka consumers, and
groups that only hold committed offsets).

Output (stdout), stable for scripts. Tables have Kafka's columns, each left-aligned and padded
to a width (at least 15 for names and ids, wider when a value is longer), one space apart;
several groups give several tables separated by a blank line. ``-`` is an unknown value.

``--list``
    The group ids, sorted, one a line: classic groups and the consumer groups of KIP-848. With
    ``--state``: a table ``GROUP STATE``, optionally only groups in the states given
    (comma-separated: Stable, Empty, PreparingRebalance, CompletingRebalance, Dead, and
    consumer groups' Assigning and Reconciling). With ``--type``: a ``TYPE`` column
    (``classic`` or ``consumer``) too, optionally only groups of the types given.
``--describe`` (``--offsets``, the default)
    ``GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID``: one
    row per partition assigned to a member (members with the most partitions first, partitions
    sorted), then one per partition with a committed offset but no member (consumer columns
    ``-``). CURRENT-OFFSET is the committed offset, LOG-END-OFFSET the high watermark, LAG
    their difference.
``--describe --members``
    ``GROUP CONSUMER-ID HOST CLIENT-ID #PARTITIONS`` (``GROUP-INSTANCE-ID`` after CONSUMER-ID
    when a member is static; ``ASSIGNMENT`` last with ``--verbose``, as ``topic(0,1), t2(0)``).
``--describe --state``
    ``GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS``, the coordinator as
    ``host:port  (id)``.
``--reset-offsets``
    ``GROUP TOPIC PARTITION NEW-OFFSET``, sorted. Nothing is changed without ``--execute``
    (``--dry-run``, the default, only prints the plan; without either a warning on stderr
    says so). Scenarios: ``--to-earliest``, ``--to-latest``, ``--to-current``, ``--to-offset
    N``, ``--shift-by N`` (from the committed offset), ``--to-datetime
    YYYY-MM-DDTHH:mm:SS.sss[zone]`` (local time without a zone), ``--by-duration PnDTnHnMnS``
    (that long ago). Offsets out of the log's range are moved to its start or end, with a
    warning on stderr. Scope: ``--topic T`` (every partition), ``--topic T:0,2`` (those),
    repeatable, or ``--all-topics`` (every partition with a committed offset).
``--delete``
    ``Deletion of requested consumer groups ('G') was successful.``

On stderr, as Kafka: ``Consumer group 'G' has no active members.`` for an empty group, and a
warning while it is rebalancing. Errors (exit status 1): a group that does not exist
(``--describe``, ``--delete``), resetting a group with active members (``Assignments can only
be reset if the group 'G' is inactive, but the current state is Stable.``), an unknown topic or
partition, a broker that cannot be reached within ``--timeout-ms``. Groups are handled one after
another, and the ones that can be are, before the command fails. Bad option combinations are
usage errors (exit status 2).
"""

import argparse
import re
import sys
from dataclasses import dataclass
from datetime import datetime

from broker_lite.client import EARLIEST, LATEST, KafkaClient, TopicPartition
from broker_lite.client.admin.groups import DEAD, GroupDescription, MemberDescription
from broker_lite.common.vocabulary import now_ms

from .admin_support import MISSING, client_errors, column_width, table
from .common import ToolError, add_bootstrap_server, kafka_client

NAME = "consumer-groups"
HELP = "list, describe and delete consumer groups, reset their offsets (kafka-consumer-groups)"

ACTIONS = ("list", "describe", "delete", "reset_offsets")
SCENARIOS = ("to_earliest", "to_latest", "to_current", "to_offset", "shift_by", "to_datetime",
             "by_duration")
GROUP_STATES = ("PreparingRebalance", "CompletingRebalance", "Stable", "Dead", "Empty",
                "Assigning", "Reconciling")  # the last two: consumer groups (KIP-848)
GROUP_TYPES = ("classic", "consumer")
INACTIVE = ("Empty", DEAD)  # the states in which offsets may be reset
REBALANCING = ("PreparingRebalance", "CompletingRebalance")
DRY_RUN_WARNING = ("WARN: No action will be performed as the --execute option is missing. Add "
                   "--execute to reset the offsets, or --dry-run to say that only the plan is "
                   "wanted.")
_DURATION = re.compile(r"^([-+]?)P(?:([-+]?\d+)D)?(?:T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?"
                       r"(?:([-+]?\d+)(?:[.,](\d{1,9}))?S)?)?$", re.IGNORECASE)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)
    actions = parser.add_mutually_exclusive_group(required=True)
    actions.add_argument("--list", action="store_true", help="list all consumer groups")
    actions.add_argument("--describe", action="store_true",
                         help="describe groups: offsets and lag (default), members or state")
    actions.add_argument("--delete", action="store_true", help="delete groups and their offsets")
    actions.add_argument("--reset-offsets", action="store_true",
                         help="reset the committed offsets of inactive groups")
    parser.add_argument("--group", action="append", default=[], help="a group id (repeatable)")
    parser.add_argument("--all-groups", action="store_true", help="every consumer group")
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC[:P1,P2]",
                        help="--reset-offsets: a topic, or some of its partitions (repeatable)")
    parser.add_argument("--all-topics", action="store_true",
                        help="--reset-offsets: every partition the group has an offset for")
    parser.add_argument("--members", action="store_true", help="--describe: the members")
    parser.add_argument("--offsets", action="store_true",
                        help="--describe: offsets and lag (the default)")
    parser.add_argument("--state", nargs="?", const="", metavar="STATES",
                        help="--describe: the group's state; --list: show states, only those "
                             "given (comma-separated) if any")
    parser.add_argument("--type", nargs="?", const="", metavar="TYPES",
                        help="--list: show group types (classic, consumer), only those given "
                             "(comma-separated) if any")
    parser.add_argument("--verbose", action="store_true",
                        help="--describe --members: each member's partitions too")
    scenarios = parser.add_mutually_exclusive_group()
    scenarios.add_argument("--to-earliest", action="store_true", help="to the log start")
    scenarios.add_argument("--to-latest", action="store_true", help="to the log end")
    scenarios.add_argument("--to-current", action="store_true",
                           help="to the committed offset (the log end where there is none)")
    scenarios.add_argument("--to-offset", type=int, metavar="N", help="to offset N")
    scenarios.add_argument("--shift-by", type=int, metavar="N",
                           help="by N from the committed offset (negative: back)")
    scenarios.add_argument("--to-datetime", metavar="YYYY-MM-DDTHH:mm:SS.sss",
                           help="to the first record at or after this time")
    scenarios.add_argument("--by-duration", metavar="PnDTnHnMnS",
                           help="to the first record at or after this long ago")
    run_mode = parser.add_mutually_exclusive_group()
    run_mode.add_argument("--dry-run", action="store_true",
                          help="--reset-offsets: only print the plan (the default)")
    run_mode.add_argument("--execute", action="store_true",
                          help="--reset-offsets: commit the new offsets")
    parser.set_defaults(usage_error=parser.error)


def check_usage(args: argparse.Namespace) -> None:
    """Which options go with which action (exit status 2 otherwise)."""
    action = next(a for a in ACTIONS if getattr(args, a))
    option = "--" + action.replace("_", "-")
    if action != "list" and not (args.group or args.all_groups):
        args.usage_error(f"{option} needs --group or --all-groups")
    if args.group and args.all_groups:
        args.usage_error("--group and --all-groups do not go together")
    if action == "list" and (args.group or args.all_groups):
        args.usage_error("--list takes no --group or --all-groups")
    describe_views = [o for o in ("members", "offsets") if getattr(args, o)]
    if action == "describe":
        if len(describe_views) + (args.state is not None) > 1:
            args.usage_error("--describe takes at most one of --members, --offsets, --state")
        if args.state:
            args.usage_error("--describe --state takes no state list")
    elif describe_views or args.verbose:
        args.usage_error("--members, --offsets and --verbose go only with --describe")
    if args.state is not None and action not in ("list", "describe"):
        args.usage_error("--state goes only with --list or --describe")
    if args.type is not None and action != "list":
        args.usage_error("--type goes only with --list")
    scenario = [s for s in SCENARIOS if getattr(args, s) not in (None, False)]
    reset_only = scenario or args.topic or args.all_topics or args.dry_run or args.execute
    if action != "reset_offsets":
        if reset_only:
            args.usage_error("--topic, --all-topics, the reset scenarios, --dry-run and "
                             "--execute go only with --reset-offsets")
        return
    if not scenario:
        args.usage_error("--reset-offsets needs one of --to-earliest, --to-latest, --to-current,"
                         " --to-offset, --shift-by, --to-datetime, --by-duration")
    if bool(args.topic) == args.all_topics:
        args.usage_error("--reset-offsets needs one scope: --topic or --all-topics")


def run(args: argparse.Namespace) -> int:
    check_usage(args)
    timestamp = reset_timestamp(args) if args.reset_offsets else None
    with kafka_client(args) as client, client_errors():
        if args.list:
            list_groups(client, args)
            return 0
        groups = consumer_groups(client) if args.all_groups else list(dict.fromkeys(args.group))
        if args.describe:
            failures = describe(client, groups, args)
        elif args.delete:
            failures = delete(client, groups)
        else:
            failures = reset_offsets(client, groups, args, timestamp)
    if failures:
        raise ToolError("\n".join(failures))
    return 0


def consumer_groups(client: KafkaClient) -> list[str]:
    return [g.group_id for g in client.admin.groups.list_groups() if g.is_consumer_group]


def _print_table(rows: list[tuple], widths: list[int], first: list[bool]) -> None:
    """Print a table; a blank line before every table but the first."""
    if not first[0]:
        print()
    first[0] = False
    print(table(rows, widths))


# -- --list ---------------------------------------------------------------------------------------


def parse_states(text: str) -> list[str]:
    """A comma-separated list of group states, spelled as Kafka does (any case accepted).

    >>> parse_states("stable, EMPTY")
    ['Stable', 'Empty']
    """
    canonical = {state.lower(): state for state in GROUP_STATES}
    states = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in states if s.lower() not in canonical]
    if unknown:
        raise ValueError(f"Invalid state list '{text}'. Valid states are: "
                         f"{', '.join(GROUP_STATES)}")
    return [canonical[s.lower()] for s in states]


def list_groups(client: KafkaClient, args: argparse.Namespace) -> None:
    states = []
    if args.state:
        try:
            states = parse_states(args.state)
        except ValueError as exc:
            args.usage_error(str(exc))
    types = []
    if args.type:
        types = [t.strip().lower() for t in args.type.split(",") if t.strip()]
        unknown = [t for t in types if t not in GROUP_TYPES]
        if unknown:
            args.usage_error(f"Invalid types list '{args.type}'. Valid types are: "
                             f"{', '.join(GROUP_TYPES)}")
    listed = [g for g in client.admin.groups.list_groups(states) if g.is_consumer_group
              and (not types or (g.group_type or "classic") in types)]
    if args.state is None and args.type is None:
        for group in listed:
            print(group.group_id)
        return
    header = ["GROUP"] + (["TYPE"] if args.type is not None else []) + \
        (["STATE"] if args.state is not None else [])
    rows = [tuple(header), *((g.group_id,
                              *([g.group_type or MISSING] if args.type is not None else []),
                              *([g.state or MISSING] if args.state is not None else []))
                             for g in listed)]
    widths = [column_width([g.group_id for g in listed]) + 10] + \
        ([10] if args.type is not None and args.state is not None else [])
    print(table(rows, widths))


# -- --describe -----------------------------------------------------------------------------------


@dataclass(frozen=True)
class OffsetRow:
    """One row of ``--describe``: a partition of the group, its offsets, who consumes it."""

    group: str
    tp: TopicPartition
    current: int | None
    log_end: int | None
    member: MemberDescription | None

    @property
    def lag(self) -> int | None:
        if self.current is None or self.log_end is None:
            return None
        return self.log_end - self.current

    def cells(self) -> tuple:
        member = self.member
        return (self.group, self.tp.topic, self.tp.partition, _text(self.current),
                _text(self.log_end), _text(self.lag),
                member.member_id if member else MISSING, member.client_host if member else MISSING,
                member.client_id if member else MISSING)


def _text(value: int | None) -> str:
    return MISSING if value is None else str(value)


def describe(client: KafkaClient, groups: list[str], args: argparse.Namespace) -> list[str]:
    failures, first = [], [True]
    descriptions = client.admin.groups.describe_groups(groups)
    for group_id in sorted(descriptions):
        group = descriptions[group_id]
        if not group.exists:
            failures.append(f"Consumer group '{group_id}' does not exist.")
            continue
        if args.state is not None:
            _note_state(group)
            _print_table(*state_table(group), first)
            continue
        if args.members:
            rows = member_rows(group, args.verbose)
            _note_state(group)
            if group.members:
                _print_table(*rows, first)
            continue
        rows = offset_rows(client, group)
        _note_state(group)
        if rows:
            _print_table(*offsets_table(rows), first)
    return failures


def _note_state(group: GroupDescription) -> None:
    if group.state == "Empty":
        print(f"Consumer group '{group.group_id}' has no active members.", file=sys.stderr)
    elif group.state in REBALANCING:
        print(f"Warning: Consumer group '{group.group_id}' is rebalancing.", file=sys.stderr)


def offset_rows(client: KafkaClient, group: GroupDescription) -> list[OffsetRow]:
    committed = client.committed(group.group_id, None)
    members = sorted((m for m in group.members if m.assignment),
                     key=lambda m: len(m.assignment), reverse=True)
    owners: list[tuple[TopicPartition, MemberDescription | None]] = []
    for member in members:
        owners += [(tp, member) for tp in sorted(member.assignment)]
    assigned = {tp for tp, _ in owners}
    owners += [(tp, None) for tp in sorted(committed) if tp not in assigned]
    ends = log_end_offsets(client, [tp for tp, _ in owners])
    return [OffsetRow(group.group_id, tp, committed.get(tp), ends.get(tp), member)
            for tp, member in owners]


def log_end_offsets(client: KafkaClient, tps: list[TopicPartition]) -> dict[TopicPartition, int]:
    """The high watermarks of those of ``tps`` that exist (offsets may outlive their topic)."""
    counts = client.topics(include_internal=True)
    existing = [tp for tp in tps if tp.partition < counts.get(tp.topic, 0)]
    found = client.list_offsets({tp: LATEST for tp in existing}, "read_uncommitted")
    return {tp: offset for tp, offset in found.items() if offset is not None}


def offsets_table(rows: list[OffsetRow]) -> tuple[list[tuple], list[int]]:
    cells = [row.cells() for row in rows]
    widths = [column_width([c[0] for c in cells]), column_width([c[1] for c in cells]), 10, 15,
              15, 15, column_width([c[6] for c in cells]), column_width([c[7] for c in cells])]
    header = ("GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
              "CONSUMER-ID", "HOST", "CLIENT-ID")
    return [header, *cells], widths


def assignment_text(assignment: tuple[TopicPartition, ...] | None) -> str:
    """A member's partitions as Kafka prints them: ``topic(0,1), t2(0)``, or ``-``.

    >>> assignment_text((TopicPartition("b", 0), TopicPartition("a", 1), TopicPartition("a", 0)))
    'a(0,1), b(0)'
    """
    if not assignment:
        return MISSING
    by_topic: dict[str, list[int]] = {}
    for tp in assignment:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ", ".join(f"{topic}({','.join(map(str, sorted(parts)))})"
                     for topic, parts in sorted(by_topic.items()))


def member_rows(group: GroupDescription, verbose: bool) -> tuple[list[tuple], list[int]]:
    members = group.members
    static = any(m.group_instance_id for m in members)
    header = ["GROUP", "CONSUMER-ID", *(["GROUP-INSTANCE-ID"] if static else []), "HOST",
              "CLIENT-ID", "#PARTITIONS", *(["ASSIGNMENT"] if verbose else [])]
    rows = []
    for m in members:
        rows.append((group.group_id, m.member_id,
                     *([m.group_instance_id or MISSING] if static else []), m.client_host,
                     m.client_id, len(m.assignment or ()),
                     *([assignment_text(m.assignment)] if verbose else [])))
    widths = [column_width([group.group_id]), column_width([m.member_id for m in members]),
              *([column_width([m.group_instance_id or "" for m in members], 17)]
                if static else []),
              column_width([m.client_host for m in members]),
              column_width([m.client_id for m in members]), 15]
    return [tuple(header), *rows], widths


def state_table(group: GroupDescription) -> tuple[list[tuple], list[int]]:
    c = group.coordinator
    coordinator = f"{c.host}:{c.port}  ({c.node_id})"
    header = ("GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS")
    row = (group.group_id, coordinator, group.protocol or MISSING, group.state,
           len(group.members))
    return [header, row], [column_width([group.group_id]), column_width([coordinator], 25), 20,
                           20]


# -- --delete -------------------------------------------------------------------------------------


def delete(client: KafkaClient, groups: list[str]) -> list[str]:
    results = client.admin.groups.delete_groups(groups)
    deleted = ", ".join(f"'{g}'" for g, error in results.items() if error is None)
    failed = {g: error for g, error in results.items() if error is not None}
    if not failed:
        print(f"Deletion of requested consumer groups ({deleted}) was successful.")
        return []
    if deleted:
        print(f"These consumer groups were deleted successfully: {deleted}")
    return ["Deletion of some consumer groups failed:",
            *(f"* Group '{g}' could not be deleted due to: {error}"
              for g, error in failed.items())]


# -- --reset-offsets ------------------------------------------------------------------------------


def parse_datetime(text: str) -> int:
    """Kafka's ``--to-datetime`` format (``YYYY-MM-DDTHH:mm:SS.sss``, optionally with a zone:
    ``Z``, ``+01:00``; local time without one) in ms since the epoch.

    >>> parse_datetime("2024-01-02T03:04:05.678Z")
    1704164645678
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError:
        raise ValueError(f"Error parsing timestamp '{text}': expected "
                         f"YYYY-MM-DDTHH:mm:SS.sss, optionally with a zone (Z, +01:00)") from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # the local time zone, as Kafka's tool assumes
    return round(moment.timestamp() * 1000)


def parse_duration(text: str) -> int:
    """An ISO-8601 duration (``PnDTnHnMnS``, as Java's ``Duration.parse``) in ms.

    >>> parse_duration("P1DT2H3M4.5S")
    93784500
    """
    match = _DURATION.match(text.strip())
    if match is None or not any(match.group(i) for i in (2, 3, 4, 5)):
        raise ValueError(f"Error parsing duration '{text}': expected PnDTnHnMnS")
    sign, days, hours, minutes, seconds, fraction = match.groups()
    ms = (int(days or 0) * 86_400_000 + int(hours or 0) * 3_600_000 + int(minutes or 0) * 60_000
          + round(float(f"{seconds or 0}.{fraction or 0}") * 1000))
    return -ms if sign == "-" else ms


def reset_timestamp(args: argparse.Namespace) -> int | None:
    """The time ``--to-datetime`` / ``--by-duration`` name, in ms (usage errors when bad)."""
    try:
        if args.to_datetime is not None:
            return parse_datetime(args.to_datetime)
        if args.by_duration is not None:
            return now_ms() - parse_duration(args.by_duration)
    except ValueError as exc:
        args.usage_error(str(exc))
    return None


def parse_topic_arg(text: str) -> tuple[str, list[int] | None]:
    """``topic`` or ``topic:0,1`` as (topic, partitions or None for all).

    >>> parse_topic_arg("events:0,2")
    ('events', [0, 2])
    """
    if ":" not in text:
        return text, None
    topic, _, partitions = text.partition(":")
    if not topic or ":" in partitions:
        raise ValueError(f"Invalid topic arg '{text}', expected topic name and partitions")
    numbers = []
    for part in partitions.split(","):
        if not part.strip().isdigit():
            raise ValueError(f"Invalid partition '{part}' specified in topic arg '{text}'")
        numbers.append(int(part))
    return topic, numbers


def partitions_to_reset(client: KafkaClient, group: str, args: argparse.Namespace
                        ) -> list[TopicPartition]:
    if args.all_topics:
        wanted = sorted(client.committed(group, None))
    else:
        wanted = []
        for text in args.topic:
            try:
                topic, numbers = parse_topic_arg(text)
            except ValueError as exc:
                args.usage_error(str(exc))
            if numbers is None:
                numbers = client.partitions(topic)  # an unknown topic: an error naming it
            wanted += [TopicPartition(topic, n) for n in numbers]
    topics = client.admin.describe_topics({tp.topic for tp in wanted})
    missing = [tp for tp in wanted if tp.partition not in topics[tp.topic].partitions]
    if missing:
        names = ",".join(map(str, missing))
        raise ToolError(f'The partitions "{names}" do not exist')
    return list(dict.fromkeys(wanted))


def new_offsets(client: KafkaClient, group: str, tps: list[TopicPartition],
                args: argparse.Namespace, timestamp: int | None) -> dict[TopicPartition, int]:
    """The offset each partition is reset to, by the scenario of ``args``."""
    if args.to_earliest or args.to_latest:
        spec = EARLIEST if args.to_earliest else LATEST
        return client.list_offsets({tp: spec for tp in tps}, "read_uncommitted")
    if timestamp is not None:
        found = client.list_offsets({tp: timestamp for tp in tps}, "read_uncommitted")
        empty = [tp for tp, offset in found.items() if offset is None]
        for tp in empty:
            print(f"Warn: Partition {tp.partition} from topic {tp.topic} is empty. Falling back "
                  f"to latest known offset.", file=sys.stderr)
        latest = client.list_offsets({tp: LATEST for tp in empty}, "read_uncommitted")
        return {tp: found[tp] if found[tp] is not None else latest[tp] for tp in tps}
    committed = client.committed(group, tps)
    if args.to_current:
        latest = client.list_offsets({tp: LATEST for tp in tps if committed.get(tp) is None},
                                     "read_uncommitted")
        return {tp: committed[tp] if committed.get(tp) is not None else latest[tp] for tp in tps}
    if args.to_offset is not None:
        return within_log(client, {tp: args.to_offset for tp in tps})
    for tp in tps:
        if committed.get(tp) is None:
            raise ToolError(f"Cannot shift offset for partition {tp.topic}-{tp.partition} since "
                            f"there is no current committed offset")
    return within_log(client, {tp: committed[tp] + args.shift_by for tp in tps})


def within_log(client: KafkaClient, requested: dict[TopicPartition, int]
               ) -> dict[TopicPartition, int]:
    """Offsets moved into ``[log start, log end]``, with a warning for each one moved."""
    starts = client.list_offsets({tp: EARLIEST for tp in requested}, "read_uncommitted")
    ends = client.list_offsets({tp: LATEST for tp in requested}, "read_uncommitted")
    result = {}
    for tp, offset in requested.items():
        name = str(tp)
        if offset > ends[tp]:
            print(f"WARN: New offset ({offset}) is higher than latest offset for topic partition "
                  f"{name}. Value will be set to {ends[tp]}", file=sys.stderr)
            offset = ends[tp]
        elif offset < starts[tp]:
            print(f"WARN: New offset ({offset}) is lower than earliest offset for topic "
                  f"partition {name}. Value will be set to {starts[tp]}", file=sys.stderr)
            offset = starts[tp]
        result[tp] = offset
    return result


def reset_offsets(client: KafkaClient, groups: list[str], args: argparse.Namespace,
                  timestamp: int | None) -> list[str]:
    if not (args.dry_run or args.execute):
        print(DRY_RUN_WARNING, file=sys.stderr)
    failures, plan = [], {}
    for group_id, group in sorted(client.admin.groups.describe_groups(groups).items()):
        if group.state not in INACTIVE:
            failures.append(f"Assignments can only be reset if the group '{group_id}' is "
                            f"inactive, but the current state is {group.state}.")
            continue
        tps = partitions_to_reset(client, group_id, args)
        offsets = new_offsets(client, group_id, tps, args, timestamp)
        if args.execute:
            client.commit(group_id, offsets)
        plan[group_id] = offsets
    rows = [(g, tp.topic, tp.partition, offset)
            for g, offsets in plan.items() for tp, offset in sorted(offsets.items())]
    if rows:
        widths = [column_width([r[0] for r in rows]), column_width([r[1] for r in rows]), 10]
        print(table([("GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"), *rows], widths))
    return failures
