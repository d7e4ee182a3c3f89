"""The quick way for Produce requests and responses gives what the generic codec gives: the same
body dicts from the same frames, the same bytes from the same bodies, the same errors; and it
steps aside for what it does not take."""

import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from protocol_strategies import body_strategy, normalize

from broker_lite.protocol import (
    ApiKey,
    InvalidRequestError,
    Reader,
    alike_requests,
    api_for,
    decode,
    encode_request,
    encode_response,
    parse_request_header,
    read_request_body,
)
from broker_lite.protocol.framing import _encode_response
from broker_lite.protocol.produce_path import (
    FIRST_FLEXIBLE,
    FIRST_VERSION,
    LAST_VERSION,
    read_request,
    write_response,
)

API = api_for(ApiKey.PRODUCE)
VERSIONS = range(FIRST_VERSION, LAST_VERSION + 1)


def frame_of(version: int, body: dict) -> memoryview:
    return memoryview(encode_request(ApiKey.PRODUCE, version, 7, "producer", body))[4:]


def both_ways(frame):
    """(the quick body or None, where it stopped; the generic body, where it stopped)."""
    header, offset = parse_request_header(frame)
    quick_reader, generic_reader = Reader(frame, offset), Reader(frame, offset)
    quick = read_request(quick_reader, header.api_version)
    generic = decode(API.request, header.api_version, generic_reader)
    return quick, quick_reader.pos, generic, generic_reader.pos, offset


@st.composite
def requests(draw, unknown_tags: bool = False):
    version = draw(st.sampled_from(VERSIONS))
    body = draw(body_strategy(API.request, version, version >= FIRST_FLEXIBLE, unknown_tags))
    return version, body


@settings(max_examples=300)
@given(requests())
def test_requests_read_as_the_generic_codec_reads_them(case):
    version, body = case
    quick, quick_end, generic, generic_end, _ = both_ways(frame_of(version, body))
    assert quick is not None
    assert normalize(quick) == normalize(generic) and quick_end == generic_end


@settings(max_examples=200)
@given(requests(unknown_tags=True))
def test_what_the_quick_way_does_not_take_the_codec_reads(case):
    version, body = case
    frame = frame_of(version, body)
    quick, quick_end, generic, _, offset = both_ways(frame)
    if quick is None:
        assert quick_end == offset  # the reader is left for the codec
    else:
        assert normalize(quick) == normalize(generic)
    header, _ = parse_request_header(frame)
    assert normalize(read_request_body(header, Reader(frame, offset))) == normalize(generic)


@pytest.mark.parametrize("version", VERSIONS)
def test_a_producer_sized_request_is_read_the_quick_way(version):
    """Records of 16 KiB (a length of three varint bytes when compact), several topics."""
    body = {"transactional_id": "txn-\u00e9", "acks": -1, "timeout_ms": 30_000, "topic_data": [
        {"name": f"topic-{t}", "partition_data": [
            {"index": p, "records": bytes([p]) * 16_384} for p in range(3)]}
        for t in range(2)]}
    quick, quick_end, generic, generic_end, _ = both_ways(frame_of(version, body))
    assert quick is not None
    assert normalize(quick) == normalize(generic) and quick_end == generic_end
    assert bytes(quick["topic_data"][1]["partition_data"][2]["records"]) == b"\2" * 16_384


def test_a_request_with_a_tagged_field_goes_to_the_codec():
    body = {"transactional_id": None, "acks": 1, "timeout_ms": 100, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": b"x" * 20}]}],
        "_unknown_tagged_fields": {300: b"!"}}
    quick, *_ = both_ways(frame_of(9, body))
    assert quick is None


