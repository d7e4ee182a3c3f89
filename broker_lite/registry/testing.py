"""A registry without Kafka, for tests of the operations and the REST routes: the same state
machine, its records applied as they are written (what :class:`~.store.KafkaStore` does after
the topic has them). ``records`` keeps every record written, in order.

>>> service = memory_service()
>>> service.register("s", {"schema": '"string"'})
{'id': 1, 'version': 1}
>>> [type(key).__name__ for key, _ in service.store.records]
['SchemaKey']
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from .records import Key, Value, decode_key, decode_value, encode_key, encode_value
from .service import SchemaRegistryService
from .state import RegistryState


class MemoryStore:
    """Records applied to a :class:`RegistryState` in memory, through their encoded form (so
    what is applied is what the topic would hold)."""

    def __init__(self) -> None:
        self.state = RegistryState()
        self.lock = threading.RLock()
        self.records: list[tuple[Key, Value]] = []

    def write(self, records: Sequence[tuple[Key, Value]]) -> None:
        with self.lock:
            for key, value in records:
                decoded_key = decode_key(encode_key(key))
                decoded = decode_value(decoded_key, encode_value(value))
                self.records.append((decoded_key, decoded))
                self.state.apply(decoded_key, decoded)


def memory_service(default_level: str = "BACKWARD") -> SchemaRegistryService:
    """A :class:`SchemaRegistryService` over a fresh :class:`MemoryStore`."""
    return SchemaRegistryService(MemoryStore(), default_level)
