"""The controller's decisions about one partition's leader and ISR, as pure functions of what
it knows: the partition's state, its replicas (the first is the preferred leader), the live
brokers and those shutting down (Kafka's ``PartitionLeaderElectionAlgorithms`` and the state
changes of its ``PartitionStateMachine`` and ``ReplicaStateMachine``).

Every new state names the controller's epoch and, when the leader or the ISR changes, the next
leader epoch. A broker shutting down (controlled shutdown) counts as live for what it leads
alone, but leads nothing new and leaves every ISR it shares with others.

:func:`desired_state` is what the controller keeps true at all times:

* a new partition: leader = the first live replica, ISR = the live replicas, leader epoch 0;
* a dead (or shutting-down, or no longer assigned) follower leaves the ISR;
* a partition whose leader died gets the first replica, in assignment order, that is live and in
  the ISR (*offline* election); with none, it goes offline (leader -1, keeping its last ISR
  member so that only it may lead again), unless unclean leader election is enabled for the
  topic: then the first live replica leads, alone in the ISR, and what it lacks is lost;
* a leader shutting down hands over to the first other live replica in the ISR (*controlled
  shutdown* election), keeping its leadership while there is none.

>>> desired_state(PartitionState(1, 3, (1, 2, 3), 1), (1, 2, 3), {2, 3}, 5)
PartitionState(leader=2, leader_epoch=4, isr=(2, 3), controller_epoch=5)
>>> desired_state(PartitionState(1, 3, (1,), 1), (1, 2), {2}, 5, unclean=True)
PartitionState(leader=2, leader_epoch=4, isr=(2,), controller_epoch=5)

:func:`preferred_election` and :func:`unclean_election` are elections asked for (ElectLeaders,
``/admin/preferred_replica_election``, the automatic leader rebalance); they answer the new state
or the Kafka error saying why there is none.
"""

from collections.abc import Collection

from broker_lite.protocol import ErrorCode
from broker_lite.zk.layout import NO_LEADER, PartitionState


def desired_state(state: PartitionState | None, replicas: tuple[int, ...],
                  live: Collection[int], controller_epoch: int, *,
                  shutting_down: Collection[int] = (), unclean: bool = False
                  ) -> PartitionState | None:
    """The state the controller writes for a partition (``state`` itself when nothing needs
    to change; None for a new partition without a live replica)."""
    def eligible(r: int) -> bool:
        return r in live and r not in shutting_down

    if state is None:
        first = tuple(r for r in replicas if eligible(r))
        return PartitionState(first[0], 0, first, controller_epoch) if first else None
    leader, epoch = state.leader, state.leader_epoch
    if leader != NO_LEADER and leader in live and leader in replicas:
        # followers that died, are shutting down or were unassigned leave the ISR
        isr = tuple(r for r in state.isr if r == leader or (eligible(r) and r in replicas))
        if leader in shutting_down:
            successors = [r for r in replicas if r != leader and r in isr and eligible(r)]
            if successors:
                return PartitionState(successors[0], epoch + 1,
                                      tuple(r for r in isr if r != leader), controller_epoch)
        if isr == state.isr:
            return state
        return PartitionState(leader, epoch + 1, isr, controller_epoch)
    isr = tuple(r for r in state.isr if eligible(r) and r in replicas)
    candidates = [r for r in replicas if r in isr]
    if candidates:
        return PartitionState(candidates[0], epoch + 1, isr, controller_epoch)
    if unclean:
        unclean_candidates = [r for r in replicas if eligible(r)]
        if unclean_candidates:
            chosen = unclean_candidates[0]
            return PartitionState(chosen, epoch + 1, (chosen,), controller_epoch)
    if leader == NO_LEADER:
        return state
    last = (leader,) if leader in state.isr else state.isr[:1]
    return PartitionState(NO_LEADER, epoch + 1, last, controller_epoch)


def preferred_election(state: PartitionState, replicas: tuple[int, ...], live: Collection[int],
                       controller_epoch: int, *, shutting_down: Collection[int] = ()
                       ) -> tuple[PartitionState | None, ErrorCode]:
    """Move leadership to the preferred replica (the first), when it is live and in the ISR
    (``preferredReplicaPartitionLeaderElection``); the ISR stays as it is."""
    preferred = replicas[0]
    if state.leader == preferred:
        return None, ErrorCode.ELECTION_NOT_NEEDED
    if preferred not in live or preferred in shutting_down or preferred not in state.isr:
        return None, ErrorCode.PREFERRED_LEADER_NOT_AVAILABLE
    return PartitionState(preferred, state.leader_epoch + 1, state.isr,
                          controller_epoch), ErrorCode.NONE


def unclean_election(state: PartitionState, replicas: tuple[int, ...], live: Collection[int],
                     controller_epoch: int, *, shutting_down: Collection[int] = ()
                     ) -> tuple[PartitionState | None, ErrorCode]:
    """An election asked for with ElectionType UNCLEAN: for a partition without a live leader,
    the first live replica in the ISR, else the first live replica at all."""
    if state.leader != NO_LEADER and state.leader in live:
        return None, ErrorCode.ELECTION_NOT_NEEDED
    elected = desired_state(state, replicas, live, controller_epoch,
                            shutting_down=shutting_down, unclean=True)
    if elected is None or elected.leader == NO_LEADER:
        return None, ErrorCode.ELIGIBLE_LEADERS_NOT_AVAILABLE
    return elected, ErrorCode.NONE