@pytest.mark.parametrize("version", [3, 8, 9, 11])
@pytest.mark.parametrize("cut", [1, 7, 12, 30])
def test_a_truncated_request_fails_as_the_codec_fails_it(version, cut):
    body = {"transactional_id": "txn", "acks": -1, "timeout_ms": 100, "topic_data": [
        {"name": "events", "partition_data": [{"index": 3, "records": b"r" * 40}]}]}
    frame = bytes(frame_of(version, body))
    header, offset = parse_request_header(frame)
    truncated = frame[:len(frame) - cut]
    with pytest.raises(InvalidRequestError) as generic:
        decode(API.request, version, Reader(truncated, offset))
    with pytest.raises(InvalidRequestError) as quick:
        read_request_body(header, Reader(truncated, offset))
    assert str(quick.value) == str(generic.value)


def test_versions_outside_the_range_go_to_the_codec():
    body = {"acks": 1, "timeout_ms": 100, "topic_data": []}
    frame = frame_of(2, body)
    header, offset = parse_request_header(frame)
    assert read_request(Reader(frame, offset), 2) is None
    assert read_request_body(header, Reader(frame, offset)) == decode(
        API.request, 2, Reader(frame, offset))


# -- pipelined requests alike ------------------------------------------------------------------


def one_partition(records, *, acks=1, topic="events", index=0, transactional_id=None) -> dict:
    return {"transactional_id": transactional_id, "acks": acks, "timeout_ms": 30_000,
            "topic_data": [{"name": topic, "partition_data": [
                {"index": index, "records": records}]}]}


def read_generically(frame):
    header, offset = parse_request_header(frame)
    return header, normalize(decode(API.request, header.api_version, Reader(frame, offset)))


def read_alike_after(first, following):
    header, offset = parse_request_header(first)
    read = alike_requests(first, header, offset)
    assert read is not None
    alike = read(following)
    return None if alike is None else (alike[0], normalize(alike[1]))


@settings(max_examples=200)
@given(st.sampled_from(VERSIONS), st.binary(max_size=300), st.binary(max_size=300),
       st.sampled_from([None, "txn"]), st.sampled_from([-1, 0, 1]), st.integers(0, 1 << 20))
def test_a_request_alike_the_first_is_read_as_the_codec_reads_it(
        version, first_records, records, transactional_id, acks, correlation_id):
    first = frame_of(version, one_partition(first_records, acks=acks,
                                            transactional_id=transactional_id))
    following = memoryview(encode_request(
        ApiKey.PRODUCE, version, correlation_id, "producer",
        one_partition(records, acks=acks, transactional_id=transactional_id)))[4:]
    assert read_alike_after(first, following) == read_generically(following)


@pytest.mark.parametrize("version", [3, 8, 9, 11])
@pytest.mark.parametrize("different", [
    dict(acks=-1), dict(topic="other"), dict(index=1), dict(transactional_id="txn"),
])
def test_a_request_unlike_the_first_is_left_to_be_read_on_its_own(version, different):
    first = frame_of(version, one_partition(b"a" * 70))
    assert read_alike_after(first, frame_of(version, one_partition(b"b" * 70, **different))) \
        is None


@pytest.mark.parametrize("version", [3, 9])
def test_another_client_version_more_bytes_or_fewer_are_read_on_their_own(version):
    first = frame_of(version, one_partition(b"a" * 70))
    following = bytes(frame_of(version, one_partition(b"b" * 70)))
    assert read_alike_after(first, following) is not None
    assert read_alike_after(first, following + b"!") is None  # bytes after the body
    assert read_alike_after(first, following[:-1]) is None
    assert read_alike_after(first, following[:20]) is None
    for client_id in ("Producer", "producer-2"):  # the header differs
        assert read_alike_after(first, memoryview(encode_request(
            ApiKey.PRODUCE, version, 7, client_id, one_partition(b"b" * 70)))[4:]) is None
    other_version = 10 if version == 9 else 4
    assert read_alike_after(first, frame_of(other_version, one_partition(b"b" * 70))) is None


