"""Compression codecs of Kafka record batches, byte-compatible with the Java client.

The codec id lives in the low three bits of a batch's (or a v0/v1 wrapper message's)
``attributes``. Each codec has its own wire framing, described below, because Kafka did not use
the libraries' defaults everywhere and older clients got some of it wrong.

NONE (0)
    The bytes as they are (``max_size`` still applies, so the limit means the same for all).

GZIP (1)
    A gzip stream (RFC 1952), as ``java.util.zip.GZIPOutputStream`` writes it, default deflate
    level 6. Readers accept concatenated members, as ``GZIPInputStream`` does.

SNAPPY (2)
    The Java client wraps the data in snappy-java's ``SnappyOutputStream`` ("xerial" framing),
    not the official snappy framing format::

        +------------------------+----------+---------------+---------+--------------+-----
        | magic                  | version  | compatible    | block 1 | block 1      | ...
        |                        |          | version       | length  | data         |
        +------------------------+----------+---------------+---------+--------------+-----
        | 82 'SNAPPY' 00         | int32 BE | int32 BE      | int32   | raw snappy   |
        | 8 bytes                | = 1      | = 1           | BE      | block        |
        +------------------------+----------+---------------+---------+--------------+-----

    Each block compresses at most 32 KiB of input. librdkafka instead writes one plain raw snappy
    block (varint uncompressed length, then the snappy elements), so readers tell the two apart
    by the 8-byte magic, as snappy-java's ``SnappyInputStream`` does. The version fields are not
    checked: some producers write them little-endian. A raw block's length preamble is checked
    against the size limit before the snappy library allocates the output.

LZ4 (3)
    One frame of the LZ4 frame format, as Kafka's ``KafkaLZ4BlockOutputStream`` writes it::

        +-------------+-----+-----+--------------+--------------+----+--------+-----+----------+
        | magic       | FLG | BD  | content size | dictionary   | HC | blocks | ... | end mark |
        |             |     |     | (FLG bit 3)  | id (bit 0)   |    |        |     |          |
        +-------------+-----+-----+--------------+--------------+----+--------+-----+----------+
        | 04 22 4D 18 | 60  | 40  | 8 bytes LE   | 4 bytes LE   | 1  | ...    |     | 00000000 |
        +-------------+-----+-----+--------------+--------------+----+--------+-----+----------+

    FLG 0x60 is version 01 with independent blocks and no checksums or content size; BD 0x40 is
    a 64 KiB maximum block size. The frame descriptor is FLG, BD and the optional fields; HC is
    ``(xxh32(descriptor, seed=0) >> 8) & 0xFF``.

    KAFKA-3160: clients before 0.10 computed HC over the frame magic *and* the descriptor. The
    fix came with message format v1, so the Java client still writes that broken HC for magic 0
    and a correct one for magic 1 and later. Readers here accept either HC for magic 0 and 1,
    repairing the byte before handing the frame to liblz4, which would reject it. Magic 2 needs
    a correct HC: no client with the bug could write that format. An HC matching neither is
    corrupt.

ZSTD (4)
    Zstandard frames (RFC 8878). Allowed only in message format v2 (Kafka 2.1, KIP-110). The
    Java client streams through zstd-jni and so writes frames without the content-size field;
    readers therefore decompress in a streaming fashion instead of trusting a size header.

Every decompressor enforces ``max_size`` while it produces output, so a small crafted input
cannot make the broker allocate gigabytes (a "compression bomb"): going over the limit raises
:class:`RecordTooLargeError`. Peak memory while decompressing is about twice the output (so at
most about ``2 * max_size``): the codec libraries gather their output in pieces and then join them
into the ``bytes`` returned. Any other failure to decode, including every error of the codec
libraries, is a :class:`CorruptRecordError`.
"""

from __future__ import annotations

import enum
import struct
import threading
import zlib

import lz4.frame
import snappy
import xxhash
import zstandard

from .errors import (
    CorruptRecordError,
    RecordsError,
    RecordTooLargeError,
    UnsupportedCompressionError,
)

__all__ = [
    "COMPRESSION_CODEC_MASK",
    "DEFAULT_MAX_DECOMPRESSED_BYTES",
    "CompressionType",
    "compress",
    "decompress",
]

COMPRESSION_CODEC_MASK = 0x07
DEFAULT_MAX_DECOMPRESSED_BYTES = 256 * 1024 * 1024

_MAGICS = (0, 1, 2)


