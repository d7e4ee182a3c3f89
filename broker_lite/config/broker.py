"""Broker and topic configuration, with Kafka's own property names, defaults and types.

Broker settings come from a ``server.properties`` file (Java properties syntax); topic settings
(``/config/topics/[topic]`` overrides) use Kafka's topic config names, each falling back to the
broker default it is named after (``segment.bytes`` to ``log.segment.bytes``, ...).

Every topic config of Kafka 3.9 (``TopicConfig``, ``LogConfig``) is accepted with Kafka's type,
bounds and default, falling back to the broker config :data:`TOPIC_TO_BROKER` names (the few
without one have their own default, :data:`TOPIC_ONLY_CONFIG`); those without an effect in
broker_lite are stored and described all the same:

=======================================  ===========================================================
topic config                             effect here
=======================================  ===========================================================
cleanup.policy                           retention (delete) and compaction (compact)
compression.type                         none: batches are stored as the producer compressed them
compression.gzip.level, .lz4.level,      none (no recompression)
compression.zstd.level
delete.retention.ms                      how long compaction keeps tombstones
file.delete.delay.ms                     delay before the files of a deleted segment go
flush.messages, flush.ms                 fsync every so many records, milliseconds
follower.replication.throttled.replicas  none: no replication quotas
index.interval.bytes                     bytes between offset index entries
leader.replication.throttled.replicas    none: no replication quotas
local.retention.bytes, .ms               none: no tiered storage
max.compaction.lag.ms                    dirty records older than this are compacted whatever the
                                         dirty ratio; the active segment of a compacted topic rolls
                                         by then
max.message.bytes                        largest batch accepted
message.downconversion.enable            none
message.format.version                   none (Kafka 3 ignores it too)
message.timestamp.after.max.ms,          CreateTime timestamps outside the bounds are refused
message.timestamp.before.max.ms          (INVALID_TIMESTAMP, naming each record)
message.timestamp.difference.max.ms      both bounds, while they are unset (deprecated)
message.timestamp.type                   CreateTime or LogAppendTime
min.cleanable.dirty.ratio                share of dirty bytes that makes the cleaner pick a log
min.compaction.lag.ms                    records younger than this stay uncompacted
min.insync.replicas                      in-sync replicas an acks=all append needs (else
                                         NOT_ENOUGH_REPLICAS)
preallocate                              none
remote.storage.enable                    true is refused: tiered storage is off
remote.log.copy.disable,                 true is refused, as in ZooKeeper mode
remote.log.delete.on.disable
retention.bytes, retention.ms            retention by size and by time
segment.bytes, segment.ms                segments roll by size and by age
segment.index.bytes                      index size that rolls a segment
segment.jitter.ms                        none: segments roll at segment.ms exactly
unclean.leader.election.enable           the controller may elect a replica outside the ISR
                                         when the whole ISR is down
=======================================  ===========================================================

>>> config = BrokerConfig({"log.segment.bytes": "1048576", "log.retention.hours": "1"})
>>> log = config.log_config({"cleanup.policy": "compact"})
>>> log.segment_bytes, log.retention_ms, log.cleanup_policy
(1048576, 3600000, ('compact',))
"""

import re
import warnings
from collections.abc import Mapping
from dataclasses import fields
from pathlib import Path

from .definitions import ALL_BROKER_CONFIG, BROKER_CONFIG, UNIT_SYNONYMS
from .format_versions import ignores_message_format_version, release_line_index
from .parsers import ConfigError, InvalidValue, Setting
from .properties import read_properties
from .topic import (
    TOPIC_CONFIG_NAMES,
    TOPIC_ONLY_CONFIG,
    TOPIC_TO_BROKER,
    LogConfig,
    topic_config_definition,
)


