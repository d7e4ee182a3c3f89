"""The compiled record codecs against the pure-Python reference, and how an install gets them
(the compiled payload codecs too, :mod:`broker_lite.serde._native`, in the no-compiler wheel).

* which codecs run: built where a C compiler works, forced off by ``KPY_PURE_PYTHON``;
* decoding: random batches and corrupted ones give the same columns, or the same error with the
  same message, on both paths; the compiled decoder accepts exactly what the reference accepts;
* encoding: random Arrow tables give the same batch bytes on both paths;
* a wheel built where no C compiler works installs, says once that it runs the Python codecs,
  and decodes and encodes on them.
"""

import os
import shlex
import shutil
import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from broker_lite.records import (
    CompressionType,
    RecordBatchBuilder,
    TimestampType,
    _native,
    assemble_batch,
    iter_batches,
    iter_records,
)
from broker_lite.records.arrow import batches_to_arrow
from broker_lite.records.arrow.decode import (
    allocate_buffer,
    compiled_regions,
    records_sections,
)
from broker_lite.records.arrow.encode import arrow_to_batch
from broker_lite.records.arrow.schema import HEADER_TYPE
from broker_lite.serde import _native as serde_native

from .codec_paths import COMPILED, on_path, outcome, same_on_both_paths

REPO_ROOT = Path(__file__).resolve().parents[3]
T0 = 1_700_000_000_000
DIFFERENTIAL = settings(max_examples=150, deadline=None,
                        suppress_health_check=[HealthCheck.too_slow])


def _run_python(code: str, *args: str, env: dict[str, str], cwd: Path
                ) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code), *args],
                          capture_output=True, text=True, timeout=120, env=env, cwd=cwd)


# -- which codecs run --------------------------------------------------------------------------


def _c_compiler_builds_extensions(tmp_path: Path) -> bool:
    """Whether this Python's C compiler (``$CC``, else the one Python was built with) compiles
    a file that includes Python.h, as the install's build of the extension does."""
    compiler = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    source = tmp_path / "probe.c"
    source.write_text("#include <Python.h>\nint probe(void) { return 0; }\n")
    try:
        built = subprocess.run([*compiler, "-I", sysconfig.get_paths()["include"], "-c",
                                str(source), "-o", str(tmp_path / "probe.o")],
                               capture_output=True, timeout=60)
    except OSError:  # no such compiler
        return False
    return built.returncode == 0


#: each package with a compiled twin: its switch, and its extension's module name
NATIVE = {"records": (_native, "broker_lite.records._native._codec", "record codecs"),
          "serde": (serde_native, "broker_lite.serde._native._serde", "payload codecs")}


@pytest.mark.parametrize("package", NATIVE)
def test_compiled_codecs_are_built_where_a_c_compiler_works(tmp_path: Path, package: str
                                                            ) -> None:
    switch, name, _ = NATIVE[package]
    compiled = switch.compiled()
    if _c_compiler_builds_extensions(tmp_path):
        assert compiled is not None, "a C compiler works here, but the install did not build " \
            f"{name}: see the install's build log"
        assert compiled.__name__ == name
    else:
        assert compiled is None


@pytest.mark.parametrize("package", NATIVE)
@pytest.mark.parametrize("setting", ["1", "0"])
def test_kpy_pure_python_forces_the_reference(setting: str, package: str) -> None:
    switch, _, what = NATIVE[package]
    compiled = switch.compiled()
    expected = f"{what}: pure Python (KPY_PURE_PYTHON is set)" if setting == "1" else \
        f"{what}: compiled" if compiled is not None else \
        f"{what}: pure Python (the compiled ones were not built at install)"
    env = dict(os.environ, KPY_PURE_PYTHON=setting)
    ran = _run_python(f"""
        from broker_lite.{package} import _native
        print(_native.codec is None, _native.describe())
    """, env=env, cwd=REPO_ROOT)
    assert ran.returncode == 0, ran.stderr
    is_none, line = ran.stdout.strip().split(" ", 1)
    assert line.startswith(expected)
    assert is_none == str(setting == "1" or compiled is None)


# -- decoding: the same columns or the same error ----------------------------------------------

records_strategy = st.lists(
    st.tuples(
        st.none() | st.binary(max_size=30),
        st.none() | st.binary(max_size=200),
        st.lists(st.tuples(st.text(max_size=8), st.none() | st.binary(max_size=12)), max_size=3),
        st.one_of(st.integers(T0 - 10**6, T0 + 10**6), st.integers(-(2**62), 2**62)),
    ),
    max_size=30,
)
codecs_strategy = st.sampled_from([CompressionType.NONE, CompressionType.LZ4,
                                   CompressionType.ZSTD])


