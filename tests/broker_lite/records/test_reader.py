import struct

import pytest

from broker_lite.records import (
    BatchReader,
    CompressionType,
    ControlRecordType,
    CorruptRecordError,
    EndTransactionMarker,
    LegacyRecordBatch,
    RecordBatch,
    build_batch,
    build_control_batch,
    build_message_set,
    iter_batches,
    iter_records,
)


def mixed_log() -> bytes:
    """A segment as a broker upgraded from 0.8 to 0.11 holds it: v0, then v1, then v2 entries."""
    return (
        build_message_set([(b"a", b"0")], magic=0, base_offset=0)
        + build_message_set([(b"b", b"1"), (b"c", b"2")], magic=1, timestamp=5, base_offset=1,
                            compression=CompressionType.GZIP)
        + build_batch([(b"d", b"3"), (None, b"4")], timestamp=9, base_offset=3,
                      compression=CompressionType.LZ4)
        + build_control_batch(EndTransactionMarker(ControlRecordType.ABORT, 1), producer_id=1,
                              producer_epoch=0, base_offset=5, timestamp=10)
        + build_batch([(b"e", b"6")], timestamp=11, base_offset=6)
    )


def test_walks_a_mix_of_every_magic_in_order():
    reader = BatchReader(mixed_log(), validate=True)
    batches = list(reader)
    assert [type(b) for b in batches] == [LegacyRecordBatch, LegacyRecordBatch, RecordBatch,
                                          RecordBatch, RecordBatch]
    assert [b.magic for b in batches] == [0, 1, 2, 2, 2]
    assert [b.last_offset for b in batches] == [0, 2, 4, 5, 6]
    assert reader.position == len(mixed_log()) and not reader.incomplete


def test_iter_records_skips_control_batches():
    assert [(r.offset, r.value) for r in iter_records(mixed_log())] == [
        (0, b"0"), (1, b"1"), (2, b"2"), (3, b"3"), (4, b"4"), (6, b"6")]


def test_a_cut_at_any_byte_is_incomplete_not_corrupt():
    data = mixed_log()
    boundaries = [0]
    for batch in iter_batches(data):
        boundaries.append(boundaries[-1] + batch.size_in_bytes)
    for cut in range(len(data) + 1):
        reader = BatchReader(data[:cut], validate=True)
        complete = list(reader)
        expected = max(i for i, end in enumerate(boundaries) if end <= cut)
        assert len(complete) == expected, cut
        assert reader.position == boundaries[expected]
        assert reader.incomplete == (cut != boundaries[expected])


def test_batches_are_yielded_lazily():
    data = (build_batch([(None, b"ok")], timestamp=1)
            + b"\x00" * 8 + struct.pack(">i", 3) + bytes(20))
    batches = iter_batches(data)
    assert next(batches).record_count == 1  # the bad entry after it is not looked at yet
    with pytest.raises(CorruptRecordError, match="size 3"):
        next(batches)


@pytest.mark.parametrize("size", [-1, 0, 13, -(2**31)])
def test_size_below_any_format_is_corrupt(size):
    data = struct.pack(">qi", 0, size) + bytes(64)
    with pytest.raises(CorruptRecordError, match=f"size {size}"):
        list(BatchReader(data))


def test_unknown_magic_is_corrupt():
    data = bytearray(build_batch([(None, b"x")], timestamp=1))
    data[16] = 7
    with pytest.raises(CorruptRecordError, match="unknown magic 7"):
        list(BatchReader(data))


def test_v2_size_below_the_batch_header_is_corrupt():
    data = bytearray(build_batch([(None, b"x")], timestamp=1))
    struct.pack_into(">i", data, 8, 30)
    with pytest.raises(CorruptRecordError, match="minimum 49 for magic 2"):
        list(BatchReader(data))


def test_absurd_size_is_incomplete_without_allocating():
    data = struct.pack(">qi", 0, 2**31 - 1) + bytes(100)
    reader = BatchReader(data)
    assert list(reader) == [] and reader.incomplete


def test_max_batch_size_rejects_oversized_entries():
    data = build_batch([(None, b"x" * 1000)], timestamp=1)
    with pytest.raises(CorruptRecordError, match="above the largest allowed 100"):
        list(BatchReader(data, max_batch_size=100))


def test_validate_checks_each_crc():
    one = build_batch([(None, b"x")], timestamp=1)
    data = bytearray(one * 2)
    data[-1] ^= 1
    assert len(list(BatchReader(data))) == 2
    with pytest.raises(CorruptRecordError, match=f"position {len(one)} "):
        list(BatchReader(data, validate=True))


def test_accepts_memoryview_of_a_larger_buffer_and_bytearray():
    data = mixed_log()
    padded = bytearray(b"xx" + data)
    assert len(list(BatchReader(memoryview(padded)[2:]))) == 5
