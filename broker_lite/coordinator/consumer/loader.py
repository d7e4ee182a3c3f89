"""Rebuilding consumer groups from a partition of ``__consumer_offsets``: the records of
:mod:`.records`, replayed in log order into :class:`.group.ConsumerGroup` objects while the
partition loads, beside the classic groups and the offsets (:mod:`..group.loader`).

A group whose ConsumerGroupMetadata was tombstoned (deleted, or converted to a classic group)
is dropped; one left with its group epoch ahead of its assignment epoch is assigned again on
its members' next heartbeats.
"""

from __future__ import annotations

import logging

from ..group.records import CoordinatorRecordError
from .group import ConsumerGroup
from .records import RECORD_TYPES, parse_key, parse_value, record_type_of

logger = logging.getLogger(__name__)


class ConsumerGroupReplay:
    """The consumer groups of one partition, as its records are read (``replay`` is the
    ``other`` replayer of :func:`..group.loader.load_partition`)."""

    def __init__(self) -> None:
        self.groups: dict[str, ConsumerGroup] = {}

    def replay(self, record: object) -> bool:
        """Replay ``record`` if it is a consumer group's; whether it was."""
        key_bytes = getattr(record, "key", None)
        if key_bytes is None or record_type_of(key_bytes) not in RECORD_TYPES:
            return False
        try:
            key = parse_key(key_bytes)
            value = parse_value(key.record_type, getattr(record, "value", None))
        except CoordinatorRecordError as exc:
            logger.warning("skipping a consumer group record at offset %s: %s",
                           getattr(record, "offset", "?"), exc)
            return True
        group = self.groups.get(key.group)
        if group is None:
            group = self.groups[key.group] = ConsumerGroup(key.group)
        group.replay(key, value)
        return True

    def live_groups(self) -> dict[str, ConsumerGroup]:
        """The groups not deleted by the end of the log."""
        return {g: group for g, group in self.groups.items() if not group.dead}
