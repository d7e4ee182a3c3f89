"""Rows as tests write them, turned into the Arrow columns the producer takes.

A row is one of:

* a value: ``bytes`` (or ``bytearray`` / ``memoryview``), ``str`` (written as UTF-8) or None
  (a null value, a tombstone on a compacted topic);
* a ``(key, value)`` pair, each as a value above;
* a dict with any of ``key``, ``value``, ``headers``, ``partition`` and ``timestamp``.
  ``headers`` is a list of ``(name, value)`` pairs or a dict (names are strings, values as
  above); ``partition`` an int (rows without one go where the default partitioner puts them);
  ``timestamp`` milliseconds since the epoch or a ``datetime`` (naive ones are taken as UTC).

A ``pyarrow.Table`` / ``RecordBatch`` or a pandas DataFrame with those columns is taken as it
is. The columns built are those the rows use: ``value`` always, ``key``, ``headers``,
``partition`` and ``timestamp`` when some row has one.

>>> to_arrow([("k", "v"), {"value": b"x", "partition": 1}]).to_pydict()
{'value': [b'v', b'x'], 'key': [b'k', None], 'partition': [None, 1]}
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import pyarrow as pa

from broker_lite.records.arrow.schema import HEADERS_TYPE

FIELDS = ("key", "value", "headers", "partition", "timestamp")
_TYPES = {"key": pa.binary(), "value": pa.binary(), "headers": HEADERS_TYPE,
          "partition": pa.int32(), "timestamp": pa.int64()}
_BYTES = (bytes, bytearray, memoryview)
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


class RowError(ValueError):
    """A row that cannot be written; the message names the row and what is wrong with it."""


def to_arrow(rows: Any) -> pa.Table:
    """The rows (see the module docstring) as a Table the producer writes."""
    if isinstance(rows, pa.Table):
        return rows
    if isinstance(rows, pa.RecordBatch):
        return pa.Table.from_batches([rows])
    if _is_pandas(rows):
        return pa.Table.from_pandas(rows, preserve_index=False)
    if isinstance(rows, (str, *_BYTES, Mapping)) or not isinstance(rows, Iterable):
        raise TypeError("rows must be a list of values, (key, value) pairs or dicts, a pyarrow "
                        f"Table or a pandas DataFrame, not {type(rows).__name__}")
    columns: dict[str, list] = {"value": []}
    for index, row in enumerate(rows):
        for name, value in _fields(index, row).items():
            columns.setdefault(name, [None] * index).append(value)
        for column in columns.values():
            if len(column) == index:  # a field this row does not have
                column.append(None)
    return pa.table({name: pa.array(values, type=_TYPES[name])
                     for name, values in columns.items()})


def _fields(index: int, row: Any) -> dict[str, Any]:
    if isinstance(row, Mapping):
        unknown = sorted(set(row) - set(FIELDS))
        if unknown:
            raise RowError(f"row {index}: unknown field {unknown[0]!r}; a row has "
                           f"{', '.join(FIELDS)}")
        fields = {"value": _payload(index, "value", row.get("value"))}
        if "key" in row:
            fields["key"] = _payload(index, "key", row["key"])
        if row.get("headers") is not None:
            fields["headers"] = _headers(index, row["headers"])
        if row.get("partition") is not None:
            fields["partition"] = _partition(index, row["partition"])
        if row.get("timestamp") is not None:
            fields["timestamp"] = _timestamp_ms(index, row["timestamp"])
        return fields
    if isinstance(row, tuple):
        if len(row) != 2:
            raise RowError(f"row {index}: a tuple row is (key, value), got {len(row)} items")
        return {"key": _payload(index, "key", row[0]), "value": _payload(index, "value", row[1])}
    return {"value": _payload(index, "value", row)}


def _payload(index: int, name: str, value: Any) -> bytes | None:
    if value is None or isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode("utf-8")
    if isinstance(value, _BYTES):
        return bytes(value)
    raise RowError(f"row {index}: {name} must be bytes, str or None, not {type(value).__name__}")


def _headers(index: int, headers: Any) -> list[dict[str, Any]]:
    pairs = headers.items() if isinstance(headers, Mapping) else headers
    result = []
    for pair in pairs:
        if not isinstance(pair, tuple) or len(pair) != 2 or not isinstance(pair[0], str):
            raise RowError(f"row {index}: a header is a (name, value) pair with a str name, "
                           f"got {pair!r}")
        result.append({"key": pair[0], "value": _payload(index, f"header {pair[0]!r}", pair[1])})
    return result


def _partition(index: int, partition: Any) -> int:
    if isinstance(partition, bool) or not isinstance(partition, int) or partition < 0:
        raise RowError(f"row {index}: partition must be an int >= 0, got {partition!r}")
    return partition


def _timestamp_ms(index: int, timestamp: Any) -> int:
    if isinstance(timestamp, datetime):
        if timestamp.tzinfo is None:
            timestamp = timestamp.replace(tzinfo=UTC)
        return (timestamp - _EPOCH) // timedelta(milliseconds=1)
    if isinstance(timestamp, bool) or not isinstance(timestamp, int):
        raise RowError(f"row {index}: timestamp must be int milliseconds or a datetime, "
                       f"not {type(timestamp).__name__}")
    return timestamp


def _is_pandas(rows: Any) -> bool:
    kind = type(rows)
    return kind.__name__ == "DataFrame" and kind.__module__.partition(".")[0] == "pandas"
