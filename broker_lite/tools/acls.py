"""``broker-lite acls``: add, remove and list ACLs, as ``kafka-acls.sh --bootstrap-server``.

    broker-lite acls --bootstrap-server 127.0.0.1:9092 --add --allow-principal User:alice \\
        --operation Read --operation Describe --topic events
    broker-lite acls --bootstrap-server 127.0.0.1:9092 --add --allow-principal User:etl \\
        --producer --topic etl- --resource-pattern-type prefixed --transactional-id etl- \\
        --idempotent
    broker-lite acls --bootstrap-server 127.0.0.1:9092 --add --allow-principal User:bob \\
        --consumer --topic events --group dashboards
    broker-lite acls --bootstrap-server 127.0.0.1:9092 --list [--topic events] \\
        [--resource-pattern-type match] [--principal User:alice]
    broker-lite acls --bootstrap-server 127.0.0.1:9092 --remove --topic events --force

Resources: ``--topic``, ``--group``, ``--transactional-id`` (each repeatable, ``*`` for all),
``--cluster``; their pattern type is ``--resource-pattern-type`` (``literal`` by default,
``prefixed``; for ``--list`` and ``--remove`` also ``any`` and ``match``, which selects every
pattern that applies to the names given). Who: ``--allow-principal`` / ``--deny-principal``
(``Type:name``, ``User:*`` for everyone), from ``--allow-host`` / ``--deny-host`` (every host
by default). What: ``--operation`` (repeatable; ``All`` by default), or the convenience roles of
Kafka's tool: ``--producer`` (Write, Describe, Create on the topics; Write, Describe on the
transactional ids; with ``--idempotent``, IdempotentWrite on the cluster) and ``--consumer``
(Read, Describe on the topics; Read on the groups). ``--remove`` asks before each deletion
unless ``--force``; without principals it removes every ACL of the resources.
``--command-config`` is a properties file of client settings (TLS, SASL), as for Kafka's tool.

Output (stdout), Kafka's, each resource's entries sorted::

    Adding ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:
     \\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)

    Current ACLs for resource `ResourcePattern(resourceType=TOPIC, name=t, patternType=LITERAL)`:
     \\t(principal=User:alice, host=*, operation=READ, permissionType=ALLOW)

(each first line ends with a blank, each entry line but the first starts with a tab, the last
ends with a blank, and an empty line follows). ``--list --principal P`` prints ``ACLs for
principal `P``` and then P's entries per resource.

Errors (stderr, exit status 1): the broker's refusal (no authorizer: SECURITY_DISABLED; no Alter
or Describe on the cluster: CLUSTER_AUTHORIZATION_FAILED), a broker that cannot be reached.
Option combinations Kafka's tool refuses are usage errors (exit status 2), with its messages.
"""

import argparse
import sys
from collections.abc import Iterable

from broker_lite.client.admin.admin import Admin
from broker_lite.protocol.enums import AclOperation, AclPermissionType, PatternType, ResourceType
from broker_lite.security.acl import (
    CLUSTER_NAME,
    SUPPORTED_OPERATIONS,
    WILDCARD_HOST,
    AccessControlEntry,
    AccessControlEntryFilter,
    AclBinding,
    AclBindingFilter,
    InvalidAclError,
    ResourcePattern,
    ResourcePatternFilter,
    operation_name,
    parse_operation,
    parse_pattern_type,
    parse_principal,
)

from .admin_support import client_errors
from .common import add_bootstrap_server, kafka_client

NAME = "acls"
HELP = "add, remove and list ACLs (kafka-acls)"

CLUSTER_FILTER = ResourcePatternFilter(ResourceType.CLUSTER, CLUSTER_NAME, PatternType.LITERAL)
Op = AclOperation
PRODUCER_TOPIC_OPERATIONS = (Op.WRITE, Op.DESCRIBE, Op.CREATE)
PRODUCER_TRANSACTIONAL_ID_OPERATIONS = (Op.WRITE, Op.DESCRIBE)
CONSUMER_TOPIC_OPERATIONS = (Op.READ, Op.DESCRIBE)

