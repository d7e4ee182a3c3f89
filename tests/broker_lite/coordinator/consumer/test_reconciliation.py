"""Reconciliation as a table: a member's assignment, the target and who owns what in; the
member's next step out. Revocation always comes first: no partition is assigned to a member
while another member still owns it."""

import uuid

import pytest

from broker_lite.coordinator.consumer.reconciliation import (
    STABLE,
    UNRELEASED_PARTITIONS,
    UNREVOKED_PARTITIONS,
    MemberAssignment,
    reconcile,
)

T = uuid.UUID(int=7)
FREE = {}


def ps(*partitions):
    return {T: frozenset(partitions)} if partitions else {}


def member(epoch, state, assigned=(), revoking=()):
    return MemberAssignment(epoch, epoch - 1, state, ps(*assigned), ps(*revoking))


@pytest.mark.parametrize("case, before, target_epoch, target, owners, owned, after", [
    ("reconciled: nothing to do",
     member(3, STABLE, [0, 1]), 3, ps(0, 1), FREE, None, member(3, STABLE, [0, 1])),
    ("new partitions, free: assigned at once, at the target epoch",
     member(3, STABLE, [0]), 4, ps(0, 1), FREE, None,
     MemberAssignment(4, 3, STABLE, ps(0, 1))),
    ("a partition lost, still owned: revoke first, stay in the epoch",
     member(3, STABLE, [0, 1]), 4, ps(1, 2), FREE, None,
     MemberAssignment(3, 3, UNREVOKED_PARTITIONS, ps(1), ps(0))),
    ("a partition lost but already let go: straight to the target",
     member(3, STABLE, [0, 1]), 4, ps(1, 2), FREE, ps(1),
     MemberAssignment(4, 3, STABLE, ps(1, 2))),
    ("waiting for a revocation the member has not reported",
     member(3, UNREVOKED_PARTITIONS, [1], [0]), 4, ps(1, 2), FREE, None,
     member(3, UNREVOKED_PARTITIONS, [1], [0])),
    ("still owning the revoked partition",
     member(3, UNREVOKED_PARTITIONS, [1], [0]), 4, ps(1, 2), FREE, ps(0, 1),
     member(3, UNREVOKED_PARTITIONS, [1], [0])),
    ("revocation reported: the member moves on",
     member(3, UNREVOKED_PARTITIONS, [1], [0]), 4, ps(1, 2), FREE, ps(1),
     MemberAssignment(4, 3, STABLE, ps(1, 2))),
    ("a target partition another member still owns: unreleased",
     member(3, STABLE, [0]), 4, ps(0, 1), {(T, 1): 3}, None,
     MemberAssignment(4, 3, UNRELEASED_PARTITIONS, ps(0))),
    ("released meanwhile: assigned",
     MemberAssignment(4, 3, UNRELEASED_PARTITIONS, ps(0)), 4, ps(0, 1), FREE, None,
     MemberAssignment(4, 4, STABLE, ps(0, 1))),
    ("revoke and wait for another's: revocation first",
     member(3, STABLE, [0, 1]), 4, ps(1, 2), {(T, 2): 3}, None,
     MemberAssignment(3, 3, UNREVOKED_PARTITIONS, ps(1), ps(0))),
])
def test_reconcile(case, before, target_epoch, target, owners, owned, after):
    got = reconcile(before, target_epoch, target, lambda t, p: owners.get((t, p), -1), owned)
    assert got == after, case


def test_a_reconciled_member_is_reconciled_to_its_epoch_only():
    assert member(3, STABLE).is_reconciled_to(3)
    assert not member(3, STABLE).is_reconciled_to(4)
    assert not member(3, UNRELEASED_PARTITIONS).is_reconciled_to(3)
