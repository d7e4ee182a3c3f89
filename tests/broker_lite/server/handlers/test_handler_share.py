"""The share-group handlers (KIP-932) without sockets or ZooKeeper: broker 1's handlers with a
share service on its own partitions (``__share_group_state`` led here, a manual clock for the
acquisition locks), the authorization Kafka's ``KafkaApis`` checks for each API, and share
groups beside classic groups."""

import uuid

import pytest

from broker_lite.coordinator.share.service import start_share_service
from broker_lite.coordinator.share.state_topic import SHARE_GROUP_STATE_TOPIC
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import AclOperation as Op
from broker_lite.protocol.enums import ResourceType as R
from broker_lite.records import build_batch
from broker_lite.server.apis import handlers
from broker_lite.zk.testing import wait_until

from .handler_support import BROKER_ID, Harness

ALICE = "User:alice"
E = ErrorCode


@pytest.fixture
def share(tmp_path):
    """Broker 1 with share groups on: ``events`` (2 partitions) led here, the group configs
    of each group in a dict, every share group coordinated here."""
    harness = Harness(tmp_path, {"group.share.enable": "true",
                                 "group.share.min.record.lock.duration.ms": "1000",
                                 "share.coordinator.state.topic.num.partitions": "1"})
    harness.handlers = handlers(share_groups=True)
    harness.offsets_topic()
    harness.topic(SHARE_GROUP_STATE_TOPIC, [BROKER_ID], config={"cleanup.policy": "compact"})
    info = harness.topic("events", [BROKER_ID, BROKER_ID])
    harness.services.share = start_share_service(
        harness.config, harness.partitions, harness.groups, broker_id=lambda: BROKER_ID,
        leader_of=lambda topic, partition: BROKER_ID, address_of=lambda broker: None,
        topics=lambda names: {n: (info.topic_id, 2) for n in names if n == "events"},
        group_config=harness.services.admin.group_config,
        state_partition_count=lambda: 1, create_state_topic=lambda config: None,
        on_available=harness.purgatory.fetch.check_and_complete,
        timer=harness.timer, clock_ms=harness.clock)
    harness.events_id = info.topic_id
    wait_until(lambda: harness.services.share.coordinator.owned_partitions() == {0},
               message="__share_group_state-0 loaded")
    yield harness
    harness.services.share.shutdown()
    harness.close()


def heartbeat(harness, group, member, epoch, topics=None, principal="User:ANONYMOUS"):
    return harness.call(ApiKey.SHARE_GROUP_HEARTBEAT, 1, {
        "group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
        "subscribed_topic_names": topics}, principal=principal)


def fetch(harness, group, member, epoch, acks=None, partitions=(0,), principal="User:ANONYMOUS",
          max_wait_ms=0):
    return harness.call(ApiKey.SHARE_FETCH, 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch,
        "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100,
        "batch_size": 100, "topics": [{"topic_id": harness.events_id, "partitions": [
            {"partition_index": p, "acknowledgement_batches": (acks or {}).get(p, [])}
            for p in partitions]}], "forgotten_topics_data": []}, principal=principal)


def partition_of(response, index=0):
    return next(p for t in response["responses"] for p in t["partitions"]
                if p["partition_index"] == index)


def produce(harness, count, partition=0):
    harness.log("events", partition).append(build_batch(
        [(None, b"v%d" % i) for i in range(count)], timestamp=1))
    harness.log("events", partition).maybe_increment_high_watermark(10**9)


def earliest(harness, group):
    harness.services.admin.alter_group_config(group, {
        "share.auto.offset.reset": "earliest", "share.record.lock.duration.ms": "1000"})


def test_a_lock_expiry_redelivers_at_the_next_fetch(share):
    group = share.group_led_here()
    earliest(share, group)
    produce(share, 3)
    first = partition_of(fetch(share, group, "m1", 0))
    assert first["acquired_records"] == [{"first_offset": 0, "last_offset": 2,
                                          "delivery_count": 1}]
    assert fetch(share, group, "m2", 0)["responses"] == []  # all locked by m1
    share.timer.advance(1000)  # the locks of m1 expire
    again = partition_of(fetch(share, group, "m2", 1))
    assert again["acquired_records"] == [{"first_offset": 0, "last_offset": 2,
                                          "delivery_count": 2}]


