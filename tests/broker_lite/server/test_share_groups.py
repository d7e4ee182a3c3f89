"""Share groups (KIP-932) against a real broker over real sockets: confluent-kafka's
``ShareConsumer`` (librdkafka's share consumer) sharing a partition, releasing, rejecting and
letting locks expire; and the wire answers to bad input (acknowledging records not acquired, a
fenced member epoch), each refused with Kafka's error code while other groups go on."""

import time
import uuid

import pytest
from confluent_kafka import AcknowledgeType, Producer, ShareConsumer
from confluent_kafka.admin import (
    AdminClient,
    AlterConfigOpType,
    ConfigEntry,
    ConfigResource,
    NewTopic,
)

from broker_lite.common.tiers import needs
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.server.testing import call, start_brokers, stop_brokers
from broker_lite.tools.testing import run_tool

SHARE_PROPERTIES = {
    "group.share.enable": "true",
    "share.coordinator.state.topic.replication.factor": "1",
    "share.coordinator.state.topic.min.isr": "1",
    "share.coordinator.state.topic.num.partitions": "3",
    "offsets.topic.num.partitions": "3",
    "group.share.min.record.lock.duration.ms": "1000",
}


@pytest.fixture
@needs("broker", "zookeeper")
def share_broker(zookeeper_connect, tmp_path):
    brokers = start_brokers(zookeeper_connect, tmp_path, 1, SHARE_PROPERTIES)
    yield brokers[0]
    stop_brokers(brokers)


def bootstrap(broker) -> str:
    return f"127.0.0.1:{broker.port}"


def create_topic(broker, name: str, partitions: int = 1) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap(broker)})
    admin.create_topics([NewTopic(name, partitions, 1)])[name].result(30)


def set_group_configs(broker, group: str, **configs: str) -> None:
    admin = AdminClient({"bootstrap.servers": bootstrap(broker)})
    resource = ConfigResource(ConfigResource.Type.GROUP, group, incremental_configs=[
        ConfigEntry(name.replace("_", "."), value, incremental_operation=AlterConfigOpType.SET)
        for name, value in configs.items()])
    for future in admin.incremental_alter_configs([resource]).values():
        future.result(30)


def produce(broker, topic: str, values: list[bytes]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap(broker)})
    for value in values:
        producer.produce(topic, value=value)
    assert producer.flush(30) == 0


def share_consumer(broker, group: str, topic: str, *, explicit: bool = False) -> ShareConsumer:
    consumer = ShareConsumer({"bootstrap.servers": bootstrap(broker), "group.id": group,
                              "share.acknowledgement.mode": "explicit" if explicit
                              else "implicit"})
    consumer.subscribe([topic])
    return consumer


def poll_until(consumer: ShareConsumer, count: int, timeout_s: float = 30) -> list:
    """Poll until ``count`` records came (or the time is up); the records."""
    got: list = []
    deadline = time.monotonic() + timeout_s
    while len(got) < count and time.monotonic() < deadline:
        for message in consumer.poll(0.5):
            assert message.error() is None, message.error()
            got.append(message)
    return got


def values(messages) -> list[bytes]:
    return [m.value() for m in messages]


def earliest_group(broker, topic: str, **configs: str) -> str:
    group = f"share-{uuid.uuid4().hex[:8]}"
    set_group_configs(broker, group, share_auto_offset_reset="earliest", **configs)
    create_topic(broker, topic)
    return group


def test_two_consumers_share_a_partition_and_every_record_is_delivered(share_broker):
    group = earliest_group(share_broker, "shared")
    first = share_consumer(share_broker, group, "shared", explicit=True)
    second = share_consumer(share_broker, group, "shared", explicit=True)
    try:
        produce(share_broker, "shared", [b"a%d" % i for i in range(5)])
        held = poll_until(first, 5)
        assert sorted(values(held)) == [b"a%d" % i for i in range(5)]
        # the first holds its records (acquired, not acknowledged): the second gets the next
        produce(share_broker, "shared", [b"b%d" % i for i in range(5)])
        taken = poll_until(second, 5)
        assert sorted(values(taken)) == [b"b%d" % i for i in range(5)]
        for consumer, messages in ((first, held), (second, taken)):
            for message in messages:
                consumer.acknowledge(message, AcknowledgeType.ACCEPT)
            consumer.commit_sync(30)
        # everything acknowledged: nothing comes again
        assert poll_until(first, 1, timeout_s=3) == []
    finally:
        first.close()
        second.close()


def test_a_released_record_is_redelivered_and_a_rejected_one_is_not(share_broker):
    group = earliest_group(share_broker, "redeliver")
    consumer = share_consumer(share_broker, group, "redeliver", explicit=True)
    try:
        produce(share_broker, "redeliver", [b"keep", b"again", b"drop"])
        first = poll_until(consumer, 3)
        verdicts = {b"keep": AcknowledgeType.ACCEPT, b"again": AcknowledgeType.RELEASE,
                    b"drop": AcknowledgeType.REJECT}
        for message in first:
            consumer.acknowledge(message, verdicts[message.value()])
        consumer.commit_sync(30)
        second = poll_until(consumer, 1)
        assert values(second) == [b"again"]
        consumer.acknowledge(second[0], AcknowledgeType.ACCEPT)
        consumer.commit_sync(30)
        assert poll_until(consumer, 1, timeout_s=3) == []  # "drop" never comes back
    finally:
        consumer.close()


