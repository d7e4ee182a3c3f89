"""What a consumer group subscribes to: its members' topic names and regular expressions,
resolved against the topics of the cluster (the *subscription metadata*: each subscribed topic
that exists, with its id and partition count, as ConsumerGroupPartitionMetadata stores it).

A change of the subscription metadata (a subscribed topic created, deleted or grown, or a new
topic matching a member's regular expression) bumps the group epoch, so the group is assigned
again. Internal topics (``__consumer_offsets``, ...) never match a regular expression, as in
Kafka.

Kafka resolves a regular expression new to the group in the background, after the heartbeat
that brought it: that heartbeat is answered with the member's literal topics only, and the
matched ones come with a later heartbeat (librdkafka's tests count on that order). Here a
pattern is resolved once it is the group's, that is from the heartbeat after the one that
subscribed with it; the group's patterns are matched again on every heartbeat, so topics
created later are picked up within a heartbeat interval.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping, Set
from typing import Protocol

from .records import MemberMetadata, TopicMetadata
from .regex import compile_subscription


class TopicsImage(Protocol):
    """The cluster's topics as the coordinator sees them."""

    def topic_names(self) -> Iterable[str]: ...

    def topic(self, name: str) -> tuple[uuid.UUID, int] | None:
        """The topic's id and partition count, or None when it does not exist."""

    def topic_name(self, topic_id: uuid.UUID) -> str | None: ...


def is_internal(topic: str) -> bool:
    return topic.startswith("__")


def subscribed_names(members: Iterable[MemberMetadata], image: TopicsImage,
                     resolved: Set[str] | None = None) -> set[str]:
    """The topic names the members subscribe to, their regular expressions matched against the
    image (each expression once; only those of ``resolved``, when given)."""
    names: set[str] = set()
    patterns: set[str] = set()
    for member in members:
        names.update(member.subscribed_topic_names)
        regex = member.subscribed_topic_regex
        if regex and (resolved is None or regex in resolved):
            patterns.add(regex)
    if patterns:
        compiled = [compile_subscription(p) for p in sorted(patterns)]
        names.update(t for t in image.topic_names() if not is_internal(t)
                     and any(c.fullmatch(t) for c in compiled))
    return names


def member_topics(member: MemberMetadata, metadata: Mapping[str, TopicMetadata]
                  ) -> frozenset[uuid.UUID]:
    """The ids of the existing topics ``member`` subscribes to."""
    pattern = compile_subscription(member.subscribed_topic_regex) \
        if member.subscribed_topic_regex else None
    return frozenset(t.topic_id for name, t in metadata.items()
                     if name in member.subscribed_topic_names
                     or (pattern is not None and not is_internal(name)
                         and pattern.fullmatch(name)))


def subscription_metadata(names: Iterable[str], image: TopicsImage) -> dict[str, TopicMetadata]:
    """The existing topics among ``names``, with their ids and partition counts."""
    metadata = {}
    for name in names:
        found = image.topic(name)
        if found is not None and found[1] > 0:
            metadata[name] = TopicMetadata(found[0], name, found[1])
    return metadata
