"""A column of payloads decoded into one Arrow column of the reader's type.

The steps, each over the whole column at once:

1. the headers (:func:`~broker_lite.serde.framing.frame`): each payload's schema id, or that it
   is null (a null value: a null row) or not framed;
2. the rows grouped by schema id; each id's decoder (the writer's schema resolved against the
   reader's, made once and kept by the caller) decodes its rows in one call;
3. the pieces put back in row order (one ``take``, only when a batch mixes ids).

What cannot be decoded (a payload not framed, an id the registry does not know, a writer's
schema the reader's cannot read, corrupt bytes) is handled by ``mode``, as Spark's
``from_avro`` does: ``FAILFAST`` raises the error of the first such row, its place (the
caller's ``place(row)``: topic, partition, offset) and schema id in the message; ``PERMISSIVE``
makes the row null and goes on.

>>> import pyarrow as pa
>>> from broker_lite.serde.avro.schema import expand
>>> from broker_lite.serde.avro.codec import AvroDecoder
>>> from broker_lite.serde.errors import UnknownSchemaError
>>> long = expand("long", {})
>>> def decoder_for(schema_id):
...     if schema_id != 1:
...         raise UnknownSchemaError(f"no schema with id {schema_id}")
...     return AvroDecoder(long, long)
>>> column = pa.array([b"\\x00\\x00\\x00\\x00\\x01\\x02", b"\\x00\\x00\\x00\\x00\\x09\\x02",
...                    b"bare"])
>>> decode_column(column, decoder_for, pa.int64(), permissive=True).to_pylist()
[1, None, None]
>>> decode_column(column, decoder_for, pa.int64(), permissive=False,
...               place=lambda row: f"record {row}")
Traceback (most recent call last):
...
broker_lite.serde.errors.UnknownSchemaError: record 1 (schema id 9): no schema with id 9; \
mode PERMISSIVE reads such records as null
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

import numpy as np
import pyarrow as pa

from .errors import EncodeError, NotFramedError, PayloadError
from .framing import FRAMED, NOT_FRAMED, frame, not_framed


class Decoder(Protocol):
    """Payloads of one writer's schema into the reader's type."""

    def decode(self, data: Any, starts: np.ndarray, ends: np.ndarray,
               permissive: bool) -> tuple[pa.Array, list[int]]: ...


#: What FAILFAST errors say after the record's place, to point at the way out.
PERMISSIVE_HINT = "mode PERMISSIVE reads such records as null"


def decode_column(column: pa.Array, decoder_for: Callable[[int], Decoder],
                  arrow: pa.DataType, *, permissive: bool, framed: bool = True,
                  place: Callable[[int], str] = lambda row: f"row {row}") -> pa.Array:
    """``column`` (binary payloads) decoded into an array of ``arrow``, the reader's type.
    ``decoder_for(schema id)`` gives each writer's decoder (id 0 for bare payloads, with
    ``framed=False``); what it raises for an id (an unknown id) is that id's rows' error."""
    frames = frame(column, framed=framed)
    n = len(frames.state)
    framed_rows = frames.state == FRAMED
    refused: list[tuple[int, PayloadError, int | None]] = []  # (first row, error, schema id)
    unframed = np.flatnonzero(frames.state == NOT_FRAMED)
    if len(unframed):
        row = int(unframed[0])
        refused.append((row, not_framed(int(frames.ends[row] - frames.starts[row])), None))
    ids = np.unique(frames.ids[framed_rows]) if framed_rows.any() else np.zeros(0, np.int64)
    decoders: dict[int, Decoder] = {}
    for schema_id in ids.tolist():
        try:
            decoders[schema_id] = decoder_for(schema_id)
        except PayloadError as exc:
            rows = np.flatnonzero(framed_rows & (frames.ids == schema_id))
            refused.append((int(rows[0]), exc, schema_id))
            framed_rows[rows] = False
    if refused and not permissive:
        row, error, schema_id = min(refused, key=lambda entry: entry[0])
        raise _placed(error, place(row), schema_id)
    if len(decoders) <= 1:
        (schema_id, decoder), = decoders.items() if decoders else ((None, None),)
        if decoder is None:
            return pa.nulls(n, arrow)
        starts = np.where(framed_rows, frames.starts, -1)
        return _decode(decoder, frames.data, starts, frames.ends, permissive, place,
                       schema_id if framed else None)
    pieces, order = [], np.empty(n, dtype=np.int64)
    position = 0
    for schema_id, decoder in decoders.items():
        rows = np.flatnonzero(framed_rows & (frames.ids == schema_id))
        pieces.append(_decode(decoder, frames.data, frames.starts[rows], frames.ends[rows],
                              permissive, _rows_place(place, rows), schema_id))
        order[rows] = np.arange(position, position + len(rows))
        position += len(rows)
    rest = np.flatnonzero(~framed_rows)
    pieces.append(pa.nulls(len(rest), arrow))
    order[rest] = np.arange(position, position + len(rest))
    return pa.concat_arrays([p.cast(arrow) if p.type != arrow else p for p in pieces]) \
        .take(pa.array(order))


def _rows_place(place: Callable[[int], str], rows: np.ndarray) -> Callable[[int], str]:
    """``place`` of a piece of the column: its row ``i`` is the column's ``rows[i]``."""
    return lambda i: place(int(rows[i]))


def _decode(decoder: Decoder, data: Any, starts: np.ndarray, ends: np.ndarray,
            permissive: bool, place: Callable[[int], str], schema_id: int | None) -> pa.Array:
    try:
        array, _ = decoder.decode(data, starts, ends, permissive)
    except PayloadError as exc:
        if exc.placed:
            raise
        raise _placed(exc, place(exc.row if exc.row is not None else 0), schema_id) from None
    return array


def _placed(exc: PayloadError, where: str, schema_id: int | None) -> PayloadError:
    """``exc`` again, its message prefixed with the record's place and schema id."""
    what = f"{where} (schema id {schema_id})" if schema_id is not None else where
    placed = type(exc)(f"{what}: {exc}; {PERMISSIVE_HINT}")
    placed.placed = True
    return placed


def encode_column(column: pa.Array, encode: Callable[[Any], bytes], refused: str,
                  errors: tuple[type[Exception], ...]) -> pa.Array:
    """The payloads of ``column``'s values, ``encode(value)`` each (a null value: a null
    payload, as a tombstone). A value ``encode`` refuses (raising one of ``errors``) is an
    :class:`EncodeError` naming its row: ``row 3 <refused>: <why>``."""
    out: list[bytes | None] = []
    for row, value in enumerate(column.to_pylist()):
        if value is None:
            out.append(None)
            continue
        try:
            out.append(encode(value))
        except errors as exc:
            raise EncodeError(f"row {row} {refused}: {exc}") from None
    return pa.array(out, pa.binary())


__all__ = ["PERMISSIVE_HINT", "Decoder", "NotFramedError", "decode_column", "encode_column"]