def test_a_waiting_fetch_is_answered_when_records_come(share):
    group = share.group_led_here()
    earliest(share, group)
    fetch(share, group, "m", 0)  # opens the session (nothing yet)
    waiting = share.call_later(ApiKey.SHARE_FETCH, 1, {
        "group_id": group, "member_id": "m", "share_session_epoch": 1, "max_wait_ms": 30_000,
        "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 100, "batch_size": 100,
        "topics": [], "forgotten_topics_data": []})
    produce(share, 2)
    share.purgatory.notify_appended()
    answered = waiting.result(20)
    assert partition_of(answered)["acquired_records"][0]["last_offset"] == 1


def test_heartbeats_of_a_share_group_and_a_classic_group_of_the_same_id(share):
    group = share.group_led_here()
    joined = heartbeat(share, group, "m1", 0, ["events"])
    assert joined["error_code"] == 0 and joined["assignment"]["topic_partitions"] == [
        {"topic_id": share.events_id, "partitions": [0, 1]}]
    described = share.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, {
        "group_ids": [group, "no-such-group"], "include_authorized_operations": False})
    assert described["groups"][0]["group_state"] == "Stable"
    assert described["groups"][0]["members"][0]["assignment"]["topic_partitions"][0][
        "topic_name"] == "events"
    assert described["groups"][1]["error_code"] in (E.GROUP_ID_NOT_FOUND, E.NOT_COORDINATOR)


# -- authorization, as KafkaApis checks these APIs ----------------------------------------------


@pytest.fixture
def acl_share(share):
    share.acls()
    return share


def test_a_heartbeat_needs_read_on_the_group_and_describe_on_its_topics(acl_share):
    group = acl_share.group_led_here()
    assert heartbeat(acl_share, group, "m", 0, ["events"], ALICE)["error_code"] == \
        E.GROUP_AUTHORIZATION_FAILED
    acl_share.grant(ALICE, Op.READ, R.GROUP, group)
    assert heartbeat(acl_share, group, "m", 0, ["events"], ALICE)["error_code"] == \
        E.TOPIC_AUTHORIZATION_FAILED
    acl_share.grant(ALICE, Op.DESCRIBE, R.TOPIC, "events")
    assert heartbeat(acl_share, group, "m", 0, ["events"], ALICE)["error_code"] == E.NONE


def test_fetching_needs_read_on_the_group_and_read_on_the_topic(acl_share):
    group = acl_share.group_led_here()
    earliest(acl_share, group)
    produce(acl_share, 2)
    assert fetch(acl_share, group, "m", 0, principal=ALICE)["error_code"] == \
        E.GROUP_AUTHORIZATION_FAILED
    acl_share.grant(ALICE, Op.READ, R.GROUP, group)
    acl_share.grant(ALICE, Op.DESCRIBE, R.TOPIC, "events")  # Describe is no Read
    refused = fetch(acl_share, group, "m", 0, principal=ALICE)
    assert refused["error_code"] == 0
    assert partition_of(refused)["error_code"] == E.TOPIC_AUTHORIZATION_FAILED
    acl_share.grant(ALICE, Op.READ, R.TOPIC, "events")
    assert partition_of(fetch(acl_share, group, "m", 1, principal=ALICE))[
        "acquired_records"][0]["last_offset"] == 1


def test_acknowledging_needs_read_on_the_group(acl_share):
    group = acl_share.group_led_here()
    answer = acl_share.call(ApiKey.SHARE_ACKNOWLEDGE, 1, {
        "group_id": group, "member_id": "m", "share_session_epoch": 1, "topics": []},
        principal=ALICE)
    assert answer["error_code"] == E.GROUP_AUTHORIZATION_FAILED


