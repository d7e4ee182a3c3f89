"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, for topics and this broker, as a
Kafka 3.9 broker in ZooKeeper mode answers them.

Topic configs are the names of :data:`~broker_lite.config.TOPIC_TO_BROKER`, each resolved from
the topic's overrides (``/config/topics/[topic]``) or the broker default it is named after, and
formatted as Kafka's ``ConfigDef.convertToString`` would (lists comma-joined, numbers in decimal).
Each entry's ``config_source`` is the first of its synonyms, in Kafka's order: the topic override
(DYNAMIC_TOPIC_CONFIG), then the broker's own synonyms -- set in server.properties
(STATIC_BROKER_CONFIG) or defaults (DEFAULT_CONFIG) -- with those listed before the exact broker
name dropped, as Kafka does (so ``retention.ms`` backed by ``log.retention.hours`` has no synonym
and DEFAULT_CONFIG as its source).

AlterConfigs replaces a topic's whole override set (entries with a null value are left out);
IncrementalAlterConfigs edits it with SET, DELETE, APPEND and SUBTRACT (the last two for list
configs such as ``cleanup.policy``, starting from the config's default when it has no override).
Both validate every name and value with the broker's own parser (INVALID_CONFIG), write through
:func:`~broker_lite.zk.admin.set_topic_config` and apply the overrides to this broker's logs
at once. Broker configs cannot be changed at run time here: they are described read-only, and
altering any of them answers INVALID_CONFIG.
"""

import logging
from collections import Counter
from collections.abc import Mapping

from broker_lite.config import (
    BROKER_CONFIG,
    TOPIC_TO_BROKER,
    BrokerConfig,
    ConfigError,
    LogConfig,
)
from broker_lite.protocol import ErrorCode
from broker_lite.zk.admin import get_topic_config, set_topic_config, validate_topic_name
from broker_lite.zk.errors import InvalidTopicError, UnknownTopicError, ZooKeeperError
from broker_lite.zk.layout import TopicZNode

logger = logging.getLogger(__name__)

# Resource types (Kafka's ConfigResource.Type).
UNKNOWN_RESOURCE, TOPIC, BROKER, BROKER_LOGGER = 0, 2, 4, 8
_RESOURCE_NAMES = {0: "UNKNOWN", 2: "TOPIC", 3: "GROUP", 4: "BROKER", 8: "BROKER_LOGGER",
                   16: "CLIENT_METRICS"}

# Config sources (DescribeConfigsResponse's ConfigSource).
DYNAMIC_TOPIC_CONFIG = 1
DYNAMIC_BROKER_CONFIG = 2
DYNAMIC_DEFAULT_BROKER_CONFIG = 3
STATIC_BROKER_CONFIG = 4
DEFAULT_CONFIG = 5

# Config types (DescribeConfigsResponse's ConfigType, v3+).
BOOLEAN, STRING, INT, LONG, DOUBLE, LIST = 1, 2, 3, 5, 6, 7

# Alter operations (IncrementalAlterConfigs).
SET, DELETE, APPEND, SUBTRACT = 0, 1, 2, 3

# Kafka declares these LONG; the other integer configs known here are INT.
_LONG_CONFIGS = frozenset({
    "log.roll.ms", "log.flush.interval.messages", "log.flush.interval.ms",
    "log.flush.scheduler.interval.ms", "log.retention.ms", "log.retention.bytes",
    "log.retention.check.interval.ms", "log.cleaner.delete.retention.ms",
    "log.cleaner.min.compaction.lag.ms", "log.segment.delete.delay.ms",
    "connections.max.idle.ms",
})
# Kafka declares these STRING although broker_lite parses them as lists.
_STRING_CONFIGS = frozenset({"log.dirs"})

# Broker configs Kafka derives from one another (DynamicBrokerConfig.brokerConfigSynonyms).
_SYNONYM_GROUPS = (
    ("log.roll.ms", "log.roll.hours"),
    ("log.retention.ms", "log.retention.minutes", "log.retention.hours"),
)


class ApiError(Exception):
    """An error code and message for one resource (or topic) of a request."""

    def __init__(self, code: ErrorCode, message: str | None = None):
        super().__init__(message)
        self.code = code
        self.message = message


# -- describing ------------------------------------------------------------------------------------


def config_type(broker_name: str) -> int:
    if broker_name in _LONG_CONFIGS:
        return LONG
    if broker_name in _STRING_CONFIGS:
        return STRING
    kind = BROKER_CONFIG[broker_name].parse.__qualname__.split(".")[0]
    return {"_int": INT, "_bool": BOOLEAN, "_double": DOUBLE, "_list": LIST}.get(kind, STRING)


def format_value(value) -> str | None:
    """A typed value as Kafka's ``ConfigDef.convertToString`` writes it."""
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    return str(value)


def _broker_synonyms(name: str) -> tuple[str, ...]:
    if name == "log.flush.interval.ms":  # log.flush.scheduler.interval.ms is its default
        return ("log.flush.interval.ms", "log.flush.scheduler.interval.ms")
    for group in _SYNONYM_GROUPS:
        if name in group:
            return group
    return (name,)


def _synonyms(config: BrokerConfig, name: str) -> list[dict]:
    """Kafka's ``configSynonyms``: the names set in server.properties, then those with defaults,
    without the entries before ``name`` itself."""
    names = _broker_synonyms(name)
    found = [{"name": n, "value": config.originals[n], "source": STATIC_BROKER_CONFIG}
             for n in names if n in config.originals]
    found += [{"name": n, "value": format_value(BROKER_CONFIG[n].default),
               "source": DEFAULT_CONFIG}
              for n in names if BROKER_CONFIG[n].default is not None]
    while found and found[0]["name"] != name:
        found.pop(0)
    return found


def resolve_topic_config(config: BrokerConfig, overrides: Mapping[str, str]) -> LogConfig:
    """The log config of a topic; overrides broker_lite cannot use (names of other Kafka topic
    configs, malformed values written by other tools) are left out."""
    usable = {k: v for k, v in overrides.items() if k in TOPIC_TO_BROKER}
    try:
        return config.log_config(usable)
    except ConfigError:
        kept = {}
        for name, value in usable.items():
            try:
                config.log_config({name: value})
            except ConfigError:
                continue
            kept[name] = value
        return config.log_config(kept)


def topic_config_entries(config: BrokerConfig, overrides: Mapping[str, str], *,
                         include_synonyms: bool = False,
                         include_documentation: bool = False) -> list[dict]:
    """Every topic config, as DescribeConfigs lists it (Kafka's ``createTopicConfigEntry``)."""
    resolved = resolve_topic_config(config, overrides)
    entries = []
    for name in sorted(TOPIC_TO_BROKER):
        broker_name = TOPIC_TO_BROKER[name]
        value = format_value(getattr(resolved, name.replace(".", "_")))
        synonyms = _synonyms(config, broker_name)
        if name in overrides and name in TOPIC_TO_BROKER:
            synonyms.insert(0, {"name": name, "value": value, "source": DYNAMIC_TOPIC_CONFIG})
        source = synonyms[0]["source"] if synonyms else DEFAULT_CONFIG
        entries.append({
            "name": name, "value": value, "read_only": False,
            "is_default": source == DEFAULT_CONFIG, "config_source": source,
            "is_sensitive": False, "synonyms": synonyms if include_synonyms else [],
            "config_type": config_type(broker_name),
            "documentation": BROKER_CONFIG[broker_name].doc if include_documentation else None,
        })
    return entries


def broker_config_entries(config: BrokerConfig, *, include_synonyms: bool = False,
                          include_documentation: bool = False) -> list[dict]:
    """This broker's configs (Kafka's ``createBrokerConfigEntry`` with ``perBrokerConfig``).
    All read-only: broker_lite has no dynamic broker configs."""
    entries = []
    for name in sorted(BROKER_CONFIG):
        value = config[name]
        synonyms = _synonyms(config, name)
        source = synonyms[0]["source"] if synonyms else DEFAULT_CONFIG
        entries.append({
            "name": name, "value": value if isinstance(value, str) else format_value(value),
            "read_only": True, "is_default": source == DEFAULT_CONFIG, "config_source": source,
            "is_sensitive": False, "synonyms": synonyms if include_synonyms else [],
            "config_type": config_type(name),
            "documentation": BROKER_CONFIG[name].doc if include_documentation else None,
        })
    return entries


def _topic_exists(services, topic: str) -> bool:
    return services.zk.exists(TopicZNode.path(topic)) is not None


def _check_broker_name(services, name: str | None) -> bool:
    """True for this broker's id, False for the cluster default (empty name)."""
    if not name:
        return False
    try:
        broker_id = int(name)
    except ValueError:
        raise ApiError(ErrorCode.INVALID_REQUEST,
                       f"Broker id must be an integer, but it is: {name}") from None
    if broker_id != services.broker_id:
        raise ApiError(ErrorCode.INVALID_REQUEST,
                       f"Unexpected broker id, expected {services.broker_id} or empty string, "
                       f"but received {name}")
    return True


def _describe(services, resource: dict, include_synonyms: bool,
              include_documentation: bool) -> list[dict]:
    kind, name = resource["resource_type"], resource["resource_name"]
    if kind == TOPIC:
        try:
            validate_topic_name(name)
        except InvalidTopicError as exc:
            raise ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc)) from None
        if not _topic_exists(services, name):
            raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                           f"The topic '{name}' does not exist.")
        return topic_config_entries(services.config, get_topic_config(services.zk, name),
                                    include_synonyms=include_synonyms,
                                    include_documentation=include_documentation)
    if kind == BROKER:
        if not _check_broker_name(services, name):
            return []  # the cluster-wide dynamic defaults: broker_lite has none
        return broker_config_entries(services.config, include_synonyms=include_synonyms,
                                     include_documentation=include_documentation)
    raise ApiError(ErrorCode.INVALID_REQUEST,
                   f"Unsupported resource type: {_RESOURCE_NAMES.get(kind, kind)}")


