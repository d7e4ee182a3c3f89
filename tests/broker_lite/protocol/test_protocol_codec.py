"""The codec: bodies at any version of their schema, tagged fields, and compiling each
(struct, version) once."""

from __future__ import annotations

import uuid

import pytest

from broker_lite.protocol import UnsupportedVersionError
from broker_lite.protocol.codec import decode, encode
from broker_lite.protocol.messages import METADATA_REQUEST, PRODUCE_REQUEST
from broker_lite.protocol.schema import INT32, STRING, A, F, Message
from broker_lite.protocol.types import Reader, Writer


def encode_bytes(message, version, body) -> bytes:
    w = Writer()
    encode(message, version, body, w)
    return w.getvalue()


def test_public_schema_api_reads_any_field_for_any_version():
    w = Writer()
    encode(METADATA_REQUEST, 0, {"topics": [{"name": "a"}], "allow_auto_topic_creation": False}, w)
    body = decode(METADATA_REQUEST, 0, Reader(w.getvalue()))
    # allow_auto_topic_creation does not exist in v0: ignored on encode, default on decode
    assert body == {"topics": [{"topic_id": uuid.UUID(int=0), "name": "a"}],
                    "allow_auto_topic_creation": True,
                    "include_cluster_authorized_operations": False,
                    "include_topic_authorized_operations": False}
    with pytest.raises(UnsupportedVersionError):
        decode(PRODUCE_REQUEST, 12, Reader(b""))


def test_each_struct_is_compiled_once_per_version():
    msg = Message("ExampleRequest", 99, "request", "0-1", "1+", [
        F("Name", STRING, "0+"), A("Items", "Item", "0+", [F("Id", INT32, "0+")])])
    item = msg.fields[1].struct
    assert msg.codecs == {} and item.codecs == {}  # nothing is compiled until it is used
    encode_bytes(msg, 1, {"items": [{"id": 1}]})
    compiled = dict(msg.codecs)
    assert set(compiled) == {(1, True)} and set(item.codecs) == {(1, True)}
    decode(msg, 1, Reader(encode_bytes(msg, 1, {})))
    assert msg.codecs == compiled and msg.codecs[(1, True)] is compiled[(1, True)]


def test_unknown_tagged_fields_are_kept_and_re_emitted_in_order():
    from broker_lite.protocol.messages import API_VERSIONS_RESPONSE as msg

    body = {
        "error_code": 0,
        "api_keys": [{"api_key": 18, "min_version": 0, "max_version": 3,
                      "_unknown_tagged_fields": {7: b"\x01"}}],
        "finalized_features_epoch": 5,  # tag 1
        "_unknown_tagged_fields": {9: b"xyz", 4: b""},
    }
    encoded = encode_bytes(msg, 3, body)
    # the top-level section is the tail: 3 fields, tags 1 (an int64), 4 and 9, ascending
    assert encoded.endswith(bytes([3, 1, 8]) + (5).to_bytes(8, "big")
                            + bytes([4, 0, 9, 3]) + b"xyz")
    decoded = decode(msg, 3, Reader(encoded))
    assert decoded["_unknown_tagged_fields"] == {4: b"", 9: b"xyz"}
    assert decoded["api_keys"][0]["_unknown_tagged_fields"] == {7: b"\x01"}
    assert decoded["finalized_features_epoch"] == 5
    assert encode_bytes(msg, 3, decoded) == encoded


def test_tagged_fields_at_their_default_are_not_written():
    from broker_lite.protocol.messages import FETCH_RESPONSE as msg

    partition = {"partition_index": 0, "records": None,
                 "current_leader": {"leader_id": -1, "leader_epoch": -1}}
    plain = encode_bytes(msg, 12, {"responses": [{"topic": "t", "partitions": [partition]}]})
    partition["current_leader"] = {"leader_id": 3, "leader_epoch": 9}
    tagged = encode_bytes(msg, 12, {"responses": [{"topic": "t", "partitions": [partition]}]})
    # leader 3, epoch 9: tag 1, size 9 (two int32 + an empty tagged section)
    assert len(tagged) == len(plain) + 1 + 1 + 9
    decoded = decode(msg, 12, Reader(tagged))
    assert decoded["responses"][0]["partitions"][0]["current_leader"] == {
        "leader_id": 3, "leader_epoch": 9}
    assert decoded["responses"][0]["partitions"][0]["diverging_epoch"] == {
        "epoch": -1, "end_offset": -1}
