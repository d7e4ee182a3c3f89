import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_lite.records import CorruptRecordError
from broker_lite.records.varint import (
    decode_unsigned_varint,
    decode_varint,
    decode_varlong,
    encode_unsigned_varint,
    encode_varint,
    encode_varlong,
    size_of_varint,
)

# (value, zigzag varint bytes): the table from the protobuf encoding guide, plus int32 bounds.
CASES = [
    (0, b"\x00"),
    (-1, b"\x01"),
    (1, b"\x02"),
    (-2, b"\x03"),
    (63, b"\x7e"),
    (-64, b"\x7f"),
    (64, b"\x80\x01"),
    (150, b"\xac\x02"),
    (2**31 - 1, b"\xfe\xff\xff\xff\x0f"),
    (-(2**31), b"\xff\xff\xff\xff\x0f"),
]


@pytest.mark.parametrize("value,encoded", CASES)
def test_varint_golden_bytes_both_ways(value, encoded):
    assert encode_varint(value) == encoded
    assert decode_varint(encoded) == (value, len(encoded))
    assert size_of_varint(value) == len(encoded)


def test_varlong_extremes():
    assert encode_varlong(2**63 - 1) == b"\xfe" + b"\xff" * 8 + b"\x01"
    assert decode_varlong(encode_varlong(-(2**63))) == (-(2**63), 10)


def test_unsigned_varint_300():
    assert encode_unsigned_varint(300) == b"\xac\x02"
    assert decode_unsigned_varint(b"\xac\x02") == (300, 2)


@given(st.integers(-(2**31), 2**31 - 1))
def test_varint_round_trip(value):
    encoded = encode_varint(value)
    assert decode_varint(b"\x99" + encoded, 1) == (value, 1 + len(encoded))
    assert size_of_varint(value) == len(encoded)


@given(st.integers(-(2**63), 2**63 - 1))
def test_varlong_round_trip(value):
    encoded = encode_varlong(value)
    assert decode_varlong(encoded) == (value, len(encoded))


@pytest.mark.parametrize("value", [2**31, -(2**31) - 1])
def test_encode_refuses_values_outside_int32(value):
    with pytest.raises(ValueError):
        encode_varint(value)


@pytest.mark.parametrize(
    "decode,data",
    [
        (decode_varint, b""),
        (decode_varint, b"\x80"),  # continuation bit with nothing after
        (decode_varint, b"\xff\xff\xff\xff\xff\x01"),  # six bytes: longer than an int32 allows
        (decode_varint, b"\xff\xff\xff\xff\x7f"),  # five bytes but 35 bits of value
        (decode_varlong, b"\xff" * 10 + b"\x01"),
        (decode_unsigned_varint, b"\x80\x80\x80\x80\x80\x80"),
    ],
)
def test_malformed_varints_are_corrupt(decode, data):
    with pytest.raises(CorruptRecordError):
        decode(data)


def test_limit_stops_a_varint_at_the_record_boundary():
    with pytest.raises(CorruptRecordError, match="position 0"):
        decode_varint(b"\x80\x01", 0, limit=1)
