"""Declarative message schemas: Kafka's JSON message specs as Python data.

A schema is data, shaped like Kafka's JSON message specs: a :class:`Message` has a name, an API
key, ``valid_versions`` and ``flexible_versions``, and an ordered list of :class:`Field`; each
field has a type, the versions it is present in, the versions it is nullable in, an optional
custom default, and, when tagged, a tag and the versions it is tagged in. Arrays of structs and
struct fields carry their own field lists. The declarations in :mod:`.messages` use the small
constructors :func:`F` (a field), :func:`A` (an array) and :func:`S` (a struct)::

    A("Topics", "MetadataRequestTopic", "0+", [
        F("TopicId", UUID, "10+", ignorable=True),
        F("Name", STRING, "0+", nullable="10+"),
    ], nullable="1+")

Version ranges are written as in the specs (:class:`Versions`: ``"0+"``, ``"3-7"``, ``"5"``,
``"none"``). Each field has a body key, the snake_case of its name (:func:`snake_case`), and a
default: the spec's, else its type's (0, ``False``, ``""``, ``b""``, the zero UUID, ``None`` for
records, an empty list for arrays, a body of defaults for structs). A declaration that cannot
be right (a nullable int32, a struct type without fields, two fields with one key, a tag
without tagged versions) raises :class:`ValueError` when the schema is built.

Schemas hold no codec: :mod:`.codec` interprets them, for any version (:func:`.codec.decode`,
:func:`.codec.encode`).

>>> msg = Message("ExampleRequest", 99, "request", "0-1", "1+", [
...     F("Name", STRING, "0+"),
...     F("TimeoutMs", INT32, "1+", default=30000),
... ])
>>> list(msg.versions), msg.is_flexible(1), [(f.key, f.default) for f in msg.fields]
([0, 1], True, [('name', ''), ('timeout_ms', 30000)])
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

from .errors import UnsupportedVersionError
from .types import ZERO_UUID

# -- primitive type names, as in the JSON specs -------------------------------------------------

BOOL = "bool"
INT8 = "int8"
INT16 = "int16"
UINT16 = "uint16"
INT32 = "int32"
UINT32 = "uint32"
INT64 = "int64"
FLOAT64 = "float64"
STRING = "string"
UUID = "uuid"
BYTES = "bytes"
RECORDS = "records"

PRIMITIVE_TYPES = frozenset(
    {BOOL, INT8, INT16, UINT16, INT32, UINT32, INT64, FLOAT64, STRING, UUID, BYTES, RECORDS}
)
_NULLABLE_TYPES = frozenset({STRING, BYTES, RECORDS})  # (Kafka has no nullable uuid)


# -- names --------------------------------------------------------------------------------------

_SNAKE_1 = re.compile(r"(.)([A-Z][a-z]+)")
_SNAKE_2 = re.compile(r"([a-z0-9])([A-Z])")


def snake_case(name: str) -> str:
    """The body key of a spec field name.

    >>> [snake_case(n) for n in ("ThrottleTimeMs", "TopicId", "ISRNodes", "IsrNodes", "timeoutMs")]
    ['throttle_time_ms', 'topic_id', 'isr_nodes', 'isr_nodes', 'timeout_ms']
    """
    return _SNAKE_2.sub(r"\1_\2", _SNAKE_1.sub(r"\1_\2", name)).lower()


# -- version ranges -----------------------------------------------------------------------------


class Versions:
    """A version range as the specs write it: ``"0+"``, ``"3-7"``, ``"5"`` or ``"none"``.

    >>> v = Versions.parse("3-7"); 2 in v, 3 in v, 7 in v, 8 in v
    (False, True, True, False)
    >>> 100 in Versions.parse("9+"), 0 in Versions.parse("none")
    (True, False)
    """

    __slots__ = ("_text", "hi", "lo")

    def __init__(self, lo: int, hi: int | None, text: str):
        self.lo = lo
        self.hi = hi  # None: open-ended
        self._text = text

    @classmethod
    def parse(cls, spec: str | Versions | None) -> Versions:
        if isinstance(spec, Versions):
            return spec
        if spec is None or spec == "none":
            return NO_VERSIONS
        text = spec.strip()
        if text.endswith("+"):
            return cls(int(text[:-1]), None, text)
        if "-" in text:
            lo, hi = text.split("-")
            return cls(int(lo), int(hi), text)
        return cls(int(text), int(text), text)

    def __contains__(self, version: int) -> bool:
        return self.lo <= version and (self.hi is None or version <= self.hi)

    def __bool__(self) -> bool:
        return self.hi is None or self.hi >= self.lo

    def __eq__(self, other) -> bool:
        if not isinstance(other, Versions):
            return NotImplemented
        if not self and not other:
            return True
        return (self.lo, self.hi) == (other.lo, other.hi)

    def __hash__(self) -> int:
        return hash((self.lo, self.hi)) if self else 0

    def __repr__(self) -> str:
        return f"Versions({self._text!r})"

    def __str__(self) -> str:
        return self._text

    def intersect(self, other: Versions) -> Versions:
        if not self or not other:
            return NO_VERSIONS
        lo = max(self.lo, other.lo)
        hi = (self.hi if other.hi is None
              else other.hi if self.hi is None
              else min(self.hi, other.hi))
        if hi is not None and hi < lo:
            return NO_VERSIONS
        return Versions(lo, hi, f"{lo}+" if hi is None else f"{lo}-{hi}")


NO_VERSIONS = Versions(0, -1, "none")

_UNSET: Any = type("_Unset", (), {"__repr__": lambda self: "UNSET"})()


# -- declarations -------------------------------------------------------------------------------


class Field:
    """One field of a struct, as declared in a spec.

    ``type`` is a primitive type name, ``"[]<type>"`` for an array, or a struct name (then
    ``struct`` holds its fields). ``default`` is the Python value of the spec's default (or of the
    type's when the spec gives none).
    """

    __slots__ = (
        "_default",
        "explicit_default",
        "flexible",
        "ignorable",
        "is_array",
        "item_type",
        "key",
        "name",
        "nullable",
        "struct",
        "tag",
        "tagged",
        "type",
        "versions",
    )

    def __init__(
        self,
        name: str,
        type: str,
        versions: str,
        *,
        nullable: str | None = None,
        default: Any = _UNSET,
        ignorable: bool = False,
        tag: int | None = None,
        tagged: str | None = None,
        flexible: str | None = None,
        fields: Iterable[Field] | None = None,
    ):
        self.name = name
        self.key = snake_case(name)
        self.type = type
        self.versions = Versions.parse(versions)
        self.nullable = Versions.parse(nullable)
        self.ignorable = ignorable
        self.tag = tag
        self.tagged = Versions.parse(tagged)
        if (tag is None) != (tagged is None):
            raise ValueError(f"field {name}: tag and tagged versions go together")
        self.flexible = None if flexible is None else Versions.parse(flexible)
        self.is_array = type.startswith("[]")
        self.item_type = type[2:] if self.is_array else type
        if fields is not None:
            if self.item_type in PRIMITIVE_TYPES:
                raise ValueError(f"field {name}: a {type} has no fields")
            self.struct = Struct(self.item_type, fields)
        else:
            if self.item_type not in PRIMITIVE_TYPES:
                raise ValueError(f"field {name}: struct type {type} needs its fields")
            self.struct = None
        if self.nullable and not self.is_array and self.struct is None \
                and self.item_type not in _NULLABLE_TYPES:
            raise ValueError(f"field {name}: a {type} cannot be nullable")
        self.explicit_default = default is not _UNSET
        if self.explicit_default and (self.is_array or self.struct is not None) and not (
                default is None and self.struct is not None and not self.is_array
                and self.nullable):
            raise ValueError(f"field {name}: arrays and structs have no custom default "
                             f"(a nullable struct's may be null)")
        self._default = default if self.explicit_default else _type_default(self.item_type)

    @property
    def default(self) -> Any:
        """A fresh default value (a new list or dict for arrays and structs)."""
        if self.is_array:
            return []
        if self.struct is not None and not self.explicit_default:
            return self.struct.default_body()
        return self._default

    @property
    def mutable_default(self) -> bool:
        return self.is_array or (self.struct is not None and not self.explicit_default)

    def __repr__(self) -> str:
        return f"Field({self.name!r}, {self.type!r}, {str(self.versions)!r})"


def _type_default(type_name: str) -> Any:
    if type_name in (BOOL,):
        return False
    if type_name == FLOAT64:
        return 0.0
    if type_name == STRING:
        return ""
    if type_name == BYTES:
        return b""
    if type_name == UUID:
        return ZERO_UUID
    if type_name == RECORDS:
        return None
    if type_name in PRIMITIVE_TYPES:
        return 0
    return None


class Struct:
    """An ordered list of fields. ``codecs`` caches what :mod:`.codec` compiles from it, per
    (version, flexible)."""

    def __init__(self, name: str, fields: Iterable[Field]):
        self.name = name
        self.fields = tuple(fields)
        keys = [f.key for f in self.fields]
        if len(set(keys)) != len(keys):
            raise ValueError(f"struct {name}: two fields share a snake_case key: {keys}")
        self.codecs: dict[tuple[int, bool], Any] = {}

    def default_body(self) -> dict:
        """Every field (of every version) at its default."""
        return {f.key: f.default for f in self.fields}

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


class Message(Struct):
    """A top-level request, response or header schema.

    ``kind`` is ``"request"``, ``"response"`` or ``"header"``; ``api_key`` is None for headers.
    """

    def __init__(
        self,
        name: str,
        api_key: int | None,
        kind: str,
        valid_versions: str,
        flexible_versions: str,
        fields: Iterable[Field],
    ):
        super().__init__(name, fields)
        self.api_key = api_key
        self.kind = kind
        self.valid_versions = Versions.parse(valid_versions)
        self.flexible_versions = Versions.parse(flexible_versions)
        self.version_codecs: dict[int, Any] = {}  # valid version -> its entry in ``codecs``

    @property
    def versions(self) -> range:
        """Every valid version, lowest first."""
        v = self.valid_versions
        return range(v.lo, v.hi + 1) if v else range(0)

    def is_flexible(self, version: int) -> bool:
        return version in self.flexible_versions

    def check_version(self, version: int) -> None:
        if version not in self.valid_versions:
            raise UnsupportedVersionError(self.api_key, version, what=f"{self.name}")


def Request(name: str, api_key: int, valid: str, flexible: str, fields: Iterable[Field]) -> Message:
    """A request schema: ``Request("MetadataRequest", 3, "0-12", "9+", [...])``."""
    return Message(name, api_key, "request", valid, flexible, fields)


def Response(name: str, api_key: int, valid: str, flexible: str,
             fields: Iterable[Field]) -> Message:
    """A response schema: ``Response("MetadataResponse", 3, "0-12", "9+", [...])``."""
    return Message(name, api_key, "response", valid, flexible, fields)


def Header(name: str, valid: str, flexible: str, fields: Iterable[Field]) -> Message:
    """A header schema (no API key)."""
    return Message(name, None, "header", valid, flexible, fields)


def F(name: str, type: str, versions: str, **kw) -> Field:
    """A field of a primitive type: ``F("ThrottleTimeMs", INT32, "1+", ignorable=True)``."""
    return Field(name, type, versions, **kw)


def A(name: str, item: str, versions: str, fields: Iterable[Field] | None = None, **kw) -> Field:
    """An array: of a primitive (``A("IsrNodes", INT32, "0+")``) or of a struct named ``item``
    with ``fields``."""
    return Field(name, "[]" + item, versions, fields=fields, **kw)


def S(name: str, struct_name: str, versions: str, fields: Iterable[Field], **kw) -> Field:
    """A struct-valued field: ``S("CurrentLeader", "LeaderIdAndEpoch", "10+", [...], tag=0,
    tagged="10+")``."""
    return Field(name, struct_name, versions, fields=fields, **kw)


__all__ = [
    "BOOL",
    "BYTES",
    "FLOAT64",
    "INT8",
    "INT16",
    "INT32",
    "INT64",
    "NO_VERSIONS",
    "RECORDS",
    "STRING",
    "UINT16",
    "UINT32",
    "UUID",
    "A",
    "F",
    "Field",
    "Header",
    "Message",
    "Request",
    "Response",
    "S",
    "Struct",
    "Versions",
    "snake_case",
]
