"""Which value a config has and where it comes from, as Kafka's DescribeConfigs tells it, and the
checks and edits of topic overrides (AlterConfigs, IncrementalAlterConfigs).

A topic config (a name of :data:`~broker_lite.config.topic.TOPIC_CONFIG_NAMES`) takes the first of
its synonyms, in Kafka's order (``configSynonyms``)::

    DYNAMIC_TOPIC_CONFIG   the topic's override (``/config/topics/[topic]``)
    STATIC_BROKER_CONFIG   a broker config it falls back to, set in server.properties
    DEFAULT_CONFIG         a broker config it falls back to, by its default

A broker config takes the first of its synonyms likewise (Kafka's order among the layers of
``DynamicBrokerConfig``)::

    DYNAMIC_BROKER_CONFIG           this broker's dynamic config (``/config/brokers/[id]``)
    DYNAMIC_DEFAULT_BROKER_CONFIG   the cluster's dynamic default (``/config/brokers/<default>``)
    STATIC_BROKER_CONFIG            server.properties
    DEFAULT_CONFIG                  the default

Its synonyms are the broker configs Kafka derives from one another (``log.roll.ms`` from
``log.roll.hours``; ``log.retention.ms`` from ``log.retention.minutes``, from
``log.retention.hours``; ``log.flush.interval.ms`` from ``log.flush.scheduler.interval.ms``),
layer by layer, without the ones listed before the exact name (so ``retention.ms`` backed by the
default of ``log.retention.hours`` has no synonym and DEFAULT_CONFIG as its source). A broker
config is read-only unless Kafka can change it at run time
(:mod:`broker_lite.config.kafka_configs`); a password is sensitive and never shown.

Values are written as Kafka's ``ConfigDef.convertToString`` writes them: lists comma-joined,
booleans ``true``/``false``, numbers in decimal.

>>> from broker_lite.config.broker import BrokerConfig
>>> entries = topic_config_entries(BrokerConfig({"log.segment.bytes": "1048576"}),
...                                {"cleanup.policy": "compact"})
>>> [(e.name, e.value, e.source.name) for e in entries if e.name in
...  ("cleanup.policy", "retention.ms", "segment.bytes")]  # doctest: +NORMALIZE_WHITESPACE
[('cleanup.policy', 'compact', 'DYNAMIC_TOPIC_CONFIG'),
 ('retention.ms', '604800000', 'DEFAULT_CONFIG'),
 ('segment.bytes', '1048576', 'STATIC_BROKER_CONFIG')]
>>> apply_incremental_operations({}, [("cleanup.policy", AlterConfigOpType.APPEND, "compact")])
{'cleanup.policy': 'delete,compact'}
"""

from collections.abc import Iterable, Mapping
from dataclasses import replace

from broker_lite.protocol.config_entry import ConfigEntry, ConfigSynonym
from broker_lite.protocol.enums import AlterConfigOpType, ConfigSource, ConfigType

from .broker import BrokerConfig
from .definitions import ALL_BROKER_CONFIG, UNIT_SYNONYMS
from .dynamic import base_name
from .kafka_configs import DYNAMIC_UPDATE_MODES
from .parsers import ConfigError, Setting
from .topic import TOPIC_CONFIG_NAMES, TOPIC_TO_BROKER, LogConfig, topic_config_definition


class InvalidConfigurationError(ConfigError):
    """Configs Kafka refuses as a whole (its ``InvalidConfigurationException``): the message
    goes to the client as it is."""


class UnknownTopicConfigError(InvalidConfigurationError):
    """An override names no topic config."""


class ConfigOperationError(InvalidConfigurationError):
    """An incremental edit the config does not take (APPEND or SUBTRACT of a non-list)."""


# Kafka declares these LONG; the other integer configs known here are INT.
# Kafka declares log.dirs STRING although broker_lite parses it as a list.
_STRING_CONFIGS = frozenset({"log.dirs"})

# Broker configs Kafka derives from one another (DynamicBrokerConfig.brokerConfigSynonyms). The
# names before a config's own are dropped from its synonyms, so each group serves every member.
_SYNONYM_GROUPS = tuple(tuple(name for name, _ in group) for group in UNIT_SYNONYMS.values())


def config_type(broker_name: str) -> ConfigType:
    """The type Kafka declares for a broker config (and the topic configs named after it);
    a listener-prefixed name has its base config's type, a custom config none (UNKNOWN)."""
    name = base_name(broker_name)
    if name in _STRING_CONFIGS:
        return ConfigType.STRING
    if name not in ALL_BROKER_CONFIG:
        return ConfigType.UNKNOWN
    return _type_of(ALL_BROKER_CONFIG[name])


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


_DEFAULTS = {name: format_value(d.default) for name, d in ALL_BROKER_CONFIG.items()
             if d.default is not None}


def _layers(config: BrokerConfig) -> tuple[tuple[ConfigSource, Mapping[str, str]], ...]:
    """Where a broker config's value can come from, first the one that wins."""
    return ((ConfigSource.DYNAMIC_BROKER_CONFIG, config.dynamic_broker),
            (ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG, config.dynamic_default),
            (ConfigSource.STATIC_BROKER_CONFIG, config.originals),
            (ConfigSource.DEFAULT_CONFIG, _DEFAULTS))


def is_sensitive(name: str) -> bool:
    """Kafka's ``maybeSensitive``: a PASSWORD config (or an unknown one named like it)."""
    return config_type(name) == ConfigType.PASSWORD


