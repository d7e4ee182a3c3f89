"""The records of the ``_schemas`` topic, in Confluent Schema Registry's format.

The registry's whole state is a compacted topic (``kafkastore.topic``, default ``_schemas``,
one partition). Each record's key says what it is about, its value the latest word on it; a
record with a null value (a tombstone) removes what its key names. Keys and values are JSON,
written compactly (UTF-8, no spaces), with the fields in the order Confluent's registry
(``io.confluent.kafka.schemaregistry.storage``) writes them, so that Confluent's registry and
Karapace, pointed at the same cluster, read this registry's state and the other way round::

    key                                                       value
    {"keytype":"SCHEMA","subject":"s","version":3,"magic":1}  {"subject":"s","version":3,"id":7,
                                                               "schemaType":"PROTOBUF",
                                                               "references":[{"name":..,
                                                               "subject":..,"version":..}],
                                                               "schema":"...","deleted":false}
                                                              (schemaType absent for AVRO,
                                                               references when there are none;
                                                               null: version 3 hard-deleted)
    {"keytype":"CONFIG","subject":null,"magic":0}             {"compatibilityLevel":"FULL"}
    {"keytype":"CONFIG","subject":"s","magic":0}              the same, for one subject (null:
                                                               back to the global level)
    {"keytype":"MODE","subject":null,"magic":0}               {"mode":"READONLY"} (READWRITE,
                                                               READONLY, IMPORT; per subject too)
    {"keytype":"DELETE_SUBJECT","subject":"s","magic":0}      {"subject":"s","version":3}: every
                                                               version up to 3 soft-deleted
    {"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}       {"subject":"s"}: its soft-deleted
                                                               versions hard-deleted
    {"keytype":"NOOP","magic":0}                              null: a marker, changes nothing

``magic`` is 1 for schema keys and 0 for the others, as Confluent writes them; a key whose
magic or keytype this registry does not know is skipped with a warning, not a failure, so a
newer registry's records do not stop an older one.

>>> key = SchemaKey("orders-value", 2)
>>> encode_key(key)
b'{"keytype":"SCHEMA","subject":"orders-value","version":2,"magic":1}'
>>> decode_key(encode_key(key)) == key
True
>>> decode_key(b'{"keytype":"CONFIG","subject":null,"magic":0}')
ConfigKey(subject=None)
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from .schemas.base import DEFAULT_SCHEMA_TYPE, Reference


class RecordFormatError(ValueError):
    """A ``_schemas`` key or value that is not in Confluent's format."""


@dataclass(frozen=True)
class SchemaKey:
    subject: str
    version: int


@dataclass(frozen=True)
class ConfigKey:
    subject: str | None


@dataclass(frozen=True)
class ModeKey:
    subject: str | None


@dataclass(frozen=True)
class DeleteSubjectKey:
    subject: str


@dataclass(frozen=True)
class ClearSubjectKey:
    subject: str


@dataclass(frozen=True)
class NoopKey:
    pass


Key = SchemaKey | ConfigKey | ModeKey | DeleteSubjectKey | ClearSubjectKey | NoopKey


@dataclass(frozen=True)
class SchemaValue:
    """A subject's version: its global ``id``, text, type, references, soft deletion."""

    subject: str
    version: int
    id: int
    schema: str
    schema_type: str = DEFAULT_SCHEMA_TYPE
    references: tuple[Reference, ...] = ()
    deleted: bool = False


@dataclass(frozen=True)
class ConfigValue:
    compatibility_level: str


@dataclass(frozen=True)
class ModeValue:
    mode: str


@dataclass(frozen=True)
class DeleteSubjectValue:
    subject: str
    version: int


@dataclass(frozen=True)
class ClearSubjectValue:
    subject: str


Value = SchemaValue | ConfigValue | ModeValue | DeleteSubjectValue | ClearSubjectValue | None


def _dumps(obj: dict[str, Any]) -> bytes:
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


