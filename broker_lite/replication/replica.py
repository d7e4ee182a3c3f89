"""What a leader knows of each follower of a partition, from the follower's Fetch requests
(Kafka's ``Replica`` and ``ReplicaState``).

A follower fetches from its log end offset, so each fetch tells the leader the follower's log end
offset (and log start offset). The follower is *caught up* when that offset reached the
leader's log end offset, or did so within ``replica.lag.time.max.ms``: ``last_caught_up_ms`` is
the latest time at which the follower's log reached the leader's log end as it was then. A
fetch at the leader's log end offset moves it to the time of that fetch; a fetch at the log end
offset the leader had at the follower's previous fetch moves it to the time of that previous
fetch, so a follower that keeps up with a steady stream of small appends, always one fetch
behind, stays caught up.

>>> state = FollowerState().after_fetch(fetch_offset=10, log_start_offset=0, now_ms=1000,
...                                     leader_end_offset=12)
>>> state.log_end_offset, state.last_caught_up_ms
(10, 0)
>>> state = state.after_fetch(fetch_offset=12, log_start_offset=0, now_ms=1500,
...                           leader_end_offset=15)
>>> state.last_caught_up_ms   # it reached what the leader had at its previous fetch (12)
1000
>>> state.is_caught_up(leader_end_offset=15, now_ms=20000, max_lag_ms=10000)
False
"""

from dataclasses import dataclass, replace

UNKNOWN_OFFSET = -1


@dataclass(frozen=True)
class FollowerState:
    log_start_offset: int = UNKNOWN_OFFSET
    log_end_offset: int = UNKNOWN_OFFSET
    # the leader's log end offset when the follower's last fetch arrived
    last_fetch_leader_end_offset: int = 0
    last_fetch_ms: int = 0
    last_caught_up_ms: int = 0

    def is_caught_up(self, leader_end_offset: int, now_ms: int, max_lag_ms: int) -> bool:
        """At the leader's log end, or there within the last ``max_lag_ms``."""
        return self.log_end_offset == leader_end_offset or \
            now_ms - self.last_caught_up_ms <= max_lag_ms

    def after_fetch(self, *, fetch_offset: int, log_start_offset: int, now_ms: int,
                    leader_end_offset: int) -> "FollowerState":
        """The state once a fetch from ``fetch_offset`` arrived at ``now_ms``, when the
        leader's log ended at ``leader_end_offset`` (Kafka's ``updateFetchStateOrThrow``)."""
        caught_up = self.last_caught_up_ms
        if fetch_offset >= leader_end_offset:
            caught_up = max(caught_up, now_ms)
        elif fetch_offset >= self.last_fetch_leader_end_offset:
            caught_up = max(caught_up, self.last_fetch_ms)
        return FollowerState(log_start_offset, fetch_offset,
                             max(leader_end_offset, self.last_fetch_leader_end_offset), now_ms,
                             caught_up)

    def reset(self, *, now_ms: int, leader_end_offset: int, new_leader: bool,
              in_sync: bool) -> "FollowerState":
        """The state when this broker becomes leader (``new_leader``) or starts a new leader
        epoch: a follower in the ISR counts as caught up now, one outside it as never, so it
        neither holds back the high watermark nor rejoins before it fetches (Kafka's
        ``resetReplicaState``)."""
        caught_up = now_ms if in_sync else 0
        if new_leader:
            return FollowerState(last_fetch_leader_end_offset=UNKNOWN_OFFSET,
                                 last_caught_up_ms=caught_up)
        return replace(self, last_fetch_leader_end_offset=leader_end_offset,
                       last_fetch_ms=now_ms if in_sync else 0, last_caught_up_ms=caught_up)