Acls = dict[ResourcePatternFilter, set[AccessControlEntry]]


def _pattern_type(text: str) -> PatternType:
    pattern_type = parse_pattern_type(text)
    if pattern_type == PatternType.UNKNOWN:
        raise argparse.ArgumentTypeError(f"Unknown resource-pattern-type: {text}")
    return pattern_type


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser)  # and --command-config, --command-property
    for action, text in (("add", "add ACLs"), ("remove", "remove ACLs"),
                         ("list", "list ACLs (of the resources given, else every one)")):
        parser.add_argument(f"--{action}", action="store_true", help=text)
    parser.add_argument("--topic", action="append", default=[], metavar="TOPIC",
                        help="a topic ('*' for all; repeatable)")
    parser.add_argument("--group", action="append", default=[], metavar="GROUP",
                        help="a consumer group ('*' for all; repeatable)")
    parser.add_argument("--transactional-id", action="append", default=[], metavar="ID",
                        help="a transactional id ('*' for all; repeatable)")
    parser.add_argument("--cluster", action="store_true", help="the cluster")
    parser.add_argument("--resource-pattern-type", type=_pattern_type,
                        default=PatternType.LITERAL, metavar="literal|prefixed|any|match",
                        help="how the resource names match (default literal)")
    for verb in ("allow", "deny"):
        parser.add_argument(f"--{verb}-principal", action="append", default=[],
                            metavar="TYPE:NAME", help=f"a principal to {verb} (repeatable)")
        parser.add_argument(f"--{verb}-host", action="append", default=[], metavar="HOST",
                            help=f"a host to {verb} from (default every host; repeatable)")
    parser.add_argument("--operation", action="append", default=[], metavar="OPERATION",
                        help="Read, Write, Create, Delete, Alter, Describe, ClusterAction, "
                             "DescribeConfigs, AlterConfigs, IdempotentWrite, All (default All)")
    parser.add_argument("--producer", action="store_true",
                        help="the ACLs of a producer of the topics (and transactional ids)")
    parser.add_argument("--consumer", action="store_true",
                        help="the ACLs of a consumer of the topics in the groups")
    parser.add_argument("--idempotent", action="store_true",
                        help="with --producer: IdempotentWrite on the cluster")
    parser.add_argument("--principal", action="append", default=[], metavar="TYPE:NAME",
                        help="with --list: only the ACLs of this principal (repeatable)")
    parser.add_argument("--force", action="store_true", help="remove without asking")
    parser.set_defaults(usage_error=parser.error)


# -- options to resources and ACLs (Kafka's AclCommand) ----------------------------------------


def check_options(args: argparse.Namespace) -> None:
    """Kafka's ``AclCommandOptions.checkArgs``."""
    fail = args.usage_error
    if [args.add, args.remove, args.list].count(True) != 1:
        fail("Command must include exactly one action: --list, --add, --remove.")
    given = {name: bool(getattr(args, name.replace("-", "_")))
             for name in ("producer", "consumer", "allow-host", "allow-principal", "deny-host",
                          "deny-principal", "operation")}
    for option, invalid in (("list", ("producer", "consumer", "allow-host", "allow-principal",
                                      "deny-host", "deny-principal")),
                            ("producer", ("operation", "deny-principal", "deny-host")),
                            ("consumer", ("operation", "deny-principal", "deny-host"))):
        chosen = args.list if option == "list" else given[option]
        for other in invalid:
            if chosen and given[other]:
                fail(f'Option "[{option}]" can\'t be used with option "[{other}]"')
    if args.principal and not args.list:
        fail("The --principal option is only available if --list is set")
    if args.producer and not args.topic:
        fail("With --producer you must specify a --topic")
    if args.idempotent and not args.producer:
        fail("The --idempotent option is only available if --producer is set")
    if args.consumer and (not args.topic or not args.group or (
            not args.producer and (args.cluster or args.transactional_id))):
        fail("With --consumer you must specify a --topic and a --group and no --cluster or "
             "--transactional-id option should be specified.")


