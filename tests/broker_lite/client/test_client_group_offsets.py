"""commit / committed against canned coordinator answers (a scripted broker over a real socket):
the coordinator is found with FindCoordinator and found again after NOT_COORDINATOR, retriable
coordinator errors are retried until the deadline, others raised at once; both the batched
(FindCoordinator 4+, OffsetFetch 8+) and the older request layouts. The same calls against
broker_lite's coordinator are in test_group_offsets_client.py."""

import pytest
from scripted_broker import ScriptedBroker, sequence

from broker_lite.client import (
    GroupCoordinatorError,
    InvalidArgumentError,
    KafkaClient,
    KafkaTimeoutError,
    TopicPartition,
)
from broker_lite.client.errors import GroupAuthorizationFailedError
from broker_lite.protocol import ApiKey, ErrorCode

T0, T1, U0 = TopicPartition("t", 0), TopicPartition("t", 1), TopicPartition("u", 0)

NEW, OLD = "batched", "classic"
LAYOUTS = {  # FindCoordinator / OffsetFetch / OffsetCommit version ranges
    NEW: {ApiKey.FIND_COORDINATOR: (0, 6), ApiKey.OFFSET_FETCH: (0, 9),
          ApiKey.OFFSET_COMMIT: (0, 9)},
    OLD: {ApiKey.FIND_COORDINATOR: (0, 2), ApiKey.OFFSET_FETCH: (0, 5),
          ApiKey.OFFSET_COMMIT: (0, 7)},
}


def find_coordinator(broker, error=0):
    def handle(header, body):
        entry = {"node_id": broker.node_id if not error else -1,
                 "host": "127.0.0.1" if not error else "", "port": broker.port if not error else -1,
                 "error_code": error, "error_message": None}
        if header.api_version >= 4:
            return {"coordinators": [{"key": k, **entry} for k in body["coordinator_keys"]]}
        return entry
    return handle


def commit_answer(error=0):
    def handle(header, body):
        return {"topics": [{"name": t["name"], "partitions": [
            {"partition_index": p["partition_index"], "error_code": error}
            for p in t["partitions"]]} for t in body["topics"]]}
    return handle


def offset_fetch_answer(offsets: dict, group_error=0):
    def handle(header, body):
        by_topic = {}
        for tp, offset in sorted(offsets.items()):
            by_topic.setdefault(tp.topic, []).append(
                {"partition_index": tp.partition, "committed_offset": offset,
                 "metadata": "", "error_code": 0})
        topics = [{"name": n, "partitions": p} for n, p in by_topic.items()]
        if header.api_version >= 8:
            return {"groups": [{"group_id": g["group_id"], "topics": topics,
                                "error_code": group_error} for g in body["groups"]]}
        return {"topics": topics, "error_code": group_error}
    return handle


@pytest.fixture(params=[NEW, OLD])
def coordinator(request):
    versions = {**ScriptedBroker().api_versions, **LAYOUTS[request.param]}
    with ScriptedBroker(api_versions=versions) as broker:
        broker.handlers[ApiKey.METADATA] = broker.metadata({"t": 2, "u": 1})
        broker.layout = request.param
        yield broker


def client_for(broker, **settings) -> KafkaClient:
    return KafkaClient({"bootstrap.servers": broker.bootstrap, "retry.backoff.ms": "5",
                        "request.timeout.ms": "5000", **settings})


