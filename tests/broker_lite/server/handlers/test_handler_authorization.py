"""Every API checks what Kafka's KafkaApis checks, and answers Kafka's errors: requests from a
principal (``User:alice``, as the network layer would hand it over) to handlers deciding by
ACLs the test grants. Without the right ACL nothing is written, read, committed or changed."""

import logging
import uuid

import pytest

from broker_lite.common.vocabulary import TopicPartition
from broker_lite.coordinator.transaction.coordinator import TransactionDescription
from broker_lite.coordinator.transaction.state import TxnState
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.enums import AclOperation as Op
from broker_lite.protocol.enums import AclPermissionType, PatternType
from broker_lite.protocol.enums import ResourceType as R
from broker_lite.records import build_batch

from .handler_support import BROKER_ID, OTHER_BROKER

ALICE = "User:alice"
E = ErrorCode
TOPIC_REFUSED, GROUP_REFUSED = E.TOPIC_AUTHORIZATION_FAILED, E.GROUP_AUTHORIZATION_FAILED
CLUSTER_REFUSED = E.CLUSTER_AUTHORIZATION_FAILED
TXN_REFUSED = E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED
NOT_REQUESTED = -(2**31)


@pytest.fixture
def acl_harness(harness):
    """Broker 1 deciding by ACLs (none yet), with ``events`` and ``other`` led here."""
    harness.acls()
    harness.topic("events", [BROKER_ID, BROKER_ID])
    harness.topic("other", [BROKER_ID])
    return harness


def call(harness, api, version, body):
    return harness.call(api, version, body, principal=ALICE)


def operations(bits: int) -> set[str]:
    return {Op(code).name for code in range(32) if bits >> code & 1}


# -- Produce, Fetch, ListOffsets ---------------------------------------------------------------


def produce(harness, topics, transactional_id=None, records=None):
    records = records or build_batch([(b"k", b"v")], timestamp=1)
    response = call(harness, ApiKey.PRODUCE, 9, {
        "transactional_id": transactional_id, "acks": 1, "timeout_ms": 1000,
        "topic_data": [{"name": t, "partition_data": [{"index": 0, "records": records}]}
                       for t in topics]})
    return {t["name"]: t["partition_responses"][0]["error_code"] for t in response["responses"]}


def test_produce_needs_write_on_each_topic(acl_harness):
    assert produce(acl_harness, ["events", "other"]) == {"events": TOPIC_REFUSED,
                                                         "other": TOPIC_REFUSED}
    assert acl_harness.log("events").log_end_offset == 0
    acl_harness.grant(ALICE, Op.WRITE, R.TOPIC, "events")
    acl_harness.grant(ALICE, Op.READ, R.TOPIC, "other")  # Read is no Write
    assert produce(acl_harness, ["events", "other"]) == {"events": E.NONE, "other": TOPIC_REFUSED}
    assert acl_harness.log("events").log_end_offset == 1
    assert acl_harness.log("other").log_end_offset == 0


def test_transactional_batches_need_write_on_the_transactional_id(acl_harness):
    acl_harness.grant(ALICE, Op.WRITE, R.TOPIC, "*")
    records = build_batch([(b"k", b"v")], timestamp=1, producer_id=4000, producer_epoch=0,
                          base_sequence=0, is_transactional=True)
    assert produce(acl_harness, ["events", "other"], "tx", records) == {
        "events": TXN_REFUSED, "other": TXN_REFUSED}
    assert produce(acl_harness, ["events"], None, records) == {"events": TXN_REFUSED}
    assert acl_harness.log("events").log_end_offset == 0
    assert acl_harness.services.transactions.verified == []  # refused before the checks
    acl_harness.grant(ALICE, Op.WRITE, R.TRANSACTIONAL_ID, "tx")
    assert produce(acl_harness, ["events"], "tx", records) == {"events": E.NONE}
    assert acl_harness.log("events").log_end_offset == 1


def fetch(harness, version=12, replica_id=-1):
    body = {"replica_id": replica_id, "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20,
            "isolation_level": 0, "session_id": 0, "session_epoch": -1, "topics": [
                {"topic": t, "partitions": [{"partition": 0, "fetch_offset": 0,
                                             "partition_max_bytes": 1 << 20}]}
                for t in ("events", "other")], "forgotten_topics_data": []}
    response = call(harness, ApiKey.FETCH, version, body)
    return {t["topic"]: t["partitions"][0]["error_code"] for t in response["responses"]}


