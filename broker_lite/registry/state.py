"""The registry's state, rebuilt from the ``_schemas`` records: a state machine, no I/O.

Every registry process replays the topic from its start into a :class:`RegistryState`
(:meth:`RegistryState.apply`, one record at a time, in offset order) and answers reads from it;
the primary decides writes from it too. Nothing else changes it, so all processes that read the
same records hold the same state. See :mod:`.records` for what each record means.

>>> from broker_lite.registry.records import SchemaKey, SchemaValue, ConfigKey, ConfigValue
>>> state = RegistryState()
>>> state.apply(SchemaKey("s", 1), SchemaValue("s", 1, 1, '"int"'))
>>> state.apply(ConfigKey("s"), ConfigValue("FULL"))
>>> state.live_versions("s"), state.max_id, state.configs
([1], 1, {'s': 'FULL'})
>>> state.apply(SchemaKey("s", 1), None)   # a hard delete
>>> state.subject_exists("s", deleted=True), 1 in state.schemas
(False, False)
"""

from __future__ import annotations

import logging
from dataclasses import replace

from .records import (
    ClearSubjectKey,
    ClearSubjectValue,
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    Key,
    ModeKey,
    ModeValue,
    NoopKey,
    SchemaKey,
    SchemaValue,
    Value,
)
from .schemas.base import Reference

logger = logging.getLogger(__name__)

Identity = tuple[str, str, tuple[Reference, ...]]


class RegistryState:
    """Subjects and their versions, schemas by global id, compatibility levels and modes.

    Attributes
    ----------
    subjects
        subject -> version -> :class:`SchemaValue` (soft-deleted ones with ``deleted``).
    schemas
        global id -> the :class:`SchemaValue` of one version that has it (they all agree on
        type, text and references).
    ids
        (type, text, references) -> global id.
    configs, modes
        subject (None: the global one) -> compatibility level / mode, where set.
    max_id
        The largest id ever read: the next schema gets ``max_id + 1``.
    """

    def __init__(self) -> None:
        self.subjects: dict[str, dict[int, SchemaValue]] = {}
        self.schemas: dict[int, SchemaValue] = {}
        self.ids: dict[Identity, int] = {}
        self.configs: dict[str | None, str] = {}
        self.modes: dict[str | None, str] = {}
        self.max_id = 0
        self._uses: dict[int, int] = {}  # id -> how many versions have it

    # -- replaying records ----------------------------------------------------------------------

    def apply(self, key: Key, value: Value) -> None:
        """Take one record into the state."""
        if isinstance(key, SchemaKey):
            if value is None:
                self._remove_version(key.subject, key.version)
            elif isinstance(value, SchemaValue):
                self._put_version(value)
        elif isinstance(key, ConfigKey):
            if isinstance(value, ConfigValue):
                self.configs[key.subject] = value.compatibility_level
            else:
                self.configs.pop(key.subject, None)
        elif isinstance(key, ModeKey):
            if isinstance(value, ModeValue):
                self.modes[key.subject] = value.mode
            else:
                self.modes.pop(key.subject, None)
        elif isinstance(key, DeleteSubjectKey) and isinstance(value, DeleteSubjectValue):
            for version, found in self.subjects.get(key.subject, {}).items():
                if version <= value.version and not found.deleted:
                    self.subjects[key.subject][version] = replace(found, deleted=True)
        elif isinstance(key, ClearSubjectKey) and isinstance(value, ClearSubjectValue):
            for version, found in list(self.subjects.get(key.subject, {}).items()):
                if found.deleted:
                    self._remove_version(key.subject, version)
        elif not isinstance(key, NoopKey | DeleteSubjectKey | ClearSubjectKey):
            logger.warning("skipping a _schemas record of unknown key %r", key)

    def _put_version(self, value: SchemaValue) -> None:
        versions = self.subjects.setdefault(value.subject, {})
        previous = versions.get(value.version)
        if previous is not None:
            self._release(previous.id)
        versions[value.version] = value
        self.schemas.setdefault(value.id, value)
        self.ids.setdefault((value.schema_type, value.schema, value.references), value.id)
        self._uses[value.id] = self._uses.get(value.id, 0) + 1
        self.max_id = max(self.max_id, value.id)

    def _remove_version(self, subject: str, version: int) -> None:
        versions = self.subjects.get(subject, {})
        found = versions.pop(version, None)
        if not versions:
            self.subjects.pop(subject, None)
        if found is not None:
            self._release(found.id)

    def _release(self, schema_id: int) -> None:
        """One version fewer has ``schema_id``; the id is forgotten with its last version."""
        left = self._uses.get(schema_id, 0) - 1
        if left > 0:
            self._uses[schema_id] = left
            return
        self._uses.pop(schema_id, None)
        gone = self.schemas.pop(schema_id, None)
        if gone is not None:
            self.ids.pop((gone.schema_type, gone.schema, gone.references), None)

    # -- queries --------------------------------------------------------------------------------

    def subject_exists(self, subject: str, deleted: bool = False) -> bool:
        """Whether ``subject`` has a live version (or, with ``deleted``, any version)."""
        versions = self.subjects.get(subject, {})
        return any(deleted or not v.deleted for v in versions.values())

    def subject_names(self, deleted: bool = False) -> list[str]:
        return sorted(s for s in self.subjects if self.subject_exists(s, deleted))

    def live_versions(self, subject: str) -> list[int]:
        return sorted(v for v, found in self.subjects.get(subject, {}).items()
                      if not found.deleted)

    def versions(self, subject: str, deleted: bool = False) -> list[int]:
        return sorted(v for v, found in self.subjects.get(subject, {}).items()
                      if deleted or not found.deleted)

    def version(self, subject: str, version: int) -> SchemaValue | None:
        return self.subjects.get(subject, {}).get(version)

    def uses_of(self, schema_id: int, deleted: bool = False) -> list[tuple[str, int]]:
        """The ``(subject, version)`` pairs whose schema is ``schema_id``."""
        return sorted((subject, version) for subject, versions in self.subjects.items()
                      for version, found in versions.items()
                      if found.id == schema_id and (deleted or not found.deleted))

    def referenced_by(self, subject: str, version: int) -> list[int]:
        """The ids of the live schemas that reference ``subject`` at ``version``."""
        return sorted({found.id for versions in self.subjects.values()
                       for found in versions.values() if not found.deleted
                       and any(r.subject == subject and r.version == version
                               for r in found.references)})
