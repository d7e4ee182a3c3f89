"""Golden bytes of DescribeAcls (29), CreateAcls (30) and DeleteAcls (31): each request and
response in a classic (v0, v1) and a flexible (v2, v3) version, the expected bytes written out
field by field here, and kafka-python (an implementation nobody here wrote) encoding the
requests its clients send and decoding our responses."""

import struct

import pytest
from kafka.protocol.admin.acl import (
    CreateAclsRequest,
    CreateAclsResponse,
    DeleteAclsRequest,
    DeleteAclsResponse,
    DescribeAclsRequest,
    DescribeAclsResponse,
)

from broker_lite.protocol import ApiKey, encode_request, encode_response, parse_request
from broker_lite.protocol import parse_response as parse_ours


def i8(v):
    return struct.pack(">b", v)


def i16(v):
    return struct.pack(">h", v)


def i32(v):
    return struct.pack(">i", v)


def string(s):  # classic: int16 length, -1 for null
    return i16(-1) if s is None else i16(len(s)) + s.encode()


def cstring(s):  # compact: unsigned varint length + 1, 0 for null (short strings: one byte)
    return b"\x00" if s is None else bytes([len(s) + 1]) + s.encode()


def array(items):  # classic: int32 count
    return i32(len(items)) + b"".join(items)


def carray(items):  # compact: count + 1
    return bytes([len(items) + 1]) + b"".join(items)


TAGS = b"\x00"  # no tagged fields


def request_header(api_key, version, flexible):
    header = i16(api_key) + i16(version) + i32(9) + string("kpy")
    return header + TAGS if flexible else header


def frame(payload):
    return i32(len(payload)) + payload


CREATION = {"resource_type": 2, "resource_name": "events", "resource_pattern_type": 4,
            "principal": "User:alice", "host": "*", "operation": 3, "permission_type": 3}
FILTER = {"resource_type_filter": 2, "resource_name_filter": None, "pattern_type_filter": 2,
          "principal_filter": "User:alice", "host_filter": None, "operation": 1,
          "permission_type": 1}


def creation_bytes(version):
    s = string if version < 2 else cstring
    body = i8(2) + s("events") + (i8(4) if version >= 1 else b"") + s("User:alice") + s("*") \
        + i8(3) + i8(3)
    return body + (TAGS if version >= 2 else b"")


def filter_bytes(version, pattern_type=2):
    s = string if version < 2 else cstring
    body = i8(2) + s(None) + (i8(pattern_type) if version >= 1 else b"") + s("User:alice") \
        + s(None) + i8(1) + i8(1)
    return body + (TAGS if version >= 2 else b"")


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_create_acls_request_bytes(version):
    # v0 has no pattern type: LITERAL (3), its default
    creation = dict(CREATION, resource_pattern_type=3 if version == 0 else 4)
    expected = request_header(30, version, version >= 2) + (
        array([creation_bytes(version)]) if version < 2
        else carray([creation_bytes(version)]) + TAGS)
    wire = encode_request(ApiKey.CREATE_ACLS, version, 9, "kpy", {"creations": [creation]})
    assert wire == frame(expected)
    header, body = parse_request(memoryview(wire)[4:])
    assert header.api_key == 30 and body["creations"] == [creation]


@pytest.mark.parametrize("version", [1, 3])
def test_describe_acls_request_bytes(version):
    payload = filter_bytes(version)
    expected = request_header(29, version, version >= 2) + payload
    wire = encode_request(ApiKey.DESCRIBE_ACLS, version, 9, "kpy", FILTER)
    assert wire == frame(expected)
    assert parse_request(memoryview(wire)[4:])[1] == FILTER


@pytest.mark.parametrize("version", [1, 2])
def test_delete_acls_request_bytes(version):
    items = [filter_bytes(version)]
    expected = request_header(31, version, version >= 2) + (
        array(items) if version < 2 else carray(items) + TAGS)
    wire = encode_request(ApiKey.DELETE_ACLS, version, 9, "kpy", {"filters": [FILTER]})
    assert wire == frame(expected)


def response_header(flexible):
    return i32(9) + (TAGS if flexible else b"")