def describe_configs(context, body: dict) -> dict:
    services = context.services
    include_synonyms = bool(body.get("include_synonyms"))
    include_documentation = bool(body.get("include_documentation"))
    results = []
    for resource in body["resources"]:
        result = {"error_code": 0, "error_message": None,
                  "resource_type": resource["resource_type"],
                  "resource_name": resource["resource_name"], "configs": []}
        try:
            entries = _describe(services, resource, include_synonyms, include_documentation)
        except ApiError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
        except ZooKeeperError as exc:
            logger.exception("describing configs of %s failed", resource["resource_name"])
            result.update(error_code=ErrorCode.UNKNOWN_SERVER_ERROR, error_message=str(exc))
        else:
            keys = resource.get("configuration_keys")
            if keys:
                entries = [e for e in entries if e["name"] in keys]
            result["configs"] = entries
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}


# -- altering ------------------------------------------------------------------------------------


def _resource_text(kind: int, name: str) -> str:
    return f"ConfigResource(type={_RESOURCE_NAMES.get(kind, kind)}, name='{name}')"


def validate_topic_overrides(config: BrokerConfig, overrides: Mapping[str, str],
                             resource: str | None = None) -> None:
    """INVALID_CONFIG unless every override names a topic config and has a valid value."""
    for name in overrides:
        if name not in TOPIC_TO_BROKER:
            raise ApiError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {name}")
    try:
        config.log_config(overrides)
    except ConfigError as exc:
        message = f"Invalid config value for resource {resource}: {exc}" if resource \
            else str(exc)
        raise ApiError(ErrorCode.INVALID_CONFIG, message) from None


