"""The target assignment: what the group's assignor gives each member for a group epoch, and
the records that store it (Kafka's ``TargetAssignmentBuilder``).

Only the members whose target changed get a ConsumerGroupTargetAssignmentMember record; the
ConsumerGroupTargetAssignmentMetadata record that follows them sets the assignment epoch, so a
coordinator that fails between the two recomputes the assignment when it reloads the group.
"""

from __future__ import annotations

from collections.abc import Mapping

from .assignors import ASSIGNORS, MemberSubscription, select_assignor
from .records import (
    Assignment,
    MemberMetadata,
    Record,
    TopicMetadata,
    target_assignment_member_record,
    target_assignment_metadata_record,
)
from .subscriptions import member_topics


def group_assignor(members: Mapping[str, MemberMetadata], configured: tuple[str, ...]) -> str:
    return select_assignor((m.server_assignor for m in members.values()), configured)


def compute_target(group_id: str, epoch: int, members: Mapping[str, MemberMetadata],
                   current: Mapping[str, Assignment], metadata: Mapping[str, TopicMetadata],
                   assignor: str) -> tuple[dict[str, Assignment], list[Record]]:
    """The new target of every member for ``epoch``, and the records storing the changes."""
    subscriptions = {
        member_id: MemberSubscription(member_topics(m, metadata), current.get(member_id, {}),
                                      m.instance_id)
        for member_id, m in members.items()}
    partitions = {t.topic_id: t.num_partitions for t in metadata.values()}
    target: dict[str, Assignment] = dict(ASSIGNORS[assignor](subscriptions, partitions))
    records = [target_assignment_member_record(group_id, member_id, assignment)
               for member_id, assignment in sorted(target.items())
               if _normalized(assignment) != _normalized(current.get(member_id, {}))]
    records.append(target_assignment_metadata_record(group_id, epoch))
    return target, records


def _normalized(assignment: Assignment) -> dict:
    return {t: ps for t, ps in assignment.items() if ps}
