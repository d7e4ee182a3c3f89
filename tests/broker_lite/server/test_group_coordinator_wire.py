"""The group coordinator over real sockets, request by request: __consumer_offsets created on
first use with Kafka's settings, FindCoordinator in every version, the group APIs in every
version served, NOT_COORDINATOR on a broker that does not lead the group's partition, loading
after a restart (COORDINATOR_LOAD_IN_PROGRESS while it lasts, garbage skipped), compaction of the
topic, and offsets expiring."""

import logging
import struct
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from broker_lite.common.tiers import needs
from broker_lite.coordinator import partition_for
from broker_lite.coordinator.group import loader as loader_module
from broker_lite.coordinator.group.loader import load_partition
from broker_lite.coordinator.group.records import offset_commit_key
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.records import build_batch
from broker_lite.server.broker import Broker
from broker_lite.server.testing import call, start_brokers, stop_brokers
from broker_lite.zk.admin import get_topic_assignment, get_topic_config
from broker_lite.zk.testing import wait_until

OFFSETS = "__consumer_offsets"
PARTITIONS = 5
PROPERTIES = {"group.initial.rebalance.delay.ms": "0",
              "offsets.topic.num.partitions": str(PARTITIONS),
              "group.min.session.timeout.ms": "500", "num.partitions": "4"}


def subscription(*topics: str) -> bytes:
    data = struct.pack(">hi", 0, len(topics))
    for topic in topics:
        data += struct.pack(">h", len(topic)) + topic.encode()
    return data + struct.pack(">i", -1)


@pytest.fixture
@needs("broker", "zookeeper")
def coordinator_broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, PROPERTIES)
    yield brokers[0]
    stop_brokers(brokers)


def find_coordinator(port: int, key: str, version: int = 3, key_type: int = 0) -> dict:
    if version >= 4:
        body = {"key_type": key_type, "coordinator_keys": [key]}
        return call(port, ApiKey.FIND_COORDINATOR, version, body)["coordinators"][0]
    return call(port, ApiKey.FIND_COORDINATOR, version, {"key": key, "key_type": key_type})


def wait_for_coordinator(port: int, group: str, *, loaded: bool = True) -> dict:
    """The coordinator of ``group`` as ``port`` names it; once it has loaded the group's
    partition too, unless ``loaded`` is False (until then its answers to the group's requests
    are COORDINATOR_LOAD_IN_PROGRESS, which clients retry)."""
    def found():
        answer = find_coordinator(port, group)
        return answer if answer["error_code"] == 0 else None
    coordinator = wait_until(found, 30, f"a coordinator for {group}")
    if loaded:
        wait_until(lambda: fetch(coordinator["port"], group)[0] !=
                   ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, 30, f"{group}'s partition to load")
    return coordinator


def wait_for_every_partition(port: int, partitions: int = PARTITIONS) -> None:
    """Until this broker coordinates every partition of __consumer_offsets (one broker)."""
    for partition in range(partitions):
        key = next(f"k{i}" for i in range(10_000)
                   if partition_for(f"k{i}", partitions) == partition)
        wait_for_coordinator(port, key)