def encode_key(key: Key) -> bytes:
    if isinstance(key, SchemaKey):
        return _dumps({"keytype": "SCHEMA", "subject": key.subject, "version": key.version,
                       "magic": 1})
    if isinstance(key, NoopKey):
        return _dumps({"keytype": "NOOP", "magic": 0})
    keytype = {ConfigKey: "CONFIG", ModeKey: "MODE", DeleteSubjectKey: "DELETE_SUBJECT",
               ClearSubjectKey: "CLEAR_SUBJECT"}[type(key)]
    return _dumps({"keytype": keytype, "subject": key.subject, "magic": 0})


def encode_value(value: Value) -> bytes | None:
    """The value's bytes; None (a tombstone) for None.

    >>> encode_value(SchemaValue("s", 1, 5, '"int"'))
    b'{"subject":"s","version":1,"id":5,"schema":"\\\\"int\\\\"","deleted":false}'
    """
    if value is None:
        return None
    if isinstance(value, SchemaValue):
        body: dict[str, Any] = {"subject": value.subject, "version": value.version,
                                "id": value.id}
        if value.schema_type != DEFAULT_SCHEMA_TYPE:
            body["schemaType"] = value.schema_type
        if value.references:
            body["references"] = [r.to_json() for r in value.references]
        body["schema"] = value.schema
        body["deleted"] = value.deleted
        return _dumps(body)
    if isinstance(value, ConfigValue):
        return _dumps({"compatibilityLevel": value.compatibility_level})
    if isinstance(value, ModeValue):
        return _dumps({"mode": value.mode})
    if isinstance(value, DeleteSubjectValue):
        return _dumps({"subject": value.subject, "version": value.version})
    return _dumps({"subject": value.subject})


def _load(data: bytes, what: str) -> dict[str, Any]:
    try:
        found = json.loads(data)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise RecordFormatError(f"a _schemas {what} that is not JSON: {exc}") from None
    if not isinstance(found, dict):
        raise RecordFormatError(f"a _schemas {what} that is not a JSON object: {found!r}")
    return found


def decode_key(data: bytes) -> Key:
    """The key of a ``_schemas`` record; :class:`RecordFormatError` for one of another
    format or keytype."""
    found = _load(data, "key")
    keytype = found.get("keytype")
    try:
        if keytype == "SCHEMA":
            return SchemaKey(str(found["subject"]), int(found["version"]))
        if keytype == "NOOP":
            return NoopKey()
        subject = found.get("subject")
        if keytype == "CONFIG":
            return ConfigKey(subject)
        if keytype == "MODE":
            return ModeKey(subject)
        if keytype == "DELETE_SUBJECT":
            return DeleteSubjectKey(str(subject))
        if keytype == "CLEAR_SUBJECT":
            return ClearSubjectKey(str(subject))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordFormatError(f"a _schemas {keytype} key without {exc}: {found}") from None
    raise RecordFormatError(f"a _schemas key of unknown keytype {keytype!r}")


def decode_value(key: Key, data: bytes | None) -> Value:
    """The value of a record whose key is ``key`` (None for a tombstone)."""
    if data is None or isinstance(key, NoopKey):
        return None
    found = _load(data, "value")
    try:
        if isinstance(key, SchemaKey):
            return SchemaValue(
                subject=str(found.get("subject", key.subject)),
                version=int(found.get("version", key.version)),
                id=int(found["id"]), schema=str(found["schema"]),
                schema_type=str(found.get("schemaType") or DEFAULT_SCHEMA_TYPE),
                references=tuple(Reference(str(r["name"]), str(r["subject"]),
                                           int(r["version"]))
                                 for r in found.get("references") or ()),
                deleted=bool(found.get("deleted", False)))
        if isinstance(key, ConfigKey):
            return ConfigValue(str(found["compatibilityLevel"]))
        if isinstance(key, ModeKey):
            return ModeValue(str(found["mode"]))
        if isinstance(key, DeleteSubjectKey):
            return DeleteSubjectValue(str(found.get("subject", key.subject)),
                                      int(found["version"]))
        return ClearSubjectValue(str(found.get("subject", key.subject)))
    except (KeyError, TypeError, ValueError) as exc:
        raise RecordFormatError(f"a _schemas value without {exc}: {found}") from None
