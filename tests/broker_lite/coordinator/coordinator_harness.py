"""A group coordinator for tests, with a manual timer (time moves only when the test says) and
real partition logs of ``__consumer_offsets``, and its requests as one-line calls."""

import struct

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.config.topic import LogConfig
from broker_lite.coordinator import (
    GroupConfig,
    GroupCoordinator,
    OffsetConfig,
    partition_for,
)
from broker_lite.coordinator.common.timer import ManualTimer
from broker_lite.coordinator.group.loader import load_partition
from broker_lite.coordinator.group.offsets import OffsetAndMetadata
from broker_lite.log import Log
from broker_lite.protocol import ErrorCode
from broker_lite.zk.testing import wait_until

PARTITIONS = 3
BASE_MS = 1_700_000_000_000
SESSION_MS = 1000
REBALANCE_MS = 5000
RETENTION_MS = 60_000
T0 = TopicPartition("events", 0)
T1 = TopicPartition("events", 1)


def subscription(*topics: str) -> bytes:
    data = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        data += struct.pack(">h", len(topic)) + topic.encode()
    return data + struct.pack(">i", -1)


class Answers(list):
    """The answers a request got (a JoinGroup or SyncGroup may get its answer later)."""

    @property
    def result(self):
        assert len(self) == 1, f"expected one answer, got {list(self)}"
        return self[0]

    @property
    def pending(self) -> bool:
        return not self


class Harness:
    """A coordinator of ``PARTITIONS`` partitions, all led here unless taken out of ``led``."""

    def __init__(self, tmp_path, *, logs=None, timer=None, **group_settings):
        self.tmp_path = tmp_path
        self.timer = timer or ManualTimer()
        self.logs = logs if logs is not None else {
            p: Log(tmp_path / f"__consumer_offsets-{p}", LogConfig(cleanup_policy=("compact",)),
                   clock=self.clock) for p in range(PARTITIONS)}
        self.led = set(range(PARTITIONS))
        settings = {"min_session_timeout_ms": 100, "max_session_timeout_ms": 30_000,
                    "initial_rebalance_delay_ms": 0, **group_settings}
        self.coordinator = GroupCoordinator(
            GroupConfig(**settings),
            OffsetConfig(num_partitions=PARTITIONS, retention_ms=RETENTION_MS,
                         retention_check_interval_ms=10_000),
            self.leader_log, timer=self.timer, clock_ms=self.clock)

    def clock(self) -> int:
        return BASE_MS + int(self.timer.now_ms)

    def leader_log(self, partition: int):
        return (self.logs[partition], 0) if partition in self.led else None

    def start(self, wait: bool = True) -> "Harness":
        self.coordinator.start()
        for partition in sorted(self.led):
            self.coordinator.on_elected(partition, 0)
        if wait:
            wait_until(lambda: self.coordinator.manager.owned_partitions() == self.led,
                       message="partitions loaded")
        return self

    def advance(self, ms: float) -> None:
        self.timer.advance(ms)

    # -- requests ---------------------------------------------------------------------------

    def join(self, group: str, member_id: str = "", *, instance: str | None = None,
             protocols=None, protocol_type: str = "consumer", session_ms: int = SESSION_MS,
             rebalance_ms: int = REBALANCE_MS, require_known_member_id: bool = True,
             client_id: str = "client", skip: bool = False) -> Answers:
        answers = Answers()
        self.coordinator.handle_join_group(
            group, member_id, instance, require_known_member_id and instance is None, skip,
            client_id, "/127.0.0.1", rebalance_ms, session_ms, protocol_type,
            protocols if protocols is not None else [("range", subscription("events"))],
            answers.append)
        return answers

    def new_member(self, group: str, **kwargs) -> Answers:
        """Join the way a v4+ client does: ask for a member id, then join with it."""
        first = self.join(group, **kwargs).result
        if kwargs.get("instance") is not None:
            return Answers([first])
        assert first.error == ErrorCode.MEMBER_ID_REQUIRED, first
        return self.join(group, first.member_id, **kwargs)

    def sync(self, group: str, generation: int, member_id: str, assignment=None,
             instance: str | None = None) -> Answers:
        answers = Answers()
        self.coordinator.handle_sync_group(group, generation, member_id, None, None, instance,
                                           assignment or {}, answers.append)
        return answers

    def heartbeat(self, group: str, member_id: str, generation: int,
                  instance: str | None = None) -> ErrorCode:
        return self.coordinator.handle_heartbeat(group, member_id, instance, generation)

    def commit(self, group: str, offsets: dict, member_id: str = "", generation: int = -1,
               instance: str | None = None) -> dict:
        values = {tp: v if isinstance(v, OffsetAndMetadata)
                  else OffsetAndMetadata(v, -1, "", self.clock()) for tp, v in offsets.items()}
        return self.coordinator.handle_commit_offsets(group, member_id, instance, generation,
                                                      values)

    def fetch(self, group: str, partitions=None) -> dict:
        error, offsets = self.coordinator.handle_fetch_offsets(group, partitions)
        assert error == ErrorCode.NONE, error
        return {tp: (v.offset if v is not None else -1) for tp, v in offsets.items()}

    def state(self, group: str) -> str:
        return self.coordinator.handle_describe_group(group)[1].state

    def stable_group(self, group: str, *member_names: str, **join_options) -> dict[str, str]:
        """A Stable group of fresh members; name -> member id."""
        ids = {}
        answers = {}
        for name in member_names:
            answers[name] = self.new_member(group, client_id=name, **join_options)
            self.advance(0)
            # every earlier member learns of the rebalance and rejoins
            for earlier, member_id in ids.items():
                assert self.heartbeat(group, member_id, self.generation(group)) in (
                    ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.NONE)
                answers[earlier] = self.join(group, member_id, client_id=earlier,
                                             **join_options)
            self.advance(0)
            ids[name] = answers[name].result.member_id
            generation = answers[name].result.generation_id
            leader = answers[name].result.leader_id
            syncs = [self.sync(group, generation, ids[n], {
                m: n.encode() for n, m in ids.items()} if ids[n] == leader else None)
                for n in ids]
            assert all(s.result.error == ErrorCode.NONE for s in syncs), syncs
        assert self.state(group) == "Stable"
        return ids

    def generation(self, group: str) -> int:
        found = self.coordinator.manager.get_group(group)
        return found.generation_id if found is not None else -1

    def records(self, group: str):
        log = self.logs[partition_for(group, PARTITIONS)]
        return load_partition(log, buffer_size=1 << 20)

    def close(self) -> None:
        self.coordinator.shutdown()
        for log in self.logs.values():
            log.close()


def group_on(partition: int, prefix: str = "group") -> str:
    return next(f"{prefix}-{i}" for i in range(1000)
                if partition_for(f"{prefix}-{i}", PARTITIONS) == partition)
