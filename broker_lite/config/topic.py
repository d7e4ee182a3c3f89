"""Topic settings: Kafka's topic config names, each falling back to the broker setting it is
named after (``segment.bytes`` to ``log.segment.bytes``, ...), and :class:`LogConfig`, the
resolved settings of one partition's log."""

from dataclasses import dataclass

from .definitions import BROKER_CONFIG, LONG_MAX, _defs, _throttled_replicas
from .format_versions import record_version
from .parsers import Setting, boolean

# Topic config name -> the broker config that provides its default (Kafka's
# ServerTopicConfigSynonyms).
TOPIC_TO_BROKER = {
    "segment.bytes": "log.segment.bytes",
    "segment.ms": "log.roll.ms",
    "segment.jitter.ms": "log.roll.jitter.ms",
    "segment.index.bytes": "log.index.size.max.bytes",
    "index.interval.bytes": "log.index.interval.bytes",
    "flush.messages": "log.flush.interval.messages",
    "flush.ms": "log.flush.interval.ms",
    "retention.ms": "log.retention.ms",
    "retention.bytes": "log.retention.bytes",
    "cleanup.policy": "log.cleanup.policy",
    "delete.retention.ms": "log.cleaner.delete.retention.ms",
    "min.compaction.lag.ms": "log.cleaner.min.compaction.lag.ms",
    "max.compaction.lag.ms": "log.cleaner.max.compaction.lag.ms",
    "min.cleanable.dirty.ratio": "log.cleaner.min.cleanable.ratio",
    "file.delete.delay.ms": "log.segment.delete.delay.ms",
    "max.message.bytes": "message.max.bytes",
    "message.timestamp.type": "log.message.timestamp.type",
    "message.timestamp.difference.max.ms": "log.message.timestamp.difference.max.ms",
    "message.timestamp.before.max.ms": "log.message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms": "log.message.timestamp.after.max.ms",
    "message.format.version": "log.message.format.version",
    "message.downconversion.enable": "log.message.downconversion.enable",
    "compression.type": "compression.type",
    "compression.gzip.level": "compression.gzip.level",
    "compression.lz4.level": "compression.lz4.level",
    "compression.zstd.level": "compression.zstd.level",
    "preallocate": "log.preallocate",
    "unclean.leader.election.enable": "unclean.leader.election.enable",
    "min.insync.replicas": "min.insync.replicas",
    "local.retention.ms": "log.local.retention.ms",
    "local.retention.bytes": "log.local.retention.bytes",
}

# Topic configs without a broker default (Kafka's LogConfig defines them alone).
TOPIC_ONLY_CONFIG = _defs(
    Setting("remote.storage.enable", boolean, False, "tiered storage for this topic"),
    Setting("remote.log.copy.disable", boolean, False,
            "stop copying segments to tiered storage"),
    Setting("remote.log.delete.on.disable", boolean, False,
            "delete tiered data when tiered storage is turned off"),
    Setting("leader.replication.throttled.replicas", _throttled_replicas, (),
            "replicas whose leader-side replication is throttled"),
    Setting("follower.replication.throttled.replicas", _throttled_replicas, (),
            "replicas whose follower-side replication is throttled"),
)

#: Every topic config name of Kafka 3.9, sorted.
TOPIC_CONFIG_NAMES = tuple(sorted({*TOPIC_TO_BROKER, *TOPIC_ONLY_CONFIG}))


def topic_config_definition(name: str) -> Setting:
    """The parser, default and doc of topic config ``name`` (KeyError for an unknown name): its
    broker default's, or its own when it has none."""
    if name in TOPIC_TO_BROKER:
        return BROKER_CONFIG[TOPIC_TO_BROKER[name]]
    return TOPIC_ONLY_CONFIG[name]


@dataclass(frozen=True)
class LogConfig:
    """The settings of one partition's log, resolved from topic overrides and broker defaults:
    one field per topic config (its name with dots as underscores)."""

    segment_bytes: int = 1073741824
    segment_ms: int = 168 * 3600 * 1000
    segment_jitter_ms: int = 0
    segment_index_bytes: int = 10485760
    index_interval_bytes: int = 4096
    flush_messages: int = LONG_MAX
    flush_ms: int = LONG_MAX
    retention_ms: int = 168 * 3600 * 1000
    retention_bytes: int = -1
    cleanup_policy: tuple[str, ...] = ("delete",)
    delete_retention_ms: int = 86400000
    min_compaction_lag_ms: int = 0
    max_compaction_lag_ms: int = LONG_MAX
    min_cleanable_dirty_ratio: float = 0.5
    file_delete_delay_ms: int = 60000
    max_message_bytes: int = 1048588
    message_timestamp_type: str = "CreateTime"
    message_timestamp_difference_max_ms: int = LONG_MAX
    message_timestamp_before_max_ms: int = LONG_MAX
    message_timestamp_after_max_ms: int = LONG_MAX
    message_format_version: str = "3.0-IV1"
    message_downconversion_enable: bool = True
    compression_type: str = "producer"
    compression_gzip_level: int = -1
    compression_lz4_level: int = 9
    compression_zstd_level: int = 3
    preallocate: bool = False
    unclean_leader_election_enable: bool = False
    min_insync_replicas: int = 1
    local_retention_ms: int = -2
    local_retention_bytes: int = -2
    remote_storage_enable: bool = False
    remote_log_copy_disable: bool = False
    remote_log_delete_on_disable: bool = False
    leader_replication_throttled_replicas: tuple[str, ...] = ()
    follower_replication_throttled_replicas: tuple[str, ...] = ()

    @property
    def record_version(self) -> int:
        """The message format (magic) appended records are written in."""
        return record_version(self.message_format_version)

    @property
    def compact(self) -> bool:
        return "compact" in self.cleanup_policy

    @property
    def delete(self) -> bool:
        return "delete" in self.cleanup_policy

    @property
    def max_segment_ms(self) -> int:
        """The age at which a segment rolls: ``segment.ms``, or ``max.compaction.lag.ms`` when
        smaller on a compacted topic, so the active segment's records become cleanable in time
        (Kafka's ``maxSegmentMs``)."""
        if self.compact and self.max_compaction_lag_ms > 0:
            return min(self.max_compaction_lag_ms, self.segment_ms)
        return self.segment_ms

    @property
    def timestamp_before_max_ms(self) -> int:
        """``message.timestamp.before.max.ms``, or the deprecated difference setting while it
        is unset (Kafka's ``getMessageTimestampBeforeMaxMs``)."""
        if self.message_timestamp_before_max_ms != LONG_MAX:
            return self.message_timestamp_before_max_ms
        return self.message_timestamp_difference_max_ms

    @property
    def timestamp_after_max_ms(self) -> int:
        """``message.timestamp.after.max.ms``, or the deprecated difference setting while it is
        unset."""
        if self.message_timestamp_after_max_ms != LONG_MAX:
            return self.message_timestamp_after_max_ms
        return self.message_timestamp_difference_max_ms
