"""Online migration between a classic group and a consumer group (KIP-848, "Online
migration"; Kafka's ``convertToConsumerGroup`` and ``convertToClassicGroup``), as
``group.consumer.migration.policy`` allows it:

- **upgrade**: a member speaking the consumer protocol joins a classic group of the consumer
  embedded protocol that is Stable. The group becomes a consumer group at once, in one batch of
  records: the classic group's record is tombstoned, each classic member becomes a member of the
  consumer group that keeps its classic protocols (ClassicMemberMetadata) and its partitions, at
  an epoch equal to the classic generation. The classic members carry on with JoinGroup,
  SyncGroup and Heartbeat, served from the consumer group (:mod:`.coordinator`): a heartbeat
  answers REBALANCE_IN_PROGRESS while the member has not reached its target, and its next
  JoinGroup moves it there. A member gives up a partition when it rejoins (an eager member owns
  nothing then; a cooperative one reports what it still owns), and only then may another member
  get it, so no partition is ever consumed by two members at once.
- **downgrade**: the last member speaking the consumer protocol leaves (or is fenced) while
  members speaking the classic protocol remain. The group becomes a classic group with those
  members and their partitions, at a generation equal to the group epoch, and rebalances at
  once, as Kafka does.

Nothing here writes: the coordinator appends the records, then swaps the groups.
"""

from __future__ import annotations

from broker_lite.common.vocabulary import INT32_MAX

from ..group.consumer_protocol import (
    assignment_bytes,
    parse_assignment,
    parse_subscription,
    subscription_version,
)
from ..group.group import STABLE, Group
from ..group.records import GroupRecord, MemberRecord, group_metadata_key, group_metadata_value
from .config import ConsumerGroupConfig
from .group import ConsumerGroup
from .reconciliation import STABLE as MEMBER_STABLE
from .records import (
    Assignment,
    ClassicProtocols,
    CurrentAssignment,
    MemberMetadata,
    Record,
    current_assignment_record,
    group_metadata_record,
    group_tombstones,
    member_metadata_record,
    member_tombstones,
    partition_metadata_record,
    target_assignment_member_record,
    target_assignment_metadata_record,
)
from .subscriptions import TopicsImage, subscribed_names, subscription_metadata


def upgrade_refusal(classic: Group, config: ConsumerGroupConfig) -> str | None:
    """Why ``classic`` (the caller holds its lock) cannot become a consumer group now, or
    None."""
    if not config.migration_policy.allows_upgrade:
        return (f"group.consumer.migration.policy is {config.migration_policy.value}: classic "
                f"group {classic.group_id} cannot be upgraded")
    if not classic.is_consumer_group:
        return f"group {classic.group_id} does not use the consumer embedded protocol"
    if not classic.is_(STABLE):
        return f"classic group {classic.group_id} is rebalancing ({classic.state.value})"
    if classic.size >= config.max_size:
        return f"classic group {classic.group_id} has group.consumer.max.size members already"
    return None


def by_topic_id(partitions: dict[str, frozenset[int]], image: TopicsImage) -> Assignment:
    """Partitions by topic name, by topic id (topics that no longer exist left out)."""
    found = {name: image.topic(name) for name in partitions}
    return {t[0]: ps for name, ps in partitions.items() if (t := found[name]) is not None}


def by_topic_name(assignment: Assignment, image: TopicsImage) -> dict[str, frozenset[int]]:
    """Partitions by topic id, by topic name (topics that no longer exist left out)."""
    named = {image.topic_name(topic_id): ps for topic_id, ps in assignment.items()}
    return {name: ps for name, ps in named.items() if name is not None}


def upgrade_records(classic: Group, image: TopicsImage) -> list[Record]:
    """The records turning ``classic`` (Stable, the caller holds its lock) into a consumer
    group at the epoch of its generation."""
    group_id, epoch = classic.group_id, classic.generation_id
    protocol = classic.protocol_name or ""
    records: list[Record] = [(group_metadata_key(group_id), None)]
    members: dict[str, MemberMetadata] = {}
    assignments: dict[str, Assignment] = {}
    for m in classic.members.values():
        topics, _, rack = parse_subscription(m.metadata(protocol))
        members[m.member_id] = MemberMetadata(
            m.group_instance_id, rack, m.client_id, m.client_host, topics, None,
            m.rebalance_timeout_ms, None,
            ClassicProtocols(m.session_timeout_ms, tuple((n, bytes(d)) for n, d in m.protocols)))
        assignments[m.member_id] = by_topic_id(parse_assignment(m.assignment), image)
    records.append(group_metadata_record(group_id, epoch))
    records.append(partition_metadata_record(
        group_id, subscription_metadata(subscribed_names(members.values(), image), image)))
    for member_id, metadata in members.items():
        records.append(member_metadata_record(group_id, member_id, metadata))
    for member_id, assignment in assignments.items():
        records.append(target_assignment_member_record(group_id, member_id, assignment))
    records.append(target_assignment_metadata_record(group_id, epoch))
    for member_id, assignment in assignments.items():
        records.append(current_assignment_record(group_id, member_id, CurrentAssignment(
            epoch, epoch - 1, MEMBER_STABLE, assignment, {})))
    return records


def downgrade_refusal(group: ConsumerGroup, leaving: str, config: ConsumerGroupConfig,
                      classic_max_size: int = INT32_MAX) -> str | None:
    """Why the group cannot become a classic group as ``leaving`` leaves, or None: it can when
    the policy allows it and every member left speaks the classic protocol."""
    rest = [m for m_id, m in group.members.items() if m_id != leaving]
    leaving_member = group.members.get(leaving)
    if leaving_member is None or leaving_member.uses_classic_protocol:
        return "the member leaving is not the last of the consumer protocol"
    if not rest or not all(m.uses_classic_protocol for m in rest):
        return "members of the consumer protocol remain"
    if not config.migration_policy.allows_downgrade:
        return f"group.consumer.migration.policy is {config.migration_policy.value}"
    if len(rest) > classic_max_size:
        return "more members remain than group.max.size allows"
    return None


def downgrade(group: ConsumerGroup, leaving: str, image: TopicsImage
              ) -> tuple[list[Record], GroupRecord]:
    """The records turning ``group`` into a classic group without ``leaving``, and that
    classic group's record (the caller holds the group's lock)."""
    rest = [m for m_id, m in group.members.items() if m_id != leaving]
    supported = [{n for n, _ in m.metadata.classic.protocols} for m in rest
                 if m.metadata.classic is not None]
    first = rest[0].metadata.classic
    assert first is not None
    protocol = next(n for n, _ in first.protocols if all(n in s for s in supported))
    members = []
    for m in rest:
        classic = m.metadata.classic
        assert classic is not None
        metadata = dict(classic.protocols).get(protocol, b"")
        members.append(MemberRecord(
            m.member_id, m.instance_id, m.metadata.client_id, m.metadata.client_host,
            m.metadata.rebalance_timeout_ms, classic.session_timeout_ms, metadata,
            assignment_bytes(by_topic_name(m.assignment.assigned, image),
                             subscription_version(metadata))))
    record = GroupRecord("consumer", group.epoch, protocol, rest[0].member_id, -1,
                         tuple(members))
    records: list[Record] = []
    for member_id in set(group.members) | set(group.target):
        records.extend(member_tombstones(group.group_id, member_id))
    records.extend(group_tombstones(group.group_id))
    records.append((group_metadata_key(group.group_id), group_metadata_value(record)))
    return records, record
