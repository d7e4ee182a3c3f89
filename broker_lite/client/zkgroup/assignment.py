"""The range assignment of ZooKeeper-based consumer groups, as a pure function.

Every member of a group computes the whole group's assignment from the same inputs (the members'
subscriptions under ``/consumers/[group]/ids`` and the partitions under ``/brokers/topics``), so
they agree without talking to each other. Kafka's ``RangeAssignor``, per topic T:

1. the partitions of T, sorted;
2. the consumer threads subscribed to T, sorted by name: a member subscribing to T with n
   streams has the threads ``[consumer_id]-0`` ... ``[consumer_id]-(n-1)``;
3. with P partitions and C threads, N = P // C and E = P % C: thread i gets the contiguous range
   of N partitions starting at ``i * N + min(i, E)``, plus one more when ``i < E``. With more
   threads than partitions, the last threads get none.

>>> plan = assign_ranges({"a": {"t": 1}, "b": {"t": 1}}, {"t": [0, 1, 2]})
>>> {str(tp): owner for tp, owner in sorted(plan.items())}
{'t-0': 'a-0', 't-1': 'a-0', 't-2': 'b-0'}
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence

from broker_lite.common.vocabulary import TopicPartition

STATIC = "static"
WHITE_LIST = "white_list"
BLACK_LIST = "black_list"


def thread_id(consumer_id: str, index: int) -> str:
    """The name of a consumer's ``index``-th stream: what its owner znodes hold."""
    return f"{consumer_id}-{index}"


def consumer_threads(consumer_id: str, streams: int) -> list[str]:
    return [thread_id(consumer_id, i) for i in range(streams)]


def assign_ranges(subscriptions: Mapping[str, Mapping[str, int]],
                  partitions: Mapping[str, Sequence[int]]) -> dict[TopicPartition, str]:
    """The owner thread of every partition of every subscribed topic.

    Parameters
    ----------
    subscriptions
        consumer id -> {topic: stream count}: what each member registered (patterns resolved).
    partitions
        topic -> its partition numbers; a subscribed topic missing here has none (yet).

    Returns
    -------
    dict
        :class:`TopicPartition` -> the thread id (``[consumer_id]-[n]``) that owns it.
    """
    threads_by_topic: dict[str, list[str]] = {}
    for consumer_id, topics in subscriptions.items():
        for topic, streams in topics.items():
            threads_by_topic.setdefault(topic, []).extend(consumer_threads(consumer_id, streams))
    plan: dict[TopicPartition, str] = {}
    for topic, threads in sorted(threads_by_topic.items()):
        ordered = sorted(partitions.get(topic, ()))
        threads.sort()
        per_thread, extra = divmod(len(ordered), len(threads))
        for i, thread in enumerate(threads):
            start = i * per_thread + min(i, extra)
            count = per_thread + (1 if i < extra else 0)
            for partition in ordered[start:start + count]:
                plan[TopicPartition(topic, partition)] = thread
    return plan


def owned_by(plan: Mapping[TopicPartition, str], threads: Iterable[str]) -> set[TopicPartition]:
    """The partitions ``plan`` gives to any of ``threads``."""
    mine = set(threads)
    return {tp for tp, owner in plan.items() if owner in mine}


def topic_filter(pattern: str) -> re.Pattern:
    """The regular expression of a wildcard subscription, cleaned as Kafka's ``TopicFilter``
    does: spaces and surrounding quotes dropped, commas meaning alternatives."""
    cleaned = re.sub(r"""^["']+|["']+$""", "", pattern.strip().replace(",", "|").replace(" ", ""))
    return re.compile(cleaned)


def resolve_subscription(pattern: str, subscription: Mapping[str, int],
                         topics: Iterable[str], exclude_internal: bool = True) -> dict[str, int]:
    """The topics a registration stands for: itself when ``static``; for ``white_list`` /
    ``black_list`` (a member that registered a topic filter), the existing topics that match /
    do not match its one regular expression, internal topics (``__*``) left out."""
    if pattern == STATIC:
        return dict(subscription)
    if pattern not in (WHITE_LIST, BLACK_LIST) or len(subscription) != 1:
        raise ValueError(f"unknown subscription pattern {pattern!r} with {dict(subscription)!r}")
    ((regex, streams),) = subscription.items()
    matcher = topic_filter(regex)
    allowed = pattern == WHITE_LIST
    return {topic: streams for topic in sorted(topics)
            if bool(matcher.fullmatch(topic)) is allowed
            and not (exclude_internal and topic.startswith("__"))}
