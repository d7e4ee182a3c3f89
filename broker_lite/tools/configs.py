"""``broker-lite configs``: describe and change topic configs and dynamic broker configs, as
``kafka-configs.sh``.

    broker-lite configs --bootstrap-server 127.0.0.1:9092 --entity-type topics \\
        --entity-name events --alter --add-config retention.ms=60000,cleanup.policy=[compact,delete]
    broker-lite configs --bootstrap-server 127.0.0.1:9092 --entity-type topics \\
        --entity-name events --alter --delete-config retention.ms
    broker-lite configs --bootstrap-server 127.0.0.1:9092 --topic events --describe [--all]
    broker-lite configs --bootstrap-server 127.0.0.1:9092 --entity-type brokers \\
        --entity-name 1 --describe --all
    broker-lite configs --bootstrap-server 127.0.0.1:9092 --entity-type brokers \\
        --entity-default --alter --add-config log.retention.ms=3600000

``--entity-type topics|brokers|users --entity-name NAME`` names what to work on; ``--topic NAME``,
``--broker ID`` and ``--user NAME`` are short for them (users: their SCRAM credentials, see
:mod:`.user_configs`, also with ``--zookeeper`` instead of ``--bootstrap-server``);
``--entity-default`` (with ``--entity-type brokers``) names the cluster-wide dynamic broker
defaults.
``--describe`` without a name describes every topic (or every broker, then the cluster-wide
defaults). ``--add-config`` takes ``k=v`` pairs separated by commas, a list value in brackets
(``cleanup.policy=[compact,delete]``); ``--delete-config`` takes names separated by commas (both
may be repeated). Changes go through IncrementalAlterConfigs, so other overrides stay as they are.
A broker config that Kafka cannot change at run time (``log.dirs``, ``broker.id``, ...) is refused
with the broker's reason.

Output (stdout), stable for scripts:

``--describe``
    Per entity, Kafka's block: a header, then one line per config, sorted by name::

        Dynamic configs for topic events are:
          retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000}

    Without ``--all`` only the entity's own overrides are listed (topic overrides; a broker's
    per-broker dynamic configs; the cluster-wide defaults' own); with ``--all`` every config,
    with the header ``All configs for topic events are:``. The cluster-wide defaults' header is
    ``Default configs for brokers in the cluster are:``. Synonyms are the settings the value
    comes from, most specific first (``SOURCE:name=value``); sensitive values print as ``null``.
``--alter``
    ``Completed updating config for topic events.`` (``broker 1``), or ``Completed updating
    default config for brokers in the cluster.``

Errors (stderr, exit status 1): an unknown topic or broker, a config name or value the broker
rejects (its reason), deleting a config that is not set on the entity itself
(``Invalid config(s): name``),
a broker that cannot be reached within ``--timeout-ms``. Bad option combinations and malformed
``--add-config`` values are usage errors (exit status 2).
"""

import argparse
import re

from broker_lite.client.admin.admin import Admin
from broker_lite.client.admin.configs import AlterConfigOp, ConfigResource
from broker_lite.protocol.config_entry import ConfigEntry
from broker_lite.protocol.enums import ConfigSource

from . import user_configs
from .admin_support import client_errors
from .common import ToolError, add_bootstrap_server, kafka_client

NAME = "configs"
HELP = "describe and change topic, broker and user configs (kafka-configs)"

ENTITY_TYPES = {"topics": "topic", "brokers": "broker", "users": "user"}
# Without --all, the configs listed: the entity's own dynamic ones.
DYNAMIC_SOURCES = {"topics": ConfigSource.DYNAMIC_TOPIC_CONFIG,
                   "brokers": ConfigSource.DYNAMIC_BROKER_CONFIG,
                   "": ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG}
