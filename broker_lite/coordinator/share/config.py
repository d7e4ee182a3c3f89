"""The share groups' broker settings (Kafka 4.2's names, defaults and bounds; KIP-932,
"Configuration").

===============================================  =========  ======================================
broker setting                                   default    meaning
===============================================  =========  ======================================
group.share.enable                               false      share groups served (Kafka 4.2's
                                                            internal switch; a new 4.2 cluster
                                                            has the ``share.version`` feature)
group.share.record.lock.duration.ms              30000      how long an acquired record is locked
group.share.min.record.lock.duration.ms          15000      the least a group may set
group.share.max.record.lock.duration.ms          60000      the most a group may set
group.share.delivery.count.limit                 5          deliveries before a record is archived
group.share.min/max.delivery.count.limit         2 / 10     what a group may set
group.share.partition.max.record.locks           2000       records in flight per share-partition
group.share.session.timeout.ms                   45000      a member without heartbeat leaves
group.share.min/max.session.timeout.ms           45000 /    what a group may set
                                                 60000
group.share.heartbeat.interval.ms                5000       how often members heartbeat
group.share.min/max.heartbeat.interval.ms        5000 /     what a group may set
                                                 15000
group.share.max.size                             200        members of one share group
share.coordinator.state.topic.num.partitions     50         partitions of ``__share_group_state``
share.coordinator.state.topic.replication.factor 3          its replicas (fewer when fewer brokers)
share.coordinator.state.topic.min.isr            2          its ``min.insync.replicas``
share.coordinator.state.topic.segment.bytes      104857600  its segment size
share.coordinator.load.buffer.size               5242880    bytes read at a time when loading
share.coordinator.snapshot.update.records.per.   500        updates between two snapshots of a
snapshot                                                    share-partition's state
share.coordinator.write.timeout.ms               5000       how long a write waits for the ISR
===============================================  =========  ======================================
"""

from dataclasses import dataclass


@dataclass(frozen=True)
class ShareConfig:
    enabled: bool = False
    record_lock_duration_ms: int = 30_000
    min_record_lock_duration_ms: int = 15_000
    max_record_lock_duration_ms: int = 60_000
    delivery_count_limit: int = 5
    min_delivery_count_limit: int = 2
    max_delivery_count_limit: int = 10
    partition_max_record_locks: int = 2000
    session_timeout_ms: int = 45_000
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    heartbeat_interval_ms: int = 5000
    min_heartbeat_interval_ms: int = 5000
    max_heartbeat_interval_ms: int = 15_000
    max_size: int = 200

    @classmethod
    def from_broker_config(cls, config) -> "ShareConfig":
        return cls(
            enabled=config["group.share.enable"],
            record_lock_duration_ms=config["group.share.record.lock.duration.ms"],
            min_record_lock_duration_ms=config["group.share.min.record.lock.duration.ms"],
            max_record_lock_duration_ms=config["group.share.max.record.lock.duration.ms"],
            delivery_count_limit=config["group.share.delivery.count.limit"],
            min_delivery_count_limit=config["group.share.min.delivery.count.limit"],
            max_delivery_count_limit=config["group.share.max.delivery.count.limit"],
            partition_max_record_locks=config["group.share.partition.max.record.locks"],
            session_timeout_ms=config["group.share.session.timeout.ms"],
            min_session_timeout_ms=config["group.share.min.session.timeout.ms"],
            max_session_timeout_ms=config["group.share.max.session.timeout.ms"],
            heartbeat_interval_ms=config["group.share.heartbeat.interval.ms"],
            min_heartbeat_interval_ms=config["group.share.min.heartbeat.interval.ms"],
            max_heartbeat_interval_ms=config["group.share.max.heartbeat.interval.ms"],
            max_size=config["group.share.max.size"],
        )


@dataclass(frozen=True)
class ShareStateTopicConfig:
    """``__share_group_state`` and its coordinator (the share coordinator)."""

    num_partitions: int = 50
    replication_factor: int = 3
    min_isr: int = 2
    segment_bytes: int = 104857600
    load_buffer_size: int = 5 * 1024 * 1024
    updates_per_snapshot: int = 500
    replication_timeout_ms: int = 5000

    @classmethod
    def from_broker_config(cls, config) -> "ShareStateTopicConfig":
        return cls(
            num_partitions=config["share.coordinator.state.topic.num.partitions"],
            replication_factor=config["share.coordinator.state.topic.replication.factor"],
            min_isr=config["share.coordinator.state.topic.min.isr"],
            segment_bytes=config["share.coordinator.state.topic.segment.bytes"],
            load_buffer_size=config["share.coordinator.load.buffer.size"],
            updates_per_snapshot=config[
                "share.coordinator.snapshot.update.records.per.snapshot"],
            replication_timeout_ms=config["share.coordinator.write.timeout.ms"],
        )
