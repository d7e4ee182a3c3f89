"""The reader's side of Avro payloads: the reader's schema, the Spark type it maps to, and a
decoder for each writer's schema met, compiled once.

>>> import numpy as np
>>> from broker_lite.registry.schemas.avro import AvroSchema
>>> v1 = AvroSchema.parse('{"type": "record", "name": "R", "fields": ['
...                       '{"name": "a", "type": "int"}]}', (), {})
>>> v2 = AvroSchema.parse('{"type": "record", "name": "R", "fields": ['
...                       '{"name": "a", "type": "long"}, '
...                       '{"name": "b", "type": "string", "default": "-"}]}', (), {})
>>> reader = AvroReader(v2)
>>> reader.arrow
StructType(struct<a: int64 not null, b: string not null>)
>>> array, _ = reader.decoder(v1).decode(b"\\x04", np.array([0]), np.array([1]), False)
>>> array.to_pylist()
[{'a': 2, 'b': '-'}]
"""

from __future__ import annotations

import pyarrow as pa

from broker_lite.registry.schemas.avro import AvroSchema

from .codec import AvroDecoder
from .schema import arrow_type, expand


class AvroReader:
    """Payloads read as ``reader``: :attr:`arrow` is the Spark type (as Arrow) of the values,
    :meth:`decoder` the decoder of each writer's schema."""

    schema_type = "AVRO"

    def __init__(self, reader: AvroSchema):
        self.schema = reader
        self.node = expand(reader.parsed, reader.names)
        arrow, self.nullable = arrow_type(self.node)
        self.arrow: pa.DataType = arrow

    def fingerprint(self) -> str:
        """What tells this reader from another: its schema's canonical text."""
        return f"avro:{self.schema.canonical()}"

    def decoder(self, writer: AvroSchema | None = None) -> AvroDecoder:
        """The decoder of payloads written with ``writer`` (None: the reader's own schema)."""
        node = self.node if writer is None else expand(writer.parsed, writer.names)
        return AvroDecoder(node, self.node)