class CompressionType(enum.IntEnum):
    """A record batch compression codec; the value is the id stored in ``attributes``."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @property
    def kafka_name(self) -> str:
        """The codec's name in Kafka's ``compression.type`` setting, e.g. ``"gzip"``."""
        return self.name.lower()

    @classmethod
    def from_name(cls, name: str) -> CompressionType:
        """The codec called ``name`` in ``compression.type`` (case-insensitive)."""
        member = _BY_NAME.get(name.lower()) if isinstance(name, str) else None
        if member is None:
            raise UnsupportedCompressionError(
                f"unknown compression type {name!r}; accepted: {', '.join(_BY_NAME)}"
            )
        return member

    @classmethod
    def from_attributes(cls, attributes: int) -> CompressionType:
        """The codec named by the low three bits of a batch's or message's ``attributes``."""
        codec_id = attributes & COMPRESSION_CODEC_MASK
        member = _BY_ID.get(codec_id)  # a dict lookup: every batch read asks this
        if member is None:
            raise UnsupportedCompressionError(
                f"unknown compression codec id {codec_id} in attributes "
                f"0x{attributes & 0xFFFF:04x}; known ids: "
                + ", ".join(f"{m.value} ({m.kafka_name})" for m in cls)
            )
        return member


_BY_NAME = {member.kafka_name: member for member in CompressionType}
_BY_ID = {member.value: member for member in CompressionType}


# ---------------------------------------------------------------------------------------------
# helpers


def _as_view(data) -> memoryview:
    """A flat unsigned-byte view of any bytes-like object, without copying when possible."""
    view = memoryview(data)
    if view.format == "B" and view.ndim == 1 and view.c_contiguous:
        return view
    try:
        return view.cast("B")
    except TypeError:  # not C-contiguous: one copy puts it in order
        return memoryview(view.tobytes())


def _coerce_codec(codec) -> CompressionType:
    if isinstance(codec, CompressionType):
        return codec
    try:
        return CompressionType(codec)
    except ValueError:
        raise UnsupportedCompressionError(
            f"unknown compression codec {codec!r}; known ids: "
            + ", ".join(f"{m.value} ({m.kafka_name})" for m in CompressionType)
        ) from None


def _cause(exc: BaseException) -> str:
    # python-snappy raises a bare UncompressError and keeps the reason in __cause__.
    text = str(exc) or (str(exc.__cause__) if exc.__cause__ is not None else "")
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _too_large(codec: str, max_size: int) -> RecordTooLargeError:
    return RecordTooLargeError(f"{codec}: decompressed data exceeds the limit of {max_size} bytes")


# Thread-local zstd contexts: building one costs ~10 us, more than compressing a small batch,
# and a context must not be used by two threads at once.
_zstd_local = threading.local()


def _zstd_compressor(level: int) -> zstandard.ZstdCompressor:
    cache = getattr(_zstd_local, "compressors", None)
    if cache is None:
        cache = _zstd_local.compressors = {}
    compressor = cache.get(level)
    if compressor is None:
        compressor = cache[level] = zstandard.ZstdCompressor(level=level)
    return compressor


def _zstd_decompressor() -> zstandard.ZstdDecompressor:
    decompressor = getattr(_zstd_local, "decompressor", None)
    if decompressor is None:
        decompressor = _zstd_local.decompressor = zstandard.ZstdDecompressor()
    return decompressor


# ---------------------------------------------------------------------------------------------
# GZIP

_GZIP_WBITS = 16 + zlib.MAX_WBITS  # gzip header and trailer, 32 KiB window
_GZIP_MAGIC = b"\x1f\x8b"


def _gzip_compress(view: memoryview, level: int | None) -> bytes:
    if level is None:
        level = zlib.Z_DEFAULT_COMPRESSION  # 6, as java.util.zip.Deflater
    elif not -1 <= level <= 9:
        raise ValueError(f"gzip compression level must be in -1..9, got {level}")
    return zlib.compress(view, level, wbits=_GZIP_WBITS)


def _gzip_decompress(view: memoryview, max_size: int) -> bytes:
    size = len(view)
    if size == 0:
        raise CorruptRecordError("gzip: compressed data is empty")
    out = []
    produced = 0
    start = 0
    while True:
        stream = zlib.decompressobj(wbits=_GZIP_WBITS)
        try:
            # max_length caps both the output and the memory zlib allocates for it.
            piece = stream.decompress(view[start:], max_size - produced + 1)
        except zlib.error as exc:
            raise CorruptRecordError(
                f"gzip: member at byte {start} is corrupt: {_cause(exc)}"
            ) from exc
        produced += len(piece)
        if produced > max_size:
            raise _too_large("gzip", max_size)
        out.append(piece)
        if not stream.eof:
            raise CorruptRecordError(
                f"gzip: member at byte {start} is truncated ({size} bytes of input)"
            )
        start = size - len(stream.unused_data)
        # Like GZIPInputStream: another member may follow; other trailing bytes are ignored.
        if view[start : start + 2] != _GZIP_MAGIC:
            break
    return out[0] if len(out) == 1 else b"".join(out)


# ---------------------------------------------------------------------------------------------
# SNAPPY

_XERIAL_MAGIC = b"\x82SNAPPY\x00"
_XERIAL_HEADER = _XERIAL_MAGIC + struct.pack(">ii", 1, 1)
_XERIAL_BLOCK_SIZE = 32 * 1024  # snappy-java's SnappyOutputStream default
_INT32 = struct.Struct(">i")
# A block length equal to the first four magic bytes starts a concatenated stream.
_XERIAL_MAGIC_HEAD = _INT32.unpack(_XERIAL_MAGIC[:4])[0]
_SNAPPY_MAX_LENGTH = 0xFFFFFFFF


def _snappy_compress(view: memoryview) -> bytes:
    parts = [_XERIAL_HEADER]
    pack = _INT32.pack
    for start in range(0, len(view), _XERIAL_BLOCK_SIZE):
        block = snappy.compress(view[start : start + _XERIAL_BLOCK_SIZE])
        parts.append(pack(len(block)))
        parts.append(block)
    return b"".join(parts)


def _snappy_raw_length(view: memoryview, offset: int) -> int:
    """The uncompressed length from a raw snappy block's varint preamble (at most 5 bytes)."""
    length = 0
    for i in range(min(5, len(view))):
        byte = view[i]
        length |= (byte & 0x7F) << (7 * i)
        if byte < 0x80:
            if length > _SNAPPY_MAX_LENGTH:
                break
            return length
    raise CorruptRecordError(
        f"snappy: bad uncompressed-length preamble in raw block at byte {offset}"
    )


