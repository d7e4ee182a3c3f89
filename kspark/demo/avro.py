"""The demo in Avro (``kpy demo --format avro``): page views and window counts as Avro records
in Confluent's framing, their schemas in the local stack's schema registry.

The page views' schema is registered by the feed under ``page-views-value`` before it
produces; the query reads them with ``value.format=avro`` (a struct whose ``ts`` is already a
timestamp) and writes its counts with ``value.format=avro`` too, the schema derived from the
counts' Spark type and registered under ``page-view-counts-value`` by the sink. The
verification decodes the output independently of kpy's decoder: each value's schema is fetched
from the registry by its id and the value read with fastavro, into the JSON text the JSON demo
writes, so the same checks run on it.
"""

from __future__ import annotations

import io
import json

import fastavro
import pyarrow as pa

from broker_lite.registry.client import RegistryClient
from broker_lite.registry.schemas import parse_schema
from broker_lite.serde.avro.encode import AvroEncoder

#: A page view (and a heartbeat: an event with no page, user, ... but a time).
VIEW_SCHEMA = {"type": "record", "name": "PageView", "namespace": "kpy.demo", "fields": [
    {"name": "event", "type": "string"},
    {"name": "user", "type": ["null", "string"], "default": None},
    {"name": "page", "type": ["null", "string"], "default": None},
    {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
    {"name": "referrer", "type": ["null", "string"], "default": None},
    {"name": "device", "type": ["null", "string"], "default": None},
    {"name": "country", "type": ["null", "string"], "default": None},
    {"name": "duration_ms", "type": ["null", "long"], "default": None}]}


class AvroViews:
    """Page views as producer rows of Avro values, with the schema registered once."""

    def __init__(self, registry_url: str, subject: str):
        text = json.dumps(VIEW_SCHEMA)
        schema_id = int(RegistryClient({"url": registry_url}).register(subject, text)["id"])
        self.encoder = AvroEncoder(parse_schema("AVRO", text), schema_id)  # type: ignore

    def rows(self, rows: pa.RecordBatch, views: pa.RecordBatch | None) -> pa.RecordBatch:
        """``rows`` (the JSON demo's producer rows) with Avro values: of ``views`` (the
        generated page views), or heartbeats when ``views`` is None."""
        n = rows.num_rows
        names = [f["name"] for f in VIEW_SCHEMA["fields"]]  # type: ignore[index]
        columns = {name: pa.nulls(n, pa.string()) for name in names}
        columns["duration_ms"] = pa.nulls(n, pa.int64())
        columns["ts"] = rows.column("timestamp")
        columns["event"] = pa.array(["page_view" if views is not None else "heartbeat"] * n)
        if views is not None:
            for name in ("user", "page", "referrer", "device", "country", "duration_ms"):
                columns[name] = views.column(name)
        values = self.encoder.encode(pa.StructArray.from_arrays(
            [columns[name] for name in names], names=names))
        return pa.RecordBatch.from_arrays(
            [values if name == "value" else rows.column(name) for name in rows.schema.names],
            names=rows.schema.names)


def output_as_json(records: pa.Table, registry_url: str) -> pa.Table:
    """The output records with each Avro value decoded by fastavro (its writer's schema from
    the registry, by id) and written as JSON text, as the JSON demo writes it."""
    registry = RegistryClient({"url": registry_url})
    schemas: dict[int, object] = {}
    texts = []
    for value in records.column("value").to_pylist():
        schema_id = int.from_bytes(value[1:5], "big")
        if schema_id not in schemas:
            schemas[schema_id] = fastavro.parse_schema(
                json.loads(registry.schema(schema_id)["schema"]))
        record = fastavro.schemaless_reader(io.BytesIO(value[5:]), schemas[schema_id], None)
        texts.append(json.dumps(record).encode())
    index = records.schema.get_field_index("value")
    return records.set_column(index, "value", pa.array(texts, pa.binary()))
