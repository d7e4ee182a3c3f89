"""The registry's operations, as Confluent's REST API defines them, over the state and the store.

:class:`SchemaRegistryService` answers every request of :mod:`.rest` with plain values (what
the JSON answer holds) or a :class:`~.errors.RegistryError`. Reads come from the
:class:`~.state.RegistryState`; a write is decided on that state (the primary's: see
:mod:`.election`), written to the ``_schemas`` topic as Confluent's records (:mod:`.records`)
and answered only once the store has read it back into the state, so a client sees its own
write, and every registry process reading the topic sees the same.

Writes are decided one at a time (a lock), so two registrations cannot take one id or one
version. Nothing is written for a request that fails: every check comes before the write.

The operations follow Confluent's API reference ("Schema Registry API Reference") and its
behaviour: one global id per distinct schema (type, canonical text, references);
re-registering a live version's schema returns it; versions count on from the subject's
highest (soft-deleted ones included); a soft delete hides, a hard delete (``permanent=true``,
only after a soft one) removes; modes READWRITE, READONLY (no writes) and IMPORT (writes with
the ids and versions given, no compatibility checks).
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Any, Protocol

from . import compatibility
from .errors import (
    IncompatibleSchema,
    InvalidMode,
    InvalidSchema,
    InvalidVersion,
    OperationNotPermitted,
    ReferenceExists,
    SchemaNotFound,
    SubjectLevelCompatibilityNotConfigured,
    SubjectLevelModeNotConfigured,
    SubjectNotFound,
    SubjectNotSoftDeleted,
    SubjectSoftDeleted,
    UnprocessableEntity,
    VersionNotFound,
    VersionNotSoftDeleted,
    VersionSoftDeleted,
)
from .records import ConfigKey, ConfigValue, Key, ModeKey, ModeValue, SchemaKey, SchemaValue, Value
from .schemas import DEFAULT_SCHEMA_TYPE, SCHEMA_TYPES, ParsedSchema, Reference, parse_schema
from .schemas.base import check_schema_type
from .state import RegistryState

MODES = ("READWRITE", "READONLY", "READONLY_OVERRIDE", "IMPORT")
MAX_VERSION = 2**31 - 1
LATEST = -1


class Store(Protocol):
    """Where the service's state lives: the state read so far, its lock, and the writer."""

    state: RegistryState
    lock: threading.RLock

    def write(self, records: Sequence[tuple[Key, Value]]) -> None:
        """Write records to the topic; return once the state holds them."""


def parse_version(text: str) -> int:
    """A version as the URL gives it: ``latest`` or ``-1`` (:data:`LATEST`), or 1..2^31-1.

    >>> parse_version("latest"), parse_version("3")
    (-1, 3)
    >>> parse_version("three")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    broker_lite.registry.errors.InvalidVersion: The specified version 'three' is not a valid ...
    """
    if text == "latest":
        return LATEST
    try:
        version = int(text)
    except ValueError:
        raise InvalidVersion(text) from None
    if version == LATEST or 1 <= version <= MAX_VERSION:
        return version
    raise InvalidVersion(text)


def schema_json(value: SchemaValue, text: str | None = None) -> dict[str, Any]:
    """A version's answer body: subject, version, id, type (not for Avro), references, text."""
    body: dict[str, Any] = {"subject": value.subject, "version": value.version, "id": value.id}
    if value.schema_type != DEFAULT_SCHEMA_TYPE:
        body["schemaType"] = value.schema_type
    if value.references:
        body["references"] = [r.to_json() for r in value.references]
    body["schema"] = value.schema if text is None else text
    return body