def _snappy_raw_decompress(view: memoryview, budget: int, max_size: int, offset: int) -> bytes:
    if len(view) == 0:
        raise CorruptRecordError(f"snappy: empty raw block at byte {offset}")
    # Checked here because the snappy library allocates whatever the preamble claims.
    if _snappy_raw_length(view, offset) > budget:
        raise _too_large("snappy", max_size)
    try:
        return snappy.uncompress(view)
    except Exception as exc:
        raise CorruptRecordError(
            f"snappy: raw block at byte {offset} is corrupt: {_cause(exc)}"
        ) from exc


def _snappy_decompress(view: memoryview, max_size: int) -> bytes:
    size = len(view)
    if size == 0:
        raise CorruptRecordError("snappy: compressed data is empty")
    if view[:8] != _XERIAL_MAGIC:
        return _snappy_raw_decompress(view, max_size, max_size, 0)
    if size < len(_XERIAL_HEADER):
        raise CorruptRecordError(f"snappy: xerial header truncated to {size} bytes")
    out = []
    produced = 0
    pos = len(_XERIAL_HEADER)
    unpack_from = _INT32.unpack_from
    while pos < size:
        if size - pos < 4:
            raise CorruptRecordError(f"snappy: xerial block length at byte {pos} is truncated")
        (length,) = unpack_from(view, pos)
        if length == _XERIAL_MAGIC_HEAD and view[pos : pos + 8] == _XERIAL_MAGIC:
            if size - pos < len(_XERIAL_HEADER):
                raise CorruptRecordError(f"snappy: xerial header at byte {pos} is truncated")
            pos += len(_XERIAL_HEADER)
            continue
        if length < 0 or length > size - pos - 4:
            raise CorruptRecordError(
                f"snappy: xerial block at byte {pos} claims {length} bytes, "
                f"{size - pos - 4} remain"
            )
        block = _snappy_raw_decompress(
            view[pos + 4 : pos + 4 + length], max_size - produced, max_size, pos + 4
        )
        produced += len(block)
        out.append(block)
        pos += 4 + length
    return b"".join(out)


# ---------------------------------------------------------------------------------------------
# LZ4

_LZ4_MAGIC = b"\x04\x22\x4d\x18"
_LZ4_FLG = 0x60  # version 01, independent blocks, no checksums, no content size
_LZ4_BD = 0x40  # 64 KiB maximum block size
_LZ4_FLG_CONTENT_SIZE = 0x08
_LZ4_FLG_DICT_ID = 0x01
_LZ4_FIRST_STEP = 64 * 1024


