"""A schema registry that Confluent's clients cannot tell from Confluent Schema Registry.

Confluent's REST API (v1) over a state kept in the compacted ``_schemas`` topic in Confluent's
own record format, read and written through broker_lite's Kafka client, so it runs against any
Kafka cluster (and, with ``schema.registry.listeners``, inside a broker's process). One module a
concept, lowest first:

==================  ==========================================================================
module              concept
==================  ==========================================================================
``errors``          Confluent's error codes and HTTP statuses
``schemas``         Avro, JSON Schema and Protobuf: parsing, canonical and normal forms
``compatibility``   the seven levels, and each type's rules as pure functions
``records``         the ``_schemas`` keys and values (Confluent's JSON)
``state``           the state machine rebuilt from those records
``service``         the API's operations over the state and a store
``store``           the ``_schemas`` topic: read to its end, written and read back
``election``        the primary, elected through a Kafka consumer group
``rest``            the REST routes, requests to answers, no sockets
``forwarding``      writes sent on to the primary
``auth``            HTTP Basic authentication (realm and roles from files)
``config``          the settings, by Confluent's names
``server``          the process: HTTP(S) listeners, store, election
``testing``         the operations over an in-memory store, for tests
==================  ==========================================================================

The benchmark is :mod:`broker_lite.local.bench_registry`.

>>> from broker_lite.registry import RegistryConfig, SchemaRegistry
"""

from broker_lite.common.lazy_exports import lazy_exports

__getattr__, __dir__ = lazy_exports(__name__, {
    ".config": ("RegistryConfig",),
    ".server": ("SchemaRegistry",),
})

__all__ = ["RegistryConfig", "SchemaRegistry"]
