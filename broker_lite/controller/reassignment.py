"""Partition reassignment as Kafka's ZooKeeper-mode controller runs it (KIP-455,
``KafkaController.onPartitionReassignment``), as pure functions.

A reassignment moves a partition from its original replicas (ORS) to target replicas (TRS). It
is recorded in the topic znode, so a new controller resumes it: the partition's replicas become
RS = TRS followed by the rest of ORS, with ``adding_replicas`` = TRS - ORS and
``removing_replicas`` = ORS - TRS. The new replicas then follow the leader like any other (they
see themselves in RS), and the leader adds them to the ISR once they caught up. When every
target replica is in the ISR the controller completes it in one ZooKeeper transaction: the
leader moves to the first live target replica in the ISR if the current one is not a target
(or not live), the removed replicas leave the ISR (a new leader epoch), and RS becomes TRS with
nothing adding or removing. Removed replicas then stop and delete their copy.

A new reassignment of a partition being reassigned replaces it (its original replicas stay the
original); a reassignment to null, or to the original replicas, cancels it.

>>> ongoing = Assignment((1, 2, 3)).reassign_to((4, 5, 6))
>>> ongoing
Assignment(replicas=(4, 5, 6, 1, 2, 3), adding=(4, 5, 6), removing=(1, 2, 3))
>>> ongoing.target_replicas, ongoing.origin_replicas
((4, 5, 6), (1, 2, 3))
>>> complete(PartitionState(1, 7, (1, 2, 3, 4, 5, 6), 2), ongoing, {1, 2, 3, 4, 5, 6}, 3)
PartitionState(leader=4, leader_epoch=8, isr=(4, 5, 6), controller_epoch=3)
"""

from collections.abc import Collection, Mapping
from dataclasses import dataclass

from broker_lite.protocol import ErrorCode
from broker_lite.zk.layout import PartitionState, TopicAssignment


@dataclass(frozen=True)
class Assignment:
    """One partition's replicas and the replicas a reassignment is adding and removing."""

    replicas: tuple[int, ...]
    adding: tuple[int, ...] = ()
    removing: tuple[int, ...] = ()

    @property
    def being_reassigned(self) -> bool:
        return bool(self.adding or self.removing)

    @property
    def origin_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.adding)

    @property
    def target_replicas(self) -> tuple[int, ...]:
        return tuple(r for r in self.replicas if r not in self.removing)

    def reassign_to(self, target: tuple[int, ...]) -> "Assignment":
        origin = self.origin_replicas
        full = tuple(dict.fromkeys((*target, *origin)))
        return Assignment(full, tuple(r for r in full if r not in origin),
                          tuple(r for r in full if r not in target))

    @staticmethod
    def of(topic: TopicAssignment, partition: int) -> "Assignment":
        return Assignment(tuple(topic.partitions[partition]),
                          tuple(topic.adding_replicas.get(partition, ())),
                          tuple(topic.removing_replicas.get(partition, ())))


def with_assignments(topic: TopicAssignment,
                     changes: Mapping[int, Assignment]) -> TopicAssignment:
    """``topic`` with some partitions' assignments replaced."""
    partitions = dict(topic.partitions)
    adding, removing = dict(topic.adding_replicas), dict(topic.removing_replicas)
    for partition, assignment in changes.items():
        partitions[partition] = assignment.replicas
        adding.pop(partition, None)
        removing.pop(partition, None)
        if assignment.adding:
            adding[partition] = assignment.adding
        if assignment.removing:
            removing[partition] = assignment.removing
    return TopicAssignment(partitions, adding, removing, topic.topic_id)


def check_target(target: tuple[int, ...], current: Assignment,
                 live: Collection[int]) -> tuple[ErrorCode, str | None]:
    """Kafka's ``validateReplicas`` for a reassignment's target replicas."""
    if not target:
        return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                "Empty replica list specified in partition reassignment.")
    if len(set(target)) != len(target):
        return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Duplicate replica ids in partition reassignment replica list: {list(target)}")
    if any(r < 0 for r in target):
        return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Invalid broker id in replica list: {list(target)}")
    adding = current.reassign_to(target).adding
    if not set(adding) <= set(live):
        return (ErrorCode.INVALID_REPLICA_ASSIGNMENT,
                f"Replica assignment has brokers that are not alive. Replica list: "
                f"{list(adding)}, live broker list: {sorted(live)}")
    return ErrorCode.NONE, None


def is_complete(state: PartitionState | None, assignment: Assignment) -> bool:
    """Every target replica is in the ISR."""
    return state is not None and all(r in state.isr for r in assignment.target_replicas)


def complete(state: PartitionState, assignment: Assignment, live: Collection[int],
             controller_epoch: int) -> PartitionState | None:
    """The state that completes the reassignment, or None while no target replica can lead:
    a leader that stays a target keeps leading, else the first live target replica in the ISR
    leads (``reassignPartitionLeaderElection``); the removed replicas leave the ISR."""
    target = assignment.target_replicas
    leader = state.leader
    if leader not in target or leader not in live:
        candidates = [r for r in target if r in live and r in state.isr]
        if not candidates:
            return None
        leader = candidates[0]
    isr = tuple(r for r in state.isr if r not in assignment.removing)
    return PartitionState(leader, state.leader_epoch + 1, isr, controller_epoch)
