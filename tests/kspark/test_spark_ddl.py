"""The row schema twice: as Arrow columns (what the decoder writes) and as Spark's DDL (what the
data source states, from a module without pyarrow); both must name the same columns, in the same
order, with the same types."""

import re
import subprocess
import sys

import pyarrow as pa
import pytest

from broker_lite.records.arrow.schema import HEADERS_TYPE, TIMESTAMP_TYPE, record_schema
from kspark.spark_ddl import SPARK_DDL, SPARK_DDL_WITH_HEADERS

SPARK_TYPE_OF = {pa.binary(): "binary", pa.string(): "string", pa.int32(): "int",
                 pa.int64(): "long", TIMESTAMP_TYPE: "timestamp",
                 HEADERS_TYPE: "array<struct<key: string, value: binary>>"}


def ddl_columns(ddl: str) -> list[tuple[str, str]]:
    """``name type`` pairs of a DDL string (commas inside ``<...>`` belong to the type)."""
    return [tuple(column.split(" ", 1)) for column in re.split(r", (?![^<]*>)", ddl)]


@pytest.mark.parametrize("include_headers, ddl", [(False, SPARK_DDL),
                                                  (True, SPARK_DDL_WITH_HEADERS)])
def test_the_ddl_states_the_arrow_schema(include_headers, ddl):
    arrow = [(f.name, SPARK_TYPE_OF[f.type]) for f in record_schema(include_headers)]
    assert ddl_columns(ddl) == arrow


def test_the_ddl_loads_no_arrow():
    code = "import sys, kspark.spark_ddl; print('pyarrow' in sys.modules, 'numpy' in sys.modules)"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            check=True, timeout=120).stdout.split()
    assert loaded == ["False", "False"]