def _batches(batches: list, codec: CompressionType, log_append: bool) -> bytes:
    data = b""
    next_offset = 0
    for records in batches:
        builder = RecordBatchBuilder(
            compression=codec, base_offset=next_offset,
            timestamp_type=TimestampType.LOG_APPEND_TIME if log_append else
            TimestampType.CREATE_TIME)
        for key, value, headers, ts in records:
            builder.append(value, key=key, headers=headers, timestamp=ts)
        data += builder.build()
        next_offset += max(len(records), 1)
    return data


def _decode(data: bytes, include_headers: bool, validate: bool = True) -> pa.RecordBatch:
    return batches_to_arrow(iter_batches(data, validate=validate), topic="t", partition=3,
                            include_headers=include_headers)


def _compiled_accepts(data: bytes, include_headers: bool) -> bool:
    """Whether the compiled decoder takes the records of ``data`` (one run of v2 batches)."""
    assert COMPILED is not None
    group = list(iter_batches(data))
    data, regions = records_sections(group, joined=False)  # as the decoder passes them
    return COMPILED.decode_v2(data, compiled_regions(regions, group), include_headers,
                              allocate_buffer) is not None


@DIFFERENTIAL
@given(batches=st.lists(records_strategy, min_size=1, max_size=3), codec=codecs_strategy,
       log_append=st.booleans(), include_headers=st.booleans())
def test_random_batches_decode_the_same_on_both_paths(
        batches: list, codec: CompressionType, log_append: bool, include_headers: bool) -> None:
    data = _batches(batches, codec, log_append)
    reference = outcome(lambda: same_on_both_paths(lambda: _decode(data, include_headers)))
    if COMPILED is not None:  # it takes every batch the reference takes, and only those
        assert _compiled_accepts(data, include_headers) == (reference[0] == "ok"), reference


@st.composite
def corrupted_sections(draw: st.DrawFn) -> tuple[bytes, int]:
    """A valid records section with bytes overwritten, cut or added, and the record count it
    claims: what a batch with a correct CRC around bad records holds."""
    records = draw(records_strategy.filter(bool))
    builder = RecordBatchBuilder()
    for key, value, headers, ts in records:
        builder.append(value, key=key, headers=headers, timestamp=ts)
    section = bytearray(next(iter_batches(builder.build())).records_data())
    for _ in range(draw(st.integers(1, 4))):
        at = draw(st.integers(0, len(section) - 1))
        section[at] = draw(st.sampled_from([0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE])
                           | st.integers(0, 255))
    cut = draw(st.sampled_from(["none", "truncate", "extend"]))
    if cut == "truncate":
        del section[draw(st.integers(0, len(section) - 1)):]
    elif cut == "extend":
        section += draw(st.binary(min_size=1, max_size=8))
    count = len(records) + draw(st.sampled_from([0, 0, 0, -1, 1, 1000]))
    return bytes(section), max(count, 0)


@DIFFERENTIAL
@given(corrupted=corrupted_sections(), codec=codecs_strategy, include_headers=st.booleans(),
       validate=st.booleans())
def test_corrupt_records_fail_the_same_on_both_paths(
        corrupted: tuple[bytes, int], codec: CompressionType, include_headers: bool,
        validate: bool) -> None:
    section, count = corrupted
    data = assemble_batch(section, record_count=count, last_offset_delta=max(count - 1, 0),
                          base_timestamp=T0, max_timestamp=T0, compression=codec)
    reference = outcome(lambda: same_on_both_paths(
        lambda: _decode(data, include_headers, validate)))
    if COMPILED is not None:
        assert _compiled_accepts(data, include_headers) == (reference[0] == "ok"), reference


# -- encoding: the same bytes ------------------------------------------------------------------


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    n = draw(st.integers(0, 40))
    binary = st.none() | st.binary(max_size=40)
    columns: dict[str, pa.Array] = {}
    as_text = draw(st.booleans())
    values = draw(st.lists(st.none() | st.text(max_size=20) if as_text else binary,
                           min_size=n, max_size=n))
    columns["value"] = pa.array(values, pa.string() if as_text else pa.binary())
    if draw(st.booleans()):
        columns["key"] = pa.array(draw(st.lists(binary, min_size=n, max_size=n)), pa.binary())
    if draw(st.booleans()):
        stamps = draw(st.lists(st.none() | st.integers(-(2**62), 2**62), min_size=n, max_size=n))
        columns["timestamp"] = pa.array(stamps, pa.int64())
    if draw(st.booleans()):
        header = st.fixed_dictionaries({"key": st.text(max_size=6),
                                        "value": st.none() | st.binary(max_size=8)})
        columns["headers"] = pa.array(
            draw(st.lists(st.none() | st.lists(header, max_size=3), min_size=n, max_size=n)),
            pa.list_(HEADER_TYPE))
    table = pa.table(columns)
    start = draw(st.integers(0, n))  # a slice: arrays that start inside their buffers
    return table.slice(start, draw(st.integers(0, n - start)))