def _parse(name: str, definition: Setting, value: str):
    """``value`` of property ``name`` (a broker config, or a topic config parsed as the broker
    config ``definition`` it is named after)."""
    try:
        return definition.value_of(value)
    except InvalidValue as exc:
        raise ConfigError(f"invalid value {value!r} for {name}: {exc.reason}") from None


def _resolve(properties: Mapping[str, str]) -> dict:
    """Every broker config's typed value: its default, or the value ``properties`` give it."""
    values = {name: d.default for name, d in ALL_BROKER_CONFIG.items()}
    for name, value in properties.items():
        if name in ALL_BROKER_CONFIG:
            values[name] = _parse(name, ALL_BROKER_CONFIG[name], value)
    return values


def _override(properties: dict[str, str], overrides: Mapping[str, str]) -> None:
    """Kafka's ``overrideProps``: each override replaces the config and its unit synonyms, so a
    dynamic ``log.retention.hours`` wins over a static ``log.retention.ms``."""
    for name, value in overrides.items():
        group = next((g for g in UNIT_SYNONYMS.values() if name in (n for n, _ in g)),
                     ((name, 1),))
        for synonym, _ in group:
            properties.pop(synonym, None)
        properties[name] = value


_LISTENER_CONFIG = re.compile(r"listener\.name\.[^.]+\.(.+)")
_PER_MECHANISM = frozenset({
    "sasl.jaas.config", "connections.max.reauth.ms", "sasl.server.callback.handler.class",
    "sasl.oauthbearer.jwks.endpoint.url", "sasl.oauthbearer.jwks.endpoint.refresh.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.ms",
    "sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms", "sasl.oauthbearer.expected.audience",
    "sasl.oauthbearer.expected.issuer", "sasl.oauthbearer.scope.claim.name",
    "sasl.oauthbearer.sub.claim.name", "sasl.oauthbearer.clock.skew.seconds"})


def is_listener_config(name: str) -> bool:
    """A setting of one listener: ``listener.name.<listener>.<config>``, or
    ``listener.name.<listener>.<mechanism>.sasl.jaas.config`` (and
    ``...<mechanism>.connections.max.reauth.ms``), as Kafka's ``ListenerName.configPrefix``
    and ``JaasContext.loadServerContext`` name them.

    >>> is_listener_config("listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config")
    True
    >>> is_listener_config("listener.name.ssl.ssl.keystore.location"), is_listener_config("x.y")
    (True, False)
    """
    match = _LISTENER_CONFIG.fullmatch(name)
    if match is None:
        return False
    config = match.group(1)
    return config in ALL_BROKER_CONFIG or config.partition(".")[2] in _PER_MECHANISM


#: The prefix of the settings of a schema registry run in the broker's process
#: (``schema.registry.listeners``, ``schema.registry.kafkastore.topic``, ...).
REGISTRY_PREFIX = "schema.registry."


