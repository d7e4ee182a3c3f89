"""Interoperability with kafka-python's protocol classes (an implementation nobody here wrote).

Two layers:

* golden cases, per API family, old (non-flexible) and new (flexible) versions: a request built
  and framed by kafka-python must parse with :func:`parse_request` to the expected header and
  body; a response encoded by :func:`encode_response` must decode with kafka-python's response
  class to the expected values (expectations written out by hand, in kafka-python's names);
* randomized cross-decoding for every API and every version both implementations know: bodies
  generated from our schemas go through kafka-python's encoder into our decoder and through our
  encoder into kafka-python's decoder, as whole frames with headers.
"""

from __future__ import annotations

import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kafka.protocol.admin.cluster import DescribeClusterRequest, DescribeClusterResponse
from kafka.protocol.admin.configs import (
    AlterConfigsRequest,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
)
from kafka.protocol.admin.groups import (
    DeleteGroupsRequest,
    DescribeGroupsResponse,
    ListGroupsResponse,
)
from kafka.protocol.admin.topics import (
    CreatePartitionsRequest,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteRecordsRequest,
    DeleteRecordsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.group import (
    HeartbeatRequest,
    JoinGroupRequest,
    JoinGroupResponse,
    LeaveGroupRequest,
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
    SyncGroupRequest,
    SyncGroupResponse,
)
from kafka.protocol.consumer.offsets import (
    ListOffsetsRequest,
    ListOffsetsResponse,
    OffsetForLeaderEpochRequest,
    OffsetForLeaderEpochResponse,
)
from kafka.protocol.metadata import (
    ApiVersionsRequest,
    ApiVersionsResponse,
    FindCoordinatorRequest,
    FindCoordinatorResponse,
    MetadataRequest,
    MetadataResponse,
)
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from kafka.protocol.sasl import SaslHandshakeRequest
from kafka_python_bridge import from_kp, kp_classes, kp_versions, present_only, to_kp
from protocol_strategies import body_strategy, subset

from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
    encode_request,
    encode_response,
    parse_request,
    parse_response,
)
from broker_lite.protocol.messages import ALL_MESSAGES
from broker_lite.records import build_batch, build_message_set

TOPIC_ID = uuid.UUID("5f1d4c9a-0b6e-4f37-9a51-3c2d8e7f6a10")
BATCH = build_batch([(b"k1", b"v1"), (None, b"v2")], timestamp=1_700_000_000_000)
MESSAGE_SET = build_message_set([(b"k", b"v")], magic=1, timestamp=1_700_000_000_000)


def kp_frame(request, version: int, correlation_id: int = 42,
             client_id: str | None = "kp-client") -> bytes:
    request.with_header(correlation_id=correlation_id, client_id=client_id)
    return bytes(request.encode(version=version, header=True, framed=True))


# -- golden request cases: kafka-python encodes, we parse -----------------------------------------

MR, FR, PR, LR = MetadataRequest, FetchRequest, ProduceRequest, ListOffsetsRequest