def _alter_topic(services, topic: str, overrides: dict[str, str], validate_only: bool) -> None:
    if not topic:
        raise ApiError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    if not _topic_exists(services, topic):
        raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                       f"The topic '{topic}' does not exist.")
    validate_topic_overrides(services.config, overrides, _resource_text(TOPIC, topic))
    if validate_only:
        return
    try:
        set_topic_config(services.zk, topic, overrides)
    except UnknownTopicError:
        raise ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
                       f"The topic '{topic}' does not exist.") from None
    logger.info("updated topic %s with new configuration %s", topic, overrides)
    # this broker's logs now; other brokers when their partitions are next reported assigned
    services.logs.update_config(topic, overrides)


def _alter_broker(services, name: str, names: list[str]) -> None:
    _check_broker_name(services, name)
    if names:
        raise ApiError(ErrorCode.INVALID_CONFIG,
                       f"Cannot update these configs dynamically: {sorted(set(names))}")


def _duplicate_resources(resources: list[dict]) -> set[tuple[int, str]]:
    counts = Counter((r["resource_type"], r["resource_name"]) for r in resources)
    return {key for key, n in counts.items() if n > 1}


def _check_names(configs: list[dict]) -> None:
    names = [c["name"] for c in configs]
    if len(set(names)) != len(names):
        raise ApiError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")


