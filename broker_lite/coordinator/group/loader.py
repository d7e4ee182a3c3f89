"""Rebuilding the coordinator's state from a partition of ``__consumer_offsets``.

The partition is read from its log start to its log end, ``offsets.load.buffer.size`` bytes at a
time (:mod:`.partition_replay`), and replayed in order: a commit record sets its key's offset, a
group record its group, a tombstone deletes either. Only the last record of a key counts, which is
what compaction keeps, so a compacted log loads to the same state.

Transactional commits (written for a producer inside a transaction) are held per producer until
the producer's COMMIT marker, which applies them, or ABORT marker, which drops them; those of a
transaction still open at the log end are returned apart.

Records of other kinds of group (a consumer group's, KIP-848) are handed to the ``other``
replayer the caller gives, in log order with the rest.

Bytes that are not a record of a known version (a garbage key, a truncated value, a batch that
fails its CRC) are skipped with a warning naming the offset: one bad record must not cost every
group of the partition its offsets.
"""

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.log import Log
from broker_lite.records import ControlRecordType, RecordsError
from broker_lite.records.control import control_record_type

from ..common.partition_replay import batch_records, replay_partition
from .offsets import CommittedOffset
from .records import (
    CoordinatorRecordError,
    GroupMetadataKey,
    GroupRecord,
    OffsetCommitKey,
    parse_group_metadata_value,
    parse_key,
    parse_offset_commit_value,
)

logger = logging.getLogger(__name__)

GroupTopicPartition = tuple[str, TopicPartition]


@dataclass
class LoadedPartition:
    """What a partition of ``__consumer_offsets`` holds, replayed."""

    offsets: dict[GroupTopicPartition, CommittedOffset] = field(default_factory=dict)
    groups: dict[str, GroupRecord] = field(default_factory=dict)
    removed_groups: set[str] = field(default_factory=set)
    # producer id -> the commits of its open transaction
    pending_transactional: dict[int, dict[GroupTopicPartition, CommittedOffset]] = \
        field(default_factory=dict)
    skipped_records: int = 0

    def offsets_by_group(self) -> dict[str, dict[TopicPartition, CommittedOffset]]:
        by_group: dict[str, dict[TopicPartition, CommittedOffset]] = {}
        for (group, tp), committed in self.offsets.items():
            by_group.setdefault(group, {})[tp] = committed
        return by_group


#: ``other(record) -> bool``: replays a record of another kind of group, or says it is none
OtherRecords = Callable[[object], bool]


def load_partition(log: Log, *, buffer_size: int,
                   stopping: Callable[[], bool] = lambda: False,
                   other: OtherRecords | None = None) -> LoadedPartition:
    """Replay ``log`` from its start to the end it had when called."""
    loaded = LoadedPartition()
    replay_partition(log, lambda batch, name: _replay_batch(loaded, batch, name, other),
                     buffer_size=buffer_size, stopping=stopping)
    return loaded


def _replay_batch(loaded: LoadedPartition, batch, name: str,
                  other: OtherRecords | None = None) -> None:
    records = batch_records(batch, name)
    if records is None:
        loaded.skipped_records += 1
        return
    producer_id = getattr(batch, "producer_id", -1)
    transactional = bool(getattr(batch, "is_transactional", False))
    if getattr(batch, "is_control_batch", False):
        _replay_marker(loaded, producer_id, records)
        return
    batch_offset = batch.base_offset
    for record in records:
        try:
            if other is not None and other(record):
                continue
            key = parse_key(record.key)
            if isinstance(key, OffsetCommitKey):
                _replay_commit(loaded, key, record.value, batch_offset, producer_id,
                               transactional)
            else:
                _replay_group(loaded, key, record.value)
        except CoordinatorRecordError as exc:
            logger.warning("%s: skipping the record at offset %d while loading: %s", name,
                           record.offset, exc)
            loaded.skipped_records += 1


def _replay_commit(loaded: LoadedPartition, key: OffsetCommitKey, value, batch_offset: int,
                   producer_id: int, transactional: bool) -> None:
    gtp = (key.group, TopicPartition(key.topic, key.partition))
    target = loaded.pending_transactional.setdefault(producer_id, {}) if transactional \
        else loaded.offsets
    parsed = parse_offset_commit_value(value)
    if parsed is None:
        target.pop(gtp, None)
    else:
        target[gtp] = CommittedOffset(batch_offset, parsed)


def _replay_group(loaded: LoadedPartition, key: GroupMetadataKey, value) -> None:
    record = parse_group_metadata_value(value)
    if record is None:
        loaded.groups.pop(key.group, None)
        loaded.removed_groups.add(key.group)
    else:
        loaded.removed_groups.discard(key.group)
        loaded.groups[key.group] = record


def _replay_marker(loaded: LoadedPartition, producer_id: int, records) -> None:
    if not records:
        return
    pending = loaded.pending_transactional.pop(producer_id, {})
    try:
        marker = control_record_type(records[0].key)
    except RecordsError:
        return
    if marker != ControlRecordType.COMMIT:
        return  # ABORT: the transaction's commits never count
    for gtp, committed in pending.items():
        current = loaded.offsets.get(gtp)
        if current is None or current.older_than(committed):
            loaded.offsets[gtp] = committed
