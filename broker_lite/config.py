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
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from pathlib import Path

LONG_MAX = 2**63 - 1


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


@dataclass(frozen=True)
class ConfigDef:
    """One property: its Kafka name, how its string value parses, its default (None: unset)."""

    name: str
    parse: Callable[[str], object]
    default: object
    doc: str


def _int(low: int | None = None, high: int | None = None) -> Callable[[str], int]:
    def parse(text: str) -> int:
        value = int(text.strip())
        if (low is not None and value < low) or (high is not None and value > high):
            raise ValueError(f"must be in [{low}, {high if high is not None else 'inf'}]")
        return value

    return parse


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError("must be true or false")
    return lowered == "true"


def _double(text: str) -> float:
    return float(text.strip())


def _string(text: str) -> str:
    return text.strip()


def _choice(*choices: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text.strip() not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return text.strip()

    return parse


def _list(*allowed: str) -> Callable[[str], tuple[str, ...]]:
    def parse(text: str) -> tuple[str, ...]:
        items = tuple(item.strip() for item in text.split(",") if item.strip())
        if allowed and any(item not in allowed for item in items):
            raise ValueError(f"items must be among {', '.join(allowed)}")
        return items

    return parse


def _defs(*defs: ConfigDef) -> dict[str, ConfigDef]:
    return {d.name: d for d in defs}


BROKER_CONFIG = _defs(
    ConfigDef("broker.id", _int(-1), -1, "this broker's id; -1 takes one from /brokers/seqid"),
    ConfigDef("listeners", _string, "PLAINTEXT://127.0.0.1:9092", "where the broker listens"),
    ConfigDef("advertised.listeners", _string, None, "what clients are told; defaults to listeners"),
    ConfigDef("listener.security.protocol.map", _string,
              "PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT,SASL_SSL:SASL_SSL",
              "listener name -> security protocol"),
    ConfigDef("reserved.broker.max.id", _int(0), 1000, "generated broker ids start above this"),
    ConfigDef("broker.rack", _string, None, "the rack of this broker"),
    ConfigDef("log.dirs", _list(), None, "data directories; defaults to log.dir"),
    ConfigDef("log.dir", _string, "/tmp/kafka-logs", "data directory when log.dirs is unset"),
    ConfigDef("num.partitions", _int(1), 1, "partitions of auto-created topics"),
    ConfigDef("default.replication.factor", _int(1), 1, "replicas of auto-created topics"),
    ConfigDef("auto.create.topics.enable", _bool, True, "create topics on first use"),
    ConfigDef("delete.topic.enable", _bool, True, "allow topic deletion"),
    ConfigDef("zookeeper.connect", _string, None, "host:port[,host:port][/chroot]; unset: embedded"),
    ConfigDef("zookeeper.port", _int(0, 65535), 0, "embedded ZooKeeper port; 0 picks a free one"),
    ConfigDef("zookeeper.session.timeout.ms", _int(1), 18000, "ZooKeeper session timeout"),
    ConfigDef("zookeeper.connection.timeout.ms", _int(1), None, "defaults to the session timeout"),
    ConfigDef("message.max.bytes", _int(0), 1048588, "largest record batch accepted"),
    ConfigDef("socket.request.max.bytes", _int(1), 104857600, "largest request accepted"),
    ConfigDef("connections.max.idle.ms", _int(-1), 600000, "idle connections are closed after"),
    ConfigDef("offsets.topic.num.partitions", _int(1), 50, "partitions of __consumer_offsets"),
    ConfigDef("offsets.topic.replication.factor", _int(1, 32767), 3,
              "replicas of __consumer_offsets (fewer while fewer brokers are alive)"),
    ConfigDef("offsets.topic.segment.bytes", _int(1), 104857600,
              "segment size of __consumer_offsets"),
    ConfigDef("offsets.topic.compression.codec", _int(0, 4), 0,
              "codec of coordinator batches: 0 none, 1 gzip, 2 snappy, 3 lz4, 4 zstd"),
    ConfigDef("offsets.retention.minutes", _int(1), 10080, "how long committed offsets are kept"),
    ConfigDef("offsets.retention.check.interval.ms", _int(1), 600000,
              "how often expired offsets are removed"),
    ConfigDef("offsets.load.buffer.size", _int(1), 5242880,
              "bytes read at a time when loading __consumer_offsets"),
    ConfigDef("offsets.commit.timeout.ms", _int(1), 5000, "how long a commit may wait"),
    ConfigDef("offset.metadata.max.bytes", _int(0), 4096, "longest metadata of a commit"),
    ConfigDef("group.min.session.timeout.ms", _int(0), 6000, "shortest session timeout accepted"),
    ConfigDef("group.max.session.timeout.ms", _int(0), 1800000, "longest session timeout accepted"),
    ConfigDef("group.initial.rebalance.delay.ms", _int(0), 3000,
              "how long a new group waits for more members before its first rebalance"),
    ConfigDef("group.max.size", _int(1), 2147483647, "most members in one group"),
    ConfigDef("transaction.state.log.num.partitions", _int(1), 50,
              "partitions of __transaction_state"),
    ConfigDef("transaction.state.log.replication.factor", _int(1, 32767), 3,
              "replicas of __transaction_state (fewer while fewer brokers are alive)"),
    ConfigDef("transaction.state.log.segment.bytes", _int(1), 104857600,
              "segment size of __transaction_state"),
    ConfigDef("transaction.state.log.load.buffer.size", _int(1), 5242880,
              "bytes read at a time when loading __transaction_state"),
    ConfigDef("transaction.max.timeout.ms", _int(1), 900000,
              "longest transaction timeout a producer may ask for"),
    ConfigDef("transaction.abort.timed.out.transaction.cleanup.interval.ms", _int(1), 10000,
              "how often transactions open past their timeout are aborted"),
    ConfigDef("transactional.id.expiration.ms", _int(1), 604800000,
              "idle time after which a transactional id may be forgotten"),
    ConfigDef("log.segment.bytes", _int(14), 1073741824, "segment size before a roll"),
    ConfigDef("log.roll.ms", _int(1), None, "segment age before a roll"),
    ConfigDef("log.roll.hours", _int(1), 168, "segment age before a roll, in hours"),
    ConfigDef("log.index.size.max.bytes", _int(4), 10485760, "offset index size before a roll"),
    ConfigDef("log.index.interval.bytes", _int(0), 4096, "bytes between offset index entries"),
    ConfigDef("log.flush.interval.messages", _int(1), LONG_MAX, "records between fsyncs"),
    ConfigDef("log.flush.interval.ms", _int(0), None, "milliseconds between fsyncs"),
    ConfigDef("log.flush.scheduler.interval.ms", _int(0), LONG_MAX, "flush check interval"),
    ConfigDef("log.retention.ms", _int(-1), None, "retention by time; -1 keeps forever"),
    ConfigDef("log.retention.minutes", _int(-1), None, "retention by time, in minutes"),
    ConfigDef("log.retention.hours", _int(-1), 168, "retention by time, in hours"),
    ConfigDef("log.retention.bytes", _int(-1), -1, "retention by size per partition; -1: none"),
    ConfigDef("log.retention.check.interval.ms", _int(1), 300000, "how often retention runs"),
    ConfigDef("log.cleanup.policy", _list("delete", "compact"), ("delete",), "delete, compact"),
    ConfigDef("log.cleaner.enable", _bool, True, "run log compaction"),
    ConfigDef("log.cleaner.backoff.ms", _int(0), 15000, "pause between compaction passes"),
    ConfigDef("log.cleaner.delete.retention.ms", _int(0), 86400000, "tombstone retention"),
    ConfigDef("log.cleaner.min.compaction.lag.ms", _int(0), 0, "minimum record age to compact"),
    ConfigDef("log.cleaner.min.cleanable.ratio", _double, 0.5, "dirty ratio that triggers cleaning"),
    ConfigDef("log.segment.delete.delay.ms", _int(0), 60000, "delay before a .deleted file goes"),
    ConfigDef("log.message.timestamp.type", _choice("CreateTime", "LogAppendTime"), "CreateTime",
              "which timestamp records keep"),
    ConfigDef("log.message.format.version", _string, "3.0-IV1", "message format written"),
    ConfigDef("compression.type", _choice("producer", "none", "gzip", "snappy", "lz4", "zstd"),
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


def _parse(definition: ConfigDef, value: str):
    try:
        return definition.parse(value)
    except ValueError as exc:
        raise ConfigError(f"invalid value {value!r} for {definition.name}: {exc}") from None


class BrokerConfig(Mapping):
    """Typed broker settings. Unknown names are kept (plugins, client settings) with a warning,
    as Kafka does; malformed values of known names raise :class:`ConfigError`."""

    def __init__(self, properties: Mapping[str, str] | None = None):
        self.originals = dict(properties or {})
        self._values = {name: d.default for name, d in BROKER_CONFIG.items()}
        for name, value in self.originals.items():
            if name in BROKER_CONFIG:
                self._values[name] = _parse(BROKER_CONFIG[name], value)
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
                definition = BROKER_CONFIG[broker_name]
                values[field] = _parse(ConfigDef(topic_name, definition.parse, None, ""),
                                       overrides[topic_name])
            else:
                values[field] = self._broker_default(broker_name)
        assert set(values) == {f.name for f in fields(LogConfig)}
        return LogConfig(**values)