class SchemaRegistryService:
    """Confluent's operations over ``store``; ``default_level`` is
    ``schema.compatibility.level``."""

    def __init__(self, store: Store, default_level: str = compatibility.DEFAULT_LEVEL):
        self.store = store
        self.default_level = compatibility.check_level(default_level)
        self._parsed: dict[int, ParsedSchema] = {}
        self._write_lock = threading.Lock()

    @property
    def state(self) -> RegistryState:
        return self.store.state

    # -- schemas by id --------------------------------------------------------------------------

    def schema_by_id(self, schema_id: int, fmt: str | None = None) -> dict[str, Any]:
        found = self.state.schemas.get(schema_id)
        if found is None:
            raise SchemaNotFound(f"Schema {schema_id} not found")
        body: dict[str, Any] = {}
        if found.schema_type != DEFAULT_SCHEMA_TYPE:
            body["schemaType"] = found.schema_type
        if found.references:
            body["references"] = [r.to_json() for r in found.references]
        body["schema"] = self._formatted(found, fmt)
        return body

    def _formatted(self, value: SchemaValue, fmt: str | None) -> str:
        if not fmt or value.schema_type != "PROTOBUF":
            return value.schema
        return self.parsed(value).formatted(fmt)

    def schema_types(self) -> list[str]:
        return sorted(SCHEMA_TYPES, key=lambda t: (t != "JSON", t != "PROTOBUF"))

    def versions_of_id(self, schema_id: int, deleted: bool = False) -> list[dict[str, Any]]:
        with self.store.lock:
            if schema_id not in self.state.schemas:
                raise SchemaNotFound(f"Schema {schema_id} not found")
            return [{"subject": s, "version": v}
                    for s, v in self.state.uses_of(schema_id, deleted)]

    def subjects_of_id(self, schema_id: int, deleted: bool = False) -> list[str]:
        return sorted({pair["subject"] for pair in self.versions_of_id(schema_id, deleted)})

    # -- subjects -------------------------------------------------------------------------------

    def subjects(self, deleted: bool = False, prefix: str = "") -> list[str]:
        with self.store.lock:
            return [s for s in self.state.subject_names(deleted) if s.startswith(prefix)]

    def versions(self, subject: str, deleted: bool = False) -> list[int]:
        with self.store.lock:
            found = self.state.versions(subject, deleted)
        if not found:
            raise SubjectNotFound(subject)
        return found

    def _version(self, subject: str, version: int, deleted: bool = False) -> SchemaValue:
        state = self.state
        if not state.subject_exists(subject, deleted=True):
            raise SubjectNotFound(subject)
        if version == LATEST:
            candidates = state.versions(subject, deleted)
            if not candidates:
                raise SubjectNotFound(subject)
            version = candidates[-1]
        found = state.version(subject, version)
        if found is None or (found.deleted and not deleted):
            raise VersionNotFound(subject, version)
        return found

    def get_version(self, subject: str, version: int, deleted: bool = False,
                    fmt: str | None = None) -> dict[str, Any]:
        with self.store.lock:
            found = self._version(subject, version, deleted)
        return schema_json(found, self._formatted(found, fmt))

    def referenced_by(self, subject: str, version: int) -> list[int]:
        with self.store.lock:
            found = self._version(subject, version, deleted=True)
            return self.state.referenced_by(subject, found.version)

    def lookup(self, subject: str, body: Any, normalize: bool = False,
               deleted: bool = False) -> dict[str, Any]:
        """``POST /subjects/{subject}``: the version of ``subject`` that has this schema."""
        schema_type, text, references = _schema_request(body)
        with self.store.lock:
            if not self.state.subject_exists(subject, deleted=True):
                raise SubjectNotFound(subject)
            parsed = self.parse(schema_type, text, references, normalize)
            for version in reversed(self.state.versions(subject, deleted)):
                found = self.state.version(subject, version)
                if found is not None and self._same(found, parsed, normalize):
                    return schema_json(found)
        raise SchemaNotFound()

    def _same(self, found: SchemaValue, parsed: ParsedSchema, normalize: bool) -> bool:
        stored = self.parsed(found)
        if normalize:
            stored = stored.normalized()
        return stored.identity == parsed.identity

    # -- parsing --------------------------------------------------------------------------------

    def parsed(self, value: SchemaValue) -> ParsedSchema:
        """The parsed schema of a stored version (cached by id)."""
        found = self._parsed.get(value.id)
        if found is None:
            found = self.parse(value.schema_type, value.schema, value.references)
            self._parsed[value.id] = found
        return found

    def parse(self, schema_type: str, text: str, references: tuple[Reference, ...],
              normalize: bool = False) -> ParsedSchema:
        """Parse a schema whose references must name existing versions."""
        dependencies: dict[str, ParsedSchema] = {}
        for reference in references:
            target = self.state.version(reference.subject, reference.version)
            if target is None:
                raise InvalidSchema(f"Invalid schema: the reference {reference.name} names "
                                    f"subject {reference.subject!r} version "
                                    f"{reference.version}, which does not exist")
            dependencies[reference.name] = self.parsed(target)
        parsed = parse_schema(schema_type, text, references, dependencies)
        return parsed.normalized() if normalize else parsed

    # -- registering ----------------------------------------------------------------------------

    def register(self, subject: str, body: Any, normalize: bool = False) -> dict[str, Any]:
        """``POST /subjects/{subject}/versions``: ``{"id": ..., "version": ...}``."""
        schema_type, text, references = _schema_request(body)
        wanted_id, wanted_version = _explicit(body, "id"), _explicit(body, "version")
        with self._write_lock:
            state = self.state
            with self.store.lock:
                mode = self.mode_of(subject)
                if mode in ("READONLY", "READONLY_OVERRIDE"):
                    raise OperationNotPermitted(f"Subject {subject} is in read-only mode")
                importing = mode == "IMPORT"
                if ((wanted_id is not None and wanted_id >= 0) or wanted_version is not None) \
                        and not importing:
                    raise OperationNotPermitted(f"Subject {subject} is not in import mode")
                parsed = self.parse(schema_type, text, references, normalize)
                live = [v for v in (state.version(subject, n)
                                    for n in state.live_versions(subject)) if v is not None]
                for found in reversed(live):
                    if self._same(found, parsed, normalize) and (
                            wanted_id is None or wanted_id < 0 or wanted_id == found.id):
                        return {"id": found.id, "version": found.version}
                if not importing:
                    level = self.level_of(subject)
                    problems = compatibility.check(level, parsed, [self.parsed(v) for v in live])
                    if problems:
                        raise IncompatibleSchema(_incompatible_message(subject, level,
                                                                       problems, live))
                known = state.ids.get(parsed.identity)
                if importing and wanted_id is not None and wanted_id >= 0:
                    existing = state.schemas.get(wanted_id)
                    if existing is not None and known != wanted_id:
                        raise OperationNotPermitted(
                            f"Overwrite new schema with id {wanted_id} is not permitted.")
                    schema_id = wanted_id
                else:
                    schema_id = known if known is not None else state.max_id + 1
                every = state.versions(subject, deleted=True)
                if wanted_version is not None:
                    if wanted_version in every:
                        raise OperationNotPermitted(
                            f"Version {wanted_version} already exists in subject {subject}")
                    version = wanted_version
                else:
                    version = (every[-1] if every else 0) + 1
                value = SchemaValue(subject, version, schema_id, parsed.canonical(),
                                    parsed.schema_type, parsed.references)
            self.store.write([(SchemaKey(subject, version), value)])
            self._parsed.setdefault(schema_id, parsed)
        return {"id": schema_id, "version": version}

    # -- compatibility --------------------------------------------------------------------------

    def test_compatibility(self, subject: str, version: int | None, body: Any,
                           normalize: bool = False, verbose: bool = False) -> dict[str, Any]:
        """``POST /compatibility/subjects/{subject}/versions[/{version}]``."""
        schema_type, text, references = _schema_request(body)
        with self.store.lock:
            parsed = self.parse(schema_type, text, references, normalize)
            level = self.level_of(subject)
            if version is None or version == LATEST:
                live = [v for v in (self.state.version(subject, n)
                                    for n in self.state.live_versions(subject)) if v is not None]
                if version == LATEST and not live and \
                        not self.state.subject_exists(subject, deleted=True):
                    raise SubjectNotFound(subject)
                against = live
            else:
                against = [self._version(subject, version)]
                level = level if level == "NONE" else level.replace("_TRANSITIVE", "")
            problems = compatibility.check(level, parsed, [self.parsed(v) for v in against])
        answer: dict[str, Any] = {"is_compatible": not problems}
        if verbose:
            answer["messages"] = _verbose_messages(level, problems, against)
        return answer

    # -- deleting -------------------------------------------------------------------------------

    def delete_version(self, subject: str, version: int, permanent: bool = False) -> int:
        with self._write_lock:
            state = self.state
            with self.store.lock:
                self._check_writable(subject)
                if not state.subject_exists(subject, deleted=True):
                    raise SubjectNotFound(subject)
                if version == LATEST:
                    candidates = state.versions(subject, deleted=permanent)
                    if not candidates:
                        raise SubjectNotFound(subject)
                    version = candidates[-1]
                found = state.version(subject, version)
                if found is None:
                    raise VersionNotFound(subject, version)
                if state.referenced_by(subject, version):
                    raise ReferenceExists(f"One or more references exist to the schema "
                                          f"{{subject={subject},version={version}}}.")
                if permanent and not found.deleted:
                    raise VersionNotSoftDeleted(subject, version)
                if not permanent and found.deleted:
                    raise VersionSoftDeleted(subject, version)
                record: Value = None if permanent else SchemaValue(
                    found.subject, found.version, found.id, found.schema, found.schema_type,
                    found.references, deleted=True)
            self.store.write([(SchemaKey(subject, version), record)])
        return version

    def delete_subject(self, subject: str, permanent: bool = False) -> list[int]:
        with self._write_lock:
            state = self.state
            with self.store.lock:
                self._check_writable(subject)
                every = state.versions(subject, deleted=True)
                if not every:
                    raise SubjectNotFound(subject)
                live = state.live_versions(subject)
                if permanent and live:
                    raise SubjectNotSoftDeleted(subject)
                if not permanent and not live:
                    raise SubjectSoftDeleted(subject)
                targets = every if permanent else live
                for version in targets:
                    if state.referenced_by(subject, version):
                        raise ReferenceExists(f"One or more references exist to the schema "
                                              f"{{subject={subject},version={version}}}.")
                records: list[tuple[Key, Value]] = []
                for version in targets:
                    found = state.version(subject, version)
                    assert found is not None
                    records.append((SchemaKey(subject, version), None if permanent else
                                    SchemaValue(found.subject, found.version, found.id,
                                                found.schema, found.schema_type,
                                                found.references, deleted=True)))
                if permanent:  # its settings go with it, as in Confluent's registry
                    if subject in state.configs:
                        records.append((ConfigKey(subject), None))
                    if subject in state.modes:
                        records.append((ModeKey(subject), None))
            self.store.write(records)
        return targets

    def _check_writable(self, subject: str) -> None:
        if self.mode_of(subject) in ("READONLY", "READONLY_OVERRIDE"):
            raise OperationNotPermitted(f"Subject {subject} is in read-only mode")

    # -- compatibility levels -------------------------------------------------------------------

    def level_of(self, subject: str | None) -> str:
        """The level in force for ``subject``: its own, else the global one, else the
        default."""
        configs = self.state.configs
        if subject is not None and subject in configs:
            return configs[subject]
        return configs.get(None, self.default_level)

    def get_config(self, subject: str | None, default_to_global: bool = False
                   ) -> dict[str, Any]:
        configs = self.state.configs
        if subject is None:
            return {"compatibilityLevel": configs.get(None, self.default_level)}
        if subject in configs:
            return {"compatibilityLevel": configs[subject]}
        if default_to_global:
            return {"compatibilityLevel": configs.get(None, self.default_level)}
        raise SubjectLevelCompatibilityNotConfigured(subject)

    def set_config(self, subject: str | None, body: Any) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise UnprocessableEntity("The request body must be a JSON object")
        level = body.get("compatibility", body.get("compatibilityLevel"))
        level = compatibility.check_level(level)
        self._write_settings(subject, ConfigKey(subject), ConfigValue(level))
        return {"compatibility": level}

    def delete_config(self, subject: str | None) -> dict[str, Any]:
        if subject is not None and subject not in self.state.configs:
            if not self.state.subject_exists(subject, deleted=True):
                raise SubjectNotFound(subject)
            raise SubjectLevelCompatibilityNotConfigured(subject)
        previous = self.level_of(subject)
        self._write_settings(subject, ConfigKey(subject), None)
        return {"compatibilityLevel": previous}

    def _write_settings(self, subject: str | None, key: Key, value: Value) -> None:
        with self._write_lock:
            if subject is not None and not isinstance(key, ModeKey):
                with self.store.lock:
                    self._check_writable(subject)
            self.store.write([(key, value)])

    # -- modes ----------------------------------------------------------------------------------

    def mode_of(self, subject: str | None) -> str:
        modes = self.state.modes
        if subject is not None and subject in modes:
            return modes[subject]
        return modes.get(None, "READWRITE")

    def get_mode(self, subject: str | None, default_to_global: bool = False) -> dict[str, Any]:
        modes = self.state.modes
        if subject is None or subject in modes or default_to_global:
            return {"mode": self.mode_of(subject)}
        raise SubjectLevelModeNotConfigured(subject)

    def set_mode(self, subject: str | None, body: Any, force: bool = False) -> dict[str, Any]:
        if not isinstance(body, dict):
            raise UnprocessableEntity("The request body must be a JSON object")
        mode = body.get("mode")
        if not isinstance(mode, str) or mode.upper() not in MODES:
            raise InvalidMode(mode)
        mode = mode.upper()
        if mode == "IMPORT" and not force:
            with self.store.lock:
                occupied = self.state.subject_exists(subject, deleted=True) \
                    if subject is not None else bool(self.state.subjects)
            if occupied:
                raise OperationNotPermitted(
                    "Cannot import since found existing subjects" if subject is None else
                    f"Cannot import since subject {subject} has versions; use force=true")
        self._write_settings(subject, ModeKey(subject), ModeValue(mode))
        return {"mode": mode}

    def delete_mode(self, subject: str) -> dict[str, Any]:
        if subject not in self.state.modes:
            raise SubjectLevelModeNotConfigured(subject)
        previous = self.mode_of(subject)
        self._write_settings(subject, ModeKey(subject), None)
        return {"mode": previous}