BROKER_DEFAULT = ""  # Kafka's BrokerDefaultEntityName: the brokers' default is the broker named ""
# Commas and '=' inside [...] belong to a list value (Kafka's ConfigCommand pattern).
_OUTSIDE_BRACKETS = r"(?=[^\]]*(?:\[|$))"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    add_bootstrap_server(parser, required=False)
    parser.add_argument("--zookeeper", metavar="HOST:PORT[/CHROOT]",
                        help="write users' SCRAM credentials to ZooKeeper directly (to "
                             "bootstrap a secured cluster), instead of --bootstrap-server")
    actions = parser.add_mutually_exclusive_group(required=True)
    actions.add_argument("--describe", action="store_true", help="list configs")
    actions.add_argument("--alter", action="store_true",
                         help="change configs (--add-config, --delete-config)")
    parser.add_argument("--entity-type", choices=sorted(ENTITY_TYPES),
                        help="what to configure: topics, brokers or users")
    parser.add_argument("--entity-name", metavar="NAME",
                        help="the topic name, broker id or user name")
    parser.add_argument("--entity-default", action="store_true",
                        help="the cluster-wide default (with --entity-type brokers)")
    parser.add_argument("--topic", metavar="NAME",
                        help="short for --entity-type topics --entity-name NAME")
    parser.add_argument("--broker", metavar="ID",
                        help="short for --entity-type brokers --entity-name ID")
    parser.add_argument("--user", metavar="NAME",
                        help="short for --entity-type users --entity-name NAME")
    parser.add_argument("--all", action="store_true",
                        help="--describe: every config, not only the overrides")
    parser.add_argument("--add-config", action="append", default=[],
                        metavar="K=V,K2=[V1,V2]", help="configs to set (repeatable)")
    parser.add_argument("--delete-config", action="append", default=[], metavar="K,K2",
                        help="configs to remove, back to the default (repeatable)")
    parser.set_defaults(usage_error=parser.error)


def parse_add_config(text: str) -> dict[str, str]:
    """``k1=v1,k2=[v1,v2]`` as ``{"k1": "v1", "k2": "v1,v2"}``; ValueError when malformed.

    >>> parse_add_config("retention.ms=1000, cleanup.policy=[compact,delete]")
    {'retention.ms': '1000', 'cleanup.policy': 'compact,delete'}
    """
    configs = {}
    for pair in re.split("," + _OUTSIDE_BRACKETS, text):
        parts = re.split(r"\s*=\s*" + _OUTSIDE_BRACKETS, pair.strip(), maxsplit=1)
        if len(parts) != 2 or not parts[0]:
            raise ValueError(f"{pair.strip()!r} is not key=val or key=[val1,val2]")
        key, value = parts
        configs[key.strip()] = re.sub(r"^\[|\]$", "", value.strip()).strip()
    return configs


def entity(args: argparse.Namespace) -> tuple[str, str | None]:
    """``(entity type, name or None)`` from the options; usage errors when they conflict."""
    chosen = [(kind, name) for kind, name in
              (("topics", args.topic), ("brokers", args.broker), ("users", args.user))
              if name is not None]
    if args.entity_default and args.entity_type == "users":
        args.usage_error("The use of --entity-default or --user-defaults is not allowed with "
                         "User SCRAM Credentials using --bootstrap-server.")
    if args.entity_default and (args.entity_type != "brokers" or args.entity_name is not None):
        args.usage_error("--entity-default goes only with --entity-type brokers, without "
                         "--entity-name")
    if args.entity_type is not None:
        chosen.append((args.entity_type,
                       BROKER_DEFAULT if args.entity_default else args.entity_name))
    elif args.entity_name is not None:
        args.usage_error("--entity-name needs --entity-type")
    if len(chosen) != 1:
        args.usage_error("name one entity: --entity-type with --entity-name, --topic, --broker "
                         "or --user")
    kind, name = chosen[0]
    if args.alter and name is None:
        args.usage_error("--alter needs an entity name (or --entity-default)")
    if kind == "brokers" and name and not name.isdigit():
        args.usage_error(f"a broker is named by its id, got {name!r}")
    return kind, name