def resource_filters(args: argparse.Namespace, required: bool = True
                     ) -> list[ResourcePatternFilter]:
    pattern_type = args.resource_pattern_type
    filters = [ResourcePatternFilter(ResourceType.TOPIC, t.strip(), pattern_type)
               for t in args.topic]
    if pattern_type == PatternType.LITERAL and (args.cluster or args.idempotent):
        filters.append(CLUSTER_FILTER)
    filters += [ResourcePatternFilter(ResourceType.GROUP, g.strip(), pattern_type)
                for g in args.group]
    filters += [ResourcePatternFilter(ResourceType.TRANSACTIONAL_ID, t, pattern_type)
                for t in args.transactional_id]
    if not filters and required:
        args.usage_error("You must provide at least one resource: --topic <topic> or --cluster "
                         "or --group <group> or --delegation-token <Delegation Token ID>")
    return list(dict.fromkeys(filters))


def _principals(args: argparse.Namespace, texts: list[str]) -> list[str]:
    principals = []
    for text in texts:
        try:
            principal_type, name = parse_principal(text.strip())
        except InvalidAclError as exc:
            args.usage_error(str(exc))
        principals.append(f"{principal_type}:{name}")
    return principals


def entries(args: argparse.Namespace, operations: Iterable[AclOperation]
            ) -> set[AccessControlEntry]:
    """Each allowed (then denied) principal, from each of its hosts, for each operation."""
    found = set()
    for permission, principal_texts, host_texts in (
            (AclPermissionType.ALLOW, args.allow_principal, args.allow_host),
            (AclPermissionType.DENY, args.deny_principal, args.deny_host)):
        principals = _principals(args, principal_texts)
        hosts = [h.strip() for h in host_texts] or ([WILDCARD_HOST] if principals else [])
        found.update(AccessControlEntry(p, h, op, permission)
                     for p in principals for h in hosts for op in operations)
    return found


def acls_of(args: argparse.Namespace) -> Acls:
    """The ACLs the options name, by resource filter (Kafka's ``getResourceFilterToAcls``)."""
    filters = resource_filters(args)
    acls: Acls = {}
    if not args.producer and not args.consumer:
        operations = [parse_operation(o.strip()) for o in args.operation] or [Op.ALL]
        acls = {f: entries(args, operations) for f in filters}
    if args.producer:
        for f in filters:
            if f.resource_type == ResourceType.TOPIC:
                acls[f] = entries(args, PRODUCER_TOPIC_OPERATIONS)
            elif f.resource_type == ResourceType.TRANSACTIONAL_ID:
                acls[f] = entries(args, PRODUCER_TRANSACTIONAL_ID_OPERATIONS)
        if args.idempotent:
            acls[CLUSTER_FILTER] = entries(args, (Op.IDEMPOTENT_WRITE,))
    if args.consumer:
        for f in filters:
            if f.resource_type == ResourceType.TOPIC:
                acls[f] = acls.get(f, set()) | entries(args, CONSUMER_TOPIC_OPERATIONS)
            elif f.resource_type == ResourceType.GROUP:
                acls[f] = acls.get(f, set()) | entries(args, (Op.READ,))
    for f, found in acls.items():
        valid = {*SUPPORTED_OPERATIONS[f.resource_type], Op.ALL}
        if any(e.operation not in valid for e in found):
            args.usage_error(f"ResourceType {f.resource_type.name} only supports operations "
                             f"{', '.join(operation_name(o) for o in sorted(valid))}")
    return acls


# -- output -------------------------------------------------------------------------------------


