"""The leader epoch cache of a partition (``leader-epoch-checkpoint``).

Each entry says from which offset on a leader epoch wrote to the log. A new entry is added when an
append carries a higher ``partitionLeaderEpoch`` than the last one, and the file is rewritten then.
A follower uses it (OffsetForLeaderEpoch) to find where its log diverged from the leader's: the end
offset of an epoch is the start offset of the next epoch, or the log end for the latest.
"""

from pathlib import Path

from broker_lite.protocol.enums import UNDEFINED_EPOCH

from .checkpoints import LeaderEpochCheckpointFile
from .files import LEADER_EPOCH_CHECKPOINT


class LeaderEpochCache:
    def __init__(self, directory: Path):
        self._file = LeaderEpochCheckpointFile(Path(directory) / LEADER_EPOCH_CHECKPOINT)
        self.entries: list[tuple[int, int]] = self._file.read()

    @property
    def latest_epoch(self) -> int:
        return self.entries[-1][0] if self.entries else UNDEFINED_EPOCH

    def assign(self, epoch: int, start_offset: int) -> None:
        """Record that ``epoch`` starts at ``start_offset`` (ignored unless it is newer)."""
        if epoch < 0 or epoch <= self.latest_epoch:
            return
        self.entries.append((epoch, start_offset))
        self._file.write(self.entries)

    def end_offset_for(self, epoch: int, log_end_offset: int) -> tuple[int, int]:
        """(epoch, end offset) for OffsetForLeaderEpoch, as Kafka's ``endOffsetFor``: the latest
        epoch ends at the log end; an older one at the start of the next cached epoch, reported
        as the largest cached epoch not above it (or itself, when older than every cached one);
        -1 or an epoch newer than every cached one is unknown: (-1, -1)."""
        if epoch == UNDEFINED_EPOCH:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH
        if epoch == self.latest_epoch:
            return epoch, log_end_offset
        higher = next((entry for entry in self.entries if entry[0] > epoch), None)
        if higher is None:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH
        floor = [entry for entry in self.entries if entry[0] <= epoch]
        return (floor[-1][0] if floor else epoch), higher[1]

    def truncate_from_start(self, start_offset: int) -> None:
        """The log no longer holds offsets below ``start_offset``: epochs that started at or
        before it collapse into the latest of them, now starting at ``start_offset`` (Kafka's
        ``truncateFromStart``)."""
        before = [(e, o) for e, o in self.entries if o <= start_offset]
        if not before:
            return
        kept = [(before[-1][0], start_offset)] + [(e, o) for e, o in self.entries
                                                  if o > start_offset]
        if kept != self.entries:
            self.entries = kept
            self._file.write(kept)

    def truncate_from_end(self, end_offset: int) -> None:
        """The log lost every offset >= ``end_offset``: drop epochs that started there or later."""
        kept = [(e, o) for e, o in self.entries if o < end_offset]
        if kept != self.entries:
            self.entries = kept
            self._file.write(kept)

    def clear(self) -> None:
        """Forget every epoch (the log was emptied and starts afresh)."""
        if self.entries:
            self.entries = []
            self._file.write([])
