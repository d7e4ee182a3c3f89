"""Frames, headers, primitive types and error reporting, as tables of cases both ways.

The golden frames here are built byte by byte with :mod:`struct` from the protocol's layout, so
they do not depend on the codec under test (nor on kafka-python).
"""

from __future__ import annotations

import struct
import tracemalloc
import uuid

import pytest
from protocol_strategies import subset

from broker_lite.protocol import (
    API_SCHEMAS,
    ApiKey,
    EncodeError,
    ErrorCode,
    InvalidRequestError,
    ProtocolError,
    Reader,
    RequestHeader,
    UnknownApiError,
    UnsupportedVersionError,
    Writer,
    encode_request,
    encode_response,
    parse_request,
    parse_request_header,
    parse_response,
    request_header_version,
    response_header_version,
)
from broker_lite.protocol.types import INLINE_RECORDS_LIMIT


def i8(v): return struct.pack(">b", v)
def i16(v): return struct.pack(">h", v)
def i32(v): return struct.pack(">i", v)
def i64(v): return struct.pack(">q", v)
def string(s): return i16(len(s)) + s.encode()
def cstring(s): return bytes([len(s) + 1]) + s.encode()  # compact, short strings only
def framed(b): return i32(len(b)) + b


# -- golden frames, built by hand ------------------------------------------------------------------

GOLDEN_REQUESTS = [
    # ApiVersions v0: header v1, empty body
    (framed(i16(18) + i16(0) + i32(1) + string("cli")),
     RequestHeader(18, 0, 1, "cli"), {"client_software_name": "", "client_software_version": ""}),
    # ApiVersions v3: header v2 (client id still int16-length), tagged fields, compact strings
    (framed(i16(18) + i16(3) + i32(2) + string("cli") + b"\x00"
            + cstring("kpy") + cstring("0.1") + b"\x00"),
     RequestHeader(18, 3, 2, "cli"),
     {"client_software_name": "kpy", "client_software_version": "0.1"}),
    # Metadata v1 with a null client id and a null topic list (all topics)
    (framed(i16(3) + i16(1) + i32(3) + i16(-1) + i32(-1)),
     RequestHeader(3, 1, 3, None), {"topics": None, "allow_auto_topic_creation": True}),
    # Metadata v9: compact array of one topic, compact string, 3 bools, tagged sections
    (framed(i16(3) + i16(9) + i32(4) + string("c") + b"\x00"
            + b"\x02" + cstring("events") + b"\x00" + b"\x00" + b"\x01\x00" + b"\x00"),
     RequestHeader(3, 9, 4, "c"),
     {"topics": [{"name": "events", "topic_id": uuid.UUID(int=0)}],
      "allow_auto_topic_creation": False, "include_topic_authorized_operations": False}),
    # Produce v3: transactional id null, acks -1, timeout, one topic, one partition, records
    (framed(i16(0) + i16(3) + i32(5) + string("p") + i16(-1) + i16(-1) + i32(1000)
            + i32(1) + string("t") + i32(1) + i32(0) + i32(3) + b"abc"),
     RequestHeader(0, 3, 5, "p"),
     {"transactional_id": None, "acks": -1, "timeout_ms": 1000,
      "topic_data": [{"name": "t", "partition_data": [{"index": 0, "records": b"abc"}]}]}),
    # Fetch v12: cluster id as tagged field 0 in the top-level section
    (framed(i16(1) + i16(12) + i32(6) + string("f") + b"\x00"
            + i32(-1) + i32(500) + i32(1) + i32(1024) + i8(0) + i32(0) + i32(-1)
            + b"\x01" + b"\x01" + cstring("")  # no topics, no forgotten topics, rack id ""
            + b"\x01" + b"\x00" + bytes([3]) + cstring("c1")),  # 1 tagged field: tag 0, 3 bytes
     RequestHeader(1, 12, 6, "f"),
     {"cluster_id": "c1", "replica_id": -1, "max_wait_ms": 500, "min_bytes": 1, "max_bytes": 1024,
      "topics": [], "forgotten_topics_data": [], "rack_id": ""}),
]