def block(title: str, acls: Iterable) -> str:
    """Kafka's block: ``title: `` then ``' \\t' + entries joined by newline-tab + ' '``."""
    return f"{title}: \n {chr(10).join(chr(9) + str(a) for a in acls)} \n"


def print_resources(by_pattern: dict[ResourcePattern, set[AccessControlEntry]]) -> None:
    for pattern in sorted(by_pattern):
        print(block(f"Current ACLs for resource `{pattern}`", sorted(by_pattern[pattern])))


def confirmed(args: argparse.Namespace, question: str) -> bool:
    if args.force:
        return True
    print(question, flush=True)
    return sys.stdin.readline().strip().lower() == "y"


# -- the actions ----------------------------------------------------------------------------------


def _in_order(acls: Acls) -> list[tuple[ResourcePatternFilter, set[AccessControlEntry]]]:
    return sorted(acls.items(), key=lambda item: (item[0].resource_type, item[0].name or "",
                                                  item[0].pattern_type))


def acls_to_add(args: argparse.Namespace) -> Acls:
    """The ACLs ``--add`` names (Kafka's ``getResourceToAcls``)."""
    if not args.resource_pattern_type.is_specific:
        args.usage_error(f"A '--resource-pattern-type' value of "
                         f"'{args.resource_pattern_type.name}' is not valid when adding acls.")
    acls = acls_of(args)
    if any(not found for found in acls.values()):
        args.usage_error("You must specify one of: --allow-principal, --deny-principal when "
                         "trying to add ACLs.")
    return acls


def add(admin: Admin, acls: Acls) -> None:
    for pattern_filter, found in _in_order(acls):
        pattern = ResourcePattern(pattern_filter.resource_type, pattern_filter.name,
                                  pattern_filter.pattern_type)
        print(block(f"Adding ACLs for resource `{pattern}`", sorted(found)))
        admin.acls.create_acls(AclBinding(pattern, entry) for entry in sorted(found))


def remove(admin: Admin, args: argparse.Namespace, acls: Acls) -> None:
    for pattern_filter, found in _in_order(acls):
        if not found:
            if confirmed(args, f"Are you sure you want to delete all ACLs for resource filter "
                               f"`{pattern_filter}`? (y/n)"):
                admin.acls.delete_acls([AclBindingFilter(pattern_filter)])
            continue
        listed = "\n".join(f"\t{e}" for e in sorted(found))
        if confirmed(args, f"Are you sure you want to remove ACLs: \n {listed} \n from resource "
                           f"filter `{pattern_filter}`? (y/n)"):
            admin.acls.delete_acls([AclBindingFilter(pattern_filter, AccessControlEntryFilter(
                e.principal, e.host, e.operation, e.permission_type)) for e in sorted(found)])


def list_acls(admin: Admin, args: argparse.Namespace) -> None:
    filters = resource_filters(args, required=False)
    bindings = [b for f in (filters or [None]) for b in admin.acls.describe_acls(
        AclBindingFilter(f) if f is not None else AclBindingFilter(
            ResourcePatternFilter(ResourceType.ANY, None, PatternType.ANY)))]
    by_pattern: dict[ResourcePattern, set[AccessControlEntry]] = {}
    for binding in bindings:
        by_pattern.setdefault(binding.pattern, set()).add(binding.entry)
    if not args.principal:
        print_resources(by_pattern)
        return
    for principal in _principals(args, args.principal):
        print(f"ACLs for principal `{principal}`")
        print_resources({p: {e for e in found if e.principal == principal}
                         for p, found in by_pattern.items()
                         if any(e.principal == principal for e in found)})


def run(args: argparse.Namespace) -> int:
    check_options(args)  # every usage error before anything is sent
    acls = acls_to_add(args) if args.add else acls_of(args) if args.remove else None
    with kafka_client(args) as client, client_errors():
        if args.add:
            add(client.admin, acls)
        elif args.remove:
            remove(client.admin, args, acls)
        else:
            list_acls(client.admin, args)
    return 0
