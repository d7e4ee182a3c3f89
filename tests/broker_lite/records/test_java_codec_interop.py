"""Interoperability with the Java codec libraries that Kafka's Java client compresses with.

Kafka's Java client writes snappy through snappy-java's ``SnappyOutputStream`` (the xerial stream)
and zstd through zstd-jni's ``ZstdOutputStreamNoFinalizer``, and gzip through ``GZIPOutputStream``.
The pyspark wheel ships snappy-java and zstd-jni, so a few lines of Java run those very classes
on the same bytes: their output is decompressed here, ours by them.
"""

import os
import shutil
import subprocess
from pathlib import Path

import pyspark
import pytest

from broker_lite.records import CompressionType, compress, decompress
from broker_lite.records.varint import decode_unsigned_varint

JAVA_SOURCE = r"""
import java.io.*;
import java.util.zip.*;
import org.xerial.snappy.*;
import com.github.luben.zstd.*;

public class JavaCodecs {
    public static void main(String[] args) throws Exception {
        byte[] input = System.in.readAllBytes();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayInputStream in = new ByteArrayInputStream(input);
        switch (args[0]) {
            case "snappy-compress":
                try (OutputStream s = new SnappyOutputStream(out)) { s.write(input); }
                break;
            case "snappy-decompress":
                try (InputStream s = new SnappyInputStream(in)) { s.transferTo(out); }
                break;
            case "zstd-compress":
                try (OutputStream s = new ZstdOutputStreamNoFinalizer(out)) { s.write(input); }
                break;
            case "zstd-decompress":
                try (InputStream s = new ZstdInputStreamNoFinalizer(in)) { s.transferTo(out); }
                break;
            case "gzip-compress":
                try (OutputStream s = new GZIPOutputStream(out, 8 * 1024)) { s.write(input); }
                break;
            case "gzip-decompress":
                try (InputStream s = new GZIPInputStream(in)) { s.transferTo(out); }
                break;
            default: throw new IllegalArgumentException(args[0]);
        }
        System.out.write(out.toByteArray());
        System.out.flush();
    }
}
"""

# 200 KiB: several 32 KiB xerial blocks, mixed compressible and random content.
DATA = (b"kafka record batch " * 4000) + os.urandom(60_000) + bytes(40_000)


@pytest.fixture(scope="module")
def java_codecs(tmp_path_factory):
    java, javac = shutil.which("java"), shutil.which("javac")
    if not (java and javac):
        pytest.fail("Java 17 (java and javac) is required for the Java codec interop tests")
    jars = Path(pyspark.__file__).parent / "jars"
    classpath = [str(next(jars.glob(pattern)))
                 for pattern in ("snappy-java-*.jar", "zstd-jni-*.jar")]
    work = tmp_path_factory.mktemp("java-codecs")
    (work / "JavaCodecs.java").write_text(JAVA_SOURCE)
    subprocess.run([javac, "-cp", os.pathsep.join(classpath), "-d", str(work),
                    str(work / "JavaCodecs.java")], check=True, timeout=300)
    full_classpath = os.pathsep.join([*classpath, str(work)])

    def run(operation: str, data: bytes) -> bytes:
        done = subprocess.run([java, "-cp", full_classpath, "JavaCodecs", operation], input=data,
                              capture_output=True, timeout=120)
        assert done.returncode == 0, done.stderr.decode()
        return done.stdout

    return run


def xerial_block_sizes(stream: bytes) -> list[int]:
    """Uncompressed size of each block of a xerial snappy stream."""
    assert stream[:8] == b"\x82SNAPPY\x00"
    sizes, pos = [], 16
    while pos < len(stream):
        length = int.from_bytes(stream[pos:pos + 4], "big")
        sizes.append(decode_unsigned_varint(stream, pos + 4)[0])
        pos += 4 + length
    return sizes


def test_snappy_java_stream_decodes_here(java_codecs):
    assert decompress(CompressionType.SNAPPY, java_codecs("snappy-compress", DATA)) == DATA


def test_our_snappy_is_read_by_snappy_java(java_codecs):
    assert java_codecs("snappy-decompress", compress(CompressionType.SNAPPY, DATA)) == DATA


def test_snappy_framing_matches_snappy_java(java_codecs):
    theirs = java_codecs("snappy-compress", DATA)
    ours = compress(CompressionType.SNAPPY, DATA)
    assert ours[:16] == theirs[:16]  # magic, version, compatible version
    assert xerial_block_sizes(ours) == xerial_block_sizes(theirs)  # same 32 KiB blocking


def test_zstd_jni_stream_without_content_size_decodes_here(java_codecs):
    theirs = java_codecs("zstd-compress", DATA)
    # Frame header descriptor: no content size (FCS flag 0, single-segment flag 0), as the
    # Java client writes it, so the reader must not rely on a declared size.
    assert theirs[4] & 0xE0 == 0
    assert decompress(CompressionType.ZSTD, theirs) == DATA


def test_our_zstd_is_read_by_zstd_jni(java_codecs):
    assert java_codecs("zstd-decompress", compress(CompressionType.ZSTD, DATA)) == DATA


def test_gzip_both_ways_with_java(java_codecs):
    assert decompress(CompressionType.GZIP, java_codecs("gzip-compress", DATA)) == DATA
    assert java_codecs("gzip-decompress", compress(CompressionType.GZIP, DATA)) == DATA
