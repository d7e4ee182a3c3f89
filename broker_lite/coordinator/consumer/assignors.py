"""The server-side assignors of consumer groups (KIP-848, "Assignors"): ``uniform`` and
``range``, as pure functions of the members' subscriptions and the topics' partition counts.

The group's assignor is the one most of its members ask for (``group.remote.assignor`` in the
client, ``ServerAssignor`` in the heartbeat), else the first of ``group.consumer.assignors``
(:func:`select_assignor`). An assignor computes the *target assignment* of every member; the
coordinator then moves each member towards it (:mod:`.reconciliation`).

- ``uniform`` (Kafka's ``UniformAssignor``) spreads the partitions of the subscribed topics so
  that no member has more than one partition over another member that could take it, and keeps
  every partition with the member that has it in the current target assignment where that keeps
  the balance: a member joining or leaving moves as few partitions as it can. A member over its
  share gives up its highest partitions, so six partitions go 0-5, then 0-2 / 3-5, then 0-1 /
  3-4 / 2,5 as members join one by one, the layout Kafka's assignor gives (and librdkafka's
  tests expect).
- ``range`` (Kafka's ``RangeAssignor``) gives each member, topic by topic, a contiguous range of
  partitions: members subscribed to the topic sorted by instance id (else member id), the first
  ``partitions % members`` of them one partition more. Topics with the same partition count are
  co-partitioned: a member gets the same partition numbers of each.

>>> import uuid
>>> t = uuid.UUID(int=1)
>>> members = {"a": MemberSubscription(frozenset({t})), "b": MemberSubscription(frozenset({t}))}
>>> sorted(range_assign(members, {t: 3})["a"][t]), sorted(range_assign(members, {t: 3})["b"][t])
([0, 1], [2])
>>> sorted(len(a[t]) for a in uniform_assign(members, {t: 3}).values())
[1, 2]
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

TopicPartitions = dict[uuid.UUID, frozenset[int]]


@dataclass(frozen=True)
class MemberSubscription:
    """What an assignor knows of a member: the topic ids it subscribes to (resolved from names
    and its regex), its current target assignment (for stickiness) and its instance id."""

    topics: frozenset[uuid.UUID]
    target: Mapping[uuid.UUID, frozenset[int]] = field(default_factory=dict)
    instance_id: str | None = None


Assignor = Callable[[Mapping[str, MemberSubscription], Mapping[uuid.UUID, int]],
                    dict[str, TopicPartitions]]


def _freeze(assignment: Mapping[str, Mapping[uuid.UUID, Iterable[int]]]
            ) -> dict[str, TopicPartitions]:
    return {m: {t: frozenset(ps) for t, ps in topics.items() if ps}
            for m, topics in assignment.items()}


def range_assign(members: Mapping[str, MemberSubscription],
                 partitions: Mapping[uuid.UUID, int]) -> dict[str, TopicPartitions]:
    """Contiguous ranges per topic; ``partitions``: topic id -> partition count."""
    result: dict[str, dict[uuid.UUID, list[int]]] = {m: {} for m in members}
    for topic_id, count in sorted(partitions.items()):
        subscribed = sorted((m for m, s in members.items() if topic_id in s.topics),
                            key=lambda m: (members[m].instance_id or m, m))
        if not subscribed:
            continue
        per_member, extra = divmod(count, len(subscribed))
        start = 0
        for i, member_id in enumerate(subscribed):
            size = per_member + (1 if i < extra else 0)
            if size:
                result[member_id][topic_id] = list(range(start, start + size))
            start += size
    return _freeze(result)


def uniform_assign(members: Mapping[str, MemberSubscription],
                   partitions: Mapping[uuid.UUID, int]) -> dict[str, TopicPartitions]:
    """A balanced, sticky assignment; ``partitions``: topic id -> partition count."""
    owner: dict[tuple[uuid.UUID, int], str] = {}
    counts = dict.fromkeys(members, 0)
    # 1. keep what each member has in the current target, where it may still have it
    for member_id in sorted(members):
        sub = members[member_id]
        for topic_id, kept in sorted(sub.target.items()):
            if topic_id not in sub.topics or topic_id not in partitions:
                continue
            for p in sorted(kept):
                if p < partitions[topic_id] and (topic_id, p) not in owner:
                    owner[(topic_id, p)] = member_id
                    counts[member_id] += 1
    eligible = {topic_id: sorted(m for m, s in members.items() if topic_id in s.topics)
                for topic_id in partitions}
    # 2. each partition left to the eligible member with the fewest
    for topic_id, count in sorted(partitions.items()):
        if not eligible[topic_id]:
            continue
        for p in range(count):
            if (topic_id, p) not in owner:
                member_id = min(eligible[topic_id], key=lambda m: (counts[m], m))
                owner[(topic_id, p)] = member_id
                counts[member_id] += 1
    # 3. move partitions from the fullest members to eligible emptier ones while any member
    #    has two more than one that could take a partition of it; a member gives up its
    #    highest partitions first, as Kafka's uniform assignor does
    moved = True
    while moved:
        moved = False
        highest_first = sorted(owner.items(), key=lambda i: i[0], reverse=True)
        for tp, member_id in sorted(highest_first, key=lambda i: -counts[i[1]]):
            target = min(eligible[tp[0]], key=lambda m: (counts[m], m))
            if counts[member_id] - counts[target] > 1:
                owner[tp] = target
                counts[member_id] -= 1
                counts[target] += 1
                moved = True
                break
    result: dict[str, dict[uuid.UUID, list[int]]] = {m: {} for m in members}
    for (topic_id, p), member_id in owner.items():
        result[member_id].setdefault(topic_id, []).append(p)
    return _freeze(result)


ASSIGNORS: dict[str, Assignor] = {"uniform": uniform_assign, "range": range_assign}


def select_assignor(requested: Iterable[str | None], configured: tuple[str, ...]) -> str:
    """The group's assignor: the one most members ask for (ties: the first configured), else
    the default (the first of ``group.consumer.assignors``)."""
    votes: dict[str, int] = {}
    for name in requested:
        if name is not None:
            votes[name] = votes.get(name, 0) + 1
    if not votes:
        return configured[0]
    order = {name: i for i, name in enumerate(configured)}
    return max(votes, key=lambda n: (votes[n], -order.get(n, len(order))))
