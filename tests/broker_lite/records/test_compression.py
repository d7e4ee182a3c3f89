"""Tests of broker_lite.records.compression: round trips, wire framing, interop, errors, fuzz."""

import gzip
import os
import random
import struct

import kafka.codec as kafka_codec
import pytest
import snappy
import xxhash
import zstandard
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker_lite.records import compression
from broker_lite.records.compression import (
    COMPRESSION_CODEC_MASK,
    DEFAULT_MAX_DECOMPRESSED_BYTES,
    CompressionType,
    compress,
    decompress,
)
from broker_lite.records.errors import (
    CorruptRecordError,
    RecordsError,
    RecordTooLargeError,
    UnsupportedCompressionError,
)
from broker_lite.records.varint import encode_unsigned_varint

NONE, GZIP, SNAPPY, LZ4, ZSTD = (
    CompressionType.NONE,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
    CompressionType.LZ4,
    CompressionType.ZSTD,
)
MAGICS = (0, 1, 2)
ALLOWED = [(c, m) for c in CompressionType for m in MAGICS if not (c is ZSTD and m < 2)]
COMPRESSING = [(c, m) for c, m in ALLOWED if c is not NONE]


def _ids(pairs):
    return [f"{c.kafka_name}-v{m}" for c, m in pairs]


def _mixed(size: int, seed: int = 0) -> bytes:
    """Half random, half repetitive record-like bytes, so every codec has real work to do."""
    rng = random.Random(seed)
    out = bytearray()
    while len(out) < size:
        out += rng.randbytes(rng.randrange(1, 200))
        out += b'{"key": "user-%d", "value": 42}' % rng.randrange(1000) * rng.randrange(1, 20)
    return bytes(out[:size])


SMALL = b"hello kafka, hello broker_lite " * 3
MIB = _mixed(1 << 20)
PAYLOADS = {"empty": b"", "small": SMALL, "1MiB": MIB}

LZ4_MAGIC = b"\x04\x22\x4d\x18"
XERIAL_HEADER = b"\x82SNAPPY\x00" + b"\x00\x00\x00\x01" + b"\x00\x00\x00\x01"

FUZZ = settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


def _hc(data: bytes) -> int:
    return (xxhash.xxh32_intdigest(data) >> 8) & 0xFF



# --- CompressionType ---------------------------------------------------------------------------


def test_codec_ids_and_names():
    assert [int(c) for c in CompressionType] == [0, 1, 2, 3, 4]
    assert [c.kafka_name for c in CompressionType] == ["none", "gzip", "snappy", "lz4", "zstd"]
    assert COMPRESSION_CODEC_MASK == 0x07
    assert DEFAULT_MAX_DECOMPRESSED_BYTES == 256 * 1024 * 1024


@pytest.mark.parametrize("codec", list(CompressionType), ids=lambda c: c.kafka_name)
def test_from_name_is_case_insensitive(codec):
    assert CompressionType.from_name(codec.kafka_name) is codec
    assert CompressionType.from_name(codec.kafka_name.upper()) is codec
    assert CompressionType.from_name(codec.kafka_name.capitalize()) is codec


def test_from_name_unknown_names_the_accepted_values():
    with pytest.raises(UnsupportedCompressionError) as info:
        CompressionType.from_name("brotli")
    message = str(info.value)
    assert "brotli" in message
    for name in ("none", "gzip", "snappy", "lz4", "zstd"):
        assert name in message


@pytest.mark.parametrize(
    "attributes, codec",
    [(0x00, NONE), (0x01, GZIP), (0x0A, SNAPPY), (0x13, LZ4), (0x3C, ZSTD), (-0x8000 | 0x3, LZ4)],
)
def test_from_attributes_reads_the_low_three_bits(attributes, codec):
    assert CompressionType.from_attributes(attributes) is codec


@pytest.mark.parametrize("attributes", [5, 6, 7, 0x0D, 0x1E, 0x7F])
def test_from_attributes_unknown_codec(attributes):
    with pytest.raises(UnsupportedCompressionError, match=str(attributes & 7)):
        CompressionType.from_attributes(attributes)


@pytest.mark.parametrize("codec_id", [5, 6, 7])
def test_unknown_codec_id_in_compress_and_decompress(codec_id):
    with pytest.raises(UnsupportedCompressionError):
        compress(codec_id, b"abc")
    with pytest.raises(UnsupportedCompressionError):
        decompress(codec_id, b"abc")


