"""A share group's own settings (KIP-932's group configs, Kafka 4.2's ``GroupConfig``), set with
IncrementalAlterConfigs on a GROUP resource and stored per group in ZooKeeper
(``/config/groups/[group]``, :mod:`broker_lite.zk.group_configs`).

=================================  ==========================  ====================================
group config                       default                     bounds
=================================  ==========================  ====================================
share.auto.offset.reset            latest                      earliest, latest,
                                                               by_duration:<ISO-8601 duration>
share.isolation.level              read_uncommitted            read_committed, read_uncommitted
share.record.lock.duration.ms      group.share.record.lock.    group.share.min/max.record.lock.
                                   duration.ms                 duration.ms
share.delivery.count.limit         group.share.delivery.       group.share.min/max.delivery.count.
                                   count.limit                 limit
share.session.timeout.ms           group.share.session.        group.share.min/max.session.
                                   timeout.ms                  timeout.ms
share.heartbeat.interval.ms        group.share.heartbeat.      group.share.min/max.heartbeat.
                                   interval.ms                 interval.ms
=================================  ==========================  ====================================

Where a share-partition starts when its group first reads it (``share.auto.offset.reset``):
``earliest`` at the log start, ``latest`` at the log end, ``by_duration:PnDTnHnMnS`` at the
first record not older than the duration.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from .config import ShareConfig

AUTO_OFFSET_RESET = "share.auto.offset.reset"
ISOLATION_LEVEL = "share.isolation.level"
RECORD_LOCK_DURATION = "share.record.lock.duration.ms"
DELIVERY_COUNT_LIMIT = "share.delivery.count.limit"
SESSION_TIMEOUT = "share.session.timeout.ms"
HEARTBEAT_INTERVAL = "share.heartbeat.interval.ms"

SHARE_GROUP_CONFIGS = (AUTO_OFFSET_RESET, ISOLATION_LEVEL, RECORD_LOCK_DURATION,
                       DELIVERY_COUNT_LIMIT, SESSION_TIMEOUT, HEARTBEAT_INTERVAL)

_DURATION = re.compile(r"P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d+)?)S)?)?")


class InvalidGroupConfigError(ValueError):
    """A group config Kafka refuses (INVALID_CONFIG)."""


def parse_duration_ms(text: str) -> int:
    """An ISO-8601 duration (``P1DT2H``, ``PT30M``) in milliseconds, as Java's
    ``Duration.parse`` reads the forms Kafka accepts (days, hours, minutes, seconds).

    >>> parse_duration_ms("PT1H30M"), parse_duration_ms("P1D")
    (5400000, 86400000)
    """
    match = _DURATION.fullmatch(text.strip().upper())
    if match is None or text.strip().upper() in ("P", "PT"):
        raise InvalidGroupConfigError(f"{text!r} is not an ISO-8601 duration")
    days, hours, minutes, seconds = (float(g) if g else 0.0 for g in match.groups())
    return int(((days * 24 + hours) * 60 + minutes) * 60_000 + seconds * 1000)


@dataclass(frozen=True)
class ShareGroupSettings:
    """The settings in force for one share group: its overrides over the broker's."""

    auto_offset_reset: str = "latest"
    isolation_level: str = "read_uncommitted"
    record_lock_duration_ms: int = 30_000
    delivery_count_limit: int = 5
    session_timeout_ms: int = 45_000
    heartbeat_interval_ms: int = 5000

    @property
    def read_committed(self) -> bool:
        return self.isolation_level == "read_committed"


def _int_within(name: str, value: str, low: int, high: int) -> int:
    try:
        number = int(value)
    except ValueError:
        raise InvalidGroupConfigError(f"Invalid value {value} for configuration {name}: "
                                      f"Not a number of type INT") from None
    if not low <= number <= high:
        raise InvalidGroupConfigError(f"Invalid value {value} for configuration {name}: "
                                      f"Value must be in [{low}, {high}]")
    return number


#: The numeric group configs and the broker settings bounding them (``ShareConfig``'s fields).
_BOUNDS = {
    RECORD_LOCK_DURATION: ("min_record_lock_duration_ms", "max_record_lock_duration_ms"),
    DELIVERY_COUNT_LIMIT: ("min_delivery_count_limit", "max_delivery_count_limit"),
    SESSION_TIMEOUT: ("min_session_timeout_ms", "max_session_timeout_ms"),
    HEARTBEAT_INTERVAL: ("min_heartbeat_interval_ms", "max_heartbeat_interval_ms"),
}
_CHOICES = {
    AUTO_OFFSET_RESET: "latest, earliest, by_duration:PnDTnHnMn.nS",
    ISOLATION_LEVEL: "read_committed, read_uncommitted",
}


def validate(overrides: Mapping[str, str], broker: ShareConfig) -> None:
    """Raise :class:`InvalidGroupConfigError` for an unknown name or a value out of bounds."""
    for name, value in overrides.items():
        if name not in SHARE_GROUP_CONFIGS:
            raise InvalidGroupConfigError(f"Unknown group config name: {name}")
        if name in _BOUNDS:
            low, high = (getattr(broker, bound) for bound in _BOUNDS[name])
            _int_within(name, value, low, high)
        elif name == AUTO_OFFSET_RESET and value.startswith("by_duration:"):
            parse_duration_ms(value.removeprefix("by_duration:"))
        elif value not in _CHOICES[name].split(", ")[:2]:
            raise InvalidGroupConfigError(f"Invalid value {value} for configuration {name}: "
                                          f"String must be one of: {_CHOICES[name]}")


def settings_of(overrides: Mapping[str, str], broker: ShareConfig) -> ShareGroupSettings:
    """The settings in force given a group's stored overrides (a value that no longer fits the
    broker's bounds falls back to the broker's default)."""
    def number(name: str, default: int) -> int:
        if name not in overrides:
            return default
        try:
            validate({name: overrides[name]}, broker)
        except InvalidGroupConfigError:
            return default
        return int(overrides[name])

    return ShareGroupSettings(
        auto_offset_reset=overrides.get(AUTO_OFFSET_RESET, "latest"),
        isolation_level=overrides.get(ISOLATION_LEVEL, "read_uncommitted"),
        record_lock_duration_ms=number(RECORD_LOCK_DURATION, broker.record_lock_duration_ms),
        delivery_count_limit=number(DELIVERY_COUNT_LIMIT, broker.delivery_count_limit),
        session_timeout_ms=number(SESSION_TIMEOUT, broker.session_timeout_ms),
        heartbeat_interval_ms=number(HEARTBEAT_INTERVAL, broker.heartbeat_interval_ms),
    )


def defaults(broker: ShareConfig) -> dict[str, str]:
    """Each group config's default on this broker (DescribeConfigs of a GROUP resource)."""
    return {AUTO_OFFSET_RESET: "latest", ISOLATION_LEVEL: "read_uncommitted",
            RECORD_LOCK_DURATION: str(broker.record_lock_duration_ms),
            DELIVERY_COUNT_LIMIT: str(broker.delivery_count_limit),
            SESSION_TIMEOUT: str(broker.session_timeout_ms),
            HEARTBEAT_INTERVAL: str(broker.heartbeat_interval_ms)}
