"""One partition as its replica on this broker sees it (Kafka's ``kafka.cluster.Partition``):
leader or follower, the ISR, and, on the leader, each follower's progress and the high
watermark.

The controller decides who leads, in which leader epoch, and the ISR it starts with; the leader
then keeps the ISR itself:

* **High watermark** (``maybeIncrementLeaderHW``): the smallest log end offset among the leader
  and the followers in the ISR (the *maximal* ISR while a change is being written: the larger of
  the two), and among followers outside it that are caught up and alive, so that one catching
  up is not outrun by a leader that moves on alone. It moves after every append and every
  follower fetch that moved a follower's log end; it never moves back.
* **ISR expansion** (``maybeExpandIsr``): a follower joins once its log end reached the high
  watermark and the offset where the current leader epoch started (the data committed by an
  earlier leader may not yet be on it otherwise).
* **ISR shrink** (``maybeShrinkIsr``, every half ``replica.lag.time.max.ms``): followers not caught
  up for ``replica.lag.time.max.ms`` (:mod:`.replica`) leave it.

An ISR change is written to the partition's state znode by the leader, conditionally on the
version it knows (:mod:`.isr`), outside the partition's lock; the new ISR counts once written.
Appends with acks=all are refused while the ISR is smaller than ``min.insync.replicas``
(:class:`~.errors.NotEnoughReplicasError`), and complete once the high watermark passes them
(:meth:`Partition.check_enough_replicas_reach_offset`; Kafka's ``DelayedProduce``).

The leader also answers where a consumer in a rack should read (KIP-392,
:meth:`Partition.preferred_read_replica`) and how far every replica's log start has come
(the *low watermark* a DeleteRecords waits for).

A follower keeps the leader, the leader epoch and the ISR the controller last wrote; its log is
written by the replica fetcher (:mod:`.fetcher`) through :meth:`Partition.follower_append` and
the truncations, each applied only while the partition still follows the leader in the epoch
the fetcher fetched in, under the partition's lock, so a new leader epoch never races them.
"""

import logging
import threading
import time
from collections.abc import Callable

from broker_lite.common.vocabulary import TopicPartition, now_ms
from broker_lite.log import Log
from broker_lite.log.producer_state import AppendOrigin
from broker_lite.log.validator import ValidatedRecords
from broker_lite.protocol import ErrorCode
from broker_lite.zk.layout import NO_LEADER, PartitionState

from .errors import NotEnoughReplicasError, NotLeaderError
from .isr import IsrWriter
from .replica import FollowerState

logger = logging.getLogger(__name__)


def _always_alive(_broker_id: int) -> bool:
    return True


def _ignore(_partition: TopicPartition) -> None:
    pass


