"""Committed offsets: what a commit says, where its record sits, and when it expires.

The coordinator keeps every group's committed offsets in memory (the offsets cache), so an
OffsetFetch never reads the log; the log (``__consumer_offsets``) is what rebuilds the cache after
a restart or a leader change. Each cached commit remembers the offset of the batch that carried
it, so when commits of one partition arrive by different paths (plain and, later, transactional
commits) the one written last to the log wins, as compaction would keep it.

Expiry (``offsets.retention.minutes``, Kafka 2.1+ semantics, KIP-211) is decided per group by the
group (see :meth:`.group.Group.expired_offsets`); the rule shared by every case is here: a commit
carrying an explicit expire timestamp (OffsetCommit v2-v4 with a retention time) expires at that
time; any other expires ``retention`` after its base timestamp (the commit time, or the time the
group became empty).
"""

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from broker_lite.common.vocabulary import TopicPartition


@dataclass(frozen=True)
class OffsetAndMetadata:
    """One commit, as OffsetCommit carries it and the OffsetCommitValue record stores it."""

    offset: int
    leader_epoch: int = -1  # -1: unknown (the client did not say)
    metadata: str = ""
    commit_timestamp: int = -1
    expire_timestamp: int | None = None  # only with an explicit retention time (v2-v4)


@dataclass(frozen=True)
class CommittedOffset:
    """A commit in the cache, with the log offset of the batch that wrote it."""

    record_offset: int
    value: OffsetAndMetadata

    def older_than(self, other: "CommittedOffset") -> bool:
        return self.record_offset < other.record_offset


class GroupOffsets:
    """The committed offsets of one group (the caller holds the group's lock)."""

    def __init__(self, committed: dict[TopicPartition, CommittedOffset] | None = None):
        self._committed: dict[TopicPartition, CommittedOffset] = dict(committed or {})
        # producer id -> commits of its open transaction, which count once it commits
        self._pending_txn: dict[int, dict[TopicPartition, CommittedOffset]] = {}

    def __len__(self) -> int:
        return len(self._committed)

    def __contains__(self, tp: TopicPartition) -> bool:
        return tp in self._committed

    def get(self, tp: TopicPartition) -> OffsetAndMetadata | None:
        committed = self._committed.get(tp)
        return committed.value if committed is not None else None

    def all(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return {tp: c.value for tp, c in self._committed.items()}

    def partitions(self) -> list[TopicPartition]:
        return sorted(self._committed)

    def on_append(self, tp: TopicPartition, committed: CommittedOffset) -> None:
        """A commit record reached the log: cache it unless a later record is cached already."""
        current = self._committed.get(tp)
        if current is None or not committed.older_than(current):
            self._committed[tp] = committed

    def on_txn_append(self, producer_id: int, tp: TopicPartition,
                      committed: CommittedOffset) -> None:
        """A commit written inside ``producer_id``'s transaction: pending until its marker."""
        self._pending_txn.setdefault(producer_id, {})[tp] = committed

    def complete_txn(self, producer_id: int, committed: bool) -> bool:
        """The producer's transaction ended: its commits count (``committed``) or are dropped;
        whether it had any here."""
        pending = self._pending_txn.pop(producer_id, None)
        if pending is None:
            return False
        if committed:
            for tp, offset in pending.items():
                self.on_append(tp, offset)
        return True

    def has_pending_txn(self, producer_id: int | None = None) -> bool:
        """Commits of an open transaction (of ``producer_id``, or of any producer) wait."""
        return bool(self._pending_txn) if producer_id is None \
            else producer_id in self._pending_txn

    def pending_partitions(self) -> set[TopicPartition]:
        """The partitions with a commit waiting for its transaction to end."""
        return {tp for commits in self._pending_txn.values() for tp in commits}

    def remove(self, tps: Iterable[TopicPartition]) -> dict[TopicPartition, OffsetAndMetadata]:
        """Drop the commits of ``tps``; those that were there."""
        removed = {}
        for tp in tps:
            committed = self._committed.pop(tp, None)
            if committed is not None:
                removed[tp] = committed.value
        return removed

    def remove_all(self) -> dict[TopicPartition, OffsetAndMetadata]:
        return self.remove(list(self._committed))

    def expired(self, now_ms: int, retention_ms: int,
                base_timestamp: Callable[[OffsetAndMetadata], int],
                keep_topics: frozenset[str] = frozenset()) -> list[TopicPartition]:
        """The partitions whose commit has expired at ``now_ms``, except those of
        ``keep_topics`` (topics a stable group still consumes)."""
        return [tp for tp, committed in self._committed.items()
                if tp.topic not in keep_topics
                and is_expired(committed.value, now_ms, retention_ms, base_timestamp)]


def is_expired(value: OffsetAndMetadata, now_ms: int, retention_ms: int,
               base_timestamp: Callable[[OffsetAndMetadata], int]) -> bool:
    if value.expire_timestamp is not None:  # an explicit retention time: the old semantics
        return now_ms >= value.expire_timestamp
    return now_ms - base_timestamp(value) >= retention_ms
