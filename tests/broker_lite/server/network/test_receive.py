"""Size-prefixed frames out of a byte stream, however the stream is cut into reads."""

import struct

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_lite.server.network.receive import (
    READ_BYTES,
    SMALL_READ_BYTES,
    FrameReceive,
    InvalidFrameSize,
)


def framed(payloads: list[bytes]) -> bytes:
    return b"".join(struct.pack(">i", len(p)) + p for p in payloads)


class Stream:
    """A socket's ``recv_into`` over ``data``, handing out at most ``cuts[i]`` bytes at read i."""

    def __init__(self, data: bytes, cuts: list[int]):
        self.data, self.cuts, self.position = data, list(cuts), 0

    def read_into(self, view: memoryview) -> int:
        limit = self.cuts.pop(0) if self.cuts else len(view)
        count = min(len(view), limit, len(self.data) - self.position)
        view[:count] = self.data[self.position:self.position + count]
        self.position += count
        return count


def drain(receive: FrameReceive) -> list[bytes]:
    frames = []
    while (frame := receive.next_frame()) is not None:
        frames.append(bytes(frame))
    return frames


@given(st.lists(st.binary(max_size=300), max_size=8),
       st.lists(st.integers(1, 50), max_size=100))
def test_frames_come_out_whole_whatever_the_reads(payloads, cuts):
    data = framed(payloads)
    stream = Stream(data, cuts)
    receive = FrameReceive(max_size=1000)
    frames = []
    while stream.position < len(data):
        assert receive.read_from(stream.read_into) > 0
        frames += drain(receive)
    assert frames == payloads
    assert not receive.partial


@given(st.lists(st.binary(max_size=300), max_size=8),
       st.lists(st.integers(1, 50), max_size=20))
def test_fed_bytes_come_out_as_the_same_frames(payloads, cuts):
    data = framed(payloads)
    receive = FrameReceive(max_size=1000)
    frames, position = [], 0
    for cut in [*cuts, len(data)]:
        receive.feed(data[position:position + cut])
        position += cut
        frames += drain(receive)
    assert frames == payloads


def test_a_frame_larger_than_a_read_is_filled_in_place():
    big = bytes(range(256)) * (3 * READ_BYTES // 256)
    data = framed([b"small", big, b"after"])
    stream = Stream(data, [10, 1000])
    receive = FrameReceive(max_size=len(big))
    frames = []
    while stream.position < len(data):
        receive.read_from(stream.read_into)
        frames += drain(receive)
    assert frames == [b"small", big, b"after"]


def test_frames_are_views_of_the_read_buffer_not_copies():
    receive = FrameReceive(max_size=100)
    receive.read_from(Stream(framed([b"one", b"two"]), []).read_into)
    first, second = receive.next_frame(), receive.next_frame()
    assert isinstance(first, memoryview) and first.obj is second.obj
    assert (bytes(first), bytes(second)) == (b"one", b"two")


def test_a_small_read_keeps_only_its_own_bytes():
    """The frames of a small read (a long poll that waits holds its request) keep a buffer
    of the read's size, not one of READ_BYTES."""
    data = framed([b"fetch", b"metadata"])
    receive = FrameReceive(max_size=100)
    receive.read_from(Stream(data, []).read_into)
    first, second = receive.next_frame(), receive.next_frame()
    assert first.obj is second.obj and len(first.obj) == len(data)


def test_a_large_read_hands_out_views_of_the_buffer_it_was_read_into():
    """Pipelined produce requests: no copy of the bytes read; one read takes up to
    READ_BYTES."""
    payloads = [bytes([i]) * 16_000 for i in range(READ_BYTES // 16_000 + 4)]
    data = framed(payloads)
    reads = []
    stream = Stream(data, [])
    receive = FrameReceive(max_size=100_000)

    def read_into(view):
        reads.append(len(view))
        return stream.read_into(view)

    receive.read_from(read_into)
    frames = []
    while (frame := receive.next_frame()) is not None:
        frames.append(frame)
    assert reads == [READ_BYTES] and SMALL_READ_BYTES < READ_BYTES
    assert len(frames) == READ_BYTES // 16_004
    assert all(f.obj is frames[0].obj for f in frames) and len(frames[0].obj) == READ_BYTES
    assert [bytes(f) for f in frames] == payloads[:len(frames)]


def test_an_incomplete_frame_keeps_only_its_own_bytes():
    """A trickling or idle connection holds a few bytes, not a read buffer."""
    receive = FrameReceive(max_size=100)
    receive.read_from(Stream(framed([b"whole"]) + b"\0\0\0\x09par", []).read_into)
    assert bytes(receive.next_frame()) == b"whole"
    assert receive.next_frame() is None and receive.partial
    assert len(receive._data) == 7


@pytest.mark.parametrize("size,message", [
    (-1, "Invalid receive (size = -1)"),
    (101, "Invalid receive (size = 101 larger than 100)"),
    (2**31 - 1, "Invalid receive (size = 2147483647 larger than 100)"),
])
def test_sizes_are_checked_before_the_body_is_read(size, message):
    receive = FrameReceive(max_size=100)
    with pytest.raises(InvalidFrameSize, match=message.replace("(", r"\(").replace(")", r"\)")):
        receive.read_from(Stream(struct.pack(">i", size), []).read_into)
        receive.next_frame()


def test_an_empty_frame_is_a_frame():
    receive = FrameReceive(max_size=100)
    receive.feed(framed([b""]))
    assert bytes(receive.next_frame()) == b""


@pytest.mark.parametrize("size", [10, READ_BYTES * 2])
def test_a_peeked_frame_stays_until_skipped(size):
    """Small frames (views of the read buffer) and large ones (filled in place) alike."""
    payloads = [b"a" * size, b"b" * 5]
    stream = Stream(framed(payloads), [])
    receive = FrameReceive(max_size=READ_BYTES * 4)
    while receive.peek_frame() is None:
        assert receive.read_from(stream.read_into)
    frame = receive.peek_frame()
    assert bytes(frame) == bytes(receive.peek_frame()) == payloads[0]
    receive.skip_frame(frame)
    while receive.peek_frame() is None:
        assert receive.read_from(stream.read_into)
    assert bytes(receive.next_frame()) == payloads[1]
    assert receive.next_frame() is None and not receive.partial