def run(args: argparse.Namespace) -> int:
    kind, name = entity(args)
    if args.describe and (args.add_config or args.delete_config):
        args.usage_error("--add-config and --delete-config go only with --alter")
    if args.alter and args.all:
        args.usage_error("--all goes only with --describe")
    added: dict[str, str] = {}
    for text in args.add_config:
        try:
            added.update(parse_add_config(text))
        except ValueError as exc:
            args.usage_error(f"--add-config: {exc}")
    deleted = [n.strip() for text in args.delete_config for n in text.split(",") if n.strip()]
    if args.alter and not (added or deleted):
        args.usage_error("--alter needs --add-config or --delete-config")
    both = sorted(set(added) & set(deleted))
    if both:
        args.usage_error(f"Invalid config(s): {','.join(both)} both in --add-config and "
                         f"--delete-config")
    if (args.bootstrap_server is None) == (args.zookeeper is None):
        args.usage_error("give one of --bootstrap-server and --zookeeper")
    if args.zookeeper is not None:
        if kind != "users":
            args.usage_error("--zookeeper goes only with --entity-type users (SCRAM "
                             "credentials); use --bootstrap-server for topics and brokers")
        return _users_in_zookeeper(args, name, added, deleted)
    with kafka_client(args) as client, client_errors():
        if kind == "users":
            if args.describe:
                user_configs.describe(client.admin, name)
            else:
                user_configs.alter(client.admin, name, added, deleted)
        elif args.describe:
            describe(client.admin, kind, name, args.all)
        else:
            alter(client.admin, kind, name, added, deleted)
    return 0


def _users_in_zookeeper(args: argparse.Namespace, user: str | None, added: dict[str, str],
                        deleted: list[str]) -> int:
    from broker_lite.zk.client import connect
    from broker_lite.zk.errors import ZooKeeperError

    try:
        client = connect(args.zookeeper, connection_timeout_ms=args.timeout_ms)
    except ZooKeeperError as exc:
        raise ToolError(str(exc)) from None
    try:
        if args.describe:
            user_configs.describe_zookeeper(client, user)
        else:
            user_configs.alter_zookeeper(client, user, added, deleted)
    finally:
        client.stop()
        client.close()
    return 0


def resource(kind: str, name: str) -> ConfigResource:
    return ConfigResource.topic(name) if kind == "topics" else ConfigResource.broker(name)


def own_source(kind: str, name: str) -> ConfigSource:
    """The source of the configs set on the entity itself (those listed without ``--all``)."""
    return DYNAMIC_SOURCES[BROKER_DEFAULT if kind == "brokers" and not name else kind]


def header(kind: str, name: str, describe_all: bool) -> str:
    if kind == "brokers" and name == BROKER_DEFAULT:
        return "Default configs for brokers in the cluster are:"
    return f"{'All' if describe_all else 'Dynamic'} configs for {ENTITY_TYPES[kind]} {name} are:"


def describe(admin: Admin, kind: str, name: str | None, describe_all: bool) -> None:
    if name is not None:
        names = [name]
    elif kind == "topics":
        names = sorted(admin.list_topics(include_internal=True))
    else:
        admin.list_topics()  # fresh metadata, with the brokers
        names = [str(b) for b in sorted(admin.cluster.metadata.brokers())] + [BROKER_DEFAULT]
    found = admin.configs.describe([resource(kind, n) for n in names], include_synonyms=True)
    for n in names:
        print(header(kind, n, describe_all))
        entries = sorted(found[resource(kind, n)], key=lambda e: e.name)
        for entry in entries:
            if describe_all or entry.source == own_source(kind, n):
                print(config_line(entry))


def config_line(entry: ConfigEntry) -> str:
    synonyms = ", ".join(f"{s.source.name}:{s.name}={_shown(s.value, entry.sensitive)}"
                         for s in entry.synonyms)
    return (f"  {entry.name}={_shown(entry.value, entry.sensitive)} "
            f"sensitive={str(entry.sensitive).lower()} synonyms={{{synonyms}}}")


def _shown(value: str | None, sensitive: bool) -> str:
    return "null" if value is None or sensitive else value


def alter(admin: Admin, kind: str, name: str, added: dict[str, str], deleted: list[str]) -> None:
    target = resource(kind, name)
    current = admin.configs.describe([target])[target]  # an unknown topic or broker fails here
    overridden = {e.name for e in current if e.source == own_source(kind, name)}
    missing = [n for n in deleted if n not in overridden]
    if missing:
        raise ToolError(f"Invalid config(s): {','.join(missing)}")
    ops = [AlterConfigOp.set(k, v) for k, v in added.items()] + \
          [AlterConfigOp.delete(n) for n in deleted]
    admin.configs.incremental_alter({target: ops})
    if kind == "brokers" and name == BROKER_DEFAULT:
        print("Completed updating default config for brokers in the cluster.")
    else:
        print(f"Completed updating config for {ENTITY_TYPES[kind]} {name}.")