def _alter_each(services, body: dict, alter_one) -> dict:
    duplicates = _duplicate_resources(body["resources"])
    responses = []
    for resource in body["resources"]:
        kind, name = resource["resource_type"], resource["resource_name"]
        response = {"error_code": 0, "error_message": None, "resource_type": kind,
                    "resource_name": name}
        try:
            if (kind, name) in duplicates:
                raise ApiError(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
            _check_names(resource["configs"])
            if kind not in (TOPIC, BROKER):
                raise ApiError(ErrorCode.INVALID_REQUEST,
                               f"AlterConfigs is only supported for topics and brokers, but "
                               f"resource type is {_RESOURCE_NAMES.get(kind, kind)}")
            alter_one(services, resource, bool(body.get("validate_only")))
        except ApiError as exc:
            response.update(error_code=exc.code, error_message=exc.message)
        except ZooKeeperError as exc:
            logger.exception("altering configs of %s failed", name)
            response.update(error_code=ErrorCode.UNKNOWN_SERVER_ERROR, error_message=str(exc))
        responses.append(response)
    return {"throttle_time_ms": 0, "responses": responses}


def _alter_configs_one(services, resource: dict, validate_only: bool) -> None:
    configs = resource["configs"]
    if resource["resource_type"] == BROKER:
        _alter_broker(services, resource["resource_name"], [c["name"] for c in configs])
        return
    overrides = {c["name"]: c["value"] for c in configs if c["value"] is not None}
    _alter_topic(services, resource["resource_name"], overrides, validate_only)


def alter_configs(context, body: dict) -> dict:
    """AlterConfigs: the resource's new override set, replacing the old one."""
    return _alter_each(context.services, body, _alter_configs_one)


def _list_default(name: str) -> list[str]:
    return [v for v in (format_value(BROKER_CONFIG[TOPIC_TO_BROKER[name]].default) or "")
            .split(",") if v]


def apply_operations(overrides: dict[str, str], configs: list[dict]) -> dict[str, str]:
    """Kafka's ``prepareIncrementalConfigs`` on a copy of ``overrides``."""
    result = dict(overrides)
    for entry in configs:
        name, op, value = entry["name"], entry["config_operation"], entry["value"]
        if op == SET:
            result[name] = value
        elif op == DELETE:
            result.pop(name, None)
        elif op in (APPEND, SUBTRACT):
            if name not in TOPIC_TO_BROKER:
                raise ApiError(ErrorCode.INVALID_CONFIG, f"Unknown topic config name: {name}")
            if config_type(TOPIC_TO_BROKER[name]) != LIST:
                verb = "append" if op == APPEND else "subtract"
                raise ApiError(ErrorCode.INVALID_REQUEST,
                               f"Config value {verb} is not allowed for config key: {name}")
            old = [v for v in result[name].split(",") if v] if name in result \
                else _list_default(name)
            given = [v for v in value.split(",") if v]
            if op == APPEND:
                new = old + [v for v in given if v not in old]
            else:
                new = [v for v in old if v not in given]
            result[name] = ",".join(new)
    return result


def _incremental_one(services, resource: dict, validate_only: bool) -> None:
    configs = resource["configs"]
    unknown_ops = sorted({c["config_operation"] for c in configs} - {SET, DELETE, APPEND, SUBTRACT})
    if unknown_ops:
        raise ApiError(ErrorCode.INVALID_REQUEST, f"Unknown operation type {unknown_ops[0]}")
    nulls = [c["name"] for c in configs if c["config_operation"] != DELETE and c["value"] is None]
    if nulls:
        raise ApiError(ErrorCode.INVALID_REQUEST,
                       f"Null value not supported for : {', '.join(nulls)}")
    name = resource["resource_name"]
    if resource["resource_type"] == BROKER:
        _alter_broker(services, name, [c["name"] for c in configs])
        return
    if not name:
        raise ApiError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    current = get_topic_config(services.zk, name)
    _alter_topic(services, name, apply_operations(current, configs), validate_only)


def incremental_alter_configs(context, body: dict) -> dict:
    """IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on the current overrides."""
    return _alter_each(context.services, body, _incremental_one)
