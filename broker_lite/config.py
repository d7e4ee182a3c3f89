"""Broker and topic configuration, with Kafka's own property names, defaults and types.

Broker settings come from a ``server.properties`` file (Java properties syntax); topic settings
(``/config/topics/[topic]`` overrides) use Kafka's topic config names, each falling back to the
broker default it is named after (``segment.bytes`` to ``log.segment.bytes``, ...).

>>> config = BrokerConfig({"log.segment.bytes": "1048576", "log.retention.hours": "1"})
>>> log = config.log_config({"cleanup.policy": "compact"})
>>> log.segment_bytes, log.retention_ms, log.cleanup_policy
(1048576, 3600000, ('compact',))
"""

import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass, fields
from pathlib import Path

from broker_lite.vocabulary import INT32_MAX, INT64_MAX

from .settings import (
    InvalidValue,
    Setting,
    boolean,
    choice,
    double,
    int16,
    int32,
    int64,
    list_of,
    string,
)

LONG_MAX = INT64_MAX


class ConfigError(ValueError):
    """A configuration value that is malformed or out of range; the message names the property."""


# -- Java properties files ------------------------------------------------------------------------

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def parse_properties(text: str) -> dict[str, str]:
    """Parse Java ``.properties`` text: ``key=value`` / ``key: value`` / ``key value`` lines,
    ``#`` and ``!`` comments, trailing-backslash continuations and backslash escapes."""
    result: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2:  # an odd number of backslashes continues the line
            logical += line[:-1]
            continue
        logical += line
        key, value = _split_property(logical)
        result[key] = value
        logical = ""
    if logical:
        key, value = _split_property(logical)
        result[key] = value
    return result


def _split_property(line: str) -> tuple[str, str]:
    match = re.match(r"((?:\\.|[^=:\s\\])*)\s*[=:]?\s*(.*)$", line, re.S)
    assert match is not None  # the pattern matches any string
    return _unescape(match.group(1)), _unescape(match.group(2))


def _unescape(text: str) -> str:
    def replace(match: re.Match) -> str:
        char = match.group(1)
        if char.startswith("u"):
            return chr(int(char[1:], 16))
        return _ESCAPES.get(char, char)

    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)", replace, text)


def read_properties(path: str | Path) -> dict[str, str]:
    return parse_properties(Path(path).read_text(encoding="utf-8"))


# -- typed definitions -----------------------------------------------------------------------------
# Each property with the type, bounds and choices Kafka's ConfigDef gives it (KafkaConfig,
# ServerLogConfigs, LogConfig, GroupCoordinatorConfig, TransactionStateManagerConfig, ZkConfigs).


def _defs(*defs: Setting) -> dict[str, Setting]:
    return {d.name: d for d in defs}


