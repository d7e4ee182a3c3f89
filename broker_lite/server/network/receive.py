"""Size-prefixed frames out of a byte stream (Kafka's NetworkReceive), without doing I/O.

Kafka frames every request and response with a 4-byte big-endian size::

    size     int32   bytes that follow (0 .. socket.request.max.bytes)
    payload          request (header + body) or response (header + body)

The transport reads with :meth:`FrameReceive.read_from` (or hands over bytes it read itself with
:meth:`~FrameReceive.feed`); :meth:`~FrameReceive.next_frame` then hands out whole payloads. The
size is checked as soon as its four bytes are in, before the body is buffered: a negative size,
or one above the limit, raises :class:`InvalidFrameSize` and the connection is closed. Small
frames arrive several per read (a client pipelining requests) and are handed out as views of the
read buffer, without a copy (the records of a Produce go from that buffer to the segment file);
only a read too small to matter is copied, into a buffer of its size, so that a request kept
waiting does not hold a whole read buffer. A frame larger than one read is filled in place, in a
buffer of its exact size.

>>> receive = FrameReceive(max_size=100)
>>> receive.feed(b"\\0\\0\\0\\3abc\\0\\0\\0\\2d")
>>> bytes(receive.peek_frame()), bytes(receive.next_frame()), receive.next_frame()
(b'abc', b'abc', None)
>>> receive.partial
True
>>> receive.feed(b"e")
>>> bytes(receive.next_frame()), receive.partial
(b'de', False)
>>> receive.feed(b"\\0\\0\\1\\0")
Traceback (most recent call last):
...
broker_lite.server.network.receive.InvalidFrameSize: Invalid receive (size = 256 larger than 100)
"""

import struct
from collections.abc import Callable

# A read takes up to READ_BYTES: a client pipelining requests (a producer) has them read in few
# calls, and handled in long runs. A read of less than SMALL_READ_BYTES is copied out of that
# buffer into one of its size, so the frames a request keeps (a long poll waiting) hold only
# their own bytes.
READ_BYTES = 256 * 1024
SMALL_READ_BYTES = 64 * 1024
_SIZE = struct.Struct(">i")


class InvalidFrameSize(ValueError):
    """A frame announced a negative size or one above the limit (Kafka's
    InvalidReceiveException, with its message)."""


class FrameReceive:
    """The frames of one connection, ``max_size`` bytes at most each.

    Frames are handed out as memoryviews of the buffer they were read into, never copied; the
    buffer is released once they are, and only the bytes of an incomplete frame are kept (so an
    idle or trickling connection holds no read buffer).
    """

    __slots__ = ("max_size", "_data", "_start", "_end", "_body", "_filled")

    def __init__(self, max_size: int):
        self.max_size = max_size
        self._data: bytes | bytearray = b""  # bytes read; [_start:_end] not handed out yet
        self._start = self._end = 0
        self._body: bytearray | None = None  # a large frame's payload, filled in place
        self._filled = 0

    @property
    def partial(self) -> bool:
        """Bytes not handed out yet are held (part of a frame, or whole frames)."""
        return self._body is not None or self._start < self._end

    def read_from(self, read_into: Callable[[memoryview], int]) -> int:
        """Read once with ``read_into(buffer) -> count`` (a socket's ``recv_into``): straight into
        a large frame being filled, else into a new buffer after the bytes held; the count (0:
        the peer closed). Raises :class:`InvalidFrameSize`."""
        body = self._body
        if body is not None:
            count = read_into(memoryview(body)[self._filled:])
            self._filled += count
            return count
        held = self._end - self._start
        buffer = bytearray(held + READ_BYTES)
        if held:
            buffer[:held] = memoryview(self._data)[self._start:self._end]
        count = read_into(memoryview(buffer)[held:])
        if count:
            end = held + count
            if end < SMALL_READ_BYTES:
                self._data, self._start, self._end = bytes(memoryview(buffer)[:end]), 0, end
            else:
                self._data, self._start, self._end = buffer, 0, end
            self._split_large_frame()
        return count

    def feed(self, data) -> None:
        """Add bytes read elsewhere (a TLS transport's decrypted bytes, a test). Raises
        :class:`InvalidFrameSize`."""
        data = memoryview(data)
        body = self._body
        if body is not None:
            count = min(len(body) - self._filled, len(data))
            body[self._filled:self._filled + count] = data[:count]
            self._filled += count
            data = data[count:]
            if not data:
                return
        held = memoryview(self._data)[self._start:self._end]
        self._data = bytes(held) + bytes(data)
        self._start, self._end = 0, len(self._data)
        if body is None:
            self._split_large_frame()

    def next_frame(self):
        """The next whole payload (a bytes-like object, without its size), or None until one is
        in. Raises :class:`InvalidFrameSize`."""
        frame = self.peek_frame()
        if frame is None:
            self._compact()
        else:
            self.skip_frame(frame)
        return frame

    def skip_frame(self, frame) -> None:
        """Drop ``frame``, the whole frame :meth:`peek_frame` gave."""
        if self._body is not None:
            self._body = None
        else:
            self._start += 4 + len(frame)

    def peek_frame(self):
        """The next whole payload as :meth:`next_frame` gives it, left in place: the next call
        gives it again. Raises :class:`InvalidFrameSize`."""
        body = self._body
        if body is not None:
            return body if self._filled == len(body) else None
        data, start, end = self._data, self._start, self._end
        if end - start >= 4:
            frame_end = start + 4 + self._check(_SIZE.unpack_from(data, start)[0])
            if frame_end <= end:
                return memoryview(data)[start + 4:frame_end]
            self._split_large_frame()
        return None

    def peek_frames(self, limit: int) -> list:
        """Up to ``limit`` whole payloads, as :meth:`peek_frame` gives the first, left in place
        (:meth:`skip_frame` drops them one by one, in order); none while a large frame is
        being filled. Raises :class:`InvalidFrameSize`."""
        frames: list = []
        if self._body is not None:
            return frames
        data, start, end = self._data, self._start, self._end
        while len(frames) < limit and end - start >= 4:
            frame_end = start + 4 + self._check(_SIZE.unpack_from(data, start)[0])
            if frame_end > end:
                break
            frames.append(memoryview(data)[start + 4:frame_end])
            start = frame_end
        return frames

    def _split_large_frame(self) -> None:
        """A frame larger than one read: give it a buffer of its own, to fill in place."""
        data, start, end = self._data, self._start, self._end
        if end - start < 4:
            return
        size = self._check(_SIZE.unpack_from(data, start)[0])
        if start + 4 + size <= end or size <= READ_BYTES:
            return
        got = end - start - 4
        body = bytearray(size)
        body[:got] = memoryview(data)[start + 4:end]
        self._body, self._filled = body, got
        self._data, self._start, self._end = b"", 0, 0

    def _compact(self) -> None:
        """Keep only the bytes of the incomplete frame, not the read buffer around them."""
        if self._body is None and (self._start or len(self._data) > self._end):
            self._data = bytes(memoryview(self._data)[self._start:self._end])
            self._start, self._end = 0, len(self._data)

    def _check(self, size: int) -> int:
        if size < 0:
            raise InvalidFrameSize(f"Invalid receive (size = {size})")
        if size > self.max_size:
            raise InvalidFrameSize(f"Invalid receive (size = {size} larger than {self.max_size})")
        return size
