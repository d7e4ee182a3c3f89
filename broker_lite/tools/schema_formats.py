"""Confluent's wire format for the console tools: JSON lines in, Avro, Protobuf or JSON Schema
payloads out, and back (what ``kafka-avro-console-producer`` / ``-consumer``,
``kafka-protobuf-console-*`` and ``kafka-json-schema-console-*`` do).

A payload is a zero byte, the schema's id (4 bytes, big-endian), then the data; Protobuf puts
the message's indexes in its file before the data (zigzag varints: their count, then each; the
first top-level message is the single byte 0). Confluent's documentation, "Wire format".

Data as JSON, per format: Avro's JSON encoding (a union's value tagged with its branch,
``{"string": "x"}``, as Avro's ``JsonDecoder`` reads it); a Protobuf message's JSON mapping;
the JSON document itself for JSON Schema (validated against the schema before it is sent).

The writer's schema, by the console producer's properties (Confluent's names): ``value.schema``
(or ``value.schema.file``) registered under the subject (``<topic>-value``, TopicNameStrategy)
when it is new, ``value.schema.id`` for one already registered, else the subject's latest
version; ``key.*`` alike for keys. Consumers look each id up once.

The codecs are in :mod:`.schema_codec`, loaded only when a format is asked for, so that the
tools that need none start without the schema libraries.
"""

from __future__ import annotations

from typing import Any

from .message_formatter import FormatError

FORMATS = {"avro": "AVRO", "protobuf": "PROTOBUF", "json-schema": "JSON"}


class PayloadError(FormatError):
    """A line that does not fit the schema, or a payload that is not in Confluent's format."""



#: The registry client's settings among the console tools' ``--property`` values
#: (Confluent's console tools' names -> confluent-kafka's).
REGISTRY_PROPERTIES = {"schema.registry.url": "url", "basic.auth.user.info": "basic.auth.user.info",
                       "schema.registry.ssl.ca.location": "ssl.ca.location",
                       "schema.registry.ssl.certificate.location": "ssl.certificate.location",
                       "schema.registry.ssl.key.location": "ssl.key.location"}


def add_format_arguments(parser: Any) -> None:
    """``--key-format`` and ``--value-format``, for the console producer and consumer."""
    for side in ("key", "value"):
        parser.add_argument(f"--{side}-format", choices=tuple(FORMATS), default=None,
                            help=f"the {side} in Confluent's wire format with a schema of the "
                                 f"registry of --property schema.registry.url (JSON on the "
                                 f"console)")
