"""Golden cases for the versions a Kafka 3.9 broker serves and Kafka 4 dropped (KIP-896):
Produce v0-v2, Fetch v0-v3, ListOffsets v0, OffsetCommit v0-v1, OffsetFetch v0.

Requests built and framed by kafka-python parse to the expected bodies and encode back byte
for byte; responses encoded here decode with kafka-python to the expected values; and the
ListOffsets v0 exchange is checked against bytes written out by hand from the protocol guide.
"""

import struct

import pytest
from kafka.protocol.consumer.fetch import FetchRequest, FetchResponse
from kafka.protocol.consumer.group import (
    OffsetCommitRequest,
    OffsetCommitResponse,
    OffsetFetchRequest,
    OffsetFetchResponse,
)
from kafka.protocol.consumer.offsets import ListOffsetsRequest, ListOffsetsResponse
from kafka.protocol.producer.produce import ProduceRequest, ProduceResponse
from protocol_strategies import subset

from broker_lite.protocol import (
    ApiKey,
    encode_request,
    encode_response,
    parse_request,
    parse_response,
)
from broker_lite.records import build_message_set

V0_SET = build_message_set([(b"k", b"v"), (None, b"w")], magic=0)
V1_SET = build_message_set([(b"k", b"v")], magic=1, timestamp=1_700_000_000_000)
PR, FR, LR = ProduceRequest, FetchRequest, ListOffsetsRequest
OCR, OFR = OffsetCommitRequest, OffsetFetchRequest


def kp_frame(request, version: int) -> bytes:
    request.with_header(correlation_id=9, client_id="old-client")
    return bytes(request.encode(version=version, header=True, framed=True))


REQUESTS = [
    (ApiKey.PRODUCE, 0, lambda: PR(acks=1, timeout_ms=1000, topic_data=[PR.TopicProduceData(
        name="t", partition_data=[PR.TopicProduceData.PartitionProduceData(index=0,
                                                                           records=V0_SET)])]),
     {"transactional_id": None, "acks": 1, "timeout_ms": 1000, "topic_data": [
         {"name": "t", "partition_data": [{"index": 0, "records": V0_SET}]}]}),
    (ApiKey.PRODUCE, 2, lambda: PR(acks=-1, timeout_ms=5, topic_data=[PR.TopicProduceData(
        name="t", partition_data=[PR.TopicProduceData.PartitionProduceData(index=3,
                                                                           records=V1_SET)])]),
     {"acks": -1, "topic_data": [{"name": "t", "partition_data": [
         {"index": 3, "records": V1_SET}]}]}),
    (ApiKey.FETCH, 0, lambda: FR(replica_id=-1, max_wait_ms=100, min_bytes=1, topics=[
        FR.FetchTopic(topic="t", partitions=[FR.FetchTopic.FetchPartition(
            partition=0, fetch_offset=5, partition_max_bytes=1024)])]),
     {"replica_id": -1, "max_wait_ms": 100, "min_bytes": 1, "max_bytes": 2**31 - 1,
      "isolation_level": 0, "topics": [{"topic": "t", "partitions": [
          {"partition": 0, "fetch_offset": 5, "partition_max_bytes": 1024}]}]}),
    (ApiKey.FETCH, 3, lambda: FR(replica_id=-1, max_wait_ms=100, min_bytes=1, max_bytes=4096,
                                 topics=[]),
     {"max_bytes": 4096, "topics": []}),
    (ApiKey.LIST_OFFSETS, 0, lambda: LR(replica_id=-1, topics=[LR.ListOffsetsTopic(
        name="t", partitions=[LR.ListOffsetsTopic.ListOffsetsPartition(
            partition_index=1, timestamp=-1, max_num_offsets=3)])]),
     {"replica_id": -1, "topics": [{"name": "t", "partitions": [
         {"partition_index": 1, "timestamp": -1, "max_num_offsets": 3}]}]}),
    (ApiKey.OFFSET_COMMIT, 0, lambda: OCR(group_id="g", topics=[OCR.OffsetCommitRequestTopic(
        name="t", partitions=[OCR.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
            partition_index=0, committed_offset=42, committed_metadata="m")])]),
     {"group_id": "g", "generation_id_or_member_epoch": -1, "member_id": "", "topics": [
         {"name": "t", "partitions": [{"partition_index": 0, "committed_offset": 42,
                                       "committed_metadata": "m", "commit_timestamp": -1}]}]}),
    (ApiKey.OFFSET_COMMIT, 1, lambda: OCR(
        group_id="g", generation_id_or_member_epoch=3, member_id="m1", topics=[
            OCR.OffsetCommitRequestTopic(name="t", partitions=[
                OCR.OffsetCommitRequestTopic.OffsetCommitRequestPartition(
                    partition_index=0, committed_offset=7, commit_timestamp=1234,
                    committed_metadata="")])]),
     {"generation_id_or_member_epoch": 3, "member_id": "m1", "topics": [
         {"name": "t", "partitions": [{"committed_offset": 7, "commit_timestamp": 1234}]}]}),
    (ApiKey.OFFSET_FETCH, 0, lambda: OFR(group_id="g", topics=[OFR.OffsetFetchRequestTopic(
        name="t", partition_indexes=[0, 2])]),
     {"group_id": "g", "topics": [{"name": "t", "partition_indexes": [0, 2]}]}),
]