def test_fetch_needs_read_replicas_cluster_action(acl_harness):
    for topic, leaders in (("events", [BROKER_ID, BROKER_ID]), ("other", [BROKER_ID])):
        acl_harness.topic(topic, leaders, followers=(OTHER_BROKER,))  # a replica may fetch
    acl_harness.grant(ALICE, Op.READ, R.TOPIC, "ev", PatternType.PREFIXED)
    assert fetch(acl_harness) == {"events": E.NONE, "other": TOPIC_REFUSED}
    assert fetch(acl_harness, replica_id=OTHER_BROKER) == {"events": TOPIC_REFUSED,
                                                           "other": TOPIC_REFUSED}
    acl_harness.grant(ALICE, Op.CLUSTER_ACTION, R.CLUSTER)
    assert fetch(acl_harness, replica_id=OTHER_BROKER) == {"events": E.NONE, "other": E.NONE}


def test_fetch_by_topic_id_refuses_the_same(acl_harness):
    events = acl_harness.cluster.topic("events").topic_id
    response = call(acl_harness, ApiKey.FETCH, 13, {
        "max_wait_ms": 0, "min_bytes": 1, "max_bytes": 1 << 20, "topics": [
            {"topic_id": events, "partitions": [{"partition": 0, "fetch_offset": 0,
                                                 "partition_max_bytes": 1 << 20}]},
            {"topic_id": uuid.uuid4(), "partitions": [{"partition": 0, "fetch_offset": 0,
                                                       "partition_max_bytes": 1}]}]})
    assert [t["partitions"][0]["error_code"] for t in response["responses"]] == \
        [TOPIC_REFUSED, E.UNKNOWN_TOPIC_ID]


@pytest.mark.parametrize("version", [0, 1, 7])
def test_list_offsets_needs_describe(acl_harness, version):
    acl_harness.grant(ALICE, Op.READ, R.TOPIC, "events")  # Read implies Describe
    partition = {"partition_index": 0, "timestamp": -1, "max_num_offsets": 1}
    response = call(acl_harness, ApiKey.LIST_OFFSETS, version, {
        "replica_id": -1, "topics": [{"name": t, "partitions": [partition]}
                                     for t in ("events", "other")]})
    assert [t["partitions"][0]["error_code"] for t in response["topics"]] == [0, TOPIC_REFUSED]


# -- Metadata, DescribeCluster -----------------------------------------------------------------


def metadata(harness, topics, version=12, **fields):
    return call(harness, ApiKey.METADATA, version, {
        "topics": None if topics is None else [{"name": t} for t in topics],
        "allow_auto_topic_creation": False, **fields})


def test_metadata_hides_what_the_principal_may_not_describe(acl_harness):
    acl_harness.grant(ALICE, Op.DESCRIBE, R.TOPIC, "events")
    assert [t["name"] for t in metadata(acl_harness, None)["topics"]] == ["events"]
    named = {t["name"]: t for t in metadata(acl_harness, ["events", "other", "missing"])["topics"]}
    assert named["events"]["error_code"] == 0 and len(named["events"]["partitions"]) == 2
    for hidden in ("other", "missing"):  # existing or not, it looks the same
        assert (named[hidden]["error_code"], named[hidden]["topic_id"], named[hidden]["partitions"]
                ) == (TOPIC_REFUSED, uuid.UUID(int=0), [])


def test_auto_creation_needs_create(acl_harness):
    acl_harness.grant(ALICE, Op.DESCRIBE, R.TOPIC, "*")
    acl_harness.services.config.update_dynamic({"auto.create.topics.enable": "true"}, {})
    ask = {"allow_auto_topic_creation": True}
    assert metadata(acl_harness, ["new"], **ask)["topics"][0]["error_code"] == TOPIC_REFUSED
    assert acl_harness.services.admin.created == []
    acl_harness.grant(ALICE, Op.CREATE, R.TOPIC, "new")
    assert metadata(acl_harness, ["new"], **ask)["topics"][0]["error_code"] == \
        E.LEADER_NOT_AVAILABLE
    acl_harness.grant(ALICE, Op.CREATE, R.CLUSTER)
    assert metadata(acl_harness, ["newer"], **ask)["topics"][0]["error_code"] == \
        E.LEADER_NOT_AVAILABLE
    assert [spec.name for spec in acl_harness.services.admin.created] == ["new", "newer"]


