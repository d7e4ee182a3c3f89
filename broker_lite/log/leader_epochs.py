"""The leader epoch cache of a partition (``leader-epoch-checkpoint``).

Each entry says from which offset on a leader epoch wrote to the log. A new entry is added when an
append carries a higher ``partitionLeaderEpoch`` than the last one, and the file is rewritten then.
A follower uses it (OffsetForLeaderEpoch) to find where its log diverged from the leader's: the end
offset of an epoch is the start offset of the next epoch, or the log end for the latest.
"""

from pathlib import Path

from .checkpoints import LeaderEpochCheckpointFile
from .files import LEADER_EPOCH_CHECKPOINT

UNDEFINED_EPOCH = -1


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
        """(epoch, end offset) for OffsetForLeaderEpoch: the largest known epoch <= ``epoch`` and
        the offset where it ended; (-1, -1) when ``epoch`` precedes every entry."""
        if not self.entries or epoch < self.entries[0][0]:
            return UNDEFINED_EPOCH, UNDEFINED_EPOCH
        for i, (known, _start) in enumerate(self.entries):
            following = self.entries[i + 1] if i + 1 < len(self.entries) else None
            if following is None or following[0] > epoch:
                return known, following[1] if following is not None else log_end_offset
        raise AssertionError("unreachable: the last entry always matches")

    def truncate_from_end(self, end_offset: int) -> None:
        """The log lost every offset >= ``end_offset``: drop epochs that started there or later."""
        kept = [(e, o) for e, o in self.entries if o < end_offset]
        if kept != self.entries:
            self.entries = kept
            self._file.write(kept)