def _lz4_hc(header: memoryview | bytes) -> int:
    return (xxhash.xxh32_intdigest(header) >> 8) & 0xFF


def _lz4_compress(view: memoryview, magic: int, level: int | None) -> bytes:
    if level is None:
        level = 0  # liblz4's fast compressor, as Kafka's default
    elif not 1 <= level <= 17:
        raise ValueError(f"lz4 compression level must be in 1..17, got {level}")
    frame = lz4.frame.compress(
        view,
        compression_level=level,
        block_size=lz4.frame.BLOCKSIZE_MAX64KB,
        block_linked=False,
        content_checksum=False,
        block_checksum=False,
        store_size=False,
    )
    if frame[4] != _LZ4_FLG or frame[5] != _LZ4_BD:
        raise RuntimeError(f"lz4.frame wrote FLG 0x{frame[4]:02x} BD 0x{frame[5]:02x}")
    if magic == 0:
        # KAFKA-3160: message format v0 readers expect the checksum over magic + descriptor.
        frame = b"".join((frame[:6], bytes((_lz4_hc(frame[:6]),)), frame[7:]))
    return frame


def _lz4_decompress(view: memoryview, magic: int, max_size: int) -> bytes:
    size = len(view)
    if size < 7:
        raise CorruptRecordError(f"lz4: frame header truncated to {size} bytes")
    if view[:4] != _LZ4_MAGIC:
        raise CorruptRecordError(f"lz4: bad frame magic {view[:4].hex()}")
    flg = view[4]
    hc_pos = 6
    if flg & _LZ4_FLG_CONTENT_SIZE:
        hc_pos += 8
    if flg & _LZ4_FLG_DICT_ID:
        hc_pos += 4
    if size <= hc_pos:
        raise CorruptRecordError(f"lz4: frame header truncated to {size} bytes")
    hc = view[hc_pos]
    correct = _lz4_hc(view[4:hc_pos])
    if hc != correct:
        if magic < 2 and hc == _lz4_hc(view[:hc_pos]):
            repaired = bytearray(view)
            repaired[hc_pos] = correct
            view = memoryview(repaired)
        else:
            raise CorruptRecordError(
                f"lz4: frame header checksum at byte {hc_pos} is 0x{hc:02x}, "
                f"expected 0x{correct:02x} (magic {magic})"
            )
    decompressor = lz4.frame.LZ4FrameDecompressor()
    # max_length caps the output and the buffer liblz4 allocates up front for it, so it starts
    # near the likely output size (a 256 MiB allocation per call costs more than the work) and
    # grows while the frame has more to give.
    out = []
    produced = 0
    step = max(_LZ4_FIRST_STEP, 4 * size)
    data: bytes | memoryview = view
    while True:
        try:
            piece = decompressor.decompress(data, max_length=min(step, max_size - produced + 1))
        except Exception as exc:
            raise CorruptRecordError(f"lz4: frame is corrupt: {_cause(exc)}") from exc
        produced += len(piece)
        if produced > max_size:
            raise _too_large("lz4", max_size)
        out.append(piece)
        if decompressor.eof:
            break
        if decompressor.needs_input:
            raise CorruptRecordError(f"lz4: frame is truncated ({size} bytes of input)")
        data = b""
        step *= 2
    # Like KafkaLZ4BlockInputStream, bytes after the end mark are ignored.
    return out[0] if len(out) == 1 else b"".join(out)


# ---------------------------------------------------------------------------------------------
# ZSTD

_ZSTD_DEFAULT_LEVEL = 3
_ZSTD_MIN_LEVEL = -(1 << 17)
_ZSTD_MAX_LEVEL = 22
# A zstd block holds at most 128 KiB and takes at least 4 input bytes (an RLE block), so n input
# bytes produce at most (n / 4 + 1) * 128 KiB. Feeding input in steps sized from the remaining
# budget bounds each step's output, since the streaming API has no output limit of its own.
_ZSTD_BLOCK_MAX = 128 * 1024
_ZSTD_MIN_STEP = 64


def _zstd_compress(view: memoryview, level: int | None) -> bytes:
    if level is None:
        level = _ZSTD_DEFAULT_LEVEL
    elif not _ZSTD_MIN_LEVEL <= level <= _ZSTD_MAX_LEVEL:
        raise ValueError(
            f"zstd compression level must be in {_ZSTD_MIN_LEVEL}..{_ZSTD_MAX_LEVEL}, got {level}"
        )
    return _zstd_compressor(level).compress(view)