def test_authorized_operations_come_from_the_acls(acl_harness):
    acl_harness.grant(ALICE, Op.READ, R.TOPIC, "events")
    acl_harness.grant(ALICE, Op.ALTER_CONFIGS, R.TOPIC, "events")
    response = metadata(acl_harness, ["events", "other"], version=10,
                        include_topic_authorized_operations=True,
                        include_cluster_authorized_operations=True)
    events, other = response["topics"]
    assert operations(events["topic_authorized_operations"]) == {
        "READ", "DESCRIBE", "ALTER_CONFIGS", "DESCRIBE_CONFIGS"}
    assert other["topic_authorized_operations"] == NOT_REQUESTED  # refused: not described
    assert response["cluster_authorized_operations"] == 0  # no Describe on the cluster
    acl_harness.grant(ALICE, Op.DESCRIBE, R.CLUSTER)
    acl_harness.grant(ALICE, Op.IDEMPOTENT_WRITE, R.CLUSTER)
    described = call(acl_harness, ApiKey.DESCRIBE_CLUSTER, 1, {
        "include_cluster_authorized_operations": True, "endpoint_type": 1})
    assert operations(described["cluster_authorized_operations"]) == {"DESCRIBE",
                                                                      "IDEMPOTENT_WRITE"}


# -- groups and their offsets ------------------------------------------------------------------


@pytest.fixture
def groups(acl_harness):
    acl_harness.offsets_topic()
    acl_harness.group = acl_harness.group_led_here()
    return acl_harness


def join_body(group):
    return {"group_id": group, "session_timeout_ms": 10_000, "rebalance_timeout_ms": 20_000,
            "member_id": "", "group_instance_id": None, "protocol_type": "consumer",
            "protocols": [{"name": "range", "metadata": b"m"}]}


@pytest.mark.parametrize("version", [0, 5, 9])
def test_membership_needs_read_on_the_group(groups, version):
    group = groups.group
    joined = call(groups, ApiKey.JOIN_GROUP, version, join_body(group))
    assert (joined["error_code"], joined["generation_id"], joined["member_id"]) == \
        (GROUP_REFUSED, -1, "")
    assert not groups.groups.handle_describe_group(group)[1].members
    member = {"group_id": group, "generation_id": 1, "member_id": "m"}
    assert call(groups, ApiKey.HEARTBEAT, min(version, 4), member)["error_code"] == GROUP_REFUSED
    synced = call(groups, ApiKey.SYNC_GROUP, min(version, 5), {
        **member, "protocol_type": "consumer", "protocol_name": "range", "assignments": []})
    assert synced["error_code"] == GROUP_REFUSED
    left = call(groups, ApiKey.LEAVE_GROUP, min(version, 5), {
        "group_id": group, "member_id": "m", "members": [{"member_id": "m"}]})
    assert left["error_code"] == GROUP_REFUSED


def test_a_member_with_read_joins(groups):
    groups.grant(ALICE, Op.READ, R.GROUP, groups.group)
    asked = call(groups, ApiKey.JOIN_GROUP, 5, join_body(groups.group))
    assert asked["error_code"] == E.MEMBER_ID_REQUIRED  # allowed: the join goes on


def commit(harness, version=8, group=None):
    body = {"group_id": group or harness.group, "generation_id_or_member_epoch": -1,
            "member_id": "", "retention_time_ms": -1, "group_instance_id": None,
            "topics": [{"name": t, "partitions": [
                {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
                 "commit_timestamp": -1, "committed_metadata": ""}]} for t in ("events", "other")]}
    response = call(harness, ApiKey.OFFSET_COMMIT, version, body)
    return {t["name"]: t["partitions"][0]["error_code"] for t in response["topics"]}


@pytest.mark.parametrize("version", [0, 1, 8])
def test_offset_commit_needs_read_on_group_and_topic(groups, version):
    assert commit(groups, version) == {"events": GROUP_REFUSED, "other": GROUP_REFUSED}
    groups.grant(ALICE, Op.READ, R.GROUP, groups.group)
    groups.grant(ALICE, Op.READ, R.TOPIC, "events")
    assert commit(groups, version) == {"events": E.NONE, "other": TOPIC_REFUSED}
    if version == 0:
        assert groups.services.zk_offsets.offsets == {
            (groups.group, TopicPartition("events", 0)): 5}
    else:
        assert set(groups.groups.handle_fetch_offsets(groups.group, None)[1]) == {
            TopicPartition("events", 0)}


