"""The coordinator's settings, read from the broker's (Kafka's names and defaults).

=======================================  ===========  ============================================
broker setting                           default      meaning
=======================================  ===========  ============================================
offsets.topic.num.partitions             50           partitions of ``__consumer_offsets``
offsets.topic.replication.factor         3            its replicas (fewer when fewer brokers live)
offsets.topic.segment.bytes              104857600    its segment size (kept small for compaction)
offsets.topic.compression.codec          0            codec of the batches written (0: none,
                                                      1: gzip, 2: snappy, 3: lz4, 4: zstd)
offsets.retention.minutes                10080        how long committed offsets are kept
offsets.retention.check.interval.ms      600000       how often expired offsets are removed
offsets.load.buffer.size                 5242880      bytes read at a time when loading
offsets.commit.timeout.ms                5000         how long a commit may wait for the ISR
offsets.commit.required.acks             -1           -1: commits wait for the whole ISR
offset.metadata.max.bytes                4096         longest metadata string of a commit
group.min.session.timeout.ms             6000         shortest session timeout accepted
group.max.session.timeout.ms             1800000      longest session timeout accepted
group.initial.rebalance.delay.ms         3000         wait for more members of a new group
group.max.size                           2147483647   most members in one group
=======================================  ===========  ============================================
"""

from dataclasses import dataclass

from broker_lite.common.vocabulary import INT32_MAX
from broker_lite.records import CompressionType


@dataclass(frozen=True)
class OffsetConfig:
    num_partitions: int = 50
    replication_factor: int = 3
    segment_bytes: int = 104857600
    compression: CompressionType = CompressionType.NONE
    retention_ms: int = 10080 * 60_000
    retention_check_interval_ms: int = 600_000
    load_buffer_size: int = 5 * 1024 * 1024
    commit_timeout_ms: int = 5000
    max_metadata_size: int = 4096
    commit_required_acks: int = -1

    @property
    def replication_timeout_ms(self) -> int | None:
        """How long a write waits for the ISR (``offsets.commit.timeout.ms`` with
        ``offsets.commit.required.acks`` -1; None: it does not wait)."""
        return self.commit_timeout_ms if self.commit_required_acks == -1 else None

    @classmethod
    def from_broker_config(cls, config) -> "OffsetConfig":
        return cls(
            num_partitions=config["offsets.topic.num.partitions"],
            replication_factor=config["offsets.topic.replication.factor"],
            segment_bytes=config["offsets.topic.segment.bytes"],
            compression=CompressionType(config["offsets.topic.compression.codec"]),
            retention_ms=config["offsets.retention.minutes"] * 60_000,
            retention_check_interval_ms=config["offsets.retention.check.interval.ms"],
            load_buffer_size=config["offsets.load.buffer.size"],
            commit_timeout_ms=config["offsets.commit.timeout.ms"],
            max_metadata_size=config["offset.metadata.max.bytes"],
            commit_required_acks=config["offsets.commit.required.acks"],
        )


@dataclass(frozen=True)
class GroupConfig:
    min_session_timeout_ms: int = 6000
    max_session_timeout_ms: int = 1_800_000
    initial_rebalance_delay_ms: int = 3000
    max_size: int = INT32_MAX

    @classmethod
    def from_broker_config(cls, config) -> "GroupConfig":
        return cls(
            min_session_timeout_ms=config["group.min.session.timeout.ms"],
            max_session_timeout_ms=config["group.max.session.timeout.ms"],
            initial_rebalance_delay_ms=config["group.initial.rebalance.delay.ms"],
            max_size=config["group.max.size"],
        )