def test_only_a_first_request_of_one_partition_has_requests_alike():
    many = frame_of(9, {"transactional_id": None, "acks": 1, "timeout_ms": 1, "topic_data": [
        {"name": "t", "partition_data": [{"index": 0, "records": b"x"},
                                         {"index": 1, "records": b"y"}]}]})
    for frame in (many, frame_of(9, one_partition(None)), frame_of(2, one_partition(b"x"))):
        header, offset = parse_request_header(frame)
        assert alike_requests(frame, header, offset) is None
    metadata = memoryview(encode_request(ApiKey.METADATA, 9, 1, "c", {"topics": None}))[4:]
    header, offset = parse_request_header(metadata)
    assert alike_requests(metadata, header, offset) is None


# -- responses ----------------------------------------------------------------------------------

INT16 = st.integers(-(1 << 15), (1 << 15) - 1)
INT32 = st.integers(-(1 << 31), (1 << 31) - 1)
INT64 = st.integers(-(1 << 63), (1 << 63) - 1)


@st.composite
def usual_responses(draw):
    """What the Produce handler answers: offsets, or an error code without a message."""
    def partition():
        fields = {"index": INT32, "error_code": INT16, "base_offset": INT64,
                  "log_append_time_ms": INT64, "log_start_offset": INT64}
        keys = draw(st.sets(st.sampled_from(sorted(fields))))
        response = {key: draw(fields[key]) for key in keys}
        if draw(st.booleans()):
            response["error_message"] = None
        if draw(st.booleans()):
            response["record_errors"] = []
        return response

    topics = [{"name": draw(st.text(max_size=20)),
               "partition_responses": [partition() for _ in range(draw(st.integers(0, 3)))]}
              for _ in range(draw(st.integers(0, 3)))]
    body = {"responses": topics}
    if draw(st.booleans()):
        body["throttle_time_ms"] = draw(INT32)
    return body


@settings(max_examples=300)
@given(st.sampled_from(VERSIONS), INT32, usual_responses())
def test_responses_are_the_bytes_the_codec_writes(version, correlation_id, body):
    quick = write_response(version, correlation_id, body)
    assert quick is not None
    assert quick == _encode_response(ApiKey.PRODUCE, version, correlation_id, body)


@settings(max_examples=200)
@given(st.sampled_from(range(0, LAST_VERSION + 1)), INT32, st.data())
def test_any_response_encodes_as_the_codec_encodes_it(version, correlation_id, data):
    body = data.draw(body_strategy(API.response, version, version >= FIRST_FLEXIBLE))
    assert encode_response(ApiKey.PRODUCE, version, correlation_id, body) == \
        _encode_response(ApiKey.PRODUCE, version, correlation_id, body)


@pytest.mark.parametrize("partition", [
    {"index": 0, "error_code": 87, "base_offset": -1, "error_message": "bad record",
     "record_errors": [{"batch_index": 2, "batch_index_error_message": "no key"}]},
    {"index": 0, "error_code": 0, "current_leader": {"leader_id": 2, "leader_epoch": 5}},
    {"index": 1 << 40},  # too large for an int32: the codec's error
    {"index": None},
])
def test_responses_the_quick_way_does_not_take_go_to_the_codec(partition):
    body = {"responses": [{"name": "t", "partition_responses": [partition]}]}
    assert write_response(11, 7, body) is None
    try:
        expected = _encode_response(ApiKey.PRODUCE, 11, 7, body)
    except Exception as exc:  # the same error either way
        with pytest.raises(type(exc)):
            encode_response(ApiKey.PRODUCE, 11, 7, body)
    else:
        assert encode_response(ApiKey.PRODUCE, 11, 7, body) == expected


def test_a_frame_is_one_chunk_with_its_size():
    body = {"responses": [{"name": "t", "partition_responses": [
        {"index": 0, "error_code": 0, "base_offset": 42, "log_append_time_ms": -1,
         "log_start_offset": 0}]}], "throttle_time_ms": 0}
    (chunk,) = write_response(9, 5, body)
    assert struct.unpack_from(">ii", chunk) == (len(chunk) - 4, 5)