def fetch_offsets(harness, version, topics=("events", "other")):
    requested = None if topics is None else [{"name": t, "partition_indexes": [0]}
                                             for t in topics]
    if version >= 8:
        return call(harness, ApiKey.OFFSET_FETCH, version, {
            "groups": [{"group_id": harness.group, "topics": requested}],
            "require_stable": False})["groups"][0]
    return call(harness, ApiKey.OFFSET_FETCH, version, {
        "group_id": harness.group, "topics": requested, "require_stable": False})


def errors_of(response):
    return {t["name"]: t["partitions"][0]["error_code"] for t in response["topics"]}


@pytest.mark.parametrize("version", [0, 1, 2, 8])
def test_offset_fetch_needs_describe_on_group_and_topic(groups, version):
    groups.grant(ALICE, Op.READ, R.TOPIC, "*")
    refused = fetch_offsets(groups, version)
    if version < 2:  # no group error field: each partition carries it
        assert errors_of(refused) == {"events": GROUP_REFUSED, "other": GROUP_REFUSED}
    else:
        assert (refused["error_code"], refused["topics"]) == (GROUP_REFUSED, [])
    groups.grant(ALICE, Op.DESCRIBE, R.GROUP, groups.group)
    groups.grant(ALICE, Op.DESCRIBE, R.TOPIC, "other", permission=AclPermissionType.DENY)
    answered = fetch_offsets(groups, version)
    assert errors_of(answered) == {"events": E.NONE, "other": TOPIC_REFUSED}
    assert [t["partitions"][0]["committed_offset"] for t in answered["topics"]] == [-1, -1]


def test_offset_fetch_of_every_partition_leaves_out_hidden_topics(groups):
    groups.grant(ALICE, Op.READ, R.GROUP, groups.group)
    groups.grant(ALICE, Op.READ, R.TOPIC, "*")
    assert commit(groups) == {"events": E.NONE, "other": E.NONE}
    groups.grant(ALICE, Op.DESCRIBE, R.TOPIC, "other", permission=AclPermissionType.DENY)
    assert [t["name"] for t in fetch_offsets(groups, 8, topics=None)["topics"]] == ["events"]


def commit_as_owner(harness, group):
    """Offsets committed by the group's owner, so that the group exists (empty)."""
    harness.grant("User:owner", Op.READ, R.GROUP, "*")
    harness.grant("User:owner", Op.READ, R.TOPIC, "*")
    response = harness.call(ApiKey.OFFSET_COMMIT, 8, {
        "group_id": group, "generation_id_or_member_epoch": -1, "member_id": "",
        "group_instance_id": None, "topics": [{"name": t, "partitions": [
            {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1,
             "committed_metadata": ""}]} for t in ("events", "other")]}, principal="User:owner")
    assert errors_of(response) == {"events": E.NONE, "other": E.NONE}


def test_offset_delete_needs_delete_on_group_and_read_on_topic(groups):
    commit_as_owner(groups, groups.group)
    body = {"group_id": groups.group, "topics": [
        {"name": t, "partitions": [{"partition_index": 0}]} for t in ("events", "other")]}
    assert call(groups, ApiKey.OFFSET_DELETE, 0, body)["error_code"] == GROUP_REFUSED
    groups.grant(ALICE, Op.DELETE, R.GROUP, groups.group)
    groups.grant(ALICE, Op.READ, R.TOPIC, "events")
    response = call(groups, ApiKey.OFFSET_DELETE, 0, body)
    assert (response["error_code"], errors_of(response)) == (
        E.NONE, {"events": E.NONE, "other": TOPIC_REFUSED})
    assert set(groups.groups.handle_fetch_offsets(groups.group, None)[1]) == {
        TopicPartition("other", 0)}


def test_describe_and_delete_groups(groups):
    commit_as_owner(groups, groups.group)
    ask = {"groups": [groups.group], "include_authorized_operations": True}
    described = call(groups, ApiKey.DESCRIBE_GROUPS, 5, ask)["groups"][0]
    assert (described["error_code"], described["authorized_operations"]) == \
        (GROUP_REFUSED, NOT_REQUESTED)
    groups.grant(ALICE, Op.DESCRIBE, R.GROUP, groups.group)
    described = call(groups, ApiKey.DESCRIBE_GROUPS, 5, ask)["groups"][0]
    assert (described["error_code"], described["group_state"]) == (0, "Empty")
    assert operations(described["authorized_operations"]) == {"DESCRIBE"}
    deleted = call(groups, ApiKey.DELETE_GROUPS, 2, {"groups_names": [groups.group]})
    assert deleted["results"][0]["error_code"] == GROUP_REFUSED
    groups.grant(ALICE, Op.DELETE, R.GROUP, groups.group)
    deleted = call(groups, ApiKey.DELETE_GROUPS, 2, {"groups_names": [groups.group]})
    assert deleted["results"][0]["error_code"] == E.NONE


