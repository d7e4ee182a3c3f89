"""The settings of consumer groups (KIP-848), read from the broker's, with Kafka's names,
defaults and bounds (Kafka's ``GroupCoordinatorConfig``).

=============================================  ===============  ===================================
broker setting                                 default          meaning
=============================================  ===============  ===================================
group.coordinator.rebalance.protocols          classic,consumer the group protocols served (Kafka
                                                                4's default; ``classic`` must be in)
group.consumer.session.timeout.ms              45000            a member silent this long is fenced
group.consumer.min.session.timeout.ms          45000            its lower bound
group.consumer.max.session.timeout.ms          60000            its upper bound
group.consumer.heartbeat.interval.ms           5000             the interval told to members
group.consumer.min.heartbeat.interval.ms       5000             its lower bound
group.consumer.max.heartbeat.interval.ms       15000            its upper bound
group.consumer.max.size                        2147483647       most members in one consumer group
group.consumer.assignors                       uniform,range    the server-side assignors; the
                                                                first is the default
group.consumer.migration.policy                bidirectional    which online conversions between a
                                                                classic group and a consumer group
                                                                are allowed: disabled, upgrade,
                                                                downgrade or bidirectional
=============================================  ===============  ===================================

The bounds are checked together, as Kafka checks them when the broker starts: each interval
within its bounds, the heartbeat interval below the session timeout
(:class:`ConsumerGroupConfigError` otherwise).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from broker_lite.common.vocabulary import INT32_MAX

CLASSIC, CONSUMER = "classic", "consumer"


class MigrationPolicy(enum.Enum):
    """``group.consumer.migration.policy`` (KIP-848, "Online migration")."""

    DISABLED = "disabled"
    UPGRADE = "upgrade"  # classic -> consumer only
    DOWNGRADE = "downgrade"  # consumer -> classic only
    BIDIRECTIONAL = "bidirectional"

    @property
    def allows_upgrade(self) -> bool:
        return self in (MigrationPolicy.UPGRADE, MigrationPolicy.BIDIRECTIONAL)

    @property
    def allows_downgrade(self) -> bool:
        return self in (MigrationPolicy.DOWNGRADE, MigrationPolicy.BIDIRECTIONAL)


class ConsumerGroupConfigError(ValueError):
    """Consumer group settings that do not hold together."""


@dataclass(frozen=True)
class ConsumerGroupConfig:
    rebalance_protocols: tuple[str, ...] = (CLASSIC, CONSUMER)
    session_timeout_ms: int = 45_000
    min_session_timeout_ms: int = 45_000
    max_session_timeout_ms: int = 60_000
    heartbeat_interval_ms: int = 5_000
    min_heartbeat_interval_ms: int = 5_000
    max_heartbeat_interval_ms: int = 15_000
    max_size: int = INT32_MAX
    assignors: tuple[str, ...] = ("uniform", "range")
    migration_policy: MigrationPolicy = MigrationPolicy.BIDIRECTIONAL

    def __post_init__(self) -> None:
        self.validate()

    @property
    def enabled(self) -> bool:
        """Whether the consumer group protocol is served at all."""
        return CONSUMER in self.rebalance_protocols

    @property
    def default_assignor(self) -> str:
        return self.assignors[0]

    def validate(self) -> None:
        """Raise :class:`ConsumerGroupConfigError` for settings Kafka refuses at start-up."""
        if CLASSIC not in self.rebalance_protocols:
            raise ConsumerGroupConfigError(
                "group.coordinator.rebalance.protocols must contain classic")
        for name, value, low, high in (
                ("group.consumer.session.timeout.ms", self.session_timeout_ms,
                 self.min_session_timeout_ms, self.max_session_timeout_ms),
                ("group.consumer.heartbeat.interval.ms", self.heartbeat_interval_ms,
                 self.min_heartbeat_interval_ms, self.max_heartbeat_interval_ms)):
            if not low <= value <= high:
                raise ConsumerGroupConfigError(
                    f"{name} must be between {low} and {high} (its min and max settings), "
                    f"not {value}")
        if self.heartbeat_interval_ms >= self.session_timeout_ms:
            raise ConsumerGroupConfigError(
                "group.consumer.heartbeat.interval.ms must be less than "
                "group.consumer.session.timeout.ms")
        if not self.assignors:
            raise ConsumerGroupConfigError("group.consumer.assignors must name an assignor")

    @classmethod
    def from_broker_config(cls, config: Mapping[str, Any]) -> ConsumerGroupConfig:
        return cls(
            rebalance_protocols=tuple(config["group.coordinator.rebalance.protocols"]),
            session_timeout_ms=config["group.consumer.session.timeout.ms"],
            min_session_timeout_ms=config["group.consumer.min.session.timeout.ms"],
            max_session_timeout_ms=config["group.consumer.max.session.timeout.ms"],
            heartbeat_interval_ms=config["group.consumer.heartbeat.interval.ms"],
            min_heartbeat_interval_ms=config["group.consumer.min.heartbeat.interval.ms"],
            max_heartbeat_interval_ms=config["group.consumer.max.heartbeat.interval.ms"],
            max_size=config["group.consumer.max.size"],
            assignors=tuple(config["group.consumer.assignors"]),
            migration_policy=MigrationPolicy(config["group.consumer.migration.policy"]),
        )