def test_describing_needs_describe_on_the_group(acl_share):
    group = acl_share.group_led_here()
    acl_share.grant(ALICE, Op.READ, R.GROUP, group)
    acl_share.grant(ALICE, Op.DESCRIBE, R.TOPIC, "events")
    heartbeat(acl_share, group, "m", 0, ["events"], ALICE)
    body = {"group_ids": [group], "include_authorized_operations": False}
    assert acl_share.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, body, principal="User:bob")[
        "groups"][0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED
    assert acl_share.call(ApiKey.SHARE_GROUP_DESCRIBE, 1, body, principal=ALICE)[
        "groups"][0]["error_code"] == E.NONE  # Read implies Describe


@pytest.mark.parametrize("api", [ApiKey.READ_SHARE_GROUP_STATE, ApiKey.WRITE_SHARE_GROUP_STATE,
                                 ApiKey.INITIALIZE_SHARE_GROUP_STATE,
                                 ApiKey.DELETE_SHARE_GROUP_STATE,
                                 ApiKey.READ_SHARE_GROUP_STATE_SUMMARY])
def test_the_state_apis_need_cluster_action(acl_share, api):
    partition = {"partition": 0, "state_epoch": 0, "leader_epoch": 0, "start_offset": 0,
                 "state_batches": []}
    body = {"group_id": "g", "topics": [{"topic_id": uuid.uuid4(), "partitions": [partition]}]}
    answer = acl_share.call(api, 0, body, principal=ALICE)
    assert answer["results"][0]["partitions"][0]["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED
    acl_share.grant(ALICE, Op.CLUSTER_ACTION, R.CLUSTER)
    answer = acl_share.call(api, 0, body, principal=ALICE)
    assert answer["results"][0]["partitions"][0]["error_code"] == E.NONE


def test_finding_a_share_coordinator_needs_cluster_action(acl_share):
    body = {"key_type": 2, "coordinator_keys": ["g:x:0"]}
    found = acl_share.call(ApiKey.FIND_COORDINATOR, 6, body, principal=ALICE)
    assert found["coordinators"][0]["error_code"] == E.CLUSTER_AUTHORIZATION_FAILED


def test_group_configs_need_describe_and_alter_configs_on_the_group(acl_share):
    resource = {"resource_type": 32, "resource_name": "g", "configs": [
        {"name": "share.auto.offset.reset", "config_operation": 0, "value": "earliest"}]}
    altered = acl_share.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        "resources": [resource], "validate_only": False}, principal=ALICE)
    assert altered["responses"][0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED
    acl_share.grant(ALICE, Op.ALTER_CONFIGS, R.GROUP, "g")
    altered = acl_share.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        "resources": [resource], "validate_only": False}, principal=ALICE)
    assert altered["responses"][0]["error_code"] == E.NONE
    assert acl_share.services.admin.group_config("g") == {"share.auto.offset.reset": "earliest"}
    resource["configs"][0]["value"] = "soonest"
    refused = acl_share.call(ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {
        "resources": [resource], "validate_only": False}, principal=ALICE)
    assert refused["responses"][0]["error_code"] == E.INVALID_CONFIG
    describe = {"resources": [{"resource_type": 32, "resource_name": "g",
                               "configuration_keys": None}],
                "include_synonyms": False, "include_documentation": False}
    bob = acl_share.call(ApiKey.DESCRIBE_CONFIGS, 4, describe, principal="User:bob")
    assert bob["results"][0]["error_code"] == E.GROUP_AUTHORIZATION_FAILED
    # AlterConfigs implies DescribeConfigs, as in Kafka
    described = acl_share.call(ApiKey.DESCRIBE_CONFIGS, 4, describe, principal=ALICE)
    configs = {c["name"]: c["value"] for c in described["results"][0]["configs"]}
    assert configs["share.auto.offset.reset"] == "earliest"
    assert configs["share.isolation.level"] == "read_uncommitted"