def test_list_groups_shows_describable_groups_or_all_with_cluster_describe(groups):
    mine, theirs = groups.group, next(
        g for g in (f"other-{i}" for i in range(50)) if groups.groups.partition_for(g) == 0)
    commit_as_owner(groups, mine)
    commit_as_owner(groups, theirs)
    groups.grant(ALICE, Op.DESCRIBE, R.GROUP, mine)

    def listed():
        return sorted(g["group_id"] for g in call(groups, ApiKey.LIST_GROUPS, 4, {
            "states_filter": []})["groups"])

    assert listed() == [mine]
    groups.grant(ALICE, Op.DESCRIBE, R.CLUSTER)
    assert listed() == sorted([mine, theirs])


def test_find_coordinator_needs_describe(groups):
    refused = call(groups, ApiKey.FIND_COORDINATOR, 1, {"key": "g", "key_type": 0})
    assert (refused["error_code"], refused["node_id"]) == (GROUP_REFUSED, -1)
    batched = call(groups, ApiKey.FIND_COORDINATOR, 4, {
        "key_type": 1, "coordinator_keys": ["tx"]})["coordinators"][0]
    assert batched["error_code"] == TXN_REFUSED
    groups.grant(ALICE, Op.READ, R.GROUP, groups.group)  # Read implies Describe
    assert call(groups, ApiKey.FIND_COORDINATOR, 1, {"key": groups.group, "key_type": 0}
                )["error_code"] == 0


# -- producers and transactions ----------------------------------------------------------------


def init_producer_id(harness, transactional_id=None):
    return call(harness, ApiKey.INIT_PRODUCER_ID, 4, {
        "transactional_id": transactional_id, "transaction_timeout_ms": 60_000,
        "producer_id": -1, "producer_epoch": -1})["error_code"]


def test_idempotent_producers_need_idempotent_write_or_write_on_some_topic(acl_harness):
    assert init_producer_id(acl_harness) == CLUSTER_REFUSED
    acl_harness.grant(ALICE, Op.WRITE, R.TOPIC, "logs-", PatternType.PREFIXED)  # KIP-679
    assert init_producer_id(acl_harness) == E.NONE
    acl_harness.acls()
    acl_harness.grant(ALICE, Op.IDEMPOTENT_WRITE, R.CLUSTER)
    assert init_producer_id(acl_harness) == E.NONE


def test_transactional_producers_need_write_on_their_transactional_id(acl_harness):
    acl_harness.topic("__transaction_state", [OTHER_BROKER])
    acl_harness.grant(ALICE, Op.ALL, R.CLUSTER)
    assert init_producer_id(acl_harness, "tx") == TXN_REFUSED
    acl_harness.grant(ALICE, Op.WRITE, R.TRANSACTIONAL_ID, "tx")
    assert init_producer_id(acl_harness, "tx") == E.NONE


def add_partitions(harness, topics, version=3):
    response = call(harness, ApiKey.ADD_PARTITIONS_TO_TXN, version, {
        "v3_and_below_transactional_id": "tx", "v3_and_below_producer_id": 4000,
        "v3_and_below_producer_epoch": 0,
        "v3_and_below_topics": [{"name": t, "partitions": [0]} for t in topics]})
    return {t["name"]: t["results_by_partition"][0]["partition_error_code"]
            for t in response["results_by_topic_v3_and_below"]}


def test_add_partitions_to_txn_needs_write_on_id_and_topics(acl_harness):
    calls = acl_harness.services.transactions.calls
    assert add_partitions(acl_harness, ["events"]) == {"events": TXN_REFUSED}
    acl_harness.grant(ALICE, Op.WRITE, R.TRANSACTIONAL_ID, "tx")
    acl_harness.grant(ALICE, Op.WRITE, R.TOPIC, "*")
    acl_harness.grant(ALICE, Op.WRITE, R.TOPIC, "other", permission=AclPermissionType.DENY)
    assert add_partitions(acl_harness, ["events", "other", "__consumer_offsets"]) == {
        "events": E.OPERATION_NOT_ATTEMPTED, "other": TOPIC_REFUSED,
        "__consumer_offsets": TOPIC_REFUSED}  # internal topics are never added
    assert calls == []
    assert add_partitions(acl_harness, ["events"]) == {"events": E.NONE}
    assert calls == [("add", "tx", (TopicPartition("events", 0),))]


