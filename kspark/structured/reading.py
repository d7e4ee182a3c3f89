"""Structured keys and values decoded on an executor, batch by batch.

Each Python worker keeps, per plan (:attr:`SidePlan.key`), the decoders it compiled (one per
writer's schema id) and, per registry, a resolver of the ids the plan did not name, so that
an id is compiled once and fetched from the registry at most once per worker, never per
record. The rows' other columns stay as they are.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from broker_lite.registry.client import RegistryClient, RegistryRequestError
from broker_lite.registry.errors import InvalidSchema
from broker_lite.registry.resolver import SchemaNotFound, SchemaResolver
from broker_lite.serde.column import PERMISSIVE_HINT, decode_column
from broker_lite.serde.errors import (
    IncompatibleSchemaError,
    NotFramedError,
    PayloadError,
    UnknownSchemaError,
)

from .plan import SidePlan, StructuredPlan

# per worker: plan key -> {schema id -> decoder}; registry settings -> resolver
_DECODERS: dict[str, dict[int, Any]] = {}
_RESOLVERS: dict[tuple, SchemaResolver] = {}


def _resolver(plan: SidePlan) -> SchemaResolver:
    key = tuple(sorted(plan.registry.items()))
    if key not in _RESOLVERS:
        _RESOLVERS[key] = SchemaResolver(RegistryClient(plan.registry))
    return _RESOLVERS[key]


def decoder_for(plan: SidePlan) -> Callable[[int], Any]:
    """The decoders of ``plan``'s writers' schemas by id, made once per worker."""
    decoders = _DECODERS.setdefault(plan.key, {})

    def get(schema_id: int) -> Any:
        decoder = decoders.get(schema_id)
        if decoder is None:
            decoder = decoders[schema_id] = plan.reader.decoder(_writer(plan, schema_id))
        return decoder

    return get


def _writer(plan: SidePlan, schema_id: int) -> Any:
    if not plan.framed:
        return None  # bare payloads: written with the reader's schema
    schema = plan.writers.get(schema_id)
    if schema is not None:
        return schema
    try:
        schema = _resolver(plan).by_id(schema_id)
    except SchemaNotFound as exc:
        raise UnknownSchemaError(str(exc)) from None
    except RegistryRequestError as exc:
        raise UnknownSchemaError(f"schema id {schema_id} could not be fetched: {exc}") from None
    except InvalidSchema as exc:
        raise IncompatibleSchemaError(str(exc)) from None
    expected = plan.reader.schema_type
    if schema.schema_type != expected:
        raise IncompatibleSchemaError(f"the writer's schema is of type {schema.schema_type}, "
                                      f"the reader's {expected}")
    return schema


class StructuredReadError(PayloadError):
    """A record whose key or value cannot be decoded (FAILFAST): its place, schema id, why."""


def decode_batch(rows: pa.RecordBatch, plan: StructuredPlan, topic: str,
                 partition: int) -> pa.RecordBatch:
    """``rows`` (Spark's Kafka schema) with the key and value columns decoded per ``plan``."""
    columns, names = list(rows.columns), rows.schema.names
    offsets = rows.column(names.index("offset"))

    def place(row: int, side: str) -> str:
        return f"the {side} of topic {topic!r} partition {partition} offset {offsets[row]}"

    for side in ("key", "value"):
        index = names.index(side)
        side_plan = plan.sides.get(side)
        fmt = plan.options.key.format if side == "key" else plan.options.value.format
        if side_plan is None and fmt != "string":
            continue
        placed = functools.partial(place, side=side)
        if side_plan is None:
            columns[index] = _strings(rows.column(index), plan.permissive, placed)
            continue
        try:
            decoded = decode_column(rows.column(index), decoder_for(side_plan),
                                    side_plan.reader.arrow, permissive=plan.permissive,
                                    framed=side_plan.framed, place=placed)
        except PayloadError as exc:
            raise StructuredReadError(f"cannot read {exc}") from None
        if decoded.type != side_plan.arrow:
            decoded = decoded.cast(side_plan.arrow)
        columns[index] = decoded
    fields = [pa.field(n, c.type) for n, c in zip(names, columns, strict=True)]
    return pa.RecordBatch.from_arrays(columns, schema=pa.schema(fields))


def _strings(column: pa.Array, permissive: bool, place: Callable[[int], str]) -> pa.Array:
    """A binary column as UTF-8 strings; what is not UTF-8 per ``mode``."""
    try:
        return column.cast(pa.string())
    except pa.ArrowInvalid:
        pass
    values = column.to_pylist()  # only for a column with bad UTF-8 in it
    out = []
    for row, value in enumerate(values):
        try:
            out.append(None if value is None else value.decode("utf-8"))
        except UnicodeDecodeError as exc:
            if not permissive:
                raise StructuredReadError(f"cannot read {place(row)}: not UTF-8 ({exc.reason} "
                                          f"at byte {exc.start}); {PERMISSIVE_HINT}") from None
            out.append(None)
    return pa.array(out, pa.string())


__all__ = ["NotFramedError", "StructuredReadError", "decode_batch", "decoder_for"]
