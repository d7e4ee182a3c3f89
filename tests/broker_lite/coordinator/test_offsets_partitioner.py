"""A group's partition of __consumer_offsets is Kafka's: abs(String.hashCode) % partitions, with
Utils.abs mapping Integer.MIN_VALUE to 0 and the hash over UTF-16 code units.

The expected values are computed here by an independent formulation: the hash as the closed sum
s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units (from Python's own UTF-16 codec), reduced to
a signed 32-bit int with ctypes; Utils.abs as Kafka writes it, (n == MIN_VALUE) ? 0 : abs(n)."""

import ctypes

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_lite.coordinator import partition_for
from broker_lite.coordinator.common.partitioner import java_string_hash


def utf16_units(text: str) -> list[int]:
    data = text.encode("utf-16-le")
    return [int.from_bytes(data[i:i + 2], "little") for i in range(0, len(data), 2)]


def reference_hash(text: str) -> int:
    units = utf16_units(text)
    n = len(units)
    return ctypes.c_int32(sum(u * 31 ** (n - 1 - i) for i, u in enumerate(units))).value


def reference_partition(text: str, partitions: int) -> int:
    h = reference_hash(text)
    return (0 if h == -(2**31) else abs(h)) % partitions


@pytest.mark.parametrize("group_id,java_hash", [
    ("", 0),
    ("a", 97),
    ("ab", 97 * 31 + 98),
    ("hello", 99162322),  # the classic example from Java's documentation
    ("polygenelubricants", -(2**31)),  # String.hashCode() == Integer.MIN_VALUE
    ("my-group", -1906497762),
])
def test_known_java_hashes(group_id, java_hash):
    assert java_string_hash(group_id) == java_hash == reference_hash(group_id)


@pytest.mark.parametrize("group_id,partitions,expected", [
    ("polygenelubricants", 50, 0),  # Utils.abs(MIN_VALUE) is 0, not MIN_VALUE
    ("my-group", 50, 1906497762 % 50),
    ("hello", 50, 99162322 % 50),
    ("", 50, 0),
    ("console-consumer-12345", 1, 0),
])
def test_partition_of_known_groups(group_id, partitions, expected):
    assert partition_for(group_id, partitions) == expected


def test_characters_outside_the_bmp_hash_as_two_surrogates():
    text = "g\U0001F600"  # one code point, two UTF-16 code units
    assert utf16_units(text) == [ord("g"), 0xD83D, 0xDE00]
    assert java_string_hash(text) == ctypes.c_int32((ord("g") * 31 + 0xD83D) * 31 + 0xDE00).value


@given(st.text(max_size=60), st.integers(min_value=1, max_value=200))
def test_agrees_with_the_reference_for_any_string(text, partitions):
    assert partition_for(text, partitions) == reference_partition(text, partitions)
    assert 0 <= partition_for(text, partitions) < partitions


def test_zero_partitions_is_refused():
    with pytest.raises(ValueError, match="at least one partition"):
        partition_for("g", 0)