REQUEST_CASES = [
    # ApiVersions: v0 has no body; v3 is flexible (header v2, client software name/version)
    ("ApiVersions", 0, lambda: ApiVersionsRequest(), {}),
    ("ApiVersions", 3, lambda: ApiVersionsRequest(client_software_name="kafka-python",
                                                   client_software_version="3.0"),
     {"client_software_name": "kafka-python", "client_software_version": "3.0"}),
    # Metadata: v0 topic list; v1 null = all topics; v4 auto-creation flag; v12 by topic id
    ("Metadata", 0, lambda: MR(topics=[MR.MetadataRequestTopic(name="events")]),
     {"topics": [{"name": "events", "topic_id": uuid.UUID(int=0)}], "allow_auto_topic_creation": True}),
    ("Metadata", 1, lambda: MR(topics=None), {"topics": None}),
    ("Metadata", 4, lambda: MR(topics=[], allow_auto_topic_creation=False),
     {"topics": [], "allow_auto_topic_creation": False}),
    ("Metadata", 12, lambda: MR(topics=[MR.MetadataRequestTopic(topic_id=TOPIC_ID, name=None)],
                                allow_auto_topic_creation=True, include_topic_authorized_operations=True),
     {"topics": [{"topic_id": TOPIC_ID, "name": None}], "include_topic_authorized_operations": True}),
    # Produce: v3 (transactional id, magic 1 and 2 records), v9 flexible
    ("Produce", 3, lambda: PR(transactional_id=None, acks=-1, timeout_ms=30000, topic_data=[
        PR.TopicProduceData(name="events", partition_data=[
            PR.TopicProduceData.PartitionProduceData(index=0, records=BATCH),
            PR.TopicProduceData.PartitionProduceData(index=1, records=MESSAGE_SET)])]),
     {"transactional_id": None, "acks": -1, "timeout_ms": 30000, "topic_data": [
         {"name": "events", "partition_data": [{"index": 0, "records": BATCH},
                                               {"index": 1, "records": MESSAGE_SET}]}]}),
    ("Produce", 9, lambda: PR(transactional_id="tx-1", acks=1, timeout_ms=500, topic_data=[
        PR.TopicProduceData(name="t", partition_data=[
            PR.TopicProduceData.PartitionProduceData(index=7, records=None)])]),
     {"transactional_id": "tx-1", "acks": 1, "timeout_ms": 500,
      "topic_data": [{"name": "t", "partition_data": [{"index": 7, "records": None}]}]}),
    # Fetch: v4 (isolation level), v12 flexible, v13 topic ids, v15 replica state (tagged)
    ("Fetch", 4, lambda: FR(replica_id=-1, max_wait_ms=500, min_bytes=1, max_bytes=1 << 20,
                            isolation_level=1, topics=[FR.FetchTopic(topic="events", partitions=[
                                FR.FetchTopic.FetchPartition(partition=2, fetch_offset=100,
                                                             partition_max_bytes=65536)])]),
     {"replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 1 << 20, "isolation_level": 1,
      "session_id": 0, "session_epoch": -1, "rack_id": "",
      "topics": [{"topic": "events", "partitions": [
          {"partition": 2, "fetch_offset": 100, "partition_max_bytes": 65536,
           "current_leader_epoch": -1, "log_start_offset": -1}]}]}),
    ("Fetch", 12, lambda: FR(replica_id=-1, max_wait_ms=100, min_bytes=0, session_id=5, session_epoch=2,
                             topics=[FR.FetchTopic(topic="a", partitions=[
                                 FR.FetchTopic.FetchPartition(partition=0, current_leader_epoch=3,
                                                              fetch_offset=9, last_fetched_epoch=2,
                                                              partition_max_bytes=1024)])],
                             forgotten_topics_data=[FR.ForgottenTopic(topic="b", partitions=[1, 2])],
                             rack_id="r1"),
     {"session_id": 5, "session_epoch": 2, "rack_id": "r1", "cluster_id": None,
      "topics": [{"topic": "a", "partitions": [
          {"partition": 0, "current_leader_epoch": 3, "fetch_offset": 9, "last_fetched_epoch": 2}]}],
      "forgotten_topics_data": [{"topic": "b", "partitions": [1, 2]}]}),
    ("Fetch", 13, lambda: FR(replica_id=-1, max_wait_ms=100, min_bytes=0, topics=[
        FR.FetchTopic(topic_id=TOPIC_ID, partitions=[
            FR.FetchTopic.FetchPartition(partition=0, fetch_offset=1, partition_max_bytes=10)])]),
     {"topics": [{"topic_id": TOPIC_ID, "topic": "", "partitions": [{"fetch_offset": 1}]}]}),
    ("Fetch", 15, lambda: FR(cluster_id="c1", replica_state=FR.ReplicaState(replica_id=3, replica_epoch=7),
                             max_wait_ms=1, min_bytes=1, topics=[]),
     {"cluster_id": "c1", "replica_state": {"replica_id": 3, "replica_epoch": 7}, "replica_id": -1}),
    # ListOffsets v1, v6 (flexible); OffsetForLeaderEpoch v2, v4
    ("ListOffsets", 1, lambda: LR(replica_id=-1, topics=[LR.ListOffsetsTopic(name="t", partitions=[
        LR.ListOffsetsTopic.ListOffsetsPartition(partition_index=0, timestamp=-1)])]),
     {"replica_id": -1, "isolation_level": 0,
      "topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": -1,
                                               "current_leader_epoch": -1}]}]}),
    ("ListOffsets", 6, lambda: LR(replica_id=-1, isolation_level=1, topics=[
        LR.ListOffsetsTopic(name="t", partitions=[LR.ListOffsetsTopic.ListOffsetsPartition(
            partition_index=3, current_leader_epoch=4, timestamp=-2)])]),
     {"isolation_level": 1, "topics": [{"name": "t", "partitions": [
         {"partition_index": 3, "current_leader_epoch": 4, "timestamp": -2}]}]}),
    ("OffsetForLeaderEpoch", 2, lambda: OffsetForLeaderEpochRequest(topics=[
        OffsetForLeaderEpochRequest.OffsetForLeaderTopic(topic="t", partitions=[
            OffsetForLeaderEpochRequest.OffsetForLeaderTopic.OffsetForLeaderPartition(
                partition=0, current_leader_epoch=5, leader_epoch=4)])]),
     {"replica_id": -2, "topics": [{"topic": "t", "partitions": [
         {"partition": 0, "current_leader_epoch": 5, "leader_epoch": 4}]}]}),
    ("OffsetForLeaderEpoch", 4, lambda: OffsetForLeaderEpochRequest(replica_id=-1, topics=[]),
     {"replica_id": -1, "topics": []}),
    # CreateTopics v2, v5; DeleteTopics v1, v6; CreatePartitions v0, v2
    ("CreateTopics", 2, lambda: CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name="new", num_partitions=3, replication_factor=1, assignments=[], configs=[
            CreateTopicsRequest.CreatableTopic.CreatableTopicConfig(name="cleanup.policy", value="compact")])],
        timeout_ms=1000, validate_only=True),
     {"topics": [{"name": "new", "num_partitions": 3, "replication_factor": 1, "assignments": [],
                  "configs": [{"name": "cleanup.policy", "value": "compact"}]}],
      "timeout_ms": 1000, "validate_only": True}),
    ("CreateTopics", 5, lambda: CreateTopicsRequest(topics=[CreateTopicsRequest.CreatableTopic(
        name="x", num_partitions=-1, replication_factor=-1, assignments=[
            CreateTopicsRequest.CreatableTopic.CreatableReplicaAssignment(partition_index=0, broker_ids=[1, 2])],
        configs=[])], timeout_ms=5),
     {"topics": [{"name": "x", "num_partitions": -1, "replication_factor": -1,
                  "assignments": [{"partition_index": 0, "broker_ids": [1, 2]}]}], "validate_only": False}),
    ("DeleteTopics", 1, lambda: DeleteTopicsRequest(topic_names=["a", "b"], timeout_ms=10),
     {"topic_names": ["a", "b"], "timeout_ms": 10, "topics": []}),
    ("DeleteTopics", 6, lambda: DeleteTopicsRequest(topics=[
        DeleteTopicsRequest.DeleteTopicState(name=None, topic_id=TOPIC_ID)], timeout_ms=10),
     {"topics": [{"name": None, "topic_id": TOPIC_ID}], "topic_names": []}),
    # DeleteRecords v0, v2 (flexible); offset -1 is the high watermark
    ("DeleteRecords", 0, lambda: DeleteRecordsRequest(topics=[DeleteRecordsRequest.DeleteRecordsTopic(
        name="t", partitions=[DeleteRecordsRequest.DeleteRecordsTopic.DeleteRecordsPartition(
            partition_index=1, offset=42)])], timeout_ms=30000),
     {"topics": [{"name": "t", "partitions": [{"partition_index": 1, "offset": 42}]}], "timeout_ms": 30000}),
    ("DeleteRecords", 2, lambda: DeleteRecordsRequest(topics=[DeleteRecordsRequest.DeleteRecordsTopic(
        name="t", partitions=[DeleteRecordsRequest.DeleteRecordsTopic.DeleteRecordsPartition(
            partition_index=0, offset=-1)])], timeout_ms=5),
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "offset": -1}]}], "timeout_ms": 5}),
    ("CreatePartitions", 0, lambda: CreatePartitionsRequest(topics=[
        CreatePartitionsRequest.CreatePartitionsTopic(name="t", count=4, assignments=None)],
        timeout_ms=100, validate_only=False),
     {"topics": [{"name": "t", "count": 4, "assignments": None}], "timeout_ms": 100}),
    ("CreatePartitions", 2, lambda: CreatePartitionsRequest(topics=[
        CreatePartitionsRequest.CreatePartitionsTopic(name="t", count=2, assignments=[
            CreatePartitionsRequest.CreatePartitionsTopic.CreatePartitionsAssignment(broker_ids=[0])])],
        timeout_ms=100, validate_only=True),
     {"topics": [{"name": "t", "count": 2, "assignments": [{"broker_ids": [0]}]}], "validate_only": True}),
    # DescribeConfigs v1, v4; AlterConfigs v0, v2; IncrementalAlterConfigs v0, v1; DescribeCluster
    ("DescribeConfigs", 1, lambda: DescribeConfigsRequest(resources=[
        DescribeConfigsRequest.DescribeConfigsResource(resource_type=2, resource_name="t",
                                                       configuration_keys=None)], include_synonyms=True),
     {"resources": [{"resource_type": 2, "resource_name": "t", "configuration_keys": None}],
      "include_synonyms": True, "include_documentation": False}),
    ("DescribeConfigs", 4, lambda: DescribeConfigsRequest(resources=[
        DescribeConfigsRequest.DescribeConfigsResource(resource_type=4, resource_name="0",
                                                       configuration_keys=["log.dirs"])],
        include_documentation=True),
     {"resources": [{"resource_type": 4, "resource_name": "0", "configuration_keys": ["log.dirs"]}],
      "include_documentation": True}),
    ("AlterConfigs", 0, lambda: AlterConfigsRequest(resources=[AlterConfigsRequest.AlterConfigsResource(
        resource_type=2, resource_name="t", configs=[
            AlterConfigsRequest.AlterConfigsResource.AlterableConfig(name="retention.ms", value=None)])],
        validate_only=False),
     {"resources": [{"resource_type": 2, "resource_name": "t",
                     "configs": [{"name": "retention.ms", "value": None}]}]}),
    ("AlterConfigs", 2, lambda: AlterConfigsRequest(resources=[], validate_only=True),
     {"resources": [], "validate_only": True}),
    ("IncrementalAlterConfigs", 0, lambda: IncrementalAlterConfigsRequest(resources=[
        IncrementalAlterConfigsRequest.AlterConfigsResource(resource_type=2, resource_name="t", configs=[
            IncrementalAlterConfigsRequest.AlterConfigsResource.AlterableConfig(
                name="segment.bytes", config_operation=0, value="1024")])]),
     {"resources": [{"configs": [{"name": "segment.bytes", "config_operation": 0, "value": "1024"}]}]}),
    ("IncrementalAlterConfigs", 1, lambda: IncrementalAlterConfigsRequest(resources=[], validate_only=True),
     {"validate_only": True}),
    ("DescribeCluster", 0, lambda: DescribeClusterRequest(include_cluster_authorized_operations=True),
     {"include_cluster_authorized_operations": True, "endpoint_type": 1}),
    ("DescribeCluster", 1, lambda: DescribeClusterRequest(endpoint_type=2), {"endpoint_type": 2}),
    # The group coordinator's APIs
    ("FindCoordinator", 0, lambda: FindCoordinatorRequest(key="g"), {"key": "g", "key_type": 0}),
    ("FindCoordinator", 3, lambda: FindCoordinatorRequest(key="tx", key_type=1), {"key": "tx", "key_type": 1}),
    ("FindCoordinator", 4, lambda: FindCoordinatorRequest(key_type=0, coordinator_keys=["g1", "g2"]),
     {"coordinator_keys": ["g1", "g2"], "key": ""}),
    ("JoinGroup", 0, lambda: JoinGroupRequest(group_id="g", session_timeout_ms=10000, member_id="",
                                              protocol_type="consumer", protocols=[
                                                  JoinGroupRequest.JoinGroupRequestProtocol(
                                                      name="range", metadata=b"\x00\x01")]),
     {"group_id": "g", "session_timeout_ms": 10000, "rebalance_timeout_ms": -1, "member_id": "",
      "group_instance_id": None, "protocol_type": "consumer",
      "protocols": [{"name": "range", "metadata": b"\x00\x01"}]}),
    ("JoinGroup", 6, lambda: JoinGroupRequest(group_id="g", session_timeout_ms=1, rebalance_timeout_ms=2,
                                              member_id="m", group_instance_id="i", protocol_type="consumer",
                                              protocols=[]),
     {"rebalance_timeout_ms": 2, "group_instance_id": "i", "reason": None}),
    ("JoinGroup", 9, lambda: JoinGroupRequest(group_id="g", session_timeout_ms=1, rebalance_timeout_ms=2,
                                              member_id="m", protocol_type="consumer", protocols=[],
                                              reason="rejoin"),
     {"reason": "rejoin", "group_instance_id": None}),
    ("SyncGroup", 0, lambda: SyncGroupRequest(group_id="g", generation_id=1, member_id="m", assignments=[
        SyncGroupRequest.SyncGroupRequestAssignment(member_id="m", assignment=b"abc")]),
     {"generation_id": 1, "assignments": [{"member_id": "m", "assignment": b"abc"}]}),
    ("SyncGroup", 5, lambda: SyncGroupRequest(group_id="g", generation_id=2, member_id="m",
                                              protocol_type="consumer", protocol_name="range", assignments=[]),
     {"protocol_type": "consumer", "protocol_name": "range"}),
    ("Heartbeat", 0, lambda: HeartbeatRequest(group_id="g", generation_id=3, member_id="m"),
     {"group_id": "g", "generation_id": 3, "member_id": "m", "group_instance_id": None}),
    ("Heartbeat", 4, lambda: HeartbeatRequest(group_id="g", generation_id=3, member_id="m",
                                              group_instance_id="i"), {"group_instance_id": "i"}),
    ("LeaveGroup", 0, lambda: LeaveGroupRequest(group_id="g", member_id="m"),
     {"group_id": "g", "member_id": "m", "members": []}),
    ("LeaveGroup", 5, lambda: LeaveGroupRequest(group_id="g", members=[
        LeaveGroupRequest.MemberIdentity(member_id="m", group_instance_id=None, reason="bye")]),
     {"member_id": "", "members": [{"member_id": "m", "group_instance_id": None, "reason": "bye"}]}),
    ("OffsetCommit", 2, lambda: OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=1, member_id="m",
                                                    retention_time_ms=-1, topics=[
        OffsetCommitRequest.OffsetCommitRequestTopic(name="t", partitions=[
            OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                partition_index=0, committed_offset=42, committed_metadata="")])]),
     {"generation_id_or_member_epoch": 1, "retention_time_ms": -1, "topics": [{"name": "t", "partitions": [
         {"partition_index": 0, "committed_offset": 42, "committed_metadata": "",
          "committed_leader_epoch": -1, "commit_timestamp": -1}]}]}),
    ("OffsetCommit", 8, lambda: OffsetCommitRequest(group_id="g", generation_id_or_member_epoch=1, member_id="m",
                                                    topics=[
        OffsetCommitRequest.OffsetCommitRequestTopic(name="t", partitions=[
            OffsetCommitRequest.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                partition_index=1, committed_offset=7, committed_leader_epoch=3, committed_metadata=None)])]),
     {"topics": [{"partitions": [{"committed_offset": 7, "committed_leader_epoch": 3,
                                  "committed_metadata": None}]}]}),
    ("OffsetFetch", 1, lambda: OffsetFetchRequest(group_id="g", topics=[
        OffsetFetchRequest.OffsetFetchRequestTopic(name="t", partition_indexes=[0, 1])]),
     {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 1]}], "groups": [],
      "require_stable": False}),
    ("OffsetFetch", 7, lambda: OffsetFetchRequest(group_id="g", topics=None, require_stable=True),
     {"topics": None, "require_stable": True}),
    ("OffsetFetch", 8, lambda: OffsetFetchRequest(groups=[OffsetFetchRequest.OffsetFetchRequestGroup(
        group_id="g", topics=None)], require_stable=False),
     {"group_id": "", "groups": [{"group_id": "g", "topics": None, "member_id": None, "member_epoch": -1}]}),
    ("DeleteGroups", 0, lambda: DeleteGroupsRequest(groups_names=["a"]), {"groups_names": ["a"]}),
    ("DeleteGroups", 2, lambda: DeleteGroupsRequest(groups_names=["a", "b"]), {"groups_names": ["a", "b"]}),
    ("SaslHandshake", 1, lambda: SaslHandshakeRequest(mechanism="PLAIN"), {"mechanism": "PLAIN"}),
]