@pytest.mark.parametrize("frame,header,body", GOLDEN_REQUESTS, ids=lambda x: None)
def test_golden_request_frames(frame, header, body):
    got_header, got_body = parse_request(frame[4:])
    assert got_header == header
    subset(body, got_body)
    assert encode_request(header.api_key, header.api_version, header.correlation_id,
                          header.client_id, got_body) == frame


GOLDEN_RESPONSES = [
    # ApiVersions v3: header v0 (no tagged fields) even though the body is flexible
    (ApiKey.API_VERSIONS, 3, 9, {"api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3}]},
     i32(9) + i16(0) + b"\x02" + i16(18) + i16(0) + i16(3) + b"\x00" + i32(0) + b"\x00"),
    # ApiVersions v0
    (ApiKey.API_VERSIONS, 0, 9, {"error_code": 35, "api_keys": []}, i32(9) + i16(35) + i32(0)),
    # Heartbeat v4: header v1 (tagged fields), throttle, error, tagged fields
    (ApiKey.HEARTBEAT, 4, 10, {"error_code": 27}, i32(10) + b"\x00" + i32(0) + i16(27) + b"\x00"),
    # Heartbeat v0: error code only
    (ApiKey.HEARTBEAT, 0, 10, {"error_code": 25}, i32(10) + i16(25)),
    # FindCoordinator v0
    (ApiKey.FIND_COORDINATOR, 0, 11, {"node_id": 1, "host": "h", "port": 9092},
     i32(11) + i16(0) + i32(1) + string("h") + i32(9092)),
    # ListOffsets v0 with its old-style offset array
    (ApiKey.LIST_OFFSETS, 0, 12, {"topics": [{"name": "t", "partitions": [
        {"partition_index": 0, "old_style_offsets": [5, 0]}]}]},
     i32(12) + i32(1) + string("t") + i32(1) + i32(0) + i16(0) + i32(2) + i64(5) + i64(0)),
]


@pytest.mark.parametrize("api_key,version,corr,body,payload", GOLDEN_RESPONSES, ids=lambda x: None)
def test_golden_response_frames(api_key, version, corr, body, payload):
    wire = b"".join(encode_response(api_key, version, corr, body))
    assert wire == framed(payload)
    correlation_id, decoded = parse_response(api_key, version, wire[4:])
    assert correlation_id == corr
    subset(body, decoded)


# -- header versions and errors --------------------------------------------------------------------

@pytest.mark.parametrize("api_key,version,request_hv,response_hv", [
    (ApiKey.PRODUCE, 8, 1, 0), (ApiKey.PRODUCE, 9, 2, 1),
    (ApiKey.FETCH, 11, 1, 0), (ApiKey.FETCH, 12, 2, 1),
    (ApiKey.API_VERSIONS, 2, 1, 0), (ApiKey.API_VERSIONS, 3, 2, 0), (ApiKey.API_VERSIONS, 9, 2, 0),
    (ApiKey.DESCRIBE_CLUSTER, 0, 2, 1), (ApiKey.SASL_HANDSHAKE, 1, 1, 0),
    (ApiKey.OFFSET_DELETE, 0, 1, 0),
])
def test_header_versions(api_key, version, request_hv, response_hv):
    assert request_header_version(api_key, version) == request_hv
    assert response_header_version(api_key, version) == response_hv


def test_unsupported_version_is_raised_after_the_header_is_read():
    # ApiVersions v7 from a newer client: flexible header v2 (with a tagged field in it)
    frame = i16(18) + i16(7) + i32(77) + string("new") + b"\x01\x05\x01z" + b"garbage"
    with pytest.raises(UnsupportedVersionError) as info:
        parse_request_header(frame)
    assert info.value.correlation_id == 77
    assert info.value.header == RequestHeader(ApiKey.API_VERSIONS, 7, 77, "new")
    assert info.value.api_key == 18 and info.value.version == 7
    assert info.value.error_code == ErrorCode.UNSUPPORTED_VERSION
    with pytest.raises(UnsupportedVersionError):
        parse_request(frame)
    with pytest.raises(UnsupportedVersionError):
        parse_request_header(i16(3) + i16(-1) + i32(1) + string("x"))


def test_headers_of_versions_no_spec_defines_are_read_alike_every_time():
    # The header's shape is looked up per (API, version) and kept only for versions the specs
    # define: a client sending every possible version gets the same error each time and does
    # not grow what the broker keeps.
    from broker_lite.protocol import framing

    for version in (7, 8, 300, 32767, -5):
        for _ in range(2):
            with pytest.raises(UnsupportedVersionError) as info:
                parse_request_header(i16(18) + i16(version) + i32(5) + string("c") + b"\0")
            assert info.value.version == version
    assert not [key for key in framing._HEADER_SHAPES if key[1] > 4 and key[0] == 18]
    header, _ = parse_request_header(i16(18) + i16(3) + i32(6) + string("c") + b"\0")
    assert header == RequestHeader(ApiKey.API_VERSIONS, 3, 6, "c")
    assert (18, 3) in framing._HEADER_SHAPES


def test_unknown_api_carries_the_correlation_id():
    with pytest.raises(UnknownApiError) as info:
        parse_request(i16(ApiKey.LEADER_AND_ISR) + i16(0) + i32(5) + string("x"))
    assert (info.value.api_key, info.value.correlation_id) == (4, 5)
    with pytest.raises(UnknownApiError):
        parse_request(i16(999) + i16(0) + i32(5))
    with pytest.raises(UnknownApiError):
        encode_response(999, 0, 1, {})


def test_header_offset_and_header_tagged_fields():
    frame = i16(3) + i16(12) + i32(8) + string("x") + b"\x01\x00\x02hi" + b"body"
    header, offset = parse_request_header(frame)
    assert header == RequestHeader(3, 12, 8, "x") and frame[offset:] == b"body"


@pytest.mark.parametrize("frame", [
    b"", b"\x00", i16(3) + i16(1), i16(3) + i16(1) + i32(1),  # no client id
    i16(3) + i16(1) + i32(1) + i16(10) + b"short",
    i16(3) + i16(9) + i32(1) + string("c"),  # flexible header without its tagged fields
])
def test_truncated_headers(frame):
    with pytest.raises(InvalidRequestError):
        parse_request_header(frame)


def test_errors_name_the_field_and_the_position():
    # Metadata v1: one topic whose name claims 50 bytes
    frame = i16(3) + i16(1) + i32(1) + string("c") + i32(1) + i16(50) + b"ab"
    with pytest.raises(InvalidRequestError) as info:
        parse_request(frame)
    assert info.value.path == "topics[0].name"
    assert info.value.position == 2 + 2 + 4 + 3 + 4
    assert "topics[0].name" in str(info.value) and "position 15" in str(info.value)
    assert isinstance(info.value, ValueError) and info.value.error_code == ErrorCode.INVALID_REQUEST


def test_non_nullable_null_is_an_error():
    frame = i16(3) + i16(0) + i32(1) + string("c") + i32(-1)  # Metadata v0 topics cannot be null
    with pytest.raises(InvalidRequestError, match="non-nullable"):
        parse_request(frame)


def test_encode_errors_name_the_field():
    with pytest.raises(EncodeError) as info:
        encode_request(ApiKey.METADATA, 0, 1, "c", {"topics": None})
    assert info.value.path == "topics"
    with pytest.raises(EncodeError) as info:
        encode_request(ApiKey.METADATA, 1, 1, "c", {"topics": [{"name": None}]})
    assert info.value.path == "topics[0].name"
    with pytest.raises(EncodeError) as info:
        encode_response(ApiKey.HEARTBEAT, 0, 1, {"error_code": 1 << 20})
    assert info.value.path == "error_code"
    with pytest.raises(EncodeError):
        encode_response(ApiKey.METADATA, 1, 1, {"topics": ["not a dict"]})
    with pytest.raises(UnsupportedVersionError):
        encode_response(ApiKey.METADATA, 13, 1, {})
    with pytest.raises(UnsupportedVersionError):
        encode_request(ApiKey.METADATA, 13, 1, None, {})


# -- records: zero copy both ways ------------------------------------------------------------------

def _produce_frame(records: bytes, version: int) -> bytes:
    return encode_request(ApiKey.PRODUCE, version, 1, "p", {
        "acks": 1, "timeout_ms": 1, "topic_data": [{"name": "t", "partition_data": [
            {"index": 0, "records": records}]}]})


@pytest.mark.parametrize("version", [3, 9, 11])
def test_a_one_mib_record_set_is_not_copied_on_decode(version):
    records = bytes(range(256)) * 4096  # 1 MiB
    frame = _produce_frame(records, version)[4:]
    tracemalloc.start()
    try:
        _, body = parse_request(frame)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    value = body["topic_data"][0]["partition_data"][0]["records"]
    assert isinstance(value, memoryview)
    assert value.obj is frame  # a view into the input
    assert value.nbytes == len(records) and value[:4].tobytes() == records[:4]
    assert peak < 64 * 1024


class FileRegion:
    """Stands for a segment slice that the network layer sends with sendfile."""

    def __init__(self, size: int):
        self.size = size


@pytest.mark.parametrize("version", [4, 11, 12, 16])
def test_large_and_file_region_records_are_emitted_as_chunks_of_their_own(version):
    big = memoryview(bytearray(2 * INLINE_RECORDS_LIMIT))
    region = FileRegion(12345)
    body = {"responses": [{"topic": "t", "topic_id": uuid.uuid4(), "partitions": [
        {"partition_index": 0, "records": big}, {"partition_index": 1, "records": region},
        {"partition_index": 2, "records": b"tiny"}, {"partition_index": 3, "records": None}]}]}
    chunks = encode_response(ApiKey.FETCH, version, 3, body)
    assert any(c is big for c in chunks) and any(c is region for c in chunks)
    assert all(isinstance(c, bytes) for c in chunks if c is not big and c is not region)
    total = sum(c.size if c is region else len(c) for c in chunks)
    assert int.from_bytes(chunks[0][:4], "big") == total - 4
    # the length prefix right before the region is its size (int32, or uvarint size+1)
    before = chunks[chunks.index(region) - 1]
    if version >= 12:
        assert before.endswith(bytes([0xBA, 0x60]))  # 12346 as an unsigned varint
    else:
        assert before.endswith(i32(12345))


def test_records_of_the_wrong_kind_are_refused():
    with pytest.raises(EncodeError):
        encode_response(ApiKey.FETCH, 4, 1, {"responses": [{"topic": "t", "partitions": [
            {"partition_index": 0, "records": object()}]}]})
    with pytest.raises(EncodeError):
        encode_request(ApiKey.PRODUCE, 3, 1, None, {"topic_data": [{"name": "t", "partition_data": [
            {"index": 0, "records": FileRegion(5)}]}]})


# -- primitive types -------------------------------------------------------------------------------

PRIMITIVES = [
    ("bool", True, b"\x01"), ("bool", False, b"\x00"),
    ("int8", -2, b"\xfe"), ("int16", -2, b"\xff\xfe"), ("uint16", 65535, b"\xff\xff"),
    ("int32", 1, b"\x00\x00\x00\x01"), ("uint32", 4294967295, b"\xff\xff\xff\xff"),
    ("int64", -1, b"\xff" * 8), ("float64", 1.5, struct.pack(">d", 1.5)),
    ("uuid", uuid.UUID(int=1), b"\x00" * 15 + b"\x01"), ("uuid", uuid.UUID(int=0), b"\x00" * 16),
    ("unsigned_varint", 300, b"\xac\x02"), ("varint", -1, b"\x01"),
    ("varlong", 1 << 40, b"\x80\x80\x80\x80\x80\x40"),
    ("string", "ü", b"\x00\x02\xc3\xbc"), ("nullable_string", None, b"\xff\xff"),
    ("compact_string", "", b"\x01"), ("compact_nullable_string", None, b"\x00"),
    ("bytes", b"ab", b"\x00\x00\x00\x02ab"), ("nullable_bytes", None, b"\xff\xff\xff\xff"),
    ("compact_bytes", b"ab", b"\x03ab"), ("compact_nullable_bytes", None, b"\x00"),
    ("records", None, b"\xff\xff\xff\xff"), ("compact_records", None, b"\x00"),
]


@pytest.mark.parametrize("kind,value,data", PRIMITIVES,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(PRIMITIVES)])
def test_primitives_both_ways(kind, value, data):
    w = Writer()
    getattr(w, kind)(value)
    assert w.getvalue() == data
    r = Reader(data)
    assert getattr(r, kind)() == value
    assert r.remaining() == 0
    r = Reader(data[:-1])
    with pytest.raises(InvalidRequestError):
        getattr(r, kind)()