def test_commit_retries_until_the_coordinator_is_found_and_refinds_it(coordinator):
    broker = coordinator
    broker.handlers[ApiKey.FIND_COORDINATOR] = sequence(
        find_coordinator(broker, ErrorCode.COORDINATOR_NOT_AVAILABLE),
        find_coordinator(broker, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        find_coordinator(broker))
    broker.handlers[ApiKey.OFFSET_COMMIT] = sequence(
        commit_answer(ErrorCode.NOT_COORDINATOR), commit_answer())
    with client_for(broker) as client:
        client.commit("g1", {T0: 42, T1: 7, U0: 0}, metadata="spark batch 3")
    finds = broker.requests_for(ApiKey.FIND_COORDINATOR)
    assert len(finds) == 4  # two unavailable, found, found again after NOT_COORDINATOR
    assert all((f["coordinator_keys"] if broker.layout == NEW else [f["key"]]) == ["g1"]
               and f["key_type"] == 0 for f in finds)
    commits = broker.requests_for(ApiKey.OFFSET_COMMIT)
    assert len(commits) == 2
    last = commits[-1]
    assert (last["group_id"], last["generation_id_or_member_epoch"], last["member_id"]) == \
        ("g1", -1, "")
    assert {(t["name"], p["partition_index"], p["committed_offset"], p["committed_metadata"])
            for t in last["topics"] for p in t["partitions"]} == {
        ("t", 0, 42, "spark batch 3"), ("t", 1, 7, "spark batch 3"), ("u", 0, 0, "spark batch 3")}


def test_committed_reads_offsets_and_none_for_uncommitted(coordinator):
    broker = coordinator
    broker.handlers[ApiKey.FIND_COORDINATOR] = find_coordinator(broker)
    broker.handlers[ApiKey.OFFSET_FETCH] = sequence(
        offset_fetch_answer({}, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS),
        offset_fetch_answer({T0: 42, T1: -1}))
    with client_for(broker) as client:
        assert client.committed("g1", [T0, T1, U0]) == {T0: 42, T1: None, U0: None}
    fetches = broker.requests_for(ApiKey.OFFSET_FETCH)
    assert len(fetches) == 2
    request = fetches[-1]["groups"][0] if broker.layout == NEW else fetches[-1]
    assert request["group_id"] == "g1"
    assert {(t["name"], tuple(t["partition_indexes"])) for t in request["topics"]} == \
        {("t", (0, 1)), ("u", (0,))}


def test_committed_without_partitions_lists_every_committed_one(coordinator):
    broker = coordinator
    broker.handlers[ApiKey.FIND_COORDINATOR] = find_coordinator(broker)
    broker.handlers[ApiKey.OFFSET_FETCH] = offset_fetch_answer({T1: 5, U0: 9, T0: -1})
    with client_for(broker, **{"group.id": "default-group"}) as client:
        assert client.committed(None) == {T1: 5, U0: 9}
    request = broker.requests_for(ApiKey.OFFSET_FETCH)[0]
    request = request["groups"][0] if broker.layout == NEW else request
    assert request["group_id"] == "default-group" and request["topics"] is None


def test_a_final_coordinator_error_is_raised_at_once(coordinator):
    broker = coordinator
    broker.handlers[ApiKey.FIND_COORDINATOR] = find_coordinator(broker)
    broker.handlers[ApiKey.OFFSET_COMMIT] = commit_answer(ErrorCode.GROUP_AUTHORIZATION_FAILED)
    with client_for(broker) as client:
        with pytest.raises(GroupAuthorizationFailedError, match="for group g1, t-0"):
            client.commit("g1", {T0: 1})
    assert len(broker.requests_for(ApiKey.OFFSET_COMMIT)) == 1


def test_no_coordinator_times_out_with_the_reason(coordinator):
    broker = coordinator
    broker.handlers[ApiKey.FIND_COORDINATOR] = find_coordinator(
        broker, ErrorCode.COORDINATOR_NOT_AVAILABLE)
    with client_for(broker, **{"request.timeout.ms": "600"}) as client:
        with pytest.raises(KafkaTimeoutError) as info:
            client.committed("g1", [T0])
    message = str(info.value)
    assert message.startswith("committed() of group g1 did not complete within 600 ms")
    assert "COORDINATOR_NOT_AVAILABLE (15) for group g1" in message
    assert isinstance(info.value.last_error, GroupCoordinatorError)
    assert len(broker.requests_for(ApiKey.FIND_COORDINATOR)) > 1


def test_bad_arguments():
    with KafkaClient({"bootstrap.servers": "127.0.0.1:9"}) as client:
        with pytest.raises(InvalidArgumentError, match="group id"):
            client.commit(None, {T0: 1})
        with pytest.raises(InvalidArgumentError, match=">= 0"):
            client.commit("g", {T0: -5})