@pytest.mark.parametrize("api,version,build,expected", REQUEST_CASES,
                         ids=[f"{c[0]}-v{c[1]}" for c in REQUEST_CASES])
def test_kafka_python_request_parses(api, version, build, expected):
    frame = kp_frame(build(), version, correlation_id=1234 + version)
    assert int.from_bytes(frame[:4], "big") == len(frame) - 4
    header, body = parse_request(frame[4:])
    assert header.api_key == ApiKey[_upper(api)]
    assert (header.api_version, header.correlation_id, header.client_id) \
        == (version, 1234 + version, "kp-client")
    subset(expected, body)
    # and our encoding of what we decoded is byte for byte what kafka-python sent
    wire = encode_request(header.api_key, version, header.correlation_id, "kp-client", body)
    assert wire == frame


def _upper(name: str) -> str:
    import re
    return re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", name).upper()


def test_produce_records_are_views_into_the_frame():
    request = PR(transactional_id=None, acks=1, timeout_ms=1, topic_data=[PR.TopicProduceData(
        name="t",
        partition_data=[PR.TopicProduceData.PartitionProduceData(index=0, records=BATCH)])])
    frame = kp_frame(request, 7)[4:]
    _, body = parse_request(frame)
    records = body["topic_data"][0]["partition_data"][0]["records"]
    assert isinstance(records, memoryview) and records.obj is frame
    assert records.tobytes() == BATCH


