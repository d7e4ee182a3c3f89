"""Size-prefixed frames out of a byte stream (Kafka's NetworkReceive), without doing I/O.

Kafka frames every request and response with a 4-byte big-endian size::

    size     int32   bytes that follow (0 .. socket.request.max.bytes)
    payload          request (header + body) or response (header + body)

The transport reads with :meth:`FrameReceive.read_from` (or hands over bytes it read itself with
:meth:`~FrameReceive.feed`); :meth:`~FrameReceive.next_frame` then hands out whole payloads. The
size is checked as soon as its four bytes are in, before the body is buffered: a negative size,
or one above the limit, raises :class:`InvalidFrameSize` and the connection is closed. Small
frames arrive several per read (a client pipelining requests) through a scratch buffer the
processor shares among its connections, so an idle connection holds no buffer; a frame larger
than one read is filled in place, in a buffer of its exact size, so a large request is copied
once.

>>> receive = FrameReceive(max_size=100)
>>> receive.feed(b"\\0\\0\\0\\3abc\\0\\0\\0\\2d")
>>> bytes(receive.next_frame()), receive.next_frame(), receive.partial
(b'abc', None, True)
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

READ_BYTES = 64 * 1024  # read at most this much at once while frames are small
_SIZE = struct.Struct(">i")


class InvalidFrameSize(ValueError):
    """A frame announced a negative size or one above the limit (Kafka's
    InvalidReceiveException, with its message)."""


class FrameReceive:
    """The frames of one connection, ``max_size`` bytes at most each."""

    __slots__ = ("max_size", "_pending", "_body", "_filled")

    def __init__(self, max_size: int):
        self.max_size = max_size
        self._pending = bytearray()  # read, not yet handed out
        self._body: bytearray | None = None  # a large frame's payload, filled in place
        self._filled = 0

    @property
    def partial(self) -> bool:
        """Bytes of a frame not complete yet are held."""
        return self._body is not None or bool(self._pending)

    def read_from(self, read_into: Callable[[memoryview], int], scratch: memoryview) -> int:
        """Read once with ``read_into(buffer) -> count`` (a socket's ``recv_into``): straight into
        a large frame being filled, else into ``scratch``; the count (0: the peer closed).
        Raises :class:`InvalidFrameSize`."""
        body = self._body
        if body is not None:
            count = read_into(memoryview(body)[self._filled:])
            self._filled += count
            return count
        count = read_into(scratch)
        if count:
            self.feed(scratch[:count])
        return count

    def feed(self, data) -> None:
        """Add bytes read elsewhere (a TLS transport's decrypted bytes, a test). Raises
        :class:`InvalidFrameSize`."""
        data = memoryview(data)
        while data:
            body = self._body
            if body is None:
                self._pending += data
                self._split_large_frame()
                return
            count = min(len(body) - self._filled, len(data))
            body[self._filled:self._filled + count] = data[:count]
            self._filled += count
            data = data[count:]
            if self._filled == len(body) and data:
                self._pending += data  # the frames after it wait until it is taken
                return

    def next_frame(self):
        """The next whole payload (bytes-like, without its size), or None until one is in.
        Raises :class:`InvalidFrameSize`."""
        body = self._body
        if body is not None:
            if self._filled < len(body):
                return None
            self._body = None
            return body
        pending = self._pending
        if len(pending) < 4:
            return None
        size = self._check(_SIZE.unpack_from(pending)[0])
        end = 4 + size
        if len(pending) >= end:
            frame = bytes(memoryview(pending)[4:end])
            del pending[:end]
            return frame
        self._split_large_frame()
        return None

    def _split_large_frame(self) -> None:
        """A frame larger than what is pending: give it a buffer of its own, to fill in place."""
        pending = self._pending
        if len(pending) < 4:
            return
        size = self._check(_SIZE.unpack_from(pending)[0])
        if len(pending) >= 4 + size or size <= READ_BYTES:
            return
        body = bytearray(size)
        got = len(pending) - 4
        body[:got] = memoryview(pending)[4:]
        pending.clear()
        self._body, self._filled = body, got

    def _check(self, size: int) -> int:
        if size < 0:
            raise InvalidFrameSize(f"Invalid receive (size = {size})")
        if size > self.max_size:
            raise InvalidFrameSize(f"Invalid receive (size = {size} larger than {self.max_size})")
        return size