def test_a_lock_expiry_redelivers_and_the_delivery_limit_archives(share_broker):
    group = earliest_group(share_broker, "locks", share_record_lock_duration_ms="1000",
                           share_delivery_count_limit="2")
    produce(share_broker, "locks", [b"slow"])
    holders = []
    try:
        for delivery in (1, 2):  # each holder lets the lock expire
            holder = share_consumer(share_broker, group, "locks", explicit=True)
            holders.append(holder)
            got = poll_until(holder, 1)
            assert values(got) == [b"slow"], f"delivery {delivery}"
            time.sleep(1.5)
        last = share_consumer(share_broker, group, "locks", explicit=True)
        holders.append(last)
        # delivered twice, the limit: archived, and the share-partition starts after it
        assert poll_until(last, 1, timeout_s=4) == []
        offsets = describe_offsets(share_broker, group, "locks")
        assert offsets["start_offset"] == 1
    finally:
        for holder in holders:
            holder.close()


def describe_offsets(broker, group: str, topic: str) -> dict:
    response = call(broker.port, ApiKey.DESCRIBE_SHARE_GROUP_OFFSETS, 0, {"groups": [
        {"group_id": group, "topics": [{"topic_name": topic, "partitions": [0]}]}]})
    answer = response["groups"][0]
    assert answer["error_code"] == 0, answer
    return answer["topics"][0]["partitions"][0]


# -- the wire, request by request -----------------------------------------------------------


def heartbeat(port: int, group: str, member: str, epoch: int, topics=None) -> dict:
    return call(port, ApiKey.SHARE_GROUP_HEARTBEAT, 1, {
        "group_id": group, "member_id": member, "member_epoch": epoch, "rack_id": None,
        "subscribed_topic_names": topics})


def until_coordinated(port: int, group: str, member: str, topic: str) -> dict:
    """Join ``group`` as a client does: FindCoordinator (which creates __consumer_offsets on
    first use), then heartbeats until the coordinator has loaded the group's partition."""
    deadline = time.monotonic() + 30
    while True:
        call(port, ApiKey.FIND_COORDINATOR, 6, {"key_type": 0, "coordinator_keys": [group]})
        answer = heartbeat(port, group, member, 0, [topic])
        if answer["error_code"] not in (ErrorCode.COORDINATOR_LOAD_IN_PROGRESS,
                                        ErrorCode.NOT_COORDINATOR,
                                        ErrorCode.COORDINATOR_NOT_AVAILABLE) or \
                time.monotonic() > deadline:
            return answer
        time.sleep(0.2)


def share_fetch(port: int, group: str, member: str, epoch: int, topic_id, acks=None,
                max_wait_ms: int = 5000) -> dict:
    return call(port, ApiKey.SHARE_FETCH, 1, {
        "group_id": group, "member_id": member, "share_session_epoch": epoch,
        "max_wait_ms": max_wait_ms, "min_bytes": 1, "max_bytes": 1 << 20, "max_records": 500,
        "batch_size": 500, "topics": [{"topic_id": topic_id, "partitions": [
            {"partition_index": 0, "acknowledgement_batches": acks or []}]}],
        "forgotten_topics_data": []})


def test_a_fenced_epoch_and_unknown_members_get_kafkas_errors_and_others_go_on(share_broker):
    create_topic(share_broker, "fencing")
    port = share_broker.port
    joined = until_coordinated(port, "fenced", "m1", "fencing")
    assert joined["error_code"] == 0 and joined["member_epoch"] == 1
    assert heartbeat(port, "fenced", "m1", 5)["error_code"] == ErrorCode.FENCED_MEMBER_EPOCH
    assert heartbeat(port, "fenced", "nobody", 1)["error_code"] == ErrorCode.UNKNOWN_MEMBER_ID
    assert heartbeat(port, "fenced", "m1", 1)["error_code"] == 0  # still a member
    other = until_coordinated(port, "bystander", "m2", "fencing")
    assert other["error_code"] == 0 and other["assignment"]["topic_partitions"][0][
        "partitions"] == [0]