# -- golden response cases: we encode, kafka-python decodes ---------------------------------------

RESPONSE_CASES = [
    ("ApiVersions", ApiVersionsResponse, 0,
     {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}]},
     {"error_code": 0, "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}]}),
    ("ApiVersions", ApiVersionsResponse, 0,  # an old client asking too high gets v0 with error 35
     {"error_code": ErrorCode.UNSUPPORTED_VERSION, "api_keys": [{"api_key": 3, "min_version": 0, "max_version": 12}]},
     {"error_code": 35, "api_keys": [{"api_key": 3, "min_version": 0, "max_version": 12}]}),
    ("ApiVersions", ApiVersionsResponse, 3,
     {"error_code": 0, "throttle_time_ms": 0, "api_keys": [
         {"api_key": 0, "min_version": 3, "max_version": 9}, {"api_key": 1, "min_version": 4, "max_version": 12}],
      "finalized_features_epoch": 4},
     {"error_code": 0, "throttle_time_ms": 0, "finalized_features_epoch": 4, "api_keys": [
         {"api_key": 0, "min_version": 3, "max_version": 9}, {"api_key": 1, "min_version": 4, "max_version": 12}]}),
    ("Metadata", MetadataResponse, 0,
     {"brokers": [{"node_id": 0, "host": "127.0.0.1", "port": 9092}],
      "topics": [{"error_code": 0, "name": "events", "partitions": [
          {"error_code": 0, "partition_index": 0, "leader_id": 0, "replica_nodes": [0], "isr_nodes": [0]}]}]},
     {"brokers": [{"node_id": 0, "host": "127.0.0.1", "port": 9092}],
      "topics": [{"error_code": 0, "name": "events", "partitions": [
          {"error_code": 0, "partition_index": 0, "leader_id": 0, "replica_nodes": [0], "isr_nodes": [0]}]}]}),
    ("Metadata", MetadataResponse, 9,
     {"throttle_time_ms": 0, "brokers": [{"node_id": 1, "host": "h", "port": 1, "rack": "r"}],
      "cluster_id": "cid", "controller_id": 1, "topics": [{"error_code": 3, "name": "missing", "partitions": []}]},
     {"brokers": [{"node_id": 1, "host": "h", "port": 1, "rack": "r"}], "cluster_id": "cid", "controller_id": 1,
      "topics": [{"error_code": 3, "name": "missing", "is_internal": False, "partitions": []}]}),
    ("Metadata", MetadataResponse, 12,
     {"brokers": [], "cluster_id": None, "topics": [{"error_code": 0, "name": "t", "topic_id": TOPIC_ID,
                                                    "partitions": [{"partition_index": 0, "leader_id": 2,
                                                                    "leader_epoch": 5, "replica_nodes": [2, 3],
                                                                    "isr_nodes": [2], "offline_replicas": [3]}]}]},
     {"cluster_id": None, "controller_id": -1, "topics": [{"name": "t", "topic_id": TOPIC_ID, "partitions": [
         {"leader_id": 2, "leader_epoch": 5, "replica_nodes": [2, 3], "isr_nodes": [2],
          "offline_replicas": [3]}]}]}),
    ("Produce", ProduceResponse, 3,
     {"responses": [{"name": "t", "partition_responses": [{"index": 0, "error_code": 0, "base_offset": 100,
                                                           "log_append_time_ms": -1}]}], "throttle_time_ms": 0},
     {"responses": [{"name": "t", "partition_responses": [{"index": 0, "error_code": 0, "base_offset": 100,
                                                           "log_append_time_ms": -1}]}], "throttle_time_ms": 0}),
    ("Produce", ProduceResponse, 8,
     {"responses": [{"name": "t", "partition_responses": [{
         "index": 1, "error_code": ErrorCode.INVALID_RECORD, "base_offset": -1, "log_start_offset": 0,
         "record_errors": [{"batch_index": 0, "batch_index_error_message": "bad"}], "error_message": "nope"}]}]},
     {"responses": [{"name": "t", "partition_responses": [{
         "index": 1, "error_code": 87, "base_offset": -1, "log_start_offset": 0,
         "record_errors": [{"batch_index": 0, "batch_index_error_message": "bad"}], "error_message": "nope"}]}]}),
    ("Produce", ProduceResponse, 10,
     {"responses": [{"name": "t", "partition_responses": [{
         "index": 0, "error_code": ErrorCode.NOT_LEADER_OR_FOLLOWER, "base_offset": -1,
         "current_leader": {"leader_id": 2, "leader_epoch": 8}}]}],
      "node_endpoints": [{"node_id": 2, "host": "b2", "port": 9093, "rack": None}]},
     {"responses": [{"name": "t", "partition_responses": [{
         "index": 0, "error_code": 6, "current_leader": {"leader_id": 2, "leader_epoch": 8}}]}],
      "node_endpoints": [{"node_id": 2, "host": "b2", "port": 9093, "rack": None}]}),
    ("Fetch", FetchResponse, 4,
     {"throttle_time_ms": 0, "responses": [{"topic": "t", "partitions": [{
         "partition_index": 0, "error_code": 0, "high_watermark": 2, "last_stable_offset": 2,
         "aborted_transactions": None, "records": BATCH}]}]},
     {"responses": [{"topic": "t", "partitions": [{
         "partition_index": 0, "high_watermark": 2, "last_stable_offset": 2, "aborted_transactions": None,
         "records": BATCH}]}]}),
    ("Fetch", FetchResponse, 12,
     {"session_id": 9, "responses": [{"topic": "t", "partitions": [{
         "partition_index": 1, "error_code": ErrorCode.OFFSET_OUT_OF_RANGE, "high_watermark": 10,
         "diverging_epoch": {"epoch": 2, "end_offset": 7}, "aborted_transactions": [
             {"producer_id": 5, "first_offset": 3}], "records": None}]}]},
     {"session_id": 9, "responses": [{"topic": "t", "partitions": [{
         "partition_index": 1, "error_code": 1, "diverging_epoch": {"epoch": 2, "end_offset": 7},
         "aborted_transactions": [{"producer_id": 5, "first_offset": 3}], "records": None}]}]}),
    ("Fetch", FetchResponse, 16,
     {"responses": [{"topic_id": TOPIC_ID, "partitions": [{"partition_index": 0, "records": BATCH}]}],
      "node_endpoints": [{"node_id": 1, "host": "h", "port": 2}]},
     {"responses": [{"topic_id": TOPIC_ID, "partitions": [{"partition_index": 0, "records": BATCH}]}],
      "node_endpoints": [{"node_id": 1, "host": "h", "port": 2, "rack": None}]}),
    ("ListOffsets", ListOffsetsResponse, 1,
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 0, "timestamp": -1,
                                               "offset": 17}]}]},
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 0, "timestamp": -1,
                                               "offset": 17}]}]}),
    ("ListOffsets", ListOffsetsResponse, 6,
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "timestamp": 5, "offset": 3,
                                               "leader_epoch": 1}]}]},
     {"topics": [{"name": "t", "partitions": [{"timestamp": 5, "offset": 3, "leader_epoch": 1}]}]}),
    ("OffsetForLeaderEpoch", OffsetForLeaderEpochResponse, 2,
     {"topics": [{"topic": "t", "partitions": [{"error_code": 0, "partition": 0, "leader_epoch": 3,
                                                "end_offset": 50}]}]},
     {"topics": [{"topic": "t", "partitions": [{"error_code": 0, "partition": 0, "leader_epoch": 3,
                                                "end_offset": 50}]}]}),
    ("OffsetForLeaderEpoch", OffsetForLeaderEpochResponse, 4,
     {"topics": [{"topic": "t", "partitions": [{"error_code": 75, "partition": 2}]}]},
     {"topics": [{"topic": "t", "partitions": [{"error_code": 75, "partition": 2, "leader_epoch": -1,
                                                "end_offset": -1}]}]}),
    ("CreateTopics", CreateTopicsResponse, 2,
     {"topics": [{"name": "a", "error_code": 36, "error_message": "exists"}]},
     {"topics": [{"name": "a", "error_code": 36, "error_message": "exists"}]}),
    ("CreateTopics", CreateTopicsResponse, 7,
     {"topics": [{"name": "a", "topic_id": TOPIC_ID, "error_code": 0, "num_partitions": 3,
                  "replication_factor": 1, "configs": [{"name": "x", "value": None, "read_only": True,
                                                        "config_source": 5, "is_sensitive": False}],
                  "topic_config_error_code": 29}]},
     {"topics": [{"name": "a", "topic_id": TOPIC_ID, "num_partitions": 3, "topic_config_error_code": 29,
                  "configs": [{"name": "x", "value": None, "read_only": True, "config_source": 5}]}]}),
    ("DeleteTopics", DeleteTopicsResponse, 1,
     {"responses": [{"name": "a", "error_code": 0}]}, {"responses": [{"name": "a", "error_code": 0}]}),
    ("DeleteTopics", DeleteTopicsResponse, 6,
     {"responses": [{"name": None, "topic_id": TOPIC_ID, "error_code": 100, "error_message": "?"}]},
     {"responses": [{"name": None, "topic_id": TOPIC_ID, "error_code": 100, "error_message": "?"}]}),
    ("DeleteRecords", DeleteRecordsResponse, 0,
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "low_watermark": 7, "error_code": 0},
                                             {"partition_index": 1, "low_watermark": -1, "error_code": 1}]}]},
     {"throttle_time_ms": 0, "topics": [{"name": "t", "partitions": [
         {"partition_index": 0, "low_watermark": 7, "error_code": 0},
         {"partition_index": 1, "low_watermark": -1, "error_code": 1}]}]}),
    ("DeleteRecords", DeleteRecordsResponse, 2,
     {"throttle_time_ms": 3, "topics": [{"name": "t", "partitions": [
         {"partition_index": 2, "low_watermark": 100, "error_code": 0}]}]},
     {"throttle_time_ms": 3, "topics": [{"name": "t", "partitions": [
         {"partition_index": 2, "low_watermark": 100, "error_code": 0}]}]}),
    ("DescribeConfigs", DescribeConfigsResponse, 1,
     {"results": [{"error_code": 0, "error_message": None, "resource_type": 2, "resource_name": "t", "configs": [
         {"name": "retention.ms", "value": "1000", "read_only": False, "config_source": 1, "is_sensitive": False,
          "synonyms": [{"name": "retention.ms", "value": "1000", "source": 1}]}]}]},
     {"results": [{"resource_name": "t", "configs": [
         {"name": "retention.ms", "value": "1000", "config_source": 1,
          "synonyms": [{"name": "retention.ms", "value": "1000", "source": 1}]}]}]}),
    ("DescribeConfigs", DescribeConfigsResponse, 4,
     {"results": [{"resource_type": 4, "resource_name": "0", "configs": [
         {"name": "log.dirs", "value": "/tmp", "config_type": 2, "documentation": None}]}]},
     {"results": [{"resource_type": 4, "configs": [{"name": "log.dirs", "config_type": 2, "documentation": None}]}]}),
    ("DescribeCluster", DescribeClusterResponse, 0,
     {"cluster_id": "c", "controller_id": 0, "brokers": [{"broker_id": 0, "host": "h", "port": 9092}]},
     {"cluster_id": "c", "controller_id": 0, "brokers": [{"broker_id": 0, "host": "h", "port": 9092, "rack": None}]}),
    ("DescribeCluster", DescribeClusterResponse, 1,
     {"endpoint_type": 1, "cluster_id": "c", "brokers": []},
     {"endpoint_type": 1, "cluster_id": "c", "controller_id": -1, "brokers": []}),
    ("FindCoordinator", FindCoordinatorResponse, 0,
     {"error_code": 0, "node_id": 1, "host": "h", "port": 9092},
     {"error_code": 0, "node_id": 1, "host": "h", "port": 9092}),
    ("FindCoordinator", FindCoordinatorResponse, 4,
     {"coordinators": [{"key": "g", "node_id": 1, "host": "h", "port": 9092, "error_code": 0}]},
     {"coordinators": [{"key": "g", "node_id": 1, "host": "h", "port": 9092, "error_code": 0,
                        "error_message": ""}]}),
    ("JoinGroup", JoinGroupResponse, 0,
     {"error_code": 0, "generation_id": 1, "protocol_name": "range", "leader": "m1", "member_id": "m1",
      "members": [{"member_id": "m1", "metadata": b"\x00"}]},
     {"generation_id": 1, "protocol_name": "range", "leader": "m1", "member_id": "m1",
      "members": [{"member_id": "m1", "metadata": b"\x00"}]}),
    ("JoinGroup", JoinGroupResponse, 7,
     {"error_code": 79, "protocol_type": None, "protocol_name": None, "member_id": "new", "members": []},
     {"error_code": 79, "generation_id": -1, "protocol_type": None, "protocol_name": None, "member_id": "new"}),
    ("SyncGroup", SyncGroupResponse, 0, {"error_code": 0, "assignment": b"xyz"},
     {"error_code": 0, "assignment": b"xyz"}),
    ("SyncGroup", SyncGroupResponse, 5, {"error_code": 27, "protocol_type": "consumer", "assignment": b""},
     {"error_code": 27, "protocol_type": "consumer", "protocol_name": None, "assignment": b""}),
    ("OffsetCommit", OffsetCommitResponse, 2,
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 22}]}]},
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 22}]}]}),
    ("OffsetCommit", OffsetCommitResponse, 8,
     {"throttle_time_ms": 3, "topics": []}, {"throttle_time_ms": 3, "topics": []}),
    ("OffsetFetch", OffsetFetchResponse, 1,
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": -1,
                                               "metadata": "", "error_code": 0}]}]},
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "committed_offset": -1,
                                               "metadata": "", "error_code": 0}]}]}),
    ("OffsetFetch", OffsetFetchResponse, 8,
     {"groups": [{"group_id": "g", "topics": [{"name": "t", "partitions": [
         {"partition_index": 0, "committed_offset": 5, "metadata": None, "error_code": 0}]}], "error_code": 0}]},
     {"groups": [{"group_id": "g", "error_code": 0, "topics": [{"name": "t", "partitions": [
         {"partition_index": 0, "committed_offset": 5, "committed_leader_epoch": -1, "metadata": None}]}]}]}),
    ("ListGroups", ListGroupsResponse, 0,
     {"error_code": 0, "groups": [{"group_id": "g", "protocol_type": "consumer"}]},
     {"error_code": 0, "groups": [{"group_id": "g", "protocol_type": "consumer"}]}),
    ("ListGroups", ListGroupsResponse, 4,
     {"groups": [{"group_id": "g", "protocol_type": "consumer", "group_state": "Stable"}]},
     {"groups": [{"group_id": "g", "group_state": "Stable"}]}),
    ("DescribeGroups", DescribeGroupsResponse, 0,
     {"groups": [{"error_code": 0, "group_id": "g", "group_state": "Stable", "protocol_type": "consumer",
                  "protocol_data": "range", "members": [{"member_id": "m", "client_id": "c", "client_host": "/h",
                                                         "member_metadata": b"md", "member_assignment": b"ma"}]}]},
     {"groups": [{"group_id": "g", "group_state": "Stable", "protocol_data": "range", "members": [
         {"member_id": "m", "client_id": "c", "client_host": "/h", "member_metadata": b"md",
          "member_assignment": b"ma"}]}]}),
]