def join_body(group: str, member_id: str = "", *, version: int = 5, instance=None,
              topics=("events",), session_ms: int = 10_000) -> dict:
    return {"group_id": group, "session_timeout_ms": session_ms, "rebalance_timeout_ms": 10_000,
            "member_id": member_id, "group_instance_id": instance, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": subscription(*topics)}]}


def commit(port: int, group: str, offsets: dict, *, version: int = 8, member_id: str = "",
           generation: int = -1, retention_ms: int = -1) -> dict:
    topics = {}
    for (topic, partition), offset in offsets.items():
        topics.setdefault(topic, []).append(
            {"partition_index": partition, "committed_offset": offset,
             "committed_leader_epoch": -1, "committed_metadata": f"m{offset}"})
    response = call(port, ApiKey.OFFSET_COMMIT, version, {
        "group_id": group, "generation_id_or_member_epoch": generation, "member_id": member_id,
        "group_instance_id": None, "retention_time_ms": retention_ms,
        "topics": [{"name": t, "partitions": p} for t, p in topics.items()]})
    return {(t["name"], p["partition_index"]): p["error_code"]
            for t in response["topics"] for p in t["partitions"]}


def fetch(port: int, group: str, partitions=None, version: int = 6) -> tuple[int, dict]:
    topics = None
    if partitions is not None:
        grouped = {}
        for topic, partition in partitions:
            grouped.setdefault(topic, []).append(partition)
        topics = [{"name": t, "partition_indexes": p} for t, p in grouped.items()]
    response = call(port, ApiKey.OFFSET_FETCH, version,
                    {"group_id": group, "topics": topics, "require_stable": False})
    return response["error_code"], {
        (t["name"], p["partition_index"]): (p["committed_offset"], p["metadata"], p["error_code"])
        for t in response["topics"] for p in t["partitions"]}


def produce_topic(port: int, topic: str, partitions: int = 4) -> None:
    """Create ``topic`` (auto-created by Metadata) and wait until it has leaders."""
    def ready():
        response = call(port, ApiKey.METADATA, 9, {"topics": [{"name": topic}],
                                                   "allow_auto_topic_creation": True})
        t = response["topics"][0]
        return t["error_code"] == 0 and len(t["partitions"]) == partitions and \
            all(p["error_code"] == 0 for p in t["partitions"])
    wait_until(ready, 30, f"topic {topic}")


# -- __consumer_offsets ----------------------------------------------------------------------


@pytest.mark.broker
@pytest.mark.zookeeper
def test_first_find_coordinator_creates_the_offsets_topic_with_kafkas_settings(
        zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1,
                            {"group.initial.rebalance.delay.ms": "0"})  # 50 partitions
    try:
        broker = brokers[0]
        zk = broker.zookeeper.client
        assert zk.exists(f"/brokers/topics/{OFFSETS}") is None
        first = find_coordinator(broker.port, "my-group")
        assert first["error_code"] == ErrorCode.COORDINATOR_NOT_AVAILABLE
        assert first["node_id"] == -1
        assert len(get_topic_assignment(zk, OFFSETS).partitions) == 50
        assert get_topic_config(zk, OFFSETS) == {
            "cleanup.policy": "compact", "segment.bytes": "104857600",
            "compression.type": "producer"}
        found = wait_for_coordinator(broker.port, "my-group")
        assert (found["node_id"], found["host"], found["port"]) == \
            (broker.broker_id, "127.0.0.1", broker.port)
        log = broker.services.logs.get(OFFSETS, partition_for("my-group", 50))
        assert log is not None and log.config.compact and log.config.segment_bytes == 104857600
        metadata = call(broker.port, ApiKey.METADATA, 12, {"topics": None})
        internal = {t["name"]: t["is_internal"] for t in metadata["topics"]}
        assert internal[OFFSETS] is True
    finally:
        stop_brokers(brokers)


@pytest.mark.parametrize("version", [0, 1, 2, 3, 4])
def test_find_coordinator_versions(coordinator_broker, version):
    wait_for_coordinator(coordinator_broker.port, f"group-v{version}")
    found = find_coordinator(coordinator_broker.port, f"group-v{version}", version)
    assert (found["error_code"], found["node_id"], found["port"]) == \
        (0, coordinator_broker.broker_id, coordinator_broker.port)
    if version >= 1:
        txn = find_coordinator(coordinator_broker.port, "txn", version, key_type=1)
        assert txn["error_code"] == ErrorCode.COORDINATOR_NOT_AVAILABLE
        bad = find_coordinator(coordinator_broker.port, "x", version, key_type=7)
        assert bad["error_code"] == ErrorCode.INVALID_REQUEST


def test_metadata_naming_the_offsets_topic_creates_it_with_its_settings(coordinator_broker):
    response = call(coordinator_broker.port, ApiKey.METADATA, 9,
                    {"topics": [{"name": OFFSETS}], "allow_auto_topic_creation": True})
    assert response["topics"][0]["error_code"] == ErrorCode.LEADER_NOT_AVAILABLE
    zk = coordinator_broker.zookeeper.client
    assert len(get_topic_assignment(zk, OFFSETS).partitions) == PARTITIONS
    assert get_topic_config(zk, OFFSETS)["cleanup.policy"] == "compact"


def test_user_topics_named_with_underscores_are_not_internal(coordinator_broker):
    produce_topic(coordinator_broker.port, "__mine")
    response = call(coordinator_broker.port, ApiKey.METADATA, 9, {"topics": [{"name": "__mine"}]})
    assert response["topics"][0]["is_internal"] is False


def test_clients_cannot_produce_to_the_offsets_topic(coordinator_broker):
    wait_for_every_partition(coordinator_broker.port)
    log = coordinator_broker.services.logs.get(OFFSETS, partition_for("g", PARTITIONS))
    before = log.log_end_offset
    response = call(coordinator_broker.port, ApiKey.PRODUCE, 9, {
        "transactional_id": None, "acks": -1, "timeout_ms": 5000,
        "topic_data": [{"name": OFFSETS, "partition_data": [
            {"index": partition_for("g", PARTITIONS),
             "records": build_batch([(b"k", b"v")])}]}]})
    partition = response["responses"][0]["partition_responses"][0]
    assert partition["error_code"] == ErrorCode.INVALID_TOPIC_EXCEPTION
    assert log.log_end_offset == before


# -- the group APIs, version by version ------------------------------------------------------


def join(port: int, body: dict, version: int) -> dict:
    return call(port, ApiKey.JOIN_GROUP, version, body, timeout_s=30)


@pytest.mark.parametrize("version", range(10))
def test_join_sync_heartbeat_leave_in_every_version(coordinator_broker, version):
    port = coordinator_broker.port
    group = f"wire-v{version}"
    wait_for_coordinator(port, group)
    member_id = ""
    if version >= 4:
        asked = join(port, join_body(group, version=version), version)
        assert asked["error_code"] == ErrorCode.MEMBER_ID_REQUIRED
        assert asked["member_id"].startswith("kpy-tests-") and asked["generation_id"] == -1
        member_id = asked["member_id"]
    joined = join(port, join_body(group, member_id, version=version), version)
    assert joined["error_code"] == 0 and joined["generation_id"] == 1
    member_id = joined["member_id"]
    assert joined["leader"] == member_id and joined["protocol_name"] == "range"
    assert [(m["member_id"], bytes(m["metadata"])) for m in joined["members"]] == \
        [(member_id, subscription("events"))]
    if version >= 7:
        assert joined["protocol_type"] == "consumer"
    sync_version = min(version, 5)
    synced = call(port, ApiKey.SYNC_GROUP, sync_version, {
        "group_id": group, "generation_id": 1, "member_id": member_id, "group_instance_id": None,
        "protocol_type": "consumer", "protocol_name": "range",
        "assignments": [{"member_id": member_id, "assignment": b"my partitions"}]})
    assert synced["error_code"] == 0 and bytes(synced["assignment"]) == b"my partitions"
    if sync_version >= 5:
        assert (synced["protocol_type"], synced["protocol_name"]) == ("consumer", "range")
    beat = call(port, ApiKey.HEARTBEAT, min(version, 4), {
        "group_id": group, "generation_id": 1, "member_id": member_id, "group_instance_id": None})
    assert beat["error_code"] == 0
    leave_version = min(version, 5)
    if leave_version >= 3:
        left = call(port, ApiKey.LEAVE_GROUP, leave_version, {"group_id": group, "members": [
            {"member_id": member_id, "group_instance_id": None},
            {"member_id": "ghost", "group_instance_id": None}]})
        assert left["error_code"] == 0
        assert [m["error_code"] for m in left["members"]] == [0, ErrorCode.UNKNOWN_MEMBER_ID]
    else:
        left = call(port, ApiKey.LEAVE_GROUP, leave_version,
                    {"group_id": group, "member_id": "ghost"})
        assert left["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
        left = call(port, ApiKey.LEAVE_GROUP, leave_version,
                    {"group_id": group, "member_id": member_id})
        assert left["error_code"] == 0
    described = call(port, ApiKey.DESCRIBE_GROUPS, min(version, 5), {"groups": [group]})
    assert described["groups"][0]["group_state"] == "Empty"


def test_sync_group_v5_must_name_the_protocol(coordinator_broker):
    response = call(coordinator_broker.port, ApiKey.SYNC_GROUP, 5, {
        "group_id": "g", "generation_id": 1, "member_id": "m", "group_instance_id": None,
        "protocol_type": None, "protocol_name": "range", "assignments": []})
    assert response["error_code"] == ErrorCode.INCONSISTENT_GROUP_PROTOCOL


def test_two_members_over_the_wire(coordinator_broker):
    port = coordinator_broker.port
    wait_for_every_partition(port)
    first = join(port, join_body("pair", version=3), 3)
    a = first["member_id"]
    call(port, ApiKey.SYNC_GROUP, 3, {"group_id": "pair", "generation_id": 1, "member_id": a,
                                      "assignments": [{"member_id": a, "assignment": b"all"}]})
    with ThreadPoolExecutor(2) as pool:
        b_join = pool.submit(join, port, join_body("pair", version=3), 3)
        wait_until(lambda: call(port, ApiKey.HEARTBEAT, 3, {
            "group_id": "pair", "generation_id": 1, "member_id": a,
            "group_instance_id": None})["error_code"] == ErrorCode.REBALANCE_IN_PROGRESS)
        a_join = pool.submit(join, port, join_body("pair", a, version=3), 3)
        a_result, b_result = a_join.result(30), b_join.result(30)
    assert a_result["generation_id"] == b_result["generation_id"] == 2
    assert len(a_result["members"]) == 2 and b_result["members"] == []
    b = b_result["member_id"]
    with ThreadPoolExecutor(1) as pool:
        b_sync = pool.submit(call, port, ApiKey.SYNC_GROUP, 3, {
            "group_id": "pair", "generation_id": 2, "member_id": b, "assignments": []})
        time.sleep(0.2)
        assert not b_sync.done()  # waits for the leader
        a_sync = call(port, ApiKey.SYNC_GROUP, 3, {
            "group_id": "pair", "generation_id": 2, "member_id": a,
            "assignments": [{"member_id": a, "assignment": b"p0"},
                            {"member_id": b, "assignment": b"p1"}]})
        assert bytes(a_sync["assignment"]) == b"p0"
        assert bytes(b_sync.result(10)["assignment"]) == b"p1"
    described = call(port, ApiKey.DESCRIBE_GROUPS, 5, {
        "groups": ["pair", "nobody"], "include_authorized_operations": True})["groups"]
    assert described[0]["group_state"] == "Stable" and described[0]["protocol_data"] == "range"
    assert {m["member_id"]: bytes(m["member_assignment"]) for m in described[0]["members"]} == \
        {a: b"p0", b: b"p1"}
    assert {m["client_host"] for m in described[0]["members"]} == {"/127.0.0.1"}
    assert described[0]["authorized_operations"] == (1 << 3) | (1 << 6) | (1 << 8)
    assert (described[1]["error_code"], described[1]["group_state"]) == (0, "Dead")
    listed = call(port, ApiKey.LIST_GROUPS, 4, {"states_filter": ["Stable"]})
    assert [(g["group_id"], g["group_state"]) for g in listed["groups"]] == [("pair", "Stable")]
    assert call(port, ApiKey.LIST_GROUPS, 4, {"states_filter": ["Empty"]})["groups"] == []
    deleted = call(port, ApiKey.DELETE_GROUPS, 2, {"groups_names": ["pair", "nobody"]})
    assert {r["group_id"]: r["error_code"] for r in deleted["results"]} == \
        {"pair": ErrorCode.NON_EMPTY_GROUP, "nobody": ErrorCode.GROUP_ID_NOT_FOUND}


def test_malformed_requests_do_not_disturb_the_coordinator(coordinator_broker):
    port = coordinator_broker.port
    wait_for_every_partition(port)
    garbage = join_body("g", version=5)
    garbage["protocols"] = [{"name": "range", "metadata": b"\xff" * 7}]
    asked = join(port, garbage, 5)
    joined = join(port, {**garbage, "member_id": asked["member_id"]}, 5)
    assert joined["error_code"] == 0 and bytes(joined["members"][0]["metadata"]) == b"\xff" * 7
    empty = join(port, {**join_body("", version=5)}, 5)
    assert empty["error_code"] == ErrorCode.INVALID_GROUP_ID
    timeout = join(port, join_body("g2", version=5, session_ms=10), 5)
    assert timeout["error_code"] == ErrorCode.INVALID_SESSION_TIMEOUT
    assert call(port, ApiKey.API_VERSIONS, 3, {})["error_code"] == 0  # still serving


# -- offsets ---------------------------------------------------------------------------------


def test_commit_and_fetch_in_every_version(coordinator_broker):
    port = coordinator_broker.port
    produce_topic(port, "events")
    wait_for_every_partition(port)
    for version in range(2, 10):
        assert commit(port, "offsets", {("events", 0): 10 * version, ("events", 1): version},
                      version=version) == {("events", 0): 0, ("events", 1): 0}
    unknown = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    assert commit(port, "offsets", {("missing", 0): 1, ("events", 9): 1, ("events", -1): 1,
                                    ("events/partitions", 0): 1, ("..", 0): 1, ("", 0): 1,
                                    ("events", 2): 5}) == {
        ("missing", 0): unknown, ("events", 9): unknown, ("events", -1): unknown,
        ("events/partitions", 0): unknown, ("..", 0): unknown, ("", 0): unknown,
        ("events", 2): 0}
    for version in range(2, 8):
        error, offsets = fetch(port, "offsets", None, version)
        assert error == 0 and offsets == {("events", 0): (90, "m90", 0),
                                          ("events", 1): (9, "m9", 0), ("events", 2): (5, "m5", 0)}
    error, offsets = fetch(port, "offsets", [("events", 1), ("events", 3)], 1)
    assert offsets == {("events", 1): (9, "m9", 0), ("events", 3): (-1, "", 0)}
    response = call(port, ApiKey.OFFSET_FETCH, 8, {"groups": [
        {"group_id": "offsets", "topics": None},
        {"group_id": "unknown", "topics": [{"name": "events", "partition_indexes": [0]}]}],
        "require_stable": False})
    groups = {g["group_id"]: g for g in response["groups"]}
    assert groups["offsets"]["error_code"] == 0 and len(groups["offsets"]["topics"][0][
        "partitions"]) == 3
    assert groups["unknown"]["topics"][0]["partitions"][0]["committed_offset"] == -1


def test_the_committed_leader_epoch_round_trips(coordinator_broker):
    port = coordinator_broker.port
    produce_topic(port, "events")
    wait_for_coordinator(port, "epochs")
    response = call(port, ApiKey.OFFSET_COMMIT, 6, {
        "group_id": "epochs", "generation_id_or_member_epoch": -1, "member_id": "",
        "topics": [{"name": "events", "partitions": [
            {"partition_index": 0, "committed_offset": 12, "committed_leader_epoch": 7,
             "committed_metadata": None}]}]})
    assert response["topics"][0]["partitions"][0]["error_code"] == 0
    for version in (5, 7, 8, 9):
        if version >= 8:
            body = {"groups": [{"group_id": "epochs", "topics": None}], "require_stable": True}
            topics = call(port, ApiKey.OFFSET_FETCH, version, body)["groups"][0]["topics"]
        else:
            body = {"group_id": "epochs", "topics": None, "require_stable": True}
            topics = call(port, ApiKey.OFFSET_FETCH, version, body)["topics"]
        partition = topics[0]["partitions"][0]
        assert (partition["committed_offset"], partition["committed_leader_epoch"],
                partition["metadata"]) == (12, 7, ""), version


def test_commit_errors_over_the_wire(coordinator_broker):
    port = coordinator_broker.port
    produce_topic(port, "events")
    wait_for_every_partition(port)
    assert commit(port, "never-seen", {("events", 0): 1}, member_id="m", generation=4) == \
        {("events", 0): ErrorCode.ILLEGAL_GENERATION}
    joined = join(port, join_body("g", version=3), 3)
    member = joined["member_id"]
    assert commit(port, "g", {("events", 0): 1}) == {("events", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert commit(port, "g", {("events", 0): 1}, member_id=member, generation=5) == \
        {("events", 0): ErrorCode.ILLEGAL_GENERATION}
    assert commit(port, "g", {("events", 0): 1}, member_id="ghost", generation=1) == \
        {("events", 0): ErrorCode.UNKNOWN_MEMBER_ID}
    assert commit(port, "g", {("events", 0): 1}, member_id=member, generation=1) == \
        {("events", 0): ErrorCode.REBALANCE_IN_PROGRESS}  # joined, not synced yet


def test_offset_delete(coordinator_broker):
    port = coordinator_broker.port
    produce_topic(port, "events")
    wait_for_every_partition(port)
    commit(port, "solo", {("events", 0): 1, ("events", 1): 2})
    response = call(port, ApiKey.OFFSET_DELETE, 0, {"group_id": "solo", "topics": [
        {"name": "events", "partitions": [{"partition_index": 0}]},
        {"name": "missing", "partitions": [{"partition_index": 0}]}]})
    assert response["error_code"] == 0
    assert {(t["name"], p["partition_index"]): p["error_code"] for t in response["topics"]
            for p in t["partitions"]} == {("events", 0): 0,
                                          ("missing", 0): ErrorCode.UNKNOWN_TOPIC_OR_PARTITION}
    assert fetch(port, "solo")[1] == {("events", 1): (2, "m2", 0)}
    unknown = call(port, ApiKey.OFFSET_DELETE, 0, {"group_id": "unknown", "topics": []})
    assert unknown["error_code"] == ErrorCode.GROUP_ID_NOT_FOUND


@pytest.mark.broker
@pytest.mark.zookeeper
def test_offsets_with_a_retention_time_expire_and_are_tombstoned(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, {
        **PROPERTIES, "offsets.retention.check.interval.ms": "200"})
    try:
        port = brokers[0].port
        produce_topic(port, "events")
        wait_for_every_partition(port)
        assert commit(port, "short-lived", {("events", 0): 5}, version=2, retention_ms=500) == \
            {("events", 0): 0}
        assert commit(port, "kept", {("events", 0): 6}, version=2) == {("events", 0): 0}
        wait_until(lambda: fetch(port, "short-lived")[1] == {}, 10, "the offset to expire")
        assert fetch(port, "kept")[1] == {("events", 0): (6, "m6", 0)}
        log = brokers[0].services.logs.get(OFFSETS, partition_for("short-lived", PARTITIONS))
        loaded = load_partition(log, buffer_size=1 << 20)
        assert not any(group == "short-lived" for group, _ in loaded.offsets)
        assert log.log_end_offset >= 2  # the commit, then its tombstone
    finally:
        stop_brokers(brokers)


# -- coordinators in a cluster ---------------------------------------------------------------


@pytest.mark.broker
@pytest.mark.zookeeper
def test_only_the_partition_leader_coordinates_a_group(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 3,
                            {**PROPERTIES, "offsets.topic.num.partitions": "3"})
    try:
        by_id = {b.broker_id: b for b in brokers}
        group = "clustered"
        found = wait_for_coordinator(brokers[0].port, group)
        assert all(wait_for_coordinator(b.port, group)["node_id"] == found["node_id"]
                   for b in brokers)
        leader = by_id[found["node_id"]]
        assert leader.port == found["port"]
        produce_topic(leader.port, "events")
        for other in (b for b in brokers if b is not leader):
            assert join(other.port, join_body(group, version=3), 3)["error_code"] == \
                ErrorCode.NOT_COORDINATOR
            assert commit(other.port, group, {("events", 0): 1}) == \
                {("events", 0): ErrorCode.NOT_COORDINATOR}
            assert fetch(other.port, group)[0] == ErrorCode.NOT_COORDINATOR
        wait_until(lambda: commit(leader.port, group, {("events", 0): 1}) ==
                   {("events", 0): 0}, 30, "the leader to load its partition")
        assert fetch(leader.port, group)[1] == {("events", 0): (1, "m1", 0)}
    finally:
        stop_brokers(brokers)


# -- loading after a restart -----------------------------------------------------------------


def restart(broker: Broker) -> Broker:
    broker.stop()
    return Broker(broker.config).start()


@pytest.mark.broker
@pytest.mark.zookeeper
def test_offsets_survive_a_restart_and_load_in_progress_is_answered_meanwhile(
        coordinator_broker, monkeypatch):
    port = coordinator_broker.port
    produce_topic(port, "events")
    wait_for_coordinator(port, "durable")
    commit(port, "durable", {("events", 0): 41, ("events", 1): 42})
    release, loading = threading.Event(), threading.Event()
    real_load = loader_module.load_partition

    def held_load(log, **kwargs):
        if log.directory.name == f"{OFFSETS}-{partition_for('durable', PARTITIONS)}":
            loading.set()
            assert release.wait(30)
        return real_load(log, **kwargs)

    monkeypatch.setattr(loader_module, "load_partition", held_load)
    coordinator_broker.stop()
    broker = Broker(coordinator_broker.config).start()
    try:
        assert loading.wait(30)
        port = broker.port
        assert wait_for_coordinator(port, "durable", loaded=False)["node_id"] == \
            broker.broker_id
        assert fetch(port, "durable")[0] == ErrorCode.COORDINATOR_LOAD_IN_PROGRESS
        assert fetch(port, "durable", [("events", 0)], 1)[1] == \
            {("events", 0): (-1, "", ErrorCode.COORDINATOR_LOAD_IN_PROGRESS)}
        assert commit(port, "durable", {("events", 0): 1}) == \
            {("events", 0): ErrorCode.COORDINATOR_LOAD_IN_PROGRESS}
        release.set()
        wait_until(lambda: fetch(port, "durable")[0] == 0, 30, "the load to finish")
        assert fetch(port, "durable")[1] == {("events", 0): (41, "m41", 0),
                                             ("events", 1): (42, "m42", 0)}
    finally:
        release.set()
        broker.stop()


def test_garbage_in_the_offsets_topic_is_skipped_when_loading(coordinator_broker, caplog):
    port = coordinator_broker.port
    produce_topic(port, "events")
    wait_for_coordinator(port, "survivor")
    commit(port, "survivor", {("events", 0): 7})
    partition = partition_for("survivor", PARTITIONS)
    log = coordinator_broker.services.logs.get(OFFSETS, partition)
    log.append(build_batch([
        (struct.pack(">h", 42) + b"what is this", b"value"),
        (offset_commit_key("survivor", "events", 1), b"\x00\x03\x00"),
    ]))
    commit(port, "survivor", {("events", 2): 9})
    with caplog.at_level(logging.WARNING, logger="broker_lite.coordinator.group.loader"):
        broker = restart(coordinator_broker)
        try:
            wait_until(lambda: fetch(broker.port, "survivor")[0] == 0, 30, "the load")
            assert fetch(broker.port, "survivor")[1] == {("events", 0): (7, "m7", 0),
                                                         ("events", 2): (9, "m9", 0)}
        finally:
            broker.stop()
    assert "unknown key version 42" in caplog.text
    assert "malformed offset commit value" in caplog.text


@pytest.mark.broker
@pytest.mark.zookeeper
def test_the_offsets_topic_stays_small_under_repeated_commits(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, {
        **PROPERTIES, "offsets.topic.segment.bytes": "4096", "log.cleaner.backoff.ms": "100"})
    try:
        port = brokers[0].port
        produce_topic(port, "events")
        wait_for_coordinator(port, "busy")
        log = brokers[0].services.logs.get(OFFSETS, partition_for("busy", PARTITIONS))
        for i in range(1500):
            commit(port, "busy", {("events", p): i * 10 + p for p in range(4)})
        appended = log.log_end_offset
        assert appended >= 1500
        # ~160 KB written; compaction keeps the latest commit of each of 4 keys
        wait_until(lambda: log.size < 12 * 4096, 30, "compaction to shrink the topic")
        assert fetch(port, "busy")[1] == {("events", p): (14990 + p, f"m{14990 + p}", 0)
                                          for p in range(4)}
        brokers[0] = restart(brokers[0])
        port = brokers[0].port
        wait_until(lambda: fetch(port, "busy")[0] == 0, 30, "the load")
        assert fetch(port, "busy")[1] == {("events", p): (14990 + p, f"m{14990 + p}", 0)
                                          for p in range(4)}
    finally:
        stop_brokers(brokers)
