"""The range assignment of ZooKeeper-based groups as a pure function: a table of cases, its
invariants over generated groups, and topic filters of wildcard members."""

import random

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_lite.client import TopicPartition
from broker_lite.client.zkgroup import (
    assign_ranges,
    consumer_threads,
    resolve_subscription,
)


def shares(plan) -> dict[str, dict[str, list[int]]]:
    """thread -> topic -> its partitions, sorted."""
    out: dict[str, dict[str, list[int]]] = {}
    for tp, owner in sorted(plan.items()):
        out.setdefault(owner, {}).setdefault(tp.topic, []).append(tp.partition)
    return out


def one_stream(*consumers, topics=("t",)) -> dict[str, dict[str, int]]:
    return {c: dict.fromkeys(topics, 1) for c in consumers}


CASES = [
    # (name, subscriptions, partitions, expected thread -> topic -> partitions)
    ("six over three", one_stream("c1", "c2", "c3"), {"t": range(6)},
     {"c1-0": {"t": [0, 1]}, "c2-0": {"t": [2, 3]}, "c3-0": {"t": [4, 5]}}),
    ("six over two", one_stream("c1", "c2"), {"t": range(6)},
     {"c1-0": {"t": [0, 1, 2]}, "c2-0": {"t": [3, 4, 5]}}),
    ("one consumer takes all", one_stream("c1"), {"t": range(4)},
     {"c1-0": {"t": [0, 1, 2, 3]}}),
    ("extras go to the first", one_stream("c1", "c2", "c3"), {"t": range(8)},
     {"c1-0": {"t": [0, 1, 2]}, "c2-0": {"t": [3, 4, 5]}, "c3-0": {"t": [6, 7]}}),
    ("seven over three", one_stream("c1", "c2", "c3"), {"t": range(7)},
     {"c1-0": {"t": [0, 1, 2]}, "c2-0": {"t": [3, 4]}, "c3-0": {"t": [5, 6]}}),
    ("more consumers than partitions", one_stream("c1", "c2", "c3", "c4"), {"t": range(2)},
     {"c1-0": {"t": [0]}, "c2-0": {"t": [1]}}),
    ("a topic without partitions yet", one_stream("c1", "c2"), {}, {}),
    ("consumers and partitions sorted first", one_stream("c3", "c1", "c2"),
     {"t": [5, 3, 1, 0, 2, 4]},
     {"c1-0": {"t": [0, 1]}, "c2-0": {"t": [2, 3]}, "c3-0": {"t": [4, 5]}}),
    ("ids sort as strings", one_stream("c9", "c10"), {"t": range(3)},
     {"c10-0": {"t": [0, 1]}, "c9-0": {"t": [2]}}),
    ("sparse partition numbers", one_stream("c1", "c2"), {"t": [10, 2, 7]},
     {"c1-0": {"t": [2, 7]}, "c2-0": {"t": [10]}}),
    ("several topics, each on its own",
     {"a": {"t1": 1, "t2": 1}, "b": {"t1": 1, "t2": 1}, "c": {"t2": 1}},
     {"t1": range(4), "t2": range(3)},
     {"a-0": {"t1": [0, 1], "t2": [0]}, "b-0": {"t1": [2, 3], "t2": [1]}, "c-0": {"t2": [2]}}),
    ("a topic nobody subscribes to is not assigned", one_stream("a", topics=("t1",)),
     {"t1": range(2), "other": range(5)}, {"a-0": {"t1": [0, 1]}}),
    ("several streams are several threads", {"a": {"t": 2}, "b": {"t": 1}}, {"t": range(5)},
     {"a-0": {"t": [0, 1]}, "a-1": {"t": [2, 3]}, "b-0": {"t": [4]}}),
    ("threads with nothing to do", {"a": {"t": 3}}, {"t": range(2)},
     {"a-0": {"t": [0]}, "a-1": {"t": [1]}}),
]


@pytest.mark.parametrize("subscriptions, partitions, expected",
                         [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_range_assignment(subscriptions, partitions, expected):
    assert shares(assign_ranges(subscriptions, partitions)) == expected


def test_thread_ids_are_the_consumer_id_and_a_stream_number():
    assert consumer_threads("g_host-1-ab", 2) == ["g_host-1-ab-0", "g_host-1-ab-1"]


groups = st.dictionaries(
    st.text("abcdef-_0123456789", min_size=1, max_size=6),
    st.dictionaries(st.sampled_from(["t1", "t2", "t3"]), st.integers(1, 3), min_size=1),
    min_size=1, max_size=8)
topic_sizes = st.dictionaries(st.sampled_from(["t1", "t2", "t3"]), st.integers(0, 20))


@given(groups, topic_sizes, st.randoms())
def test_every_member_computes_the_same_balanced_contiguous_plan(subscriptions, sizes, rnd):
    partitions = {t: list(range(n)) for t, n in sizes.items()}
    plan = assign_ranges(subscriptions, partitions)

    # the same inputs in another order give the same plan: every member agrees
    shuffled_members = list(subscriptions.items())
    rnd.shuffle(shuffled_members)
    shuffled = {t: rnd.sample(ps, len(ps)) for t, ps in partitions.items()}
    assert assign_ranges(dict(shuffled_members), shuffled) == plan

    for topic, ps in partitions.items():
        threads = sorted(thread for consumer, topics in subscriptions.items()
                         for thread in consumer_threads(consumer, topics.get(topic, 0)))
        owned = {p: plan.get(TopicPartition(topic, p)) for p in ps}
        if not threads:
            assert set(owned.values()) == {None} or not ps
            continue
        # every partition has exactly one owner, a thread subscribed to the topic
        assert all(owner in threads for owner in owned.values())
        counts = [sum(1 for o in owned.values() if o == t) for t in threads]
        assert max(counts) - min(counts) <= 1 and sum(counts) == len(ps)
        # ranges are contiguous and in thread order
        assert [owned[p] for p in sorted(ps)] == sorted(owned.values(), key=threads.index)


def test_wildcard_members_stand_for_the_topics_their_filter_matches():
    topics = ["events", "events-eu", "metrics", "__consumer_offsets", "audit"]
    assert resolve_subscription("static", {"x": 1}, topics) == {"x": 1}
    assert resolve_subscription("white_list", {"events.*": 2}, topics) == \
        {"events": 2, "events-eu": 2}
    assert resolve_subscription("white_list", {" 'audit, metrics' ": 1}, topics) == \
        {"audit": 1, "metrics": 1}
    assert resolve_subscription("black_list", {"events.*": 1}, topics) == \
        {"audit": 1, "metrics": 1}
    assert resolve_subscription("white_list", {".*": 1}, topics) == \
        dict.fromkeys(["audit", "events", "events-eu", "metrics"], 1)
    assert "__consumer_offsets" in resolve_subscription("white_list", {".*": 1}, topics,
                                                        exclude_internal=False)
    with pytest.raises(ValueError, match="unknown subscription pattern 'regex'"):
        resolve_subscription("regex", {".*": 1}, topics)
    with pytest.raises(ValueError, match="unknown subscription pattern"):
        resolve_subscription("white_list", {"a": 1, "b": 1}, topics)


def test_a_large_group_splits_evenly():
    members = {f"c{i}": {"t": 1} for i in range(200)}
    plan = assign_ranges(members, {"t": random.sample(range(1000), 1000)})
    counts = {owner: list(plan.values()).count(owner) for owner in set(plan.values())}
    assert len(counts) == 200 and set(counts.values()) == {5}
