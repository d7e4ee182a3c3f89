"""The compiled codecs' own checks of their arguments: whatever they are given, they refuse what
does not hold together rather than read past a buffer. (Collected only where the compiled codecs
are built: see ``conftest.py``.)"""

from typing import Any

import pyarrow as pa
import pytest

from broker_lite.records._native import compiled
from broker_lite.records.arrow.decode import allocate_buffer

COMPILED: Any = compiled()  # collected only where it is built
T0 = 1_700_000_000_000


def test_the_compiled_decoder_refuses_regions_outside_its_buffer() -> None:
    with pytest.raises(ValueError, match="lies outside the buffer"):
        COMPILED.decode_v2(b"\x00" * 10, [(0, 11, 1, 0, 0, 0, 0)], False, allocate_buffer)
    with pytest.raises(ValueError, match="lies outside the buffer"):
        COMPILED.decode_v2(b"\x00" * 10, [(-1, 5, 1, 0, 0, 0, 0)], False, allocate_buffer)
    # a count no section of this size can hold is refused before anything is allocated for it
    assert COMPILED.decode_v2(b"\x00" * 10, [(0, 10, 2**62, 0, 0, 0, 0)], True,
                              allocate_buffer) is None


def test_the_compiled_decoder_reads_each_region_in_its_own_buffer_when_given_a_list() -> None:
    # two sections of one record each (value b"a", then b"bc"), in buffers of their own
    first, second = bytes([7 * 2, 0, 0, 0, 1, 2, ord("a"), 0]), \
        bytes([8 * 2, 0, 0, 0, 1, 4, ord("b"), ord("c"), 0])
    regions = [(0, len(first), 1, 10, 5, 5, 0), (0, len(second), 1, 20, 6, 6, 0)]
    decoded = COMPILED.decode_v2([first, second], regions, False, allocate_buffer)
    _, _, offsets, data = decoded["value"]
    assert bytes(data) == b"abc" and offsets.to_pybytes()[4:12] == bytes([1, 0, 0, 0, 3, 0, 0, 0])
    assert [int.from_bytes(decoded["offset"].to_pybytes()[i:i + 8], "little") for i in (0, 8)] \
        == [10, 20]
    with pytest.raises(ValueError, match="2 buffers for 1 regions"):
        COMPILED.decode_v2([first, second], regions[:1], False, allocate_buffer)
    with pytest.raises(ValueError, match=r"region 0 \[0, 9\) lies outside the buffer"):
        COMPILED.decode_v2([first, second], [(0, 9, 1, 10, 5, 5, 0), regions[1]], False,
                           allocate_buffer)
    with pytest.raises(TypeError, match="a buffer or a list of them"):
        COMPILED.decode_v2(7, regions, False, allocate_buffer)


@pytest.mark.parametrize("key,message", [
    ((None, (pa.array([0, 4], pa.int32())).buffers()[1], b"abc", 0), "outside its data"),
    ((None, pa.array([0], pa.int32()).buffers()[1], b"abc", 0), "shorter than its 1 rows"),
    ((b"", pa.array([0, 1], pa.int32()).buffers()[1], b"abc", 0), "shorter than its 1 rows"),
    ((None, pa.array([0, 1, 2], pa.int32()).buffers()[1], b"abc", -1), "shorter than its"),
])
def test_the_compiled_encoder_refuses_columns_that_do_not_hold_their_rows(key: tuple,
                                                                         message: str) -> None:
    value = (None, pa.array([0, 1], pa.int32()).buffers()[1], b"v", 0)
    timestamps = pa.array([T0], pa.int64()).buffers()[1]
    with pytest.raises(ValueError, match=message):
        COMPILED.encode_v2(1, key, value, timestamps, T0, None, 0)
    with pytest.raises(ValueError, match="fewer than the rows"):
        COMPILED.encode_v2(2, None, value, timestamps, T0, None, 0)


def test_the_compiled_encoder_leaves_the_room_it_is_asked_for_and_refuses_a_negative_one(
        ) -> None:
    value = (None, pa.array([0, 1], pa.int32()).buffers()[1], b"v", 0)
    timestamps = pa.array([T0], pa.int64()).buffers()[1]
    records = COMPILED.encode_v2(1, None, value, timestamps, T0, None, 0)
    with_room = COMPILED.encode_v2(1, None, value, timestamps, T0, None, 61)
    assert isinstance(with_room, bytearray) and len(with_room) == 61 + len(records)
    assert with_room[61:] == records
    with pytest.raises(ValueError, match="headroom must not be negative"):
        COMPILED.encode_v2(1, None, value, timestamps, T0, None, -1)


def test_the_compiled_sizes_refuse_buffers_that_do_not_hold_the_rows() -> None:
    value = (None, pa.array([0, 1, 3], pa.int32()).buffers()[1], b"abc", 0)
    two = bytearray(16)
    with pytest.raises(ValueError, match="must hold int64s"):
        COMPILED.record_sizes(bytearray(15), None, value, None, None)
    with pytest.raises(ValueError, match="shorter than its 3 rows"):
        COMPILED.record_sizes(bytearray(24), None, value, None, None)
    with pytest.raises(ValueError, match="timestamp spans hold 8 bytes, not 2 int64s"):
        COMPILED.record_sizes(two, None, value, bytes(8), None)
    with pytest.raises(ValueError, match="header bytes hold 24 bytes, not 2 int64s"):
        COMPILED.record_sizes(two, None, value, None, bytes(24))
    with pytest.raises(TypeError):  # sizes are written: a read-only buffer is refused
        COMPILED.record_sizes(bytes(16), None, value, None, None)
    COMPILED.record_sizes(two, None, value, None, None)
    # 1 attributes, 1 timestamp delta, 1 offset delta, 1 null key, 1 + n value, 1 header count
    assert [int.from_bytes(two[i:i + 8], "little") for i in (0, 8)] == [1 + 7, 1 + 8]
