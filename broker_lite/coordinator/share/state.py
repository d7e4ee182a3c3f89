"""The persisted state of a share-partition at its share coordinator (Kafka's
``ShareCoordinatorShard``), as pure logic: what Initialize/Read/Write/DeleteShareGroupState do
to it, and how the records of ``__share_group_state`` rebuild it.

A state has a *state epoch* (bumped when the state is initialized again: a new start, as
AlterShareGroupOffsets makes), the leader epoch of the share-partition leader that last wrote
it, a start offset and state batches. A write from a leader of an older leader epoch is
FENCED_LEADER_EPOCH, one of an older state epoch FENCED_STATE_EPOCH: a stale leader cannot
overwrite what its successor wrote.

Batches combine as Kafka's ``StateBatchUtil.combineStateBatches``: a newer batch wins over the
offsets it covers, batches before the start offset are dropped, and neighbours with the same
state and delivery count merge.

>>> s = ShareState.initialized(state_epoch=0, start_offset=10)
>>> s.write(0, 3, -1, [StateBatch(10, 14, 2, 1)]), s.start_offset, len(s.batches)
(<ErrorCode.NONE: 0>, 10, 1)
>>> s.write(0, 3, 12, [StateBatch(13, 13, 0, 2)])
<ErrorCode.NONE: 0>
>>> [(b.first_offset, b.last_offset, b.delivery_state) for b in s.batches]
[(12, 12, 2), (13, 13, 0), (14, 14, 2)]
>>> s.write(0, 2, -1, []), s.write(-1, 3, -1, [])
(<ErrorCode.FENCED_LEADER_EPOCH: 74>, <ErrorCode.FENCED_STATE_EPOCH: 124>)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from broker_lite.protocol import ErrorCode

from .share_partition import StateBatch

UNINITIALIZED = -1  # the start offset of a state not yet initialized


def combine_batches(old: Iterable[StateBatch], new: Iterable[StateBatch],
                    start_offset: int) -> tuple[StateBatch, ...]:
    """``new`` over ``old``, from ``start_offset`` on, neighbours alike merged."""
    by_offset: dict[int, tuple[int, int]] = {}
    for batch in (*old, *new):
        for offset in range(max(batch.first_offset, start_offset), batch.last_offset + 1):
            by_offset[offset] = (batch.delivery_state, batch.delivery_count)
    combined: list[StateBatch] = []
    for offset in sorted(by_offset):
        state, count = by_offset[offset]
        last = combined[-1] if combined else None
        if last is not None and last.last_offset == offset - 1 and \
                (last.delivery_state, last.delivery_count) == (state, count):
            combined[-1] = StateBatch(last.first_offset, offset, state, count)
        else:
            combined.append(StateBatch(offset, offset, state, count))
    return tuple(combined)


@dataclass
class ShareState:
    """One share-partition's persisted state."""

    state_epoch: int
    leader_epoch: int
    start_offset: int
    batches: tuple[StateBatch, ...] = ()
    snapshot_epoch: int = 0
    create_timestamp: int = 0
    write_timestamp: int = 0
    updates_since_snapshot: int = 0

    @classmethod
    def initialized(cls, state_epoch: int, start_offset: int, now_ms: int = 0) -> ShareState:
        return cls(state_epoch, -1, start_offset, (), 0, now_ms, now_ms)

    def check_write(self, state_epoch: int, leader_epoch: int) -> ErrorCode:
        """Whether a write of these epochs may apply (NONE) or is fenced."""
        if leader_epoch < self.leader_epoch:
            return ErrorCode.FENCED_LEADER_EPOCH
        if state_epoch < self.state_epoch:
            return ErrorCode.FENCED_STATE_EPOCH
        return ErrorCode.NONE

    def write(self, state_epoch: int, leader_epoch: int, start_offset: int,
              batches: Iterable[StateBatch], now_ms: int = 0) -> ErrorCode:
        """Apply a WriteShareGroupState for this share-partition (unless fenced)."""
        error = self.check_write(state_epoch, leader_epoch)
        if error:
            return error
        self.apply_update(leader_epoch, start_offset, batches)
        self.write_timestamp = now_ms
        return ErrorCode.NONE

    def apply_update(self, leader_epoch: int, start_offset: int,
                     batches: Iterable[StateBatch]) -> None:
        """A ShareUpdate record (or a write) on this state."""
        self.leader_epoch = max(self.leader_epoch, leader_epoch)
        if start_offset >= 0:
            self.start_offset = max(self.start_offset, start_offset)
        self.batches = combine_batches(self.batches, batches, self.start_offset)
        self.updates_since_snapshot += 1
