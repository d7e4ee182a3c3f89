"""Compatibility: the seven levels, and the rules of each schema type, as pure functions.

Confluent's documentation ("Schema Evolution and Compatibility", "Compatibility types") defines
the levels by which of a subject's versions a new schema is checked against, and in which
direction:

=======================  ===================================  ==================================
level                    checked against                      the new schema must
=======================  ===================================  ==================================
``NONE``                 nothing
``BACKWARD`` (default)   the latest version                   read data written with it
``BACKWARD_TRANSITIVE``  every version                        read data written with them
``FORWARD``              the latest version                   write data it can read
``FORWARD_TRANSITIVE``   every version                        write data they can read
``FULL``                 the latest version                   both
``FULL_TRANSITIVE``      every version                        both
=======================  ===================================  ==================================

Each schema type answers one question, "can a reader of schema R read what a writer of schema
W wrote?", as a list of :class:`Incompatibility` (empty: it can): :mod:`.avro` (Avro's schema
resolution), :mod:`.json_schema` (Confluent's JSON Schema rules), :mod:`.protobuf` (Protobuf's
wire rules). :func:`check` applies a level; no HTTP, no Kafka.

>>> from broker_lite.registry.schemas import parse_schema
>>> old = parse_schema("AVRO", '{"type": "record", "name": "R", "fields": []}')
>>> new = parse_schema("AVRO", '{"type": "record", "name": "R", "fields": '
...                            '[{"name": "a", "type": "int"}]}')
>>> [i.error_type for i in check("BACKWARD", new, [old])]
['READER_FIELD_MISSING_DEFAULT_VALUE']
>>> check("FORWARD", new, [old])
[]
"""

from .incompatibility import Incompatibility
from .levels import DEFAULT_LEVEL, LEVELS, can_read, check, check_level

__all__ = ["DEFAULT_LEVEL", "LEVELS", "Incompatibility", "can_read", "check", "check_level"]
