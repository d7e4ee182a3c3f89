"""Committed offsets of ZooKeeper-based groups against a real ZooKeeper and group coordinator:
the znode format, where each offsets.storage / dual.commit.enabled combination commits and
resumes, and offsets znodes that hold garbage."""

import logging

import pytest
from zk_group_support import (
    kafka_fixture,  # noqa: F401 - the kafka fixture
    produce,
    start_consumer_fixture,  # noqa: F401 - the start_consumer fixture
    unique,
)

from broker_lite.client import InvalidArgumentError, TopicPartition
from broker_lite.client.zkgroup import (
    InvalidOffsetZNodeError,
    OffsetStorage,
    ZooKeeperOffsets,
)
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.testing import wait_until


@pytest.fixture
def group():
    return unique("group")


def test_zookeeper_offsets_are_persistent_decimal_znodes(zookeeper_client, group):
    offsets = ZooKeeperOffsets(zookeeper_client, group)
    tp = TopicPartition("events", 4)
    assert offsets.read(tp) is None
    offsets.write({tp: 42})
    data, stat = zookeeper_client.get(f"/consumers/{group}/offsets/events/4")
    assert (data, stat.ephemeralOwner) == (b"42", 0)
    offsets.write({tp: 1234567890123})
    assert offsets.read(tp) == 1234567890123


@pytest.mark.parametrize("data", [b"forty-two", b"", b"4 2", b"\xff\xfe", b"-1", b"1.5"])
def test_a_bad_offset_znode_is_a_specific_error_naming_it(zookeeper_client, group, data):
    path = f"/consumers/{group}/offsets/events/0"
    zookeeper_client.create(path, data, makepath=True)
    with pytest.raises(InvalidOffsetZNodeError) as info:
        ZooKeeperOffsets(zookeeper_client, group).read(TopicPartition("events", 0))
    assert info.value.path == path and path in str(info.value)
    assert isinstance(info.value, MalformedZnodeError)  # as every bad znode of the layout


@pytest.mark.parametrize("reset, expected", [("smallest", [0, 1, 2, 3, 4, 5]), ("largest", [5])])
def test_a_consumer_falls_back_per_auto_offset_reset_with_a_warning(
        start_consumer, kafka, broker, zookeeper_client, caplog, reset, expected, group):
    topic = unique("garbage")
    kafka.admin.create_topics([(topic, 1, 1)])
    produce(broker, topic, [b"v%d" % i for i in range(5)], 1)
    path = f"/consumers/{group}/offsets/{topic}/0"
    zookeeper_client.create(path, b"not-a-number", makepath=True)
    with caplog.at_level(logging.WARNING, logger="broker_lite.client.zkgroup"):
        consumer = start_consumer(group, [topic], **{"auto.offset.reset": reset})
    warning = next(r for r in caplog.records if path in r.getMessage())
    assert warning.levelno == logging.WARNING and "not-a-number" in warning.getMessage()
    produce(broker, topic, [b"v5"], 1)
    got = []
    wait_until(lambda: got.extend(consumer.poll(0.2)) or (got and got[-1].offset == 5), 30,
               "offset 5")
    assert [r.offset for r in got] == expected
    consumer.commit()
    assert zookeeper_client.get(path)[0] == b"6"  # repaired by the next commit


@pytest.fixture
def stores(zookeeper_client, kafka, group):
    """A ZooKeeper offsets store and a coordinator with different offsets for t-0..t-2."""
    topic = unique("stores")
    kafka.admin.create_topics([(topic, 3, 1)])
    tps = [TopicPartition(topic, p) for p in range(3)]
    zookeeper = ZooKeeperOffsets(zookeeper_client, group)
    zookeeper.write({tps[0]: 10, tps[1]: 5})
    kafka.commit(group, {tps[0]: 7, tps[1]: 9, tps[2]: 3})
    return zookeeper, tps


@pytest.mark.parametrize("storage, dual, expected", [
    ("zookeeper", False, [10, 5, None]),
    ("zookeeper", True, [10, 5, None]),  # dual commit is a kafka storage option
    ("kafka", False, [7, 9, 3]),
    ("kafka", True, [10, 9, 3]),  # the larger of the two: the migration neither loses nor repeats
])
def test_where_a_group_resumes(stores, kafka, group, storage, dual, expected):
    zookeeper, tps = stores
    storage = OffsetStorage(storage, dual, zookeeper, kafka, group)
    assert storage.committed(tps) == dict(zip(tps, expected, strict=True))


@pytest.mark.parametrize("storage, dual, in_zookeeper, at_coordinator", [
    ("zookeeper", False, [100, 101], [7, 9]),
    ("zookeeper", True, [100, 101], [7, 9]),
    ("kafka", False, [10, 5], [100, 101]),
    ("kafka", True, [100, 101], [100, 101]),
])
def test_where_a_group_commits(stores, kafka, group, storage, dual, in_zookeeper,
                               at_coordinator):
    zookeeper, tps = stores
    OffsetStorage(storage, dual, zookeeper, kafka, group).commit({tps[0]: 100, tps[1]: 101})
    assert [zookeeper.read(tp) for tp in tps[:2]] == in_zookeeper
    assert [kafka.committed(group, tps[:2])[tp] for tp in tps[:2]] == at_coordinator


def test_a_bad_znode_under_dual_commit_leaves_the_coordinators_offset(stores, kafka, group,
                                                                      zookeeper_client, caplog):
    zookeeper, tps = stores
    zookeeper_client.set(zookeeper.path(tps[1]), b"junk")
    with caplog.at_level(logging.WARNING, logger="broker_lite.client.zkgroup"):
        found = OffsetStorage("kafka", True, zookeeper, kafka, group).committed(tps)
    assert found == {tps[0]: 10, tps[1]: 9, tps[2]: 3}
    assert zookeeper.path(tps[1]) in caplog.text


@pytest.mark.parametrize("offset", [-1, "5", 1.0, True])
def test_a_bad_offset_to_commit_is_refused_before_anything_is_written(stores, kafka, group,
                                                                       offset):
    zookeeper, tps = stores
    with pytest.raises(InvalidArgumentError, match=f"{tps[0]} must be an integer >= 0"):
        OffsetStorage("kafka", True, zookeeper, kafka, group).commit({tps[1]: 50, tps[0]: offset})
    assert zookeeper.read(tps[1]) == 5 and kafka.committed(group, [tps[1]])[tps[1]] == 9