# --- round trips -------------------------------------------------------------------------------


@pytest.mark.parametrize("payload", list(PAYLOADS), ids=list(PAYLOADS))
@pytest.mark.parametrize("codec, magic", ALLOWED, ids=_ids(ALLOWED))
def test_round_trip(codec, magic, payload):
    data = PAYLOADS[payload]
    packed = compress(codec, data, magic=magic)
    assert type(packed) is bytes
    assert decompress(codec, packed, magic=magic) == data
    if codec is not NONE and len(data) > 1000:
        assert len(packed) < len(data)


@pytest.mark.parametrize("codec, magic", ALLOWED, ids=_ids(ALLOWED))
def test_accepts_any_bytes_like(codec, magic):
    data = _mixed(5000, seed=3)
    expected = compress(codec, data, magic=magic)
    for form in (bytearray(data), memoryview(data), memoryview(b"xx" + data)[2:]):
        assert decompress(codec, compress(codec, form, magic=magic), magic=magic) == data
    for form in (bytearray(expected), memoryview(b"??" + expected)[2:]):
        assert decompress(codec, form, magic=magic) == data


@pytest.mark.parametrize("codec, magic", COMPRESSING, ids=_ids(COMPRESSING))
def test_levels(codec, magic):
    levels = {GZIP: [1, 9, -1], SNAPPY: [None], LZ4: [1, 9, 17], ZSTD: [-5, 1, 19]}[codec]
    for level in levels:
        packed = compress(codec, MIB[:100_000], magic=magic, level=level)
        assert decompress(codec, packed, magic=magic) == MIB[:100_000]


@pytest.mark.parametrize(
    "codec, level", [(GZIP, 10), (GZIP, -2), (LZ4, 0), (LZ4, 18), (ZSTD, 23)]
)
def test_bad_level_is_a_value_error(codec, level):
    with pytest.raises(ValueError):
        compress(codec, b"abc", level=level)


@FUZZ
@given(st.binary(max_size=4096))
def test_round_trip_hypothesis(data):
    for codec, magic in ALLOWED:
        assert decompress(codec, compress(codec, data, magic=magic), magic=magic) == data


@pytest.mark.parametrize("codec, magic", ALLOWED, ids=_ids(ALLOWED))
def test_empty_payload_fits_max_size_zero(codec, magic):
    assert decompress(codec, compress(codec, b"", magic=magic), magic=magic, max_size=0) == b""


# --- wire framing ------------------------------------------------------------------------------


def _xerial_blocks(stream: bytes) -> list[bytes]:
    assert stream[:16] == XERIAL_HEADER
    blocks, pos = [], 16
    while pos < len(stream):
        (length,) = struct.unpack_from(">i", stream, pos)
        blocks.append(stream[pos + 4 : pos + 4 + length])
        pos += 4 + length
    assert pos == len(stream)
    return blocks


def test_xerial_header_exact():
    assert compress(SNAPPY, b"") == XERIAL_HEADER
    packed = compress(SNAPPY, SMALL)
    assert packed[:16] == b"\x82SNAPPY\x00\x00\x00\x00\x01\x00\x00\x00\x01"
    (block,) = _xerial_blocks(packed)
    assert block == snappy.compress(SMALL)


def test_xerial_multi_block():
    data = MIB[:100_000]
    blocks = _xerial_blocks(compress(SNAPPY, data))
    assert [len(snappy.uncompress(b)) for b in blocks] == [32768, 32768, 32768, 100_000 - 98304]
    assert b"".join(snappy.uncompress(b) for b in blocks) == data
    assert decompress(SNAPPY, compress(SNAPPY, data)) == data


def test_xerial_concatenated_streams_and_raw_block():
    a, b = MIB[:40_000], MIB[40_000:50_000]
    assert decompress(SNAPPY, compress(SNAPPY, a) + compress(SNAPPY, b)) == a + b
    # librdkafka writes one plain raw snappy block.
    assert decompress(SNAPPY, snappy.compress(MIB)) == MIB
    assert decompress(SNAPPY, snappy.compress(b"")) == b""


def test_xerial_ignores_version_fields():
    # Some producers write the version fields little-endian; readers only trust the magic.
    packed = bytearray(compress(SNAPPY, SMALL))
    packed[8:16] = struct.pack("<ii", 1, 1)
    assert decompress(SNAPPY, bytes(packed)) == SMALL


