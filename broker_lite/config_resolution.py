"""Which value a config has and where it comes from, as Kafka's DescribeConfigs tells it, and the
checks and edits of topic overrides (AlterConfigs, IncrementalAlterConfigs).

A topic config (a name of :data:`~broker_lite.config.TOPIC_CONFIG_NAMES`) takes the first of its
synonyms, in Kafka's order (``configSynonyms``)::

    DYNAMIC_TOPIC_CONFIG   the topic's override (``/config/topics/[topic]``)
    STATIC_BROKER_CONFIG   a broker config it falls back to, set in server.properties
    DEFAULT_CONFIG         a broker config it falls back to, by its default

A broker config's synonyms are the broker configs Kafka derives from one another (``log.roll.ms``
from ``log.roll.hours``; ``log.retention.ms`` from ``log.retention.minutes``, from
``log.retention.hours``; ``log.flush.interval.ms`` from ``log.flush.scheduler.interval.ms``),
those set in server.properties first, then those with defaults, without the ones listed before
the exact name (so ``retention.ms`` backed by the default of ``log.retention.hours`` has no
synonym and DEFAULT_CONFIG as its source). broker_lite has no dynamic broker configs: broker
configs are read-only, and the sources DYNAMIC_BROKER_CONFIG and DYNAMIC_DEFAULT_BROKER_CONFIG
never occur.

Values are written as Kafka's ``ConfigDef.convertToString`` writes them: lists comma-joined,
booleans ``true``/``false``, numbers in decimal.

>>> from broker_lite.config import BrokerConfig
>>> entries = topic_config_entries(BrokerConfig({"log.segment.bytes": "1048576"}),
...                                {"cleanup.policy": "compact"})
>>> [(e.name, e.value, e.source.name) for e in entries if e.name in
...  ("cleanup.policy", "retention.ms", "segment.bytes")]  # doctest: +NORMALIZE_WHITESPACE
[('cleanup.policy', 'compact', 'DYNAMIC_TOPIC_CONFIG'),
 ('retention.ms', '604800000', 'DEFAULT_CONFIG'),
 ('segment.bytes', '1048576', 'STATIC_BROKER_CONFIG')]
>>> apply_incremental_operations({}, [("cleanup.policy", AlterOp.APPEND, "compact")])
{'cleanup.policy': 'delete,compact'}
"""

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum

from .config import (
    BROKER_CONFIG,
    TOPIC_CONFIG_NAMES,
    TOPIC_TO_BROKER,
    UNIT_SYNONYMS,
    BrokerConfig,
    ConfigError,
    LogConfig,
    topic_config_definition,
)
from .settings import Setting


class ConfigSource(IntEnum):
    """Where a config value comes from (DescribeConfigsResponse's ConfigSource)."""

    DYNAMIC_TOPIC_CONFIG = 1
    DYNAMIC_BROKER_CONFIG = 2
    DYNAMIC_DEFAULT_BROKER_CONFIG = 3
    STATIC_BROKER_CONFIG = 4
    DEFAULT_CONFIG = 5


class ConfigType(IntEnum):
    """A config's type (DescribeConfigsResponse's ConfigType, v3+)."""

    BOOLEAN = 1
    STRING = 2
    INT = 3
    SHORT = 4
    LONG = 5
    DOUBLE = 6
    LIST = 7


class AlterOp(IntEnum):
    """An edit of IncrementalAlterConfigs (its ``config_operation``)."""

    SET = 0
    DELETE = 1
    APPEND = 2
    SUBTRACT = 3


class InvalidTopicConfigError(ConfigError):
    """Overrides Kafka refuses as a whole (its ``InvalidConfigurationException``): the message
    goes to the client as it is."""


class UnknownTopicConfigError(InvalidTopicConfigError):
    """An override names no topic config."""


class ConfigOperationError(ValueError):
    """An incremental edit the config does not take (APPEND or SUBTRACT of a non-list)."""


@dataclass(frozen=True)
class ConfigSynonym:
    name: str
    value: str | None
    source: ConfigSource


@dataclass(frozen=True)
class ConfigEntry:
    """One config as DescribeConfigs lists it; ``source`` is that of its first synonym."""

    name: str
    value: str | None
    source: ConfigSource
    read_only: bool
    synonyms: tuple[ConfigSynonym, ...]
    config_type: ConfigType
    documentation: str

    @property
    def is_default(self) -> bool:
        return self.source == ConfigSource.DEFAULT_CONFIG


# Kafka declares these LONG; the other integer configs known here are INT.
# Kafka declares log.dirs STRING although broker_lite parses it as a list.
_STRING_CONFIGS = frozenset({"log.dirs"})

# Broker configs Kafka derives from one another (DynamicBrokerConfig.brokerConfigSynonyms). The
# names before a config's own are dropped from its synonyms, so each group serves every member.
_SYNONYM_GROUPS = tuple(tuple(name for name, _ in group) for group in UNIT_SYNONYMS.values())


def config_type(broker_name: str) -> ConfigType:
    """The type Kafka declares for a broker config (and the topic configs named after it)."""
    if broker_name in _STRING_CONFIGS:
        return ConfigType.STRING
    return _type_of(BROKER_CONFIG[broker_name])


def _type_of(definition: Setting) -> ConfigType:
    return ConfigType[definition.type]


def topic_config_type(name: str) -> ConfigType:
    """The type Kafka declares for topic config ``name``."""
    if name in TOPIC_TO_BROKER:
        return config_type(TOPIC_TO_BROKER[name])
    return _type_of(topic_config_definition(name))