def _zstd_decompress(view: memoryview, max_size: int) -> bytes:
    size = len(view)
    if size == 0:
        raise CorruptRecordError("zstd: compressed data is empty")
    try:
        declared = zstandard.frame_content_size(view)
    except zstandard.ZstdError:
        declared = -1  # let the decompressor name what is wrong
    if declared > max_size:
        raise _too_large("zstd", max_size)
    decompressor = _zstd_decompressor()
    out = []
    produced = 0
    frame_start = pos = 0
    while frame_start < size:  # one pass per frame: zstd-jni reads concatenated frames too
        stream = decompressor.decompressobj()
        while not stream.eof:
            if pos >= size:
                raise CorruptRecordError(
                    f"zstd: frame at byte {frame_start} is truncated ({size} bytes of input)"
                )
            step = max(_ZSTD_MIN_STEP, 4 * ((max_size - produced) // _ZSTD_BLOCK_MAX))
            chunk = view[pos : pos + step]
            pos += len(chunk)
            try:
                piece = stream.decompress(chunk)
            except zstandard.ZstdError as exc:
                raise CorruptRecordError(
                    f"zstd: frame at byte {frame_start} is corrupt: {_cause(exc)}"
                ) from exc
            produced += len(piece)
            if produced > max_size:
                raise _too_large("zstd", max_size)
            if piece:
                out.append(piece)
        pos -= len(stream.unused_data)
        frame_start = pos
    return out[0] if len(out) == 1 else b"".join(out)


# ---------------------------------------------------------------------------------------------
# public API


def compress(
    codec: CompressionType, data, *, magic: int = 2, level: int | None = None
) -> bytes:
    """Compress ``data`` (any bytes-like object) as ``codec`` for a batch of format ``magic``.

    ``level`` is the codec's compression level (gzip -1..9, lz4 1..17, zstd -131072..22);
    ``None`` picks the Java client's default. It is ignored for NONE and SNAPPY, which have none.
    ZSTD needs ``magic`` 2 (:class:`UnsupportedCompressionError` otherwise).
    """
    codec = _coerce_codec(codec)
    if magic not in _MAGICS:
        raise ValueError(f"unknown message format magic {magic!r}; expected 0, 1 or 2")
    view = _as_view(data)
    if codec is CompressionType.NONE:
        return view.tobytes()
    if codec is CompressionType.GZIP:
        return _gzip_compress(view, level)
    if codec is CompressionType.SNAPPY:
        return _snappy_compress(view)
    if codec is CompressionType.LZ4:
        return _lz4_compress(view, magic, level)
    _require_zstd_magic(magic)
    return _zstd_compress(view, level)


def decompress(
    codec: CompressionType,
    data,
    *,
    magic: int = 2,
    max_size: int = DEFAULT_MAX_DECOMPRESSED_BYTES,
) -> bytes:
    """Decompress ``data`` written by ``codec`` in a batch of format ``magic``.

    Raises :class:`RecordTooLargeError` when the output would exceed ``max_size`` bytes (checked
    while decompressing, so peak memory stays within about ``2 * max_size``),
    :class:`UnsupportedCompressionError` for an unknown codec or ZSTD before magic 2, and
    :class:`CorruptRecordError` for anything else wrong with the bytes.
    """
    codec = _coerce_codec(codec)
    if magic not in _MAGICS:
        raise CorruptRecordError(f"unknown message format magic {magic!r}; expected 0, 1 or 2")
    if max_size < 0:
        raise ValueError(f"max_size must not be negative, got {max_size}")
    view = _as_view(data)
    if codec is CompressionType.ZSTD:
        _require_zstd_magic(magic)
    try:
        if codec is CompressionType.NONE:
            if len(view) > max_size:
                raise _too_large("none", max_size)
            return view.tobytes()
        if codec is CompressionType.GZIP:
            return _gzip_decompress(view, max_size)
        if codec is CompressionType.SNAPPY:
            return _snappy_decompress(view, max_size)
        if codec is CompressionType.LZ4:
            return _lz4_decompress(view, magic, max_size)
        return _zstd_decompress(view, max_size)
    except (RecordsError, MemoryError):
        raise
    except Exception as exc:
        # Codec libraries raise assorted types; callers of untrusted bytes catch RecordsError.
        raise CorruptRecordError(
            f"{codec.kafka_name}: cannot decompress: {_cause(exc)}"
        ) from exc


def _require_zstd_magic(magic: int) -> None:
    if magic < 2:
        raise UnsupportedCompressionError(
            f"zstd compression needs message format v2 (magic 2), got magic {magic}"
        )