@pytest.mark.parametrize("magic", MAGICS)
@pytest.mark.parametrize("data", [b"", SMALL, MIB], ids=["empty", "small", "1MiB"])
def test_lz4_frame_header(magic, data):
    frame = compress(LZ4, data, magic=magic)
    assert frame[:4] == LZ4_MAGIC
    assert frame[4] == 0x60  # version 01, independent blocks, no checksums, no content size
    assert frame[5] == 0x40  # 64 KiB blocks
    correct = _hc(frame[4:6])
    broken = _hc(frame[0:6])  # KAFKA-3160: magic number included in the checksum
    assert correct != broken
    assert frame[6] == (broken if magic == 0 else correct)
    assert frame[-4:] == b"\x00\x00\x00\x00"  # end mark, no content checksum


def test_lz4_blocks_are_at_most_64k():
    frame = compress(LZ4, os.urandom(200_000), magic=2)
    pos, sizes = 7, []
    while True:
        (word,) = struct.unpack_from("<I", frame, pos)
        if word == 0:
            break
        size = word & 0x7FFFFFFF
        sizes.append(size)
        pos += 4 + size
    assert pos + 4 == len(frame)
    assert len(sizes) == 4 and all(s <= 65536 + 4 for s in sizes)


def test_other_framings():
    assert compress(GZIP, SMALL)[:3] == b"\x1f\x8b\x08"
    assert compress(ZSTD, SMALL)[:4] == b"\x28\xb5\x2f\xfd"
    assert compress(NONE, bytearray(SMALL)) == SMALL


def test_zstd_frames_without_content_size_and_concatenated():
    no_size = zstandard.ZstdCompressor(level=3, write_content_size=False).compress(MIB)
    assert zstandard.frame_content_size(no_size) == -1
    assert decompress(ZSTD, no_size) == MIB
    streamed = zstandard.ZstdCompressor().compressobj()
    chunked = streamed.compress(MIB[:1000]) + streamed.compress(MIB[1000:]) + streamed.flush()
    assert decompress(ZSTD, chunked) == MIB
    assert decompress(ZSTD, compress(ZSTD, b"ab") + no_size) == b"ab" + MIB


def test_gzip_concatenated_members():
    assert decompress(GZIP, gzip.compress(b"abc") + gzip.compress(b"def")) == b"abcdef"


# --- interop with kafka-python's codecs --------------------------------------------------------

INTEROP = {"empty": b"", "small": SMALL, "100KB": MIB[:100_000]}
INTEROP_NONEMPTY = {k: v for k, v in INTEROP.items() if v}


@pytest.mark.parametrize("data", list(INTEROP.values()), ids=list(INTEROP))
@pytest.mark.parametrize("magic", MAGICS)
def test_kafka_python_snappy_decodes_here(magic, data):
    xerial = kafka_codec.snappy_encode(data, xerial_compatible=True)
    raw = kafka_codec.snappy_encode(data, xerial_compatible=False)
    assert decompress(SNAPPY, xerial, magic=magic) == data
    assert decompress(SNAPPY, raw, magic=magic) == data
    assert xerial == compress(SNAPPY, data, magic=magic)


@pytest.mark.parametrize("data", list(INTEROP_NONEMPTY.values()), ids=list(INTEROP_NONEMPTY))
def test_our_snappy_decodes_with_kafka_python(data):
    # (kafka-python cannot tell a header-only xerial stream from a raw block, so no empty case.)
    assert kafka_codec.snappy_decode(compress(SNAPPY, data)) == data


@pytest.mark.parametrize("data", list(INTEROP.values()), ids=list(INTEROP))
def test_kafka_python_old_lz4_decodes_with_magic_0_and_1(data):
    old = kafka_codec.lz4_encode_old_kafka(data)
    assert decompress(LZ4, old, magic=0) == data
    assert decompress(LZ4, old, magic=1) == data
    with pytest.raises(CorruptRecordError, match="checksum"):
        decompress(LZ4, old, magic=2)


@pytest.mark.parametrize("data", list(INTEROP.values()), ids=list(INTEROP))
@pytest.mark.parametrize("magic", MAGICS)
def test_kafka_python_lz4_decodes_here(magic, data):
    framed = kafka_codec.lz4_encode(data)  # with a content-size field
    assert decompress(LZ4, framed, magic=magic) == data