def test_describe_acls_response_bytes_v1_and_v2():
    body = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": [
        {"resource_type": 3, "resource_name": "etl-", "pattern_type": 4, "acls": [
            {"principal": "User:*", "host": "*", "operation": 3, "permission_type": 3}]}]}
    v1 = response_header(False) + i32(0) + i16(0) + string(None) + array([
        i8(3) + string("etl-") + i8(4) + array([
            string("User:*") + string("*") + i8(3) + i8(3)])])
    assert b"".join(encode_response(ApiKey.DESCRIBE_ACLS, 1, 9, body)) == frame(v1)
    v2 = response_header(True) + i32(0) + i16(0) + cstring(None) + carray([
        i8(3) + cstring("etl-") + i8(4) + carray([
            cstring("User:*") + cstring("*") + i8(3) + i8(3) + TAGS]) + TAGS]) + TAGS
    assert b"".join(encode_response(ApiKey.DESCRIBE_ACLS, 2, 9, body)) == frame(v2)
    assert parse_ours(ApiKey.DESCRIBE_ACLS, 2, frame(v2)[4:])[1] == body


def test_create_and_delete_acls_response_bytes_v0():
    created = {"throttle_time_ms": 5, "results": [
        {"error_code": 0, "error_message": None},
        {"error_code": 42, "error_message": "Invalid empty resource name"}]}
    expected = response_header(False) + i32(5) + array([
        i16(0) + string(None), i16(42) + string("Invalid empty resource name")])
    assert b"".join(encode_response(ApiKey.CREATE_ACLS, 0, 9, created)) == frame(expected)
    deleted = {"throttle_time_ms": 0, "filter_results": [
        {"error_code": 0, "error_message": None, "matching_acls": [
            {"error_code": 0, "error_message": None, "resource_type": 2,
             "resource_name": "events", "pattern_type": 3, "principal": "User:alice",
             "host": "*", "operation": 3, "permission_type": 3}]}]}
    expected = response_header(False) + i32(0) + array([i16(0) + string(None) + array([
        i16(0) + string(None) + i8(2) + string("events") + string("User:alice") + string("*")
        + i8(3) + i8(3)])])  # v0: no pattern type
    assert b"".join(encode_response(ApiKey.DELETE_ACLS, 0, 9, deleted)) == frame(expected)


# -- kafka-python, both directions -----------------------------------------------------------


def test_kafka_python_requests_parse():
    request = CreateAclsRequest(creations=[CreateAclsRequest.AclCreation(**CREATION)])
    request.with_header(correlation_id=3, client_id="kp")
    header, body = parse_request(bytes(request.encode(version=3, header=True, framed=True))[4:])
    assert (header.api_key, header.api_version) == (30, 3) and body["creations"] == [CREATION]
    request = DeleteAclsRequest(filters=[DeleteAclsRequest.DeleteAclsFilter(**FILTER)])
    request.with_header(correlation_id=3, client_id="kp")
    _, body = parse_request(bytes(request.encode(version=1, header=True, framed=True))[4:])
    assert body["filters"] == [FILTER]
    request = DescribeAclsRequest(**FILTER)
    request.with_header(correlation_id=3, client_id="kp")
    _, body = parse_request(bytes(request.encode(version=2, header=True, framed=True))[4:])
    assert body == FILTER


@pytest.mark.parametrize("version", [0, 1, 2, 3])
def test_kafka_python_decodes_our_responses(version):
    pattern = {"pattern_type": 3} if version >= 1 else {}
    described = {"throttle_time_ms": 0, "error_code": 0, "error_message": None, "resources": [
        {"resource_type": 4, "resource_name": "kafka-cluster", **pattern, "acls": [
            {"principal": "User:admin", "host": "10.0.0.1", "operation": 7,
             "permission_type": 2}]}]}
    wire = b"".join(encode_response(ApiKey.DESCRIBE_ACLS, version, 9, described))
    decoded = DescribeAclsResponse.decode(wire[4:], version=version, header=True)
    resource = decoded.resources[0]
    assert (resource.resource_type, resource.resource_name) == (4, "kafka-cluster")
    acl = resource.acls[0]
    assert (acl.principal, acl.host, acl.operation, acl.permission_type) == \
        ("User:admin", "10.0.0.1", 7, 2)
    created = {"throttle_time_ms": 0, "results": [{"error_code": 0, "error_message": None}]}
    wire = b"".join(encode_response(ApiKey.CREATE_ACLS, version, 9, created))
    decoded = CreateAclsResponse.decode(wire[4:], version=version, header=True)
    assert decoded.results[0].error_code == 0
    deleted = {"throttle_time_ms": 0, "filter_results": [
        {"error_code": 54, "error_message": "No Authorizer is configured.", "matching_acls": []}]}
    wire = b"".join(encode_response(ApiKey.DELETE_ACLS, version, 9, deleted))
    decoded = DeleteAclsResponse.decode(wire[4:], version=version, header=True)
    assert (decoded.filter_results[0].error_code, decoded.filter_results[0].error_message) == \
        (54, "No Authorizer is configured.")