BROKER_CONFIG = _defs(
    Setting("broker.id", int32(-1), -1, "this broker's id; -1 takes one from /brokers/seqid"),
    Setting("listeners", string, "PLAINTEXT://127.0.0.1:9092", "where the broker listens"),
    Setting("advertised.listeners", string, None, "what clients are told; defaults to listeners"),
    Setting("listener.security.protocol.map", string,
            "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
            "listener name -> security protocol"),
    Setting("reserved.broker.max.id", int32(0), 1000, "generated broker ids start above this"),
    Setting("broker.rack", string, None, "the rack of this broker"),
    Setting("log.dirs", list_of(), None, "data directories; defaults to log.dir"),
    Setting("log.dir", string, "/tmp/kafka-logs", "data directory when log.dirs is unset"),
    Setting("num.partitions", int32(1), 1, "partitions of auto-created topics"),
    Setting("default.replication.factor", int32(1), 1, "replicas of auto-created topics"),
    Setting("auto.create.topics.enable", boolean, True, "create topics on first use"),
    Setting("delete.topic.enable", boolean, True, "allow topic deletion"),
    Setting("zookeeper.connect", string, None, "host:port[,host:port][/chroot]; unset: embedded"),
    Setting("zookeeper.port", int32(0, 65535), 0, "embedded ZooKeeper port; 0 picks a free one"),
    Setting("zookeeper.session.timeout.ms", int32(1), 18000, "ZooKeeper session timeout"),
    Setting("zookeeper.connection.timeout.ms", int32(1), None, "defaults to the session timeout"),
    Setting("message.max.bytes", int32(0), 1048588, "largest record batch accepted"),
    Setting("socket.request.max.bytes", int32(1), 104857600, "largest request accepted"),
    Setting("connections.max.idle.ms", int64(-1), 600000, "idle connections are closed after"),
    # The network layer (broker_lite.server.network; Kafka's SocketServerConfigs, ServerConfigs)
    Setting("num.network.threads", int32(1), 3, "processor threads, each serving connections"),
    Setting("num.io.threads", int32(1), 8, "request handler threads"),
    Setting("queued.max.requests", int32(1), 500,
            "requests queued for the handlers before the processors stop reading"),
    Setting("socket.send.buffer.bytes", int32(), 102400, "SO_SNDBUF of connections; -1: the OS's"),
    Setting("socket.receive.buffer.bytes", int32(), 102400,
            "SO_RCVBUF of connections; -1: the OS's"),
    Setting("socket.listen.backlog.size", int32(1), 50, "connections waiting to be accepted"),
    Setting("max.connections", int32(0), INT32_MAX,
            "connections at once; beyond it the listener waits for one to close"),
    Setting("max.connections.per.ip", int32(0), INT32_MAX,
            "connections from one address; beyond it new ones are closed at once"),
    Setting("max.connections.per.ip.overrides", string, "",
            "per-address limits, host:count,ip:count (Kafka's syntax)"),
    Setting("metrics.listener", string, None,
            "http://host:port serving the broker's metrics as JSON; unset: none (broker_lite's)"),
    Setting("offsets.topic.num.partitions", int32(1), 50, "partitions of __consumer_offsets"),
    Setting("offsets.topic.replication.factor", int16(1), 3,
            "replicas of __consumer_offsets (fewer while fewer brokers are alive)"),
    Setting("offsets.topic.segment.bytes", int32(1), 104857600,
            "segment size of __consumer_offsets"),
    Setting("offsets.topic.compression.codec", int32(0, 4), 0,
            "codec of coordinator batches: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd"),
    Setting("offsets.retention.minutes", int32(1), 10080, "how long committed offsets are kept"),
    Setting("offsets.retention.check.interval.ms", int64(1), 600000,
            "how often expired offsets are removed"),
    Setting("offsets.load.buffer.size", int32(1), 5242880,
            "bytes read at a time when loading __consumer_offsets"),
    Setting("offsets.commit.timeout.ms", int32(1), 5000, "how long a commit may wait"),
    Setting("offset.metadata.max.bytes", int32(0), 4096, "longest metadata of a commit"),
    Setting("group.min.session.timeout.ms", int32(0), 6000, "shortest session timeout accepted"),
    Setting("group.max.session.timeout.ms", int32(0), 1800000, "longest session timeout accepted"),
    Setting("group.initial.rebalance.delay.ms", int32(0), 3000,
            "how long a new group waits for more members before its first rebalance"),
    Setting("group.max.size", int32(1), INT32_MAX, "most members in one group"),
    Setting("transaction.state.log.num.partitions", int32(1), 50,
            "partitions of __transaction_state"),
    Setting("transaction.state.log.replication.factor", int16(1), 3,
            "replicas of __transaction_state (fewer while fewer brokers are alive)"),
    Setting("transaction.state.log.segment.bytes", int32(1), 104857600,
            "segment size of __transaction_state"),
    Setting("transaction.state.log.load.buffer.size", int32(1), 5242880,
            "bytes read at a time when loading __transaction_state"),
    Setting("transaction.max.timeout.ms", int32(1), 900000,
            "longest transaction timeout a producer may ask for"),
    Setting("transaction.abort.timed.out.transaction.cleanup.interval.ms", int32(1), 10000,
            "how often transactions open past their timeout are aborted"),
    Setting("transactional.id.expiration.ms", int32(1), 604800000,
            "idle time after which a transactional id may be forgotten"),
    Setting("log.segment.bytes", int32(14), 1073741824, "segment size before a roll"),
    Setting("log.roll.ms", int64(1), None, "segment age before a roll"),
    Setting("log.roll.hours", int32(1), 168, "segment age before a roll, in hours"),
    Setting("log.index.size.max.bytes", int32(4), 10485760, "offset index size before a roll"),
    Setting("log.index.interval.bytes", int32(0), 4096, "bytes between offset index entries"),
    Setting("log.flush.interval.messages", int64(1), LONG_MAX, "records between fsyncs"),
    Setting("log.flush.interval.ms", int64(0), None, "milliseconds between fsyncs"),
    Setting("log.flush.scheduler.interval.ms", int64(0), LONG_MAX, "flush check interval"),
    Setting("log.retention.ms", int64(-1), None, "retention by time; -1 keeps forever"),
    Setting("log.retention.minutes", int32(-1), None, "retention by time, in minutes"),
    Setting("log.retention.hours", int32(-1), 168, "retention by time, in hours"),
    Setting("log.retention.bytes", int64(-1), -1, "retention by size per partition; -1: none"),
    Setting("log.retention.check.interval.ms", int64(1), 300000, "how often retention runs"),
    Setting("log.cleanup.policy", list_of("delete", "compact"), ("delete",), "delete, compact"),
    Setting("log.cleaner.enable", boolean, True, "run log compaction"),
    Setting("log.cleaner.backoff.ms", int64(0), 15000, "pause between compaction passes"),
    Setting("log.cleaner.delete.retention.ms", int64(0), 86400000, "tombstone retention"),
    Setting("log.cleaner.min.compaction.lag.ms", int64(0), 0, "minimum record age to compact"),
    Setting("log.cleaner.min.cleanable.ratio", double(0, 1), 0.5,
            "dirty ratio that triggers cleaning"),
    Setting("log.segment.delete.delay.ms", int64(0), 60000, "delay before a .deleted file goes"),
    Setting("log.message.timestamp.type", choice("CreateTime", "LogAppendTime"), "CreateTime",
            "which timestamp records keep"),
    Setting("log.message.format.version", string, "3.0-IV1", "message format written"),
    Setting("compression.type", choice("producer", "none", "gzip", "snappy", "lz4", "zstd"),
            "producer", "codec of stored batches; producer keeps the producer's"),
)