@pytest.mark.parametrize("data", list(INTEROP.values()), ids=list(INTEROP))
def test_our_lz4_decodes_with_kafka_python(data):
    assert kafka_codec.lz4_decode_old_kafka(compress(LZ4, data, magic=0)) == data
    assert kafka_codec.lz4_decode(compress(LZ4, data, magic=1)) == data
    assert kafka_codec.lz4_decode(compress(LZ4, data, magic=2)) == data
    with pytest.raises(RuntimeError):  # liblz4 rejects the v0 checksum, as Kafka >= 0.10 did
        kafka_codec.lz4_decode(compress(LZ4, data, magic=0))


@pytest.mark.parametrize("data", list(INTEROP.values()), ids=list(INTEROP))
@pytest.mark.parametrize("magic", MAGICS)
def test_gzip_interop(magic, data):
    assert decompress(GZIP, kafka_codec.gzip_encode(data), magic=magic) == data
    assert kafka_codec.gzip_decode(compress(GZIP, data, magic=magic)) == data


@pytest.mark.parametrize("data", list(INTEROP.values()), ids=list(INTEROP))
def test_zstd_interop(data):
    assert decompress(ZSTD, kafka_codec.zstd_encode(data), magic=2) == data
    assert kafka_codec.zstd_decode(compress(ZSTD, data, magic=2)) == data


# --- errors ------------------------------------------------------------------------------------


@pytest.mark.parametrize("magic", [0, 1])
def test_zstd_needs_magic_2(magic):
    with pytest.raises(UnsupportedCompressionError, match="magic"):
        compress(ZSTD, SMALL, magic=magic)
    with pytest.raises(UnsupportedCompressionError, match="magic"):
        decompress(ZSTD, compress(ZSTD, SMALL), magic=magic)


@pytest.mark.parametrize("codec, magic", ALLOWED, ids=_ids(ALLOWED))
def test_max_size_exceeded(codec, magic):
    packed = compress(codec, bytes(1 << 20), magic=magic)
    with pytest.raises(RecordTooLargeError):
        decompress(codec, packed, magic=magic, max_size=1000)
    data = MIB[:70_000]
    packed = compress(codec, data, magic=magic)
    assert decompress(codec, packed, magic=magic, max_size=len(data)) == data
    with pytest.raises(RecordTooLargeError):
        decompress(codec, packed, magic=magic, max_size=len(data) - 1)


def test_max_size_without_content_size_field():
    no_size = zstandard.ZstdCompressor(write_content_size=False).compress(bytes(10 << 20))
    with pytest.raises(RecordTooLargeError):
        decompress(ZSTD, no_size, max_size=(10 << 20) - 1)
    old = kafka_codec.lz4_encode_old_kafka(bytes(1 << 20))
    with pytest.raises(RecordTooLargeError):
        decompress(LZ4, old, magic=0, max_size=1000)


def test_snappy_huge_preamble_refused_before_the_library_runs(monkeypatch):
    def boom(_data):
        raise AssertionError("snappy.uncompress must not be reached")

    monkeypatch.setattr(compression.snappy, "uncompress", boom)
    raw = encode_unsigned_varint(2**31) + b"\x00" * 16
    with pytest.raises(RecordTooLargeError):
        decompress(SNAPPY, raw)
    xerial = XERIAL_HEADER + struct.pack(">i", len(raw)) + raw
    with pytest.raises(RecordTooLargeError):
        decompress(SNAPPY, xerial)
    # The limit counts across blocks: a second block that would overflow is refused too.
    first = snappy.compress(b"a" * 600)
    second = encode_unsigned_varint(600) + b"\x00"
    two = b"".join(
        [XERIAL_HEADER, struct.pack(">i", len(first)), first,
         struct.pack(">i", len(second)), second]
    )
    monkeypatch.undo()
    with pytest.raises(RecordTooLargeError):
        decompress(SNAPPY, two, max_size=1000)


@pytest.mark.parametrize(
    "raw", [b"\x80\x80\x80\x80\x80\x01", b"\xff\xff\xff\xff\x1f", b"\x80", b"\x05abc"]
)
def test_snappy_bad_preamble_is_corrupt(raw):
    with pytest.raises(CorruptRecordError):
        decompress(SNAPPY, raw)