def _broker_synonyms(config: BrokerConfig, name: str) -> list[ConfigSynonym]:
    """Kafka's ``configSynonyms``: the config and its unit synonyms in each layer (this broker's
    dynamic configs, the cluster's, server.properties, the defaults), without the entries before
    ``name`` itself."""
    names = next((group for group in _SYNONYM_GROUPS if name in group), (name,))
    hidden = is_sensitive(name)
    found = [ConfigSynonym(n, None if hidden else layer[n], source)
             for source, layer in _layers(config) for n in names if n in layer]
    while found and found[0].name != name:
        found.pop(0)
    return found


def _entry(name: str, value: str | None, synonyms: list[ConfigSynonym], config_type: ConfigType,
           documentation: str, *, read_only: bool) -> ConfigEntry:
    source = synonyms[0].source if synonyms else ConfigSource.DEFAULT_CONFIG
    return ConfigEntry(name, value, source, read_only=read_only, synonyms=tuple(synonyms),
                       config_type=config_type, documentation=documentation)


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


def _broker_entry(config: BrokerConfig, name: str, value: str | None,
                  synonyms: list[ConfigSynonym]) -> ConfigEntry:
    definition = ALL_BROKER_CONFIG.get(base_name(name))
    hidden = is_sensitive(name)
    entry = _entry(name, None if hidden else value, synonyms, config_type(name),
                   definition.doc if definition is not None else "",
                   read_only=name not in DYNAMIC_UPDATE_MODES)
    return replace(entry, sensitive=hidden)


def broker_config_entries(config: BrokerConfig) -> list[ConfigEntry]:
    """This broker's configs, by name (Kafka's ``createBrokerConfigEntry`` with
    ``perBrokerConfig``): every broker config, and the custom ones set anywhere; read-only
    unless Kafka can change it at run time."""
    effective = config.effective
    return [_broker_entry(config, name, format_value(config[name]) if name in ALL_BROKER_CONFIG
                          else effective[name], _broker_synonyms(config, name))
            for name in sorted({*ALL_BROKER_CONFIG, *effective})]


def default_broker_config_entries(config: BrokerConfig) -> list[ConfigEntry]:
    """The cluster-wide dynamic defaults (the broker resource named ""), by name: only their
    DYNAMIC_DEFAULT_BROKER_CONFIG synonyms, as Kafka lists them."""
    return [_broker_entry(config, name, value,
                          [s for s in _broker_synonyms(config, name)
                           if s.source == ConfigSource.DYNAMIC_DEFAULT_BROKER_CONFIG])
            for name, value in sorted(config.dynamic_default.items())]


def validate_topic_overrides(config: BrokerConfig, overrides: Mapping[str, str]) -> None:
    """Kafka's ``LogConfig.validate`` of a ZooKeeper-mode broker without tiered storage: raise
    :class:`UnknownTopicConfigError` for a name that is no topic config, ``ConfigError`` for a
    value the broker's parser refuses or tiered storage asked for (the message names the
    config), :class:`InvalidConfigurationError` for settings that conflict."""
    for name in overrides:
        if name not in TOPIC_CONFIG_NAMES:
            raise UnknownTopicConfigError(f"Unknown topic config name: {name}")
    resolved = config.log_config(overrides)
    if resolved.min_compaction_lag_ms > resolved.max_compaction_lag_ms:
        raise InvalidConfigurationError(
            f"conflict topic config setting min.compaction.lag.ms "
            f"({resolved.min_compaction_lag_ms}) > max.compaction.lag.ms "
            f"({resolved.max_compaction_lag_ms})")
    if resolved.remote_log_delete_on_disable or resolved.remote_log_copy_disable:
        raise InvalidConfigurationError(
            "It is invalid to set `remote.log.delete.on.disable` or `remote.log.copy.disable` "
            "under Zookeeper's mode.")
    if resolved.remote_storage_enable:
        raise ConfigError("Tiered Storage functionality is disabled in the broker. Topic cannot "
                          "be configured with remote log storage.")


def _list_default(name: str) -> str:
    return format_value(topic_config_definition(name).default) or ""


def _list_type(name: str, broker: bool) -> bool:
    """Whether ``name`` is a LIST config; an unknown name is refused."""
    if broker:
        if base_name(name) not in ALL_BROKER_CONFIG:
            raise ConfigOperationError(f"Unknown config name: {name}")
        return config_type(name) == ConfigType.LIST
    if name not in TOPIC_CONFIG_NAMES:
        raise UnknownTopicConfigError(f"Unknown topic config name: {name}")
    return topic_config_type(name) == ConfigType.LIST


def apply_incremental_operations(overrides: Mapping[str, str],
                                 operations: Iterable[tuple[str, AlterConfigOpType, str | None]], *,
                                 broker: bool = False) -> dict[str, str]:
    """Kafka's ``prepareIncrementalConfigs``: the overrides (a topic's, or with ``broker`` the
    dynamic configs of a broker) after ``(name, op, value)`` edits. APPEND and SUBTRACT edit a
    list config's items, starting from its default when it has no override; on another config
    they raise :class:`ConfigOperationError`."""
    result = dict(overrides)
    for name, op, value in operations:
        if op == AlterConfigOpType.SET:
            result[name] = value
        elif op == AlterConfigOpType.DELETE:
            result.pop(name, None)
        else:
            if not _list_type(name, broker):
                verb = "append" if op == AlterConfigOpType.APPEND else "subtract"
                raise ConfigOperationError(
                    f"Config value {verb} is not allowed for config key: {name}")
            default = _DEFAULTS.get(base_name(name)) if broker else _list_default(name)
            old = [v for v in result.get(name, default or "").split(",") if v]
            given = [v for v in (value or "").split(",") if v]
            if op == AlterConfigOpType.APPEND:
                new = old + [v for v in given if v not in old]
            else:
                new = [v for v in old if v not in given]
            result[name] = ",".join(new)
    return result