def _schema_request(body: Any) -> tuple[str, str, tuple[Reference, ...]]:
    """The type, text and references of a register / lookup / compatibility body."""
    if not isinstance(body, dict):
        raise UnprocessableEntity("The request body must be a JSON object with a schema")
    text = body.get("schema")
    if not isinstance(text, str):
        raise InvalidSchema("Empty schema" if text is None else
                            "Invalid schema: the schema must be a string")
    schema_type = check_schema_type(body.get("schemaType") or DEFAULT_SCHEMA_TYPE)
    raw_references = body.get("references") or []
    if not isinstance(raw_references, list):
        raise InvalidSchema("Invalid schema: references must be a list")
    references = []
    for raw in raw_references:
        try:
            references.append(Reference(str(raw["name"]), str(raw["subject"]),
                                        int(raw["version"])))
        except (KeyError, TypeError, ValueError):
            raise InvalidSchema(f"Invalid schema: a reference needs a name, a subject and a "
                                f"version, got {raw!r}") from None
    return schema_type, text, tuple(references)


def _explicit(body: Any, name: str) -> int | None:
    value = body.get(name) if isinstance(body, dict) else None
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool):
        raise UnprocessableEntity(f"{name} must be an integer, got {value!r}")
    return value


def _verbose_messages(level: str, problems: Sequence[compatibility.Incompatibility],
                      against: Sequence[SchemaValue]) -> list[str]:
    if not problems:
        return []
    messages = [p.message() for p in problems]
    if against:
        latest = against[-1]
        messages += [f"{{oldSchemaVersion: {latest.version}}}",
                     f"{{oldSchema: '{latest.schema}'}}"]
    messages.append(f"{{compatibility: '{level}'}}")
    return messages


def _incompatible_message(subject: str, level: str,
                          problems: Sequence[compatibility.Incompatibility],
                          against: Sequence[SchemaValue]) -> str:
    details = _verbose_messages(level, problems, against)
    return (f"Schema being registered is incompatible with an earlier schema for subject "
            f"\"{subject}\", details: [{', '.join(details)}]")