def test_broker_to_broker_transaction_apis_need_cluster_action(acl_harness):
    batched = call(acl_harness, ApiKey.ADD_PARTITIONS_TO_TXN, 4, {"transactions": [
        {"transactional_id": "tx", "producer_id": 1, "producer_epoch": 0, "verify_only": True,
         "topics": [{"name": "events", "partitions": [0]}]}]})
    assert (batched["error_code"], batched["results_by_transaction"]) == (CLUSTER_REFUSED, [])
    markers = call(acl_harness, ApiKey.WRITE_TXN_MARKERS, 1, {"markers": [
        {"producer_id": 1, "producer_epoch": 0, "transaction_result": True,
         "coordinator_epoch": 0, "topics": [{"name": "events", "partition_indexes": [0]}]}]})
    assert markers["markers"][0]["topics"][0]["partitions"][0]["error_code"] == CLUSTER_REFUSED
    assert acl_harness.log("events").log_end_offset == 0  # no marker written


def test_add_offsets_end_txn_and_txn_offset_commit(groups):
    txn = {"transactional_id": "tx", "producer_id": 4000, "producer_epoch": 0}
    add_offsets = {**txn, "group_id": groups.group}
    end = {**txn, "committed": True}
    assert call(groups, ApiKey.ADD_OFFSETS_TO_TXN, 3, add_offsets)["error_code"] == TXN_REFUSED
    assert call(groups, ApiKey.END_TXN, 3, end)["error_code"] == TXN_REFUSED
    commit_body = {**txn, "group_id": groups.group, "generation_id": -1, "member_id": "",
                   "group_instance_id": None, "topics": [{"name": "events", "partitions": [
                       {"partition_index": 0, "committed_offset": 1, "committed_leader_epoch": -1,
                        "committed_metadata": None}]}]}
    assert errors_of(call(groups, ApiKey.TXN_OFFSET_COMMIT, 3, commit_body)) == {
        "events": TXN_REFUSED}
    groups.grant(ALICE, Op.WRITE, R.TRANSACTIONAL_ID, "tx")
    assert call(groups, ApiKey.ADD_OFFSETS_TO_TXN, 3, add_offsets)["error_code"] == GROUP_REFUSED
    assert errors_of(call(groups, ApiKey.TXN_OFFSET_COMMIT, 3, commit_body)) == {
        "events": GROUP_REFUSED}
    assert call(groups, ApiKey.END_TXN, 3, end)["error_code"] == E.NONE
    groups.grant(ALICE, Op.READ, R.GROUP, groups.group)
    assert errors_of(call(groups, ApiKey.TXN_OFFSET_COMMIT, 3, commit_body)) == {
        "events": TOPIC_REFUSED}


def test_transactions_are_listed_and_described_as_the_acls_allow(acl_harness):
    acl_harness.services.transactions.transactions = {
        tx: TransactionDescription(tx, TxnState.ONGOING, 60_000, 1, pid, 0,
                                   (TopicPartition("events", 0), TopicPartition("other", 0)))
        for tx, pid in (("tx-a", 1), ("tx-b", 2))}
    acl_harness.grant(ALICE, Op.DESCRIBE, R.TRANSACTIONAL_ID, "tx-a")
    acl_harness.grant(ALICE, Op.DESCRIBE, R.TOPIC, "events")
    listed = call(acl_harness, ApiKey.LIST_TRANSACTIONS, 1, {
        "state_filters": [], "producer_id_filters": [], "duration_filter": -1})
    assert [t["transactional_id"] for t in listed["transaction_states"]] == ["tx-a"]
    described = call(acl_harness, ApiKey.DESCRIBE_TRANSACTIONS, 0, {
        "transactional_ids": ["tx-a", "tx-b"]})["transaction_states"]
    assert [(d["error_code"], [t["topic"] for t in d["topics"]]) for d in described] == [
        (E.NONE, ["events"]), (TXN_REFUSED, [])]


# -- topics, configs, records ------------------------------------------------------------------