def test_acknowledging_records_not_acquired_is_invalid_record_state(share_broker):
    group = earliest_group(share_broker, "acks")
    produce(share_broker, "acks", [b"r0", b"r1", b"r2"])
    port = share_broker.port
    joined = until_coordinated(port, group, "owner", "acks")
    topic_id = joined["assignment"]["topic_partitions"][0]["topic_id"]
    fetched = share_fetch(port, group, "owner", 0, topic_id)
    partition = fetched["responses"][0]["partitions"][0]
    assert partition["acquired_records"] == [{"first_offset": 0, "last_offset": 2,
                                              "delivery_count": 1}]
    # another member acknowledges what "owner" holds, and offsets never fetched
    until_coordinated(port, group, "thief", "acks")
    for batch in ({"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]},
                  {"first_offset": 7, "last_offset": 7, "acknowledge_types": [1]}):
        answer = call(port, ApiKey.SHARE_ACKNOWLEDGE, 1, {
            "group_id": group, "member_id": "thief", "share_session_epoch": 0,
            "topics": [{"topic_id": topic_id, "partitions": [
                {"partition_index": 0, "acknowledgement_batches": [batch]}]}]})
        # epoch 0 cannot open a session with an acknowledgement
        assert answer["error_code"] == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    opened = share_fetch(port, group, "thief", 0, topic_id, max_wait_ms=0)
    assert opened["error_code"] == 0
    stolen = share_fetch(port, group, "thief", 1, topic_id, max_wait_ms=0, acks=[
        {"first_offset": 0, "last_offset": 0, "acknowledge_types": [1]}])
    assert stolen["responses"][0]["partitions"][0]["acknowledge_error_code"] == \
        ErrorCode.INVALID_RECORD_STATE
    wrong_epoch = share_fetch(port, group, "thief", 7, topic_id, max_wait_ms=0)
    assert wrong_epoch["error_code"] == ErrorCode.INVALID_SHARE_SESSION_EPOCH
    no_session = share_fetch(port, group, "ghost", 3, topic_id, max_wait_ms=0)
    assert no_session["error_code"] == ErrorCode.SHARE_SESSION_NOT_FOUND
    # the owner's records are untouched: it acknowledges them
    done = share_fetch(port, group, "owner", 1, topic_id, max_wait_ms=0, acks=[
        {"first_offset": 0, "last_offset": 2, "acknowledge_types": [1]}])
    assert done["responses"][0]["partitions"][0]["acknowledge_error_code"] == 0
    assert describe_offsets(share_broker, group, "acks")["start_offset"] == 3


def test_apis_are_advertised_at_kafka_4_2s_versions_with_share_version(share_broker):
    response = call(share_broker.port, ApiKey.API_VERSIONS, 4, {
        "client_software_name": "kpy-tests", "client_software_version": "1"})
    served = {k["api_key"]: (k["min_version"], k["max_version"]) for k in response["api_keys"]}
    assert served[ApiKey.SHARE_GROUP_HEARTBEAT] == (1, 1)
    assert served[ApiKey.SHARE_GROUP_DESCRIBE] == (1, 1)
    assert served[ApiKey.SHARE_FETCH] == (1, 2)
    assert served[ApiKey.SHARE_ACKNOWLEDGE] == (1, 2)
    assert served[ApiKey.FIND_COORDINATOR] == (0, 6)
    assert {(f["name"], f["max_version_level"]) for f in response["finalized_features"]} == \
        {("share.version", 1), ("group.version", 1)}  # group.version: KIP-848, on by default


def test_the_share_groups_tool_describes_resets_and_deletes_offsets(share_broker):
    group = earliest_group(share_broker, "tooled")
    produce(share_broker, "tooled", [b"x%d" % i for i in range(4)])
    consumer = share_consumer(share_broker, group, "tooled")
    try:
        assert len(poll_until(consumer, 4)) == 4
        consumer.commit_sync(30)
        servers = bootstrap(share_broker)
        members = run_tool("share-groups", "--bootstrap-server", servers, "--describe",
                           "--group", group, "--members", "--verbose")
        assert members.returncode == 0, members.stderr
        assert "tooled:0" in members.stdout and "#PARTITIONS" in members.stdout
        busy = run_tool("share-groups", "--bootstrap-server", servers, "--reset-offsets",
                        "--group", group, "--topic", "tooled", "--to-earliest", "--execute")
        assert busy.returncode == 1 and "NON_EMPTY_GROUP" in busy.stderr, busy.stderr
    finally:
        consumer.close()
    described = run_tool("share-groups", "--bootstrap-server", servers, "--describe",
                         "--group", group, "--topic", "tooled")
    assert described.stdout.splitlines()[1].split() == [group, "tooled", "0", "4"]
    reset = run_tool("share-groups", "--bootstrap-server", servers, "--reset-offsets",
                     "--group", group, "--topic", "tooled", "--to-offset", "1", "--execute")
    assert reset.returncode == 0, reset.stderr
    assert describe_offsets(share_broker, group, "tooled")["start_offset"] == 1
    again = share_consumer(share_broker, group, "tooled")
    try:  # records 1..3 come again, from the new start
        assert sorted(values(poll_until(again, 3))) == [b"x1", b"x2", b"x3"]
    finally:
        again.close()
    deleted = run_tool("share-groups", "--bootstrap-server", servers, "--delete-offsets",
                       "--group", group, "--topic", "tooled")
    assert deleted.returncode == 0 and "Successful" in deleted.stdout, deleted.stderr
    assert describe_offsets(share_broker, group, "tooled")["start_offset"] == -1