@pytest.mark.parametrize("api,cls,version,body,expected", RESPONSE_CASES,
                         ids=[f"{c[0]}-v{c[2]}-{i}" for i, c in enumerate(RESPONSE_CASES)])
def test_our_response_decodes_with_kafka_python(api, cls, version, body, expected):
    chunks = encode_response(ApiKey[_upper(api)], version, 777, body)
    wire = b"".join(chunks)
    assert int.from_bytes(wire[:4], "big") == len(wire) - 4
    decoded = cls.decode(wire[4:], version=version, header=True)
    assert decoded.header.correlation_id == 777
    subset(expected, decoded.to_dict(json=False))
    # and kafka-python's encoding of what it decoded parses back to the same values with ours
    decoded.with_header(correlation_id=777)
    again = bytes(decoded.encode(header=True, framed=True))
    correlation_id, ours = parse_response(ApiKey[_upper(api)], version, again[4:])
    assert correlation_id == 777
    subset(body, ours)


def test_api_versions_response_header_is_v0_even_for_flexible_versions():
    wire = b"".join(encode_response(ApiKey.API_VERSIONS, 3, 5, {"api_keys": []}))
    # size, correlation id, then directly the body (error code), no tagged-fields byte
    assert wire[4:8] == (5).to_bytes(4, "big") and wire[8:10] == b"\x00\x00"
    wire = b"".join(encode_response(ApiKey.METADATA, 9, 5, {}))
    assert wire[8] == 0  # the (empty) tagged fields of response header v1