def test_create_topics_needs_create_and_shows_configs_with_describe_configs(acl_harness):
    body = {"topics": [{"name": n, "num_partitions": 1, "replication_factor": 1,
                        "assignments": [], "configs": []} for n in ("a", "b", "c")],
            "timeout_ms": 5000, "validate_only": False}
    acl_harness.grant(ALICE, Op.CREATE, R.TOPIC, "a")
    acl_harness.grant(ALICE, Op.CREATE, R.TOPIC, "b")
    acl_harness.grant(ALICE, Op.DESCRIBE_CONFIGS, R.TOPIC, "a")
    results = {t["name"]: t for t in call(acl_harness, ApiKey.CREATE_TOPICS, 7, body)["topics"]}
    assert (results["c"]["error_code"], results["c"]["error_message"]) == \
        (TOPIC_REFUSED, "Authorization failed.")
    assert [spec.name for spec in acl_harness.services.admin.created] == ["a", "b"]
    assert results["a"]["num_partitions"] == 1 and results["a"]["configs"]
    assert results["a"]["topic_id"] != uuid.UUID(int=0)
    assert (results["b"]["error_code"], results["b"]["topic_config_error_code"],
            results["b"]["num_partitions"], results["b"]["configs"], results["b"]["topic_id"]) \
        == (E.NONE, TOPIC_REFUSED, -1, [], uuid.UUID(int=0))
    acl_harness.grant(ALICE, Op.CREATE, R.CLUSTER)  # Create on the cluster: any topic
    assert call(acl_harness, ApiKey.CREATE_TOPICS, 7, {**body, "topics": body["topics"][2:]}
                )["topics"][0]["error_code"] == E.NONE


def test_delete_topics_and_create_partitions(acl_harness):
    deleted = call(acl_harness, ApiKey.DELETE_TOPICS, 6, {"topics": [
        {"name": "events", "topic_id": uuid.UUID(int=0)},
        {"name": None, "topic_id": acl_harness.cluster.topic("other").topic_id}],
        "timeout_ms": 0})["responses"]
    assert [(r["name"], r["error_code"]) for r in deleted] == [
        ("events", TOPIC_REFUSED), (None, TOPIC_REFUSED)]  # by id: no Describe, no name
    acl_harness.grant(ALICE, Op.DELETE, R.TOPIC, "other")  # Delete implies Describe
    deleted = call(acl_harness, ApiKey.DELETE_TOPICS, 6, {"topics": [
        {"name": None, "topic_id": acl_harness.cluster.topic("other").topic_id}],
        "timeout_ms": 0})["responses"]
    assert [(r["name"], r["error_code"]) for r in deleted] == [("other", E.REQUEST_TIMED_OUT)]
    grown = call(acl_harness, ApiKey.CREATE_PARTITIONS, 3, {"topics": [
        {"name": "events", "count": 3, "assignments": None}], "timeout_ms": 0,
        "validate_only": True})["results"][0]
    assert (grown["error_code"], grown["error_message"]) == \
        (TOPIC_REFUSED, "The topic authorization is failed.")


def test_configs_need_describe_configs_and_alter_configs(acl_harness):
    resources = [{"resource_type": 2, "resource_name": "events", "configuration_keys": None},
                 {"resource_type": 4, "resource_name": str(BROKER_ID),
                  "configuration_keys": None}]
    described = call(acl_harness, ApiKey.DESCRIBE_CONFIGS, 4, {"resources": resources})
    assert [r["error_code"] for r in described["results"]] == [TOPIC_REFUSED, CLUSTER_REFUSED]
    acl_harness.grant(ALICE, Op.ALTER_CONFIGS, R.TOPIC, "events")  # implies DescribeConfigs
    described = call(acl_harness, ApiKey.DESCRIBE_CONFIGS, 4, {"resources": resources})
    assert [r["error_code"] for r in described["results"]] == [0, CLUSTER_REFUSED]
    altered = call(acl_harness, ApiKey.INCREMENTAL_ALTER_CONFIGS, 1, {"resources": [
        {"resource_type": 2, "resource_name": n, "configs": [
            {"name": "retention.ms", "config_operation": 0, "value": "1000"}]}
        for n in ("events", "other")], "validate_only": False})
    assert [r["error_code"] for r in altered["responses"]] == [0, TOPIC_REFUSED]
    assert acl_harness.services.admin.configs == {"events": {"retention.ms": "1000"}}
    legacy = call(acl_harness, ApiKey.ALTER_CONFIGS, 2, {"resources": [
        {"resource_type": 4, "resource_name": "", "configs": [
            {"name": "log.retention.ms", "value": "1000"}]}], "validate_only": False})
    assert legacy["responses"][0]["error_code"] == CLUSTER_REFUSED
    assert acl_harness.services.admin.broker_configs == {}


