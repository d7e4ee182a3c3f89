"""Reconciliation: how a member moves from its current assignment towards its target, revoking
before it assigns (KIP-848, "Reconciliation"; Kafka's ``CurrentAssignmentBuilder``).

A member is in one of three states (the int8 of ConsumerGroupCurrentMemberAssignment):

======================  =====  ==============================================================
state                   value  meaning
======================  =====  ==============================================================
STABLE                  0      it has all of its target it may have, at the target's epoch
UNREVOKED_PARTITIONS    1      it must give up partitions first; it stays in its epoch until
                               a heartbeat no longer reports them owned
UNRELEASED_PARTITIONS   2      at the target's epoch, but some of its target partitions are
                               still owned by other members: it gets them once released
======================  =====  ==============================================================

One step (:func:`reconcile`) from a member, the target assignment and its epoch, who owns each
partition now (its owner's epoch, -1 for none) and the partitions the member reports owned
(None: not reported in this heartbeat, taken as still owning what it was asked to revoke):

1. *kept* = current ∩ target; *to revoke* = current - target; *to assign* = target - current,
   less the partitions another member still owns (*unreleased*).
2. Anything to revoke that the member still owns: UNREVOKED_PARTITIONS in its current epoch,
   with *kept* assigned and *to revoke* pending; no partition is assigned before the member has
   let go of those it loses, so no partition is ever owned twice.
3. Otherwise the member moves to the target's epoch with *kept* + *to assign*: STABLE, or
   UNRELEASED_PARTITIONS while some are unreleased.

>>> import uuid
>>> t = uuid.UUID(int=1)
>>> m = MemberAssignment(epoch=1, previous_epoch=0, state=STABLE, assigned={t: frozenset({0, 1})})
>>> step = reconcile(m, 2, {t: frozenset({1, 2})}, lambda topic, p: -1, owned=None)
>>> step.state, step.epoch, sorted(step.assigned[t]), sorted(step.pending_revocation[t])
(1, 1, [1], [0])
>>> owned = {t: frozenset({1})}  # the member let partition 0 go
>>> step = reconcile(step, 2, {t: frozenset({1, 2})}, lambda topic, p: -1, owned=owned)
>>> step.state, step.epoch, sorted(step.assigned[t]), step.pending_revocation
(0, 2, [1, 2], {})
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace

STABLE, UNREVOKED_PARTITIONS, UNRELEASED_PARTITIONS = 0, 1, 2
STATE_NAMES = {STABLE: "STABLE", UNREVOKED_PARTITIONS: "UNREVOKED_PARTITIONS",
               UNRELEASED_PARTITIONS: "UNRELEASED_PARTITIONS"}

Assignment = Mapping[uuid.UUID, frozenset[int]]
PartitionEpoch = Callable[[uuid.UUID, int], int]  # the owner's epoch, -1 when free


@dataclass(frozen=True)
class MemberAssignment:
    """A member's place in reconciliation (ConsumerGroupCurrentMemberAssignment)."""

    epoch: int = 0
    previous_epoch: int = -1
    state: int = STABLE
    assigned: Assignment = field(default_factory=dict)
    pending_revocation: Assignment = field(default_factory=dict)

    def is_reconciled_to(self, target_epoch: int) -> bool:
        return self.state == STABLE and self.epoch == target_epoch

    def with_epoch(self, epoch: int) -> MemberAssignment:
        """Kafka's ``updateMemberEpoch``: the previous epoch follows."""
        return replace(self, epoch=epoch, previous_epoch=self.epoch)


def _owns_any(owned: Assignment | None, partitions: Assignment) -> bool:
    if owned is None:  # not reported: assume the member still has them
        return True
    return any(owned.get(topic, frozenset()) & ps for topic, ps in partitions.items())


def reconcile(member: MemberAssignment, target_epoch: int, target: Assignment,
              partition_epoch: PartitionEpoch, owned: Assignment | None) -> MemberAssignment:
    """The member's next step towards ``target`` (itself when it cannot move yet)."""
    if member.state == STABLE:
        if member.epoch == target_epoch:
            return member
        return _next(member, member.epoch, target_epoch, target, partition_epoch, owned)
    if member.state == UNREVOKED_PARTITIONS:
        if _owns_any(owned, member.pending_revocation):
            return member
        return _next(member, member.epoch + 1, target_epoch, target, partition_epoch, owned)
    return _next(member, member.epoch, target_epoch, target, partition_epoch, owned)


def _next(member: MemberAssignment, epoch: int, target_epoch: int, target: Assignment,
          partition_epoch: PartitionEpoch, owned: Assignment | None) -> MemberAssignment:
    assigned: dict[uuid.UUID, frozenset[int]] = {}
    revoking: dict[uuid.UUID, frozenset[int]] = {}
    assigning: dict[uuid.UUID, frozenset[int]] = {}
    unreleased = False
    for topic in set(target) | set(member.assigned):
        goal = target.get(topic, frozenset())
        current = member.assigned.get(topic, frozenset())
        kept = current & goal
        to_assign = goal - kept
        free = frozenset(p for p in to_assign if partition_epoch(topic, p) == -1)
        unreleased = unreleased or free != to_assign
        if kept:
            assigned[topic] = kept
        if current - kept:
            revoking[topic] = current - kept
        if free:
            assigning[topic] = free
    if revoking and _owns_any(owned, revoking):
        return replace(member.with_epoch(epoch), state=UNREVOKED_PARTITIONS, assigned=assigned,
                       pending_revocation=revoking)
    for topic, partitions in assigning.items():
        assigned[topic] = assigned.get(topic, frozenset()) | partitions
    state = UNRELEASED_PARTITIONS if unreleased else STABLE
    return replace(member.with_epoch(target_epoch), state=state, assigned=assigned,
                   pending_revocation={})