class Partition:
    """The replica of ``partition`` on broker ``local_id``, its data in ``log``.

    Parameters
    ----------
    lag_time_max_ms
        ``replica.lag.time.max.ms``.
    isr_writer
        Where ISR changes are written (None: they take effect here only, for tests).
    is_alive
        Whether a broker is registered (a dead follower neither joins the ISR nor holds back
        the high watermark unless in it).
    on_high_watermark
        Told (outside the lock) when the high watermark moved: requests waiting for it may
        complete.
    """

    def __init__(self, partition: TopicPartition, log: Log, local_id: int, *,
                 lag_time_max_ms: int = 30000, isr_writer: IsrWriter | None = None,
                 is_alive: Callable[[int], bool] = _always_alive,
                 on_high_watermark: Callable[[TopicPartition], None] = _ignore,
                 clock: Callable[[], int] = now_ms):
        self.topic_partition = partition
        self.log = log
        self.local_id = local_id
        self.lag_time_max_ms = lag_time_max_ms
        self.isr_writer = isr_writer
        self.is_alive = is_alive
        self.on_high_watermark = on_high_watermark
        self.clock = clock
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)  # high watermark or role
        self.replicas: tuple[int, ...] = ()
        self.leader = NO_LEADER
        self.leader_epoch = -1
        self.isr: tuple[int, ...] = ()
        self.zk_version = -1  # the version of the state znode the ISR was read from or written
        self.controller_epoch = 0
        self._pending_isr: tuple[int, ...] | None = None  # being written
        # The high watermark moved during an append made under the lock, to be told once it is
        # released (None: no such append is under way).
        self._moved_while_appending: bool | None = None
        self._followers: dict[int, FollowerState] = {}
        self._epoch_start_offset: int | None = None
        log.high_watermark_keeper = self

    def __repr__(self) -> str:
        return (f"Partition({self.topic_partition.topic}-{self.topic_partition.partition}, "
                f"leader={self.leader}, epoch={self.leader_epoch}, isr={list(self.isr)})")

    # -- what others read ---------------------------------------------------------------------

    @property
    def is_leader(self) -> bool:
        return self.leader == self.local_id

    @property
    def state(self) -> PartitionState:
        with self._lock:
            return PartitionState(self.leader, self.leader_epoch, self.isr, self.controller_epoch)

    @property
    def maximal_isr(self) -> tuple[int, ...]:
        """The ISR, with the followers being added while an expansion is written."""
        with self._lock:
            return self._maximal_isr()

    def _maximal_isr(self) -> tuple[int, ...]:
        pending = self._pending_isr or ()
        return self.isr + tuple(r for r in pending if r not in self.isr)

    @property
    def high_watermark_behind_epoch_start(self) -> bool:
        """A new leader whose high watermark has not yet reached the offset its epoch began
        at: it took the high watermark over from its time as a follower, which lags (Kafka's
        ListOffsets answers OFFSET_NOT_AVAILABLE meanwhile, KIP-207)."""
        with self._lock:
            start = self._epoch_start_offset
            return start is not None and self.log.high_watermark < start

    def follower_state(self, replica_id: int) -> FollowerState | None:
        with self._lock:
            return self._followers.get(replica_id)

    @property
    def min_insync_replicas(self) -> int:
        return self.log.config.min_insync_replicas

    # -- becoming leader or follower (the controller's decisions) -------------------------------

    def _stale(self, state: PartitionState, version: int) -> bool:
        """A state older than the one applied (a change this leader wrote itself, or a watch
        that fired late): the partition epoch, the znode version, went back."""
        return 0 <= version < self.zk_version and state.leader_epoch <= self.leader_epoch

    def make_leader(self, state: PartitionState, replicas: tuple[int, ...],
                    version: int) -> bool:
        """Lead in ``state``'s leader epoch (Kafka's ``makeLeader``); whether this starts a
        new leader epoch here. A new epoch starts at the log end: it is recorded in the leader
        epoch cache at once, so followers of a later leader can find where it ended, and every
        follower's progress starts afresh."""
        with self._lock:
            if self._stale(state, version):
                return False
            new_leader = not self.is_leader
            new_epoch = new_leader or state.leader_epoch > self.leader_epoch
            self._apply(state, replicas, version)
            now = self.clock()
            end = self.log.log_end_offset
            followers = [r for r in replicas if r != self.local_id]
            self._followers = {r: self._followers.get(r, FollowerState()) for r in followers}
            if new_epoch:
                self.log.leader_epochs.assign(state.leader_epoch, end)
                self._followers = {
                    r: self._followers[r].reset(now_ms=now, leader_end_offset=end,
                                                new_leader=new_leader, in_sync=r in state.isr)
                    for r in followers}
                self._epoch_start_offset = end
                logger.info("%s-%d: leader in epoch %d from offset %d, high watermark %d, "
                            "ISR %s", *self.topic_partition, state.leader_epoch, end,
                            self.log.high_watermark, list(state.isr))
            moved = self._maybe_increment_high_watermark(now)
        if moved:
            self.on_high_watermark(self.topic_partition)
        return new_epoch

    def make_follower(self, state: PartitionState, replicas: tuple[int, ...],
                      version: int) -> bool:
        """Follow ``state.leader`` (or nobody, while it is -1; Kafka's ``makeFollower``);
        whether the leader or the leader epoch changed, so fetching must start again."""
        with self._lock:
            if self._stale(state, version):
                return False
            changed = state.leader != self.leader or state.leader_epoch > self.leader_epoch
            self._apply(state, replicas, version)
            self._followers = {}
            self._epoch_start_offset = None
            return changed

    def _apply(self, state: PartitionState, replicas: tuple[int, ...], version: int) -> None:
        self.replicas = tuple(replicas)
        self.leader, self.leader_epoch = state.leader, state.leader_epoch
        self.isr = tuple(state.isr)
        self.controller_epoch = state.controller_epoch
        if version >= 0:
            self.zk_version = version
        self._pending_isr = None
        self._changed.notify_all()

    # -- the follower's log (the replica fetcher) ------------------------------------------------

    def _follows(self, leader_id: int, leader_epoch: int) -> bool:
        return self.leader == leader_id != self.local_id and self.leader_epoch == leader_epoch

    def follower_truncate(self, leader_id: int, leader_epoch: int, offset: int) -> bool:
        """Truncate the log to ``offset`` if this replica still follows ``leader_id`` in
        ``leader_epoch``; whether it does."""
        with self._lock:
            if not self._follows(leader_id, leader_epoch):
                return False
            if offset < self.log.log_end_offset:
                logger.info("%s-%d: truncating from %d to %d (leader %d, epoch %d)",
                            *self.topic_partition, self.log.log_end_offset, offset, leader_id,
                            leader_epoch)
                self.log.truncate_to(offset)
            return True

    def follower_truncate_fully(self, leader_id: int, leader_epoch: int, offset: int) -> bool:
        """Empty the log and start it at ``offset`` (the leader's log start), if this replica
        still follows ``leader_id`` in ``leader_epoch``."""
        with self._lock:
            if not self._follows(leader_id, leader_epoch):
                return False
            self.log.truncate_fully_and_start_at(offset)
            return True

    def follower_append(self, leader_id: int, leader_epoch: int, fetch_offset: int, records,
                        leader_high_watermark: int, leader_log_start_offset: int) -> bool:
        """Append what a fetch from ``fetch_offset`` returned, then take the leader's high
        watermark (up to the log end) and log start offset; nothing when this replica no
        longer follows ``leader_id`` in ``leader_epoch`` or its log moved meanwhile."""
        with self._lock:
            if not self._follows(leader_id, leader_epoch) or \
                    self.log.log_end_offset != fetch_offset:
                return False
            if len(records):
                self.log.append_as_follower(records)
            self.log.update_follower_high_watermark(leader_high_watermark)
            if leader_log_start_offset > self.log.log_start_offset:
                self.log.increment_log_start_offset(
                    min(leader_log_start_offset, self.log.high_watermark))
            return True

    # -- the leader's appends --------------------------------------------------------------------

    def append_as_leader(self, records, *, required_acks: int = 1,
                         origin: AppendOrigin = AppendOrigin.CLIENT) -> ValidatedRecords:
        """Append records a producer sent (Kafka's ``appendRecordsToLeader``), stamped with
        the leader epoch; leadership cannot change meanwhile. Raises :class:`NotLeaderError`,
        :class:`NotEnoughReplicasError` (acks=all and too small an ISR), or what the log
        raises."""
        return self._append_under_lock(required_acks, lambda: self.log.append(
            records, partition_leader_epoch=self.leader_epoch, origin=origin))

    def append_all_as_leader(self, record_sets, *, required_acks: int = 1) -> list:
        """:meth:`append_as_leader` for the records of several requests sent together, in
        order, in one write: the outcome of each (see :meth:`Log.append_all`). Raises as
        :meth:`append_as_leader` does, for all of them."""
        return self._append_under_lock(required_acks, lambda: self.log.append_all(
            record_sets, partition_leader_epoch=self.leader_epoch))

    def _append_under_lock(self, required_acks: int, append: Callable[[], object]):
        """``append()`` under the lock, so leadership cannot change meanwhile; a high watermark
        it moved is told once the lock is released, as Kafka's ``appendRecordsToLeader`` tries
        the delayed requests after its lock: those take other locks (the partition manager's,
        a waiting fetch's), and a thread holding one of them may be waiting for this one."""
        with self._lock:
            self._check_leader_append(required_acks)
            self._moved_while_appending = False
            try:
                result = append()
            finally:
                moved, self._moved_while_appending = self._moved_while_appending, None
        if moved:
            self.on_high_watermark(self.topic_partition)
        return result

    def _check_leader_append(self, required_acks: int) -> None:
        """(under the lock) Raise unless this replica may append a producer's records now."""
        if not self.is_leader:
            raise NotLeaderError(f"broker {self.local_id} does not lead "
                                 f"{self.topic_partition.topic}-"
                                 f"{self.topic_partition.partition}")
        min_isr = self.min_insync_replicas
        if required_acks == -1 and len(self.isr) < min_isr:
            raise NotEnoughReplicasError(
                f"The size of the current ISR {list(self.isr)} is insufficient to satisfy "
                f"the min.isr requirement of {min_isr} for partition "
                f"{self.topic_partition.topic}-{self.topic_partition.partition}")

    def on_leader_append(self, log: Log) -> None:
        """The log took an append (a producer's, a coordinator's, a marker): with the ISR
        down to the leader, the high watermark moves at once."""
        with self._lock:
            moved = self.is_leader and self._maybe_increment_high_watermark()
            if moved and self._moved_while_appending is not None:
                self._moved_while_appending = True  # told by _append_under_lock, unlocked
                return
        if moved:
            self.on_high_watermark(self.topic_partition)

    def check_enough_replicas_reach_offset(self, required_offset: int
                                           ) -> tuple[bool, ErrorCode]:
        """(done, error) of an acks=all append ending at ``required_offset`` (Kafka's
        ``checkEnoughReplicasReachOffset``): done once the high watermark reached it, with
        NOT_ENOUGH_REPLICAS_AFTER_APPEND if the ISR shrank below ``min.insync.replicas``
        meanwhile; NOT_LEADER_OR_FOLLOWER once leadership moved."""
        with self._lock:
            if not self.is_leader:
                return True, ErrorCode.NOT_LEADER_OR_FOLLOWER
            if self.log.high_watermark < required_offset:
                return False, ErrorCode.NONE
            if len(self._maximal_isr()) < self.min_insync_replicas:
                return True, ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND
            return True, ErrorCode.NONE

    def low_watermark(self) -> int:
        """The smallest log start offset among the leader and its live followers (Kafka's
        ``lowWatermarkIfLeader``): records below it are gone from every replica."""
        with self._lock:
            starts = [self.log.log_start_offset] + [
                f.log_start_offset for r, f in self._followers.items() if self.is_alive(r)]
            return min(starts)

    def wait_for_replication(self, required_offset: int, timeout_s: float) -> ErrorCode:
        """Block until the high watermark reaches ``required_offset`` (the answer of
        :meth:`check_enough_replicas_reach_offset`), at most ``timeout_s``
        (REQUEST_TIMED_OUT): the coordinators' appends, which Kafka writes with acks=all."""
        deadline = time.monotonic() + timeout_s
        with self._changed:
            while True:
                done, error = self.check_enough_replicas_reach_offset(required_offset)
                if done:
                    return error
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return ErrorCode.REQUEST_TIMED_OUT
                self._changed.wait(remaining)

    # -- followers' fetches ----------------------------------------------------------------------

    def update_follower_fetch_state(self, replica_id: int, *, fetch_offset: int,
                                    log_start_offset: int, leader_end_offset: int,
                                    now: int | None = None) -> bool:
        """Record a follower's fetch (Kafka's ``updateFollowerFetchState``), then add it to the
        ISR if it caught up and move the high watermark if it can; False when ``replica_id``
        does not replicate this partition here (the fetch is refused)."""
        now = self.clock() if now is None else now
        with self._lock:
            current = self._followers.get(replica_id)
            if not self.is_leader or current is None:
                return False
            updated = current.after_fetch(fetch_offset=fetch_offset,
                                          log_start_offset=log_start_offset, now_ms=now,
                                          leader_end_offset=leader_end_offset)
            self._followers[replica_id] = updated
            expand = self._needs_expand(replica_id)
            moved = updated.log_end_offset != current.log_end_offset and \
                self._maybe_increment_high_watermark(now)
        if moved:
            self.on_high_watermark(self.topic_partition)
        if expand:
            self._change_isr(lambda isr: (*isr, replica_id)
                             if replica_id not in isr and self._needs_expand(replica_id)
                             else None, "expanding")
        return True

    def _needs_expand(self, replica_id: int) -> bool:
        follower = self._followers.get(replica_id)
        return (self.is_leader and self._pending_isr is None and follower is not None
                and replica_id not in self.isr and replica_id in self.replicas
                and self.is_alive(replica_id)
                and follower.log_end_offset >= self.log.high_watermark
                and self._epoch_start_offset is not None
                and follower.log_end_offset >= self._epoch_start_offset)

    def preferred_read_replica(self, client_rack: str, fetch_offset: int,
                               rack_of: Callable[[int], str | None]) -> int | None:
        """Where a consumer in ``client_rack`` should read (KIP-392, Kafka's
        ``RackAwareReplicaSelector`` over ``findPreferredReadReplica``): None for the leader
        (it is in that rack, or no in-sync replica holding ``fetch_offset`` is), else the most
        caught-up in-sync follower in the rack."""
        with self._lock:
            if not self.is_leader or rack_of(self.local_id) == client_rack:
                return None
            now = self.clock()
            candidates = [(f.log_end_offset, -(now - f.last_caught_up_ms), r)
                          for r, f in self._followers.items()
                          if r in self.isr and rack_of(r) == client_rack
                          and f.log_start_offset <= fetch_offset <= f.log_end_offset]
            return max(candidates)[2] if candidates else None

    def maybe_shrink_isr(self) -> bool:
        """Drop the followers not caught up for ``replica.lag.time.max.ms`` from the ISR;
        whether it changed."""
        return self._change_isr(self._without_lagging, "shrinking")

    def _without_lagging(self, isr: tuple[int, ...]) -> tuple[int, ...] | None:
        now, end = self.clock(), self.log.log_end_offset
        lagging = [r for r in isr if r != self.local_id and (
            r not in self._followers or
            not self._followers[r].is_caught_up(end, now, self.lag_time_max_ms))]
        if not lagging:
            return None
        for r in lagging:
            follower = self._followers.get(r)
            logger.info("%s-%d: follower %d out of sync (log end %s, last caught up at %s)",
                        *self.topic_partition, r,
                        follower.log_end_offset if follower else "unknown",
                        follower.last_caught_up_ms if follower else "unknown")
        return tuple(r for r in isr if r not in lagging)

    def _change_isr(self, change: Callable[[tuple[int, ...]], tuple[int, ...] | None],
                    what: str) -> bool:
        """Write the ISR ``change`` makes of the current one (None: no change), conditionally
        on the znode version; it counts once written."""
        with self._lock:
            if not self.is_leader or self._pending_isr is not None:
                return False
            new_isr = change(self.isr)
            if new_isr is None:
                return False
            self._pending_isr = new_isr
            epoch, version = self.leader_epoch, self.zk_version
            proposed = PartitionState(self.local_id, epoch, new_isr, self.controller_epoch)
        logger.info("%s-%d: %s the ISR from %s to %s", *self.topic_partition, what,
                    list(self.isr), list(new_isr))
        written = version + 1 if self.isr_writer is None else \
            self.isr_writer.write(self.topic_partition, proposed, version)
        with self._lock:
            current = self._pending_isr == new_isr and self.leader_epoch == epoch and \
                self.zk_version == version and self.is_leader
            if current:
                self._pending_isr = None
            if not current or written is None:
                return False
            self.isr, self.zk_version = new_isr, written
            moved = self._maybe_increment_high_watermark(self.clock())
        if moved:
            self.on_high_watermark(self.topic_partition)
        return True

    # -- the high watermark ----------------------------------------------------------------------

    def _maybe_increment_high_watermark(self, now: int | None = None) -> bool:
        """(under the lock) Move the leader's high watermark as far as the ISR allows (``now``:
        the clock, read when there are followers and it is not given)."""
        end = self.log.log_end_offset
        high_watermark = end
        if self._followers:
            maximal = self._maximal_isr()
            now = self.clock() if now is None else now
            for replica_id, follower in self._followers.items():
                if follower.log_end_offset < high_watermark and (
                        replica_id in maximal or (
                            follower.is_caught_up(end, now, self.lag_time_max_ms)
                            and self.is_alive(replica_id))):
                    high_watermark = follower.log_end_offset
        moved = self.log.maybe_increment_high_watermark(high_watermark)
        if moved:
            self._changed.notify_all()
        return moved