def test_delete_records_leader_epochs_and_producers_per_topic(acl_harness):
    acl_harness.grant(ALICE, Op.DELETE, R.TOPIC, "events")
    deleted = call(acl_harness, ApiKey.DELETE_RECORDS, 2, {"topics": [
        {"name": t, "partitions": [{"partition_index": 0, "offset": -1}]}
        for t in ("events", "other")], "timeout_ms": 1000})
    assert [t["partitions"][0]["error_code"] for t in deleted["topics"]] == [0, TOPIC_REFUSED]
    epochs = call(acl_harness, ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": -1, "topics": [
        {"topic": t, "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                     "leader_epoch": 0}]} for t in ("events", "other")]})
    assert [t["partitions"][0]["error_code"] for t in epochs["topics"]] == [0, TOPIC_REFUSED]
    producers = call(acl_harness, ApiKey.DESCRIBE_PRODUCERS, 0, {"topics": [
        {"name": t, "partition_indexes": [0]} for t in ("events", "other")]})
    assert [t["partitions"][0]["error_code"] for t in producers["topics"]] == [
        TOPIC_REFUSED, TOPIC_REFUSED]  # Delete is no Read
    acl_harness.grant(ALICE, Op.CLUSTER_ACTION, R.CLUSTER)
    epochs = call(acl_harness, ApiKey.OFFSET_FOR_LEADER_EPOCH, 4, {"replica_id": OTHER_BROKER,
                                                                   "topics": [
        {"topic": "other", "partitions": [{"partition": 0, "current_leader_epoch": -1,
                                           "leader_epoch": 0}]}]})
    assert epochs["topics"][0]["partitions"][0]["error_code"] == 0


def test_controller_apis_need_their_cluster_operation(acl_harness):
    """Refused before anything else; allowed, they reach the controller role (which this
    broker does not hold: NOT_CONTROLLER)."""
    def ask():
        shutdown = call(acl_harness, ApiKey.CONTROLLED_SHUTDOWN, 3,
                        {"broker_id": OTHER_BROKER, "broker_epoch": 1})
        elect = call(acl_harness, ApiKey.ELECT_LEADERS, 2, {
            "election_type": 0, "timeout_ms": 1000,
            "topic_partitions": [{"topic": "events", "partitions": [0]}]})
        alter = call(acl_harness, ApiKey.ALTER_PARTITION_REASSIGNMENTS, 0, {
            "timeout_ms": 1000, "topics": [{"name": "events", "partitions": [
                {"partition_index": 0, "replicas": [BROKER_ID]}]}]})
        listed = call(acl_harness, ApiKey.LIST_PARTITION_REASSIGNMENTS, 0,
                      {"timeout_ms": 1000, "topics": None})
        (result,) = elect["replica_election_results"][0]["partition_result"]
        return (shutdown["error_code"], elect["error_code"], result["error_code"],
                alter["error_code"], listed["error_code"])

    assert ask() == (CLUSTER_REFUSED,) * 5
    for operation in (Op.CLUSTER_ACTION, Op.ALTER, Op.DESCRIBE):
        acl_harness.grant(ALICE, operation, R.CLUSTER)
    assert ask() == (E.NOT_CONTROLLER, E.NONE, E.NOT_CONTROLLER, E.NOT_CONTROLLER,
                     E.NOT_CONTROLLER)


def test_super_users_are_allowed_everything(harness):
    harness.acls(super_users={ALICE})
    harness.topic("events", [BROKER_ID])
    assert produce(harness, ["events"]) == {"events": E.NONE}
    assert harness.call(ApiKey.METADATA, 12, {"topics": None}, principal="User:bob")[
        "topics"] == []


def test_decisions_are_logged_as_kafkas_authorizer_logs_them(acl_harness, caplog):
    acl_harness.grant(ALICE, Op.WRITE, R.TOPIC, "events")
    with caplog.at_level(logging.DEBUG, logger="broker_lite.authorizer"):
        produce(acl_harness, ["events", "other"])
        metadata(acl_harness, None)  # an all-topics answer: its refusals at DEBUG only
    logged = [(r.levelno, r.getMessage()) for r in caplog.records
              if r.name == "broker_lite.authorizer"]
    assert (logging.INFO, "Principal = User:alice is Denied Operation = Write from host = "
            "127.0.0.1 on resource = Topic:LITERAL:other for request = Produce with "
            "resourceRefCount = 1") in logged
    assert (logging.DEBUG, "Principal = User:alice is Allowed Operation = Write from host = "
            "127.0.0.1 on resource = Topic:LITERAL:events for request = Produce with "
            "resourceRefCount = 1") in logged
    assert [message for level, message in logged if level == logging.INFO] == [
        message for level, message in logged if "Produce" in message and "Denied" in message]
