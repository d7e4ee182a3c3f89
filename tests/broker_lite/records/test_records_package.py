"""The record packages give every name they list, each imported from its module when first asked
for, so that the row schema (``broker_lite.records.arrow.schema``) and the wire
protocol's use of the record errors and varints load neither the decoder nor the codecs."""

import json
import subprocess
import sys

import pytest

import broker_lite.records
import broker_lite.records.arrow


@pytest.mark.parametrize("package", [broker_lite.records, broker_lite.records.arrow],
                         ids=lambda package: package.__name__)
def test_every_listed_name_is_given_and_in_dir(package):
    assert [name for name in package.__all__ if getattr(package, name, None) is None] == []
    assert set(package.__all__) <= set(dir(package))
    with pytest.raises(AttributeError, match="has no attribute 'batches_to_rows'"):
        package.batches_to_rows  # noqa: B018


def test_names_are_the_modules_own_and_submodules_still_import():
    from broker_lite.records import CompressionType, compression
    from broker_lite.records.arrow import batches_to_arrow
    from broker_lite.records.arrow.decode import batches_to_arrow as decoder

    assert CompressionType is compression.CompressionType and batches_to_arrow is decoder


HEAVY = ("broker_lite.records.arrow.decode", "broker_lite.records.compression",
         "broker_lite.records.record_batch", "zstandard", "lz4", "crc32c", "pyarrow", "numpy")


def heavy_modules_after(statement: str) -> list[str]:
    code = (f"import json, sys\n{statement}\n"
            f"print(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))")
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True,
                                     text=True, check=True, timeout=120).stdout)


def test_the_protocol_loads_no_decoder_no_codec_and_no_arrow():
    assert heavy_modules_after("import broker_lite.protocol") == []


def test_the_arrow_schema_loads_arrow_but_no_decoder_and_no_codec():
    assert heavy_modules_after("import broker_lite.records.arrow.schema") == ["numpy", "pyarrow"]