class BrokerConfig(Mapping):
    """Typed broker settings. Unknown names are kept (plugins, client settings) with a warning,
    as Kafka does; malformed values of known names raise :class:`ConfigError`.

    ``originals`` are the static settings (server.properties and command-line overrides).
    Dynamic broker configs, set at run time and kept in ZooKeeper, override them once
    :meth:`update_dynamic` is told of them: the broker's own (``dynamic_broker``) over the
    cluster-wide defaults (``dynamic_default``) over the static settings, as Kafka's
    ``DynamicBrokerConfig`` orders them. The object is updated in place, so every part of the
    broker holding it reads the new values.

    >>> config = BrokerConfig({"log.retention.ms": "1000"})
    >>> config.update_dynamic({"log.retention.hours": "2"}, {})
    >>> config["log.retention.hours"], config["log.retention.ms"]
    (2, None)
    """

    def __init__(self, properties: Mapping[str, str] | None = None):
        self.originals = dict(properties or {})
        self.dynamic_default: dict[str, str] = {}
        self.dynamic_broker: dict[str, str] = {}
        self._values = _resolve(self.originals)
        for name in self.originals:
            if name not in ALL_BROKER_CONFIG and not is_listener_config(name) \
                    and not name.startswith(REGISTRY_PREFIX):
                warnings.warn(f"unknown broker config {name!r} is ignored", stacklevel=2)

    def with_dynamic(self, default: Mapping[str, str], broker: Mapping[str, str]) -> dict:
        """The settings in force with these dynamic layers: the static ones overridden by the
        cluster-wide defaults, then by the broker's own (Kafka's ``updateCurrentConfig``)."""
        merged = dict(self.originals)
        _override(merged, default)
        _override(merged, broker)
        return merged

    def update_dynamic(self, default: Mapping[str, str], broker: Mapping[str, str]) -> None:
        """Put new dynamic layers in force, all values at once. Raises :class:`ConfigError`
        for a malformed value (the layers are checked before they are stored, so this
        means a bug)."""
        values = _resolve(self.with_dynamic(default, broker))
        self.dynamic_default, self.dynamic_broker = dict(default), dict(broker)
        self._values = values

    @property
    def effective(self) -> dict[str, str]:
        """The settings in force, as text (custom names included)."""
        return self.with_dynamic(self.dynamic_default, self.dynamic_broker)

    @classmethod
    def from_file(cls, path: str | Path, overrides: Mapping[str, str] | None = None):
        return cls({**read_properties(path), **(overrides or {})})

    def __getitem__(self, name: str):
        return self._values[name]

    def __iter__(self):
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    @property
    def log_dirs(self) -> tuple[str, ...]:
        return self["log.dirs"] or (self["log.dir"],)

    def broker_default(self, broker_name: str):
        """A broker config's value, with Kafka's precedence among its unit variants
        (:data:`UNIT_SYNONYMS`): ``log.retention.ms`` set wins over ``log.retention.minutes``,
        which wins over ``log.retention.hours``; a negative value means "none" in any unit."""
        for name, factor in UNIT_SYNONYMS.get(broker_name, ((broker_name, 1),)):
            value = self[name]
            if value is not None:
                return value if factor == 1 or value < 0 else value * factor
        return None

    def log_config(self, topic_overrides: Mapping[str, str] | None = None) -> LogConfig:
        """A partition's :class:`LogConfig`: topic overrides first, then the broker defaults."""
        values = {}
        overrides = dict(topic_overrides or {})
        unknown = set(overrides) - set(TOPIC_CONFIG_NAMES)
        if unknown:
            raise ConfigError(f"unknown topic config {sorted(unknown)[0]!r}; known: "
                              f"{', '.join(TOPIC_CONFIG_NAMES)}")
        for topic_name in TOPIC_CONFIG_NAMES:
            field = topic_name.replace(".", "_")
            if topic_name in overrides:
                values[field] = _parse(topic_name, topic_config_definition(topic_name),
                                       overrides[topic_name])
            elif topic_name in TOPIC_TO_BROKER:
                values[field] = self.broker_default(TOPIC_TO_BROKER[topic_name])
            else:
                values[field] = TOPIC_ONLY_CONFIG[topic_name].default
        values["message_format_version"] = self._message_format_version(overrides)
        assert set(values) == {f.name for f in fields(LogConfig)}
        return LogConfig(**values)

    def _message_format_version(self, overrides: Mapping[str, str]) -> str:
        """The message format version a log writes, as Kafka 3.9's ``KafkaConfig`` and
        ``TopicConfigHandler.excludedConfigs`` decide it: the default (3.0-IV1) from
        inter-broker protocol 3.0 on; before, a topic's own unless newer than the protocol."""
        protocol = self["inter.broker.protocol.version"]
        if ignores_message_format_version(protocol):
            return BROKER_CONFIG["log.message.format.version"].default
        topic = overrides.get("message.format.version")
        if topic is not None and release_line_index(topic) <= release_line_index(protocol):
            return topic
        return self["log.message.format.version"]