# Topic config name -> the broker config that provides its default.
TOPIC_TO_BROKER = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.ms": "log.retention.ms",
    "retention.bytes": "log.retention.bytes",
    "cleanup.policy": "log.cleanup.policy",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.format.version": "log.message.format.version",
    "compression.type": "compression.type",
}


@dataclass(frozen=True)
class LogConfig:
    """The settings of one partition's log, resolved from topic overrides and broker defaults."""

    segment_bytes: int = 1073741824
    segment_ms: int = 168 * 3600 * 1000
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    retention_ms: int = 168 * 3600 * 1000
    retention_bytes: int = -1
    cleanup_policy: tuple[str, ...] = ("delete",)
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    min_cleanable_dirty_ratio: float = 0.5
    file_delete_delay_ms: int = 60000
    max_message_bytes: int = 1048588
    message_timestamp_type: str = "CreateTime"
    message_format_version: str = "3.0-IV1"
    compression_type: str = "producer"

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy


def _parse(name: str, definition: Setting, value: str):
    """``value`` of property ``name`` (a broker config, or a topic config parsed as the broker
    config ``definition`` it is named after)."""
    try:
        return definition.value_of(value)
    except InvalidValue as exc:
        raise ConfigError(f"invalid value {value!r} for {name}: {exc.reason}") from None


class BrokerConfig(Mapping):
    """Typed broker settings. Unknown names are kept (plugins, client settings) with a warning,
    as Kafka does; malformed values of known names raise :class:`ConfigError`."""

    def __init__(self, properties: Mapping[str, str] | None = None):
        self.originals = dict(properties or {})
        self._values = {name: d.default for name, d in BROKER_CONFIG.items()}
        for name, value in self.originals.items():
            if name in BROKER_CONFIG:
                self._values[name] = _parse(name, BROKER_CONFIG[name], value)
            else:
                warnings.warn(f"unknown broker config {name!r} is ignored", stacklevel=2)

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

    def _broker_default(self, broker_name: str):
        """Broker defaults with Kafka's precedence among their unit variants."""
        if broker_name == "log.roll.ms":
            ms = self["log.roll.ms"]
            return ms if ms is not None else self["log.roll.hours"] * 3600 * 1000
        if broker_name == "log.retention.ms":
            for name, factor in (("log.retention.ms", 1), ("log.retention.minutes", 60_000),
                                 ("log.retention.hours", 3_600_000)):
                if self[name] is not None:
                    return self[name] if self[name] < 0 else self[name] * factor
        if broker_name == "log.flush.interval.ms":
            ms = self["log.flush.interval.ms"]
            return ms if ms is not None else self["log.flush.scheduler.interval.ms"]
        return self[broker_name]

    def log_config(self, topic_overrides: Mapping[str, str] | None = None) -> LogConfig:
        """A partition's :class:`LogConfig`: topic overrides first, then the broker defaults."""
        values = {}
        overrides = dict(topic_overrides or {})
        unknown = set(overrides) - set(TOPIC_TO_BROKER)
        if unknown:
            raise ConfigError(f"unknown topic config {sorted(unknown)[0]!r}; known: "
                              f"{', '.join(sorted(TOPIC_TO_BROKER))}")
        for topic_name, broker_name in TOPIC_TO_BROKER.items():
            field = topic_name.replace(".", "_")
            if topic_name in overrides:
                values[field] = _parse(topic_name, BROKER_CONFIG[broker_name],
                                       overrides[topic_name])
            else:
                values[field] = self._broker_default(broker_name)
        assert set(values) == {f.name for f in fields(LogConfig)}
        return LogConfig(**values)