@pytest.mark.parametrize("key,version,build,expected", REQUESTS,
                         ids=[f"{k.name}-v{v}" for k, v, _, _ in REQUESTS])
def test_kafka_python_legacy_request_parses_and_reencodes(key, version, build, expected):
    frame = kp_frame(build(), version)
    header, body = parse_request(frame[4:])
    assert (header.api_key, header.api_version, header.client_id) == (key, version, "old-client")
    subset(expected, body)
    assert encode_request(key, version, 9, "old-client", body) == frame


RESPONSES = [
    (ApiKey.PRODUCE, ProduceResponse, 0,
     {"responses": [{"name": "t", "partition_responses": [
         {"index": 0, "error_code": 2, "base_offset": -1}]}]},
     {"responses": [{"name": "t", "partition_responses": [
         {"index": 0, "error_code": 2, "base_offset": -1}]}]}),
    (ApiKey.PRODUCE, ProduceResponse, 2,
     {"throttle_time_ms": 0, "responses": [{"name": "t", "partition_responses": [
         {"index": 0, "error_code": 0, "base_offset": 10, "log_append_time_ms": 99}]}]},
     {"throttle_time_ms": 0, "responses": [{"name": "t", "partition_responses": [
         {"base_offset": 10, "log_append_time_ms": 99}]}]}),
    (ApiKey.FETCH, FetchResponse, 0,
     {"responses": [{"topic": "t", "partitions": [
         {"partition_index": 0, "error_code": 0, "high_watermark": 2, "records": V0_SET}]}]},
     {"responses": [{"topic": "t", "partitions": [
         {"partition_index": 0, "high_watermark": 2, "records": V0_SET}]}]}),
    (ApiKey.FETCH, FetchResponse, 3,
     {"throttle_time_ms": 0, "responses": [{"topic": "t", "partitions": [
         {"partition_index": 0, "error_code": 35, "high_watermark": -1, "records": b""}]}]},
     {"responses": [{"topic": "t", "partitions": [{"error_code": 35, "high_watermark": -1}]}]}),
    (ApiKey.LIST_OFFSETS, ListOffsetsResponse, 0,
     {"topics": [{"name": "t", "partitions": [
         {"partition_index": 1, "error_code": 0, "old_style_offsets": [9, 4, 0]}]}]},
     {"topics": [{"name": "t", "partitions": [
         {"partition_index": 1, "old_style_offsets": [9, 4, 0]}]}]}),
    (ApiKey.OFFSET_COMMIT, OffsetCommitResponse, 0,
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 12}]}]},
     {"topics": [{"name": "t", "partitions": [{"partition_index": 0, "error_code": 12}]}]}),
    (ApiKey.OFFSET_FETCH, OffsetFetchResponse, 0,
     {"topics": [{"name": "t", "partitions": [
         {"partition_index": 0, "committed_offset": 42, "metadata": "", "error_code": 0}]}]},
     {"topics": [{"name": "t", "partitions": [
         {"partition_index": 0, "committed_offset": 42, "metadata": ""}]}]}),
]


@pytest.mark.parametrize("key,cls,version,body,expected", RESPONSES,
                         ids=[f"{k.name}-v{v}" for k, _, v, _, _ in RESPONSES])
def test_legacy_response_decodes_with_kafka_python(key, cls, version, body, expected):
    wire = b"".join(encode_response(key, version, 5, body))
    decoded = cls.decode(wire[4:], version=version, header=True)
    subset(expected, decoded.to_dict(json=False))
    decoded.with_header(correlation_id=5)
    again = bytes(decoded.encode(header=True, framed=True))
    assert parse_response(key, version, again[4:]) == (5, parse_response(key, version,
                                                                         wire[4:])[1])


def test_list_offsets_v0_golden_bytes():
    # The protocol guide's ListOffsets Request (Version: 0): replica_id [topics: name
    # [partitions: partition_index timestamp max_num_offsets]], after the request header v1.
    body = {"replica_id": -1, "topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "timestamp": -2, "max_num_offsets": 1}]}]}
    wire = encode_request(ApiKey.LIST_OFFSETS, 0, 7, "c", body)
    header = struct.pack(">hhih", 2, 0, 7, 1) + b"c"
    payload = (struct.pack(">i", -1) + struct.pack(">i", 1) + struct.pack(">h", 1) + b"t"
               + struct.pack(">i", 1) + struct.pack(">iqi", 0, -2, 1))
    assert wire == struct.pack(">i", len(header + payload)) + header + payload
    # Response (Version: 0): [topics: name [partitions: partition_index error_code
    # [old_style_offsets]]], after the response header v0 (the correlation id).
    response = {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "error_code": 0, "old_style_offsets": [5, 0]}]}]}
    out = b"".join(encode_response(ApiKey.LIST_OFFSETS, 0, 7, response))
    payload = (struct.pack(">i", 7) + struct.pack(">i", 1) + struct.pack(">h", 1) + b"t"
               + struct.pack(">i", 1) + struct.pack(">ih", 0, 0) + struct.pack(">iqq", 2, 5, 0))
    assert out == struct.pack(">i", len(payload)) + payload