@DIFFERENTIAL
@given(table=tables(), codec=codecs_strategy)
def test_random_tables_encode_to_the_same_bytes_on_both_paths(table: pa.Table,
                                                             codec: CompressionType) -> None:
    data = same_on_both_paths(
        lambda: arrow_to_batch(table, compression=codec, timestamp=T0, base_offset=5))
    assert len(list(iter_records(data))) == table.num_rows


# -- an install without a C compiler -----------------------------------------------------------

_SOURCES = ("pyproject.toml", "README.md", "LICENSE", "broker_lite", "kspark")
_NO_COMPILER_CHECK = """
    import logging, sys
    logging.basicConfig(format="%(levelname)s %(name)s: %(message)s")
    import broker_lite.records._native as native
    from broker_lite.records import iter_batches
    from broker_lite.records.arrow import batches_to_arrow
    from broker_lite.records.arrow.encode import arrow_to_batch
    import pyarrow as pa
    import importlib; importlib.import_module("broker_lite.records._native")  # cached: no 2nd line
    assert native.__file__.startswith(sys.argv[1]), native.__file__
    assert native.codec is None and native.compiled() is None
    data = arrow_to_batch(pa.table({"value": [b"a", None], "key": ["k", None]}), timestamp=7)
    rows = batches_to_arrow(iter_batches(data, validate=True), topic="t", partition=0)
    print(rows.column("value").to_pylist(), rows.column("key").to_pylist(), native.describe())
    import broker_lite.serde._native as serde_native
    from broker_lite.registry.schemas import parse_schema
    from broker_lite.serde.avro.reader import AvroReader
    assert serde_native.codec is None and serde_native.compiled() is None
    import numpy as np
    decoder = AvroReader(parse_schema("AVRO", '"long"')).decoder()
    print(decoder.decode(b"\\x04", np.array([0]), np.array([1]), False)[0].to_pylist(),
          serde_native.describe())
"""


@pytest.mark.slow
def test_a_wheel_built_without_a_c_compiler_installs_and_runs_the_python_codecs(
        tmp_path: Path) -> None:
    """``CC=false``: every compile fails, as on a machine without a compiler. The wheel still
    builds (the extension is optional), holds no compiled module, and the installed package
    says once that it runs the pure-Python codecs, which decode and encode."""
    source = tmp_path / "source"
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.so", "build", "*.egg-info")
    for name in _SOURCES:
        origin = REPO_ROOT / name
        if origin.is_dir():
            shutil.copytree(origin, source / name, ignore=ignore)
        else:
            shutil.copy2(origin, source / name)
    env = {key: value for key, value in os.environ.items() if not key.startswith("KPY_")}
    env.update(CC="false", CXX="false")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-v", "-w", str(tmp_path / "dist"),
         str(source)], capture_output=True, text=True, timeout=600, env=env)
    assert built.returncode == 0, built.stdout[-3000:] + built.stderr[-3000:]
    for extension in ("broker_lite.records._native._codec", "broker_lite.serde._native._serde"):
        assert f"building '{extension}' extension" in built.stdout + built.stderr
    (wheel,) = (tmp_path / "dist").glob("kpy-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
        assert not [name for name in names if name.endswith((".so", ".pyd"))]
        assert "broker_lite/records/_native/v2_decode.c" in names
        assert "broker_lite/serde/_native/avro_decode.c" in names
        archive.extractall(tmp_path / "installed")
    installed = str(tmp_path / "installed")
    ran = _run_python(_NO_COMPILER_CHECK, installed, env=dict(env, PYTHONPATH=installed),
                      cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    assert ran.stdout.splitlines() == [
        "[b'a', None] [b'k', None] record codecs: pure Python (the compiled ones were not built "
        "at install)",
        "[2] payload codecs: pure Python (the compiled ones were not built at install)"]
    warnings = [line for line in ran.stderr.splitlines() if "compiled" in line]
    assert warnings == [f"WARNING broker_lite.{what}._native: kpy's compiled {kind} codecs are "
                        "not built (no C compiler at install?): using the pure-Python codecs, "
                        "which are slower; reinstall kpy where a C compiler is present to build "
                        "them" for what, kind in (("records", "record"), ("serde", "payload"))]


def test_on_path_swaps_the_codecs_and_puts_them_back() -> None:
    before = _native.codec
    with on_path("python"):
        assert _native.codec is None
    assert _native.codec is before