# -- randomized cross-decoding over every shared version -------------------------------------------

KP = kp_classes()
SHARED = [
    (name, v)
    for name, m in sorted(ALL_MESSAGES.items())
    if name in KP
    for v in m.versions
    if v in kp_versions(KP[name])
]


# Inter-broker APIs no client library speaks.
NOT_IN_KAFKA_PYTHON = {"ControlledShutdownRequest", "ControlledShutdownResponse"}
# Share groups (KIP-932) and the consumer group protocol (KIP-848): kafka-python has none of
# their messages.
NOT_IN_KAFKA_PYTHON |= {name for name in ALL_MESSAGES
                        if "Share" in name or "ConsumerGroup" in name}


def test_shared_versions_cover_every_api():
    assert {n for n, _ in SHARED} == {n for n in ALL_MESSAGES if not n.endswith("Header")
                                      and n not in NOT_IN_KAFKA_PYTHON}
    assert not NOT_IN_KAFKA_PYTHON & set(KP)
    assert len(SHARED) > 250


@pytest.mark.parametrize("name,version", SHARED, ids=[f"{n}-v{v}" for n, v in SHARED])
@settings(max_examples=4, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_cross_decoding_with_kafka_python(name, version, data):
    message, cls = ALL_MESSAGES[name], KP[name]
    flexible = message.is_flexible(version)
    body = data.draw(body_strategy(message, version, flexible))
    if name == "ApiVersionsResponse":
        body["error_code"] = 0  # kafka-python reads any error response as v0, as Kafka clients do
    want = present_only(message, body, version, flexible)
    key = ApiKey(message.api_key)

    theirs = to_kp(cls, message, body, version)
    if message.kind == "request":
        frame = kp_frame(theirs, version, correlation_id=99)
        header, ours = parse_request(frame[4:])
        assert (header.api_version, header.correlation_id, header.client_id) \
            == (version, 99, "kp-client")
        wire = encode_request(key, version, 99, "kp-client", body)
        assert wire == frame
    else:
        theirs.with_header(correlation_id=99)
        frame = bytes(theirs.encode(header=True, framed=True))
        correlation_id, ours = parse_response(key, version, frame[4:])
        assert correlation_id == 99
        wire = b"".join(encode_response(key, version, 99, body))
        assert wire == frame
    assert present_only(message, ours, version, flexible) == want
    back = cls.decode(wire[4:], version=version, header=True)
    assert from_kp(back, message, cls._struct, version, flexible) == want