@pytest.mark.parametrize("kind,data", [
    ("string", b"\x7f\xff"), ("bytes", b"\x7f\xff\xff\xff"), ("records", b"\x7f\xff\xff\xff"),
    ("compact_bytes", b"\xff\xff\xff\xff\x0f"), ("string", b"\xff\xfe"),
    ("bytes", b"\xff\xff\xff\xfe"),
    ("compact_string", b"\x00"), ("string", b"\x00\x02\xff\xfe"), ("unsigned_varint", b"\xff" * 6),
    ("uuid", b"\x00" * 15),
])
def test_bad_primitives_raise_protocol_errors(kind, data):
    with pytest.raises(InvalidRequestError):
        getattr(Reader(data), kind)()


def test_huge_array_counts_are_rejected_before_allocating():
    r = Reader(i32(0x7FFFFFFF) + b"\x00" * 16)
    with pytest.raises(InvalidRequestError, match="cannot fit"):
        r.array_length(compact=False, nullable=False, min_item_size=4)
    r = Reader(b"\x00" * 8)  # 8 bytes cannot hold 3 int32s... they can hold 2
    r.pos = 0
    assert Reader(i32(1) + i32(7)).array_length(False, False, 4) == 1
    with pytest.raises(InvalidRequestError):
        Reader(i32(2) + i32(7)).array_length(False, False, 4)