def format_value(value) -> str | None:
    """A typed value as Kafka's ``ConfigDef.convertToString`` writes it.

    >>> format_value(("delete", "compact")), format_value(True), format_value(None)
    ('delete,compact', 'true', None)
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (tuple, list)):
        return ",".join(str(v) for v in value)
    return str(value)


def _broker_synonyms(config: BrokerConfig, name: str) -> list[ConfigSynonym]:
    """Kafka's ``configSynonyms``: the names set in server.properties, then those with defaults,
    without the entries before ``name`` itself."""
    names = next((group for group in _SYNONYM_GROUPS if name in group), (name,))
    found = [ConfigSynonym(n, config.originals[n], ConfigSource.STATIC_BROKER_CONFIG)
             for n in names if n in config.originals]
    found += [ConfigSynonym(n, format_value(BROKER_CONFIG[n].default), ConfigSource.DEFAULT_CONFIG)
              for n in names if BROKER_CONFIG[n].default is not None]
    while found and found[0].name != name:
        found.pop(0)
    return found


def _entry(name: str, value: str | None, synonyms: list[ConfigSynonym], config_type: ConfigType,
           documentation: str, *, read_only: bool) -> ConfigEntry:
    source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
    return ConfigEntry(name, value, source, read_only, tuple(synonyms), config_type,
                       documentation)


def resolve_topic_config(config: BrokerConfig, overrides: Mapping[str, str]) -> LogConfig:
    """The log config of a topic; overrides broker_lite cannot use (names of other Kafka topic
    configs, malformed values written by other tools) are left out."""
    usable = {k: v for k, v in overrides.items() if k in TOPIC_CONFIG_NAMES}
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


def topic_config_entries(config: BrokerConfig, overrides: Mapping[str, str]) -> list[ConfigEntry]:
    """Every topic config, by name (Kafka's ``createTopicConfigEntry``)."""
    resolved = resolve_topic_config(config, overrides)
    entries = []
    for name in TOPIC_CONFIG_NAMES:
        value = format_value(getattr(resolved, name.replace(".", "_")))
        broker_name = TOPIC_TO_BROKER.get(name)
        synonyms = _broker_synonyms(config, broker_name) if broker_name else []
        if name in overrides:
            synonyms.insert(0, ConfigSynonym(name, value, ConfigSource.DYNAMIC_TOPIC_CONFIG))
        entries.append(_entry(name, value, synonyms, topic_config_type(name),
                              topic_config_definition(name).doc, read_only=False))
    return entries


def broker_config_entries(config: BrokerConfig) -> list[ConfigEntry]:
    """This broker's configs, by name (Kafka's ``createBrokerConfigEntry`` with
    ``perBrokerConfig``); all read-only."""
    return [_entry(name, format_value(config[name]), _broker_synonyms(config, name),
                   config_type(name), BROKER_CONFIG[name].doc, read_only=True)
            for name in sorted(BROKER_CONFIG)]


def validate_topic_overrides(config: BrokerConfig, overrides: Mapping[str, str]) -> None:
    """Kafka's ``LogConfig.validate`` of a ZooKeeper-mode broker without tiered storage: raise
    :class:`UnknownTopicConfigError` for a name that is no topic config, ``ConfigError`` for a
    value the broker's parser refuses or tiered storage asked for (the message names the
    config), :class:`InvalidTopicConfigError` for settings that conflict."""
    for name in overrides:
        if name not in TOPIC_CONFIG_NAMES:
            raise UnknownTopicConfigError(f"Unknown topic config name: {name}")
    resolved = config.log_config(overrides)
    if resolved.min_compaction_lag_ms > resolved.max_compaction_lag_ms:
        raise InvalidTopicConfigError(
            f"conflict topic config setting min.compaction.lag.ms "
            f"({resolved.min_compaction_lag_ms}) > max.compaction.lag.ms "
            f"({resolved.max_compaction_lag_ms})")
    if resolved.remote_log_delete_on_disable or resolved.remote_log_copy_disable:
        raise InvalidTopicConfigError(
            "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` "
            "under Zookeeper's mode.")
    if resolved.remote_storage_enable:
        raise ConfigError("Tiered Storage functionality is disabled in the broker. Topic cannot "
                          "be configured with remote log storage.")


def _list_default(name: str) -> list[str]:
    return [v for v in (format_value(topic_config_definition(name).default) or "").split(",")
            if v]


def apply_incremental_operations(overrides: Mapping[str, str],
                                 operations: Iterable[tuple[str, AlterOp, str | None]]
                                 ) -> dict[str, str]:
    """Kafka's ``prepareIncrementalConfigs``: the overrides after ``(name, op, value)`` edits.
    APPEND and SUBTRACT edit a list config's items, starting from its default when it has no
    override; on another config they raise :class:`ConfigOperationError`."""
    result = dict(overrides)
    for name, op, value in operations:
        if op == AlterOp.SET:
            result[name] = value
        elif op == AlterOp.DELETE:
            result.pop(name, None)
        else:
            if name not in TOPIC_CONFIG_NAMES:
                raise UnknownTopicConfigError(f"Unknown topic config name: {name}")
            if topic_config_type(name) != ConfigType.LIST:
                verb = "append" if op == AlterOp.APPEND else "subtract"
                raise ConfigOperationError(
                    f"Config value {verb} is not allowed for config key: {name}")
            old = [v for v in result[name].split(",") if v] if name in result \
                else _list_default(name)
            given = [v for v in (value or "").split(",") if v]
            if op == AlterOp.APPEND:
                new = old + [v for v in given if v not in old]
            else:
                new = [v for v in old if v not in given]
            result[name] = ",".join(new)
    return result