def test_lz4_broken_checksum_with_magic_2_is_corrupt():
    frame = bytearray(compress(LZ4, SMALL, magic=2))
    frame[6] = _hc(bytes(frame[:6]))
    with pytest.raises(CorruptRecordError, match="checksum"):
        decompress(LZ4, bytes(frame), magic=2)
    assert decompress(LZ4, bytes(frame), magic=1) == SMALL
    assert decompress(LZ4, bytes(frame), magic=0) == SMALL


@pytest.mark.parametrize("magic", MAGICS)
def test_lz4_garbage_checksum_is_corrupt(magic):
    frame = bytearray(compress(LZ4, SMALL, magic=magic))
    valid = {_hc(bytes(frame[4:6])), _hc(bytes(frame[:6]))}
    frame[6] = next(v for v in range(256) if v not in valid)
    with pytest.raises(CorruptRecordError, match="checksum"):
        decompress(LZ4, bytes(frame), magic=magic)


@pytest.mark.parametrize("codec, magic", COMPRESSING, ids=_ids(COMPRESSING))
def test_empty_and_truncated_input_is_corrupt(codec, magic):
    with pytest.raises(CorruptRecordError):
        decompress(codec, b"", magic=magic)
    packed = compress(codec, MIB[:100_000], magic=magic)
    for cut in (1, 7, 17, len(packed) // 2, len(packed) - 1):
        with pytest.raises(CorruptRecordError):
            decompress(codec, packed[:cut], magic=magic)


@pytest.mark.parametrize("codec, magic", COMPRESSING, ids=_ids(COMPRESSING))
def test_library_errors_are_chained(codec, magic):
    packed = bytearray(compress(codec, MIB[:10_000], magic=magic))
    packed[len(packed) // 2 :] = b"\xff" * (len(packed) - len(packed) // 2)
    with pytest.raises(CorruptRecordError) as info:
        decompress(codec, bytes(packed), magic=magic)
    assert codec.kafka_name in str(info.value)


def test_library_error_cause_is_kept():
    with pytest.raises(CorruptRecordError) as info:
        decompress(GZIP, b"\x1f\x8b\x08\x00" + b"\xff" * 20)
    assert info.value.__cause__ is not None
    with pytest.raises(CorruptRecordError) as info:
        decompress(ZSTD, b"\x28\xb5\x2f\xfd" + b"\xff" * 20)
    assert isinstance(info.value.__cause__, zstandard.ZstdError)


def test_bad_magic_argument():
    with pytest.raises(ValueError):
        compress(GZIP, b"x", magic=3)
    with pytest.raises(CorruptRecordError):
        decompress(GZIP, compress(GZIP, b"x"), magic=3)


# --- fuzz --------------------------------------------------------------------------------------

PREFIXES = [
    b"",
    b"\x1f\x8b\x08\x00",
    XERIAL_HEADER,
    b"\x82SNAPPY\x00",
    LZ4_MAGIC + b"\x60\x40",
    LZ4_MAGIC + b"\x68\x40",
    LZ4_MAGIC + b"\x60\x40\x82",
    LZ4_MAGIC + b"\x60\x40\xc0",
    b"\x28\xb5\x2f\xfd",
]


def _decode_or_records_error(codec, data, magic):
    try:
        out = decompress(codec, data, magic=magic, max_size=1 << 20)
    except RecordsError:
        return None
    assert type(out) is bytes
    return out


@FUZZ
@given(st.sampled_from(PREFIXES), st.binary(max_size=2048))
def test_fuzz_random_bytes(prefix, tail):
    data = prefix + tail
    for codec, magic in ALLOWED:
        _decode_or_records_error(codec, data, magic)


@FUZZ
@given(st.binary(max_size=3000), st.data())
def test_fuzz_mutated_valid_output(payload, draw):
    for codec, magic in COMPRESSING:
        packed = compress(codec, payload, magic=magic)
        cut = draw.draw(st.integers(0, len(packed) - 1), label="cut")
        _decode_or_records_error(codec, packed[:cut], magic)
        flipped = bytearray(packed)
        bit = draw.draw(st.integers(0, len(packed) * 8 - 1), label="bit")
        flipped[bit // 8] ^= 1 << (bit % 8)
        _decode_or_records_error(codec, bytes(flipped), magic)