def test_error_codes():
    assert ErrorCode(0) is ErrorCode.NONE and ErrorCode(-1) is ErrorCode.UNKNOWN_SERVER_ERROR
    expected = {1: "OFFSET_OUT_OF_RANGE", 3: "UNKNOWN_TOPIC_OR_PARTITION",
                6: "NOT_LEADER_OR_FOLLOWER", 10: "MESSAGE_TOO_LARGE", 16: "NOT_COORDINATOR",
                22: "ILLEGAL_GENERATION", 32: "INVALID_TIMESTAMP",
                35: "UNSUPPORTED_VERSION", 36: "TOPIC_ALREADY_EXISTS", 42: "INVALID_REQUEST",
                56: "KAFKA_STORAGE_ERROR", 79: "MEMBER_ID_REQUIRED", 100: "UNKNOWN_TOPIC_ID",
                109: "OFFSET_MOVED_TO_TIERED_STORAGE", 110: "FENCED_MEMBER_EPOCH"}
    for code, name in expected.items():
        assert ErrorCode(code).name == name
    assert sorted(int(e) for e in ErrorCode) == list(range(-1, 129))
    assert ErrorCode.LEADER_NOT_AVAILABLE.retriable and not ErrorCode.INVALID_REQUEST.retriable
    assert ErrorCode.of(5000) is ErrorCode.UNKNOWN_SERVER_ERROR
    assert all(e.message for e in ErrorCode if e is not ErrorCode.NONE)


