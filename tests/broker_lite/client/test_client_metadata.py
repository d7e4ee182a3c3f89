"""Cluster metadata, sans I/O: parsing a Metadata response, the cache's answers about leaders
(and the error to act on when there is none), and when it asks for a refresh."""

import time
import uuid

import pytest

from broker_lite.client import (
    LeaderNotAvailableError,
    TopicPartition,
    UnknownTopicOrPartitionError,
)
from broker_lite.client.cluster.metadata import MetadataCache, metadata_request, parse_metadata
from broker_lite.client.errors import TopicAuthorizationFailedError
from broker_lite.protocol import ZERO_UUID, ErrorCode

EVENTS_ID = uuid.uuid4()


def partition(index, leader, epoch=3, error=0):
    return {"error_code": error, "partition_index": index, "leader_id": leader,
            "leader_epoch": epoch, "replica_nodes": [1, 2], "isr_nodes": [1, 2],
            "offline_replicas": []}


def response(topics=None, brokers=((1, 9091), (2, 9092))):
    return {
        "brokers": [{"node_id": n, "host": "127.0.0.1", "port": p, "rack": None}
                    for n, p in brokers],
        "cluster_id": "c1", "controller_id": 2,
        "topics": topics if topics is not None else [
            {"error_code": 0, "name": "events", "topic_id": EVENTS_ID, "is_internal": False,
             "partitions": [partition(0, 1), partition(1, 2), partition(2, -1, error=5)]},
            {"error_code": 0, "name": "__consumer_offsets", "topic_id": ZERO_UUID,
             "is_internal": True, "partitions": [partition(0, 2)]},
            {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": "gone",
             "topic_id": ZERO_UUID, "partitions": []},
        ],
    }


def test_parse():
    snapshot = parse_metadata(response())
    assert sorted(snapshot.brokers) == [1, 2] and snapshot.brokers[2].port == 9092
    assert (snapshot.cluster_id, snapshot.controller_id) == ("c1", 2)
    events = snapshot.topics["events"]
    assert (events.topic_id, events.is_internal, events.partition_count) == (EVENTS_ID, False, 3)
    assert (events.partitions[1].leader, events.partitions[1].leader_epoch) == (2, 3)
    assert snapshot.topics["__consumer_offsets"].is_internal
    assert snapshot.missing == {"gone"}


def test_request_never_creates_topics():
    body = metadata_request({"b", "a"}, 12)
    assert [t["name"] for t in body["topics"]] == ["a", "b"]
    assert body["allow_auto_topic_creation"] is False
    assert metadata_request(None, 12)["topics"] is None


def test_leaders_and_the_errors_to_act_on():
    cache = MetadataCache(max_age_ms=60000)
    cache.update(parse_metadata(response()), every_topic=True)
    broker, epoch = cache.leader(TopicPartition("events", 1))
    assert (broker.node_id, broker.port, epoch) == (2, 9092, 3)
    with pytest.raises(LeaderNotAvailableError) as info:
        cache.leader(TopicPartition("events", 2))
    assert info.value.retriable  # an election: ask again later
    with pytest.raises(UnknownTopicOrPartitionError) as info:
        cache.leader(TopicPartition("events", 3))
    assert not info.value.retriable and "has 3 partitions" in str(info.value)
    with pytest.raises(UnknownTopicOrPartitionError) as info:
        cache.leader(TopicPartition("gone", 0))
    assert not info.value.retriable


def test_a_leader_missing_from_the_broker_list_is_not_available():
    cache = MetadataCache(max_age_ms=60000)
    cache.update(parse_metadata(response(brokers=[(2, 9092)])), every_topic=True)
    with pytest.raises(LeaderNotAvailableError, match="leader 1"):
        cache.leader(TopicPartition("events", 0))


def test_topic_errors_are_raised():
    cache = MetadataCache(max_age_ms=60000)
    cache.update(parse_metadata(response([
        {"error_code": ErrorCode.TOPIC_AUTHORIZATION_FAILED, "name": "secret",
         "topic_id": ZERO_UUID, "partitions": []}])), every_topic=False)
    with pytest.raises(TopicAuthorizationFailedError):
        cache.leader(TopicPartition("secret", 0))


def test_when_a_refresh_is_needed():
    cache = MetadataCache(max_age_ms=60000)
    events0, events9 = TopicPartition("events", 0), TopicPartition("events", 9)
    assert cache.needs_refresh()  # empty
    cache.update(parse_metadata(response()), every_topic=True)
    assert not cache.needs_refresh([events0])
    assert cache.needs_refresh([events9])  # a partition it does not know (added since?)
    assert cache.needs_refresh(topics=["gone"])  # unknown topics are always asked about again
    assert cache.needs_refresh(topics=["created-later"])
    cache.mark_stale()
    assert cache.needs_refresh([events0])
    cache.update(parse_metadata(response()), every_topic=False)
    assert not cache.needs_refresh([events0])


def test_old_metadata_expires():
    cache = MetadataCache(max_age_ms=50)
    cache.update(parse_metadata(response()), every_topic=True)
    assert not cache.needs_refresh([TopicPartition("events", 0)])
    time.sleep(0.1)
    assert cache.needs_refresh([TopicPartition("events", 0)])


def test_a_partial_answer_keeps_other_topics_and_a_full_one_replaces_all():
    cache = MetadataCache(max_age_ms=60000)
    cache.update(parse_metadata(response()), every_topic=True)
    cache.update(parse_metadata(response([
        {"error_code": 0, "name": "other", "topic_id": ZERO_UUID, "partitions": [partition(0, 1)]},
        {"error_code": ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, "name": "events",
         "topic_id": ZERO_UUID, "partitions": []}])), every_topic=False)
    assert cache.known_topics() == {"other", "__consumer_offsets"}  # events was deleted
    cache.update(parse_metadata(response([])), every_topic=True)
    assert cache.known_topics() == set()