def test_error_codes_agree_with_kafka_python():
    """kafka-python's errors module numbers Kafka's codes independently; the shared ones agree."""
    import kafka.errors as ke

    checked = 0
    for cls in vars(ke).values():
        if (isinstance(cls, type) and issubclass(cls, ke.BrokerResponseError)
                and cls.errno is not None and -1 <= cls.errno < 128 and cls.errno != 0):
            ours = ErrorCode(cls.errno)
            assert ours.retriable == bool(cls.retriable) or ours.name in _RETRIABLE_DIFFERENCES, (
                ours, cls)
            checked += 1
    assert checked > 80


# Where kafka-python's retriable flag differs from Kafka's RetriableException hierarchy: Kafka's
# CorruptRecordException is a RetriableException (a producer retries a batch corrupted in flight).
_RETRIABLE_DIFFERENCES = {"CORRUPT_MESSAGE"}


def test_every_registered_api_has_all_versions_encodable_with_an_empty_body():
    for api in API_SCHEMAS.values():
        for version in api.request.versions:
            frame = encode_request(api.key, version, 1, "c", {})
            header, _ = parse_request(frame[4:])
            assert header.api_version == version
        for version in api.response.versions:
            wire = b"".join(encode_response(api.key, version, 1, {}))
            assert parse_response(api.key, version, wire[4:])[0] == 1


def test_protocol_errors_share_a_base():
    for cls in (InvalidRequestError, EncodeError, UnsupportedVersionError, UnknownApiError):
        assert issubclass(cls, ProtocolError)
