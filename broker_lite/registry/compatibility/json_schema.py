"""Confluent's JSON Schema compatibility rules, as a checker.

A reader can read a writer's data when every document the writer's schema accepts, the
reader's accepts too. Confluent's registry ("Schema Evolution and Compatibility", JSON Schema;
its ``JsonSchemaDiff``) decides that keyword by keyword, with these error types:

- ``type``: the reader must allow every type the writer allows (``integer`` is within
  ``number``): else ``TYPE_CHANGED`` (no type in common) or ``TYPE_NARROWED``;
- objects: a writer property the reader lacks is fine in an open reader, and
  ``PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL`` in a closed one
  (``additionalProperties: false``); a reader property the writer lacks is fine when the
  writer is closed, and ``PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL`` when it is open (its data may
  hold anything under that name); ``REQUIRED_ATTRIBUTE_ADDED`` for a property the reader
  requires and the writer did not; ``ADDITIONAL_PROPERTIES_REMOVED`` /
  ``ADDITIONAL_PROPERTIES_NARROWED`` when the reader closes what the writer left open;
- ``enum``: the reader must hold every writer value (``ENUM_ARRAY_NARROWED``);
- ranges: ``MAXIMUM_ADDED``/``MAXIMUM_DECREASED``, ``MINIMUM_ADDED``/``MINIMUM_INCREASED``
  (``exclusive*`` alike), ``MAX_LENGTH_*``, ``MIN_LENGTH_*``, ``MAX_ITEMS_*``,
  ``MIN_ITEMS_*``, ``MAX_PROPERTIES_*``, ``MIN_PROPERTIES_*``, ``PATTERN_ADDED`` /
  ``PATTERN_CHANGED``, ``MULTIPLE_OF_ADDED`` / ``MULTIPLE_OF_CHANGED``,
  ``UNIQUE_ITEMS_ADDED``;
- arrays: ``items`` compared as schemas; ``oneOf``/``anyOf``: every writer branch must be read
  by some reader branch (``COMBINED_TYPE_SUBSCHEMAS_CHANGED``);
- ``$ref``: followed (local ``#/definitions/...`` pointers, and other subjects' schemas by
  reference name) before comparing; a recursive schema is compared once per pair.

>>> from broker_lite.registry.schemas.json_schema import JsonSchema
>>> def js(text): return JsonSchema.parse(text, (), {})
>>> [i.error_type for i in can_read(js('{"type": "integer"}'), js('{"type": "number"}'))]
['TYPE_NARROWED']
>>> can_read(js('{"type": "number"}'), js('{"type": "integer"}'))
[]
"""

from __future__ import annotations

from typing import Any

from referencing import Registry
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT7

from ..schemas.json_schema import JsonSchema
from .incompatibility import Incompatibility

Resolver = Any  # referencing's Resolver, which it does not export

ALL_TYPES = frozenset({"null", "boolean", "object", "array", "number", "integer", "string"})

#: (keyword, the reader is stricter when its value is ..., error type stem)
UPPER_BOUNDS = ("maximum", "exclusiveMaximum", "maxLength", "maxItems", "maxProperties")
LOWER_BOUNDS = ("minimum", "exclusiveMinimum", "minLength", "minItems", "minProperties")
ERROR_NAMES = {"maximum": "MAXIMUM", "exclusiveMaximum": "EXCLUSIVE_MAXIMUM",
               "maxLength": "MAX_LENGTH", "maxItems": "MAX_ITEMS",
               "maxProperties": "MAX_PROPERTIES", "minimum": "MINIMUM",
               "exclusiveMinimum": "EXCLUSIVE_MINIMUM", "minLength": "MIN_LENGTH",
               "minItems": "MIN_ITEMS", "minProperties": "MIN_PROPERTIES"}


def can_read(reader: JsonSchema, writer: JsonSchema) -> list[Incompatibility]:
    """Why data valid under ``writer`` may be invalid under ``reader`` (empty: it never is)."""
    return _Comparison(reader, writer).compare(
        reader.value, writer.value, "#",
        _resolver(reader.registry(), reader.value), _resolver(writer.registry(), writer.value))


def _resolver(registry: Registry, root: Any) -> Resolver:
    resource = DRAFT7.create_resource(root)
    return registry.with_resource("", resource).resolver(base_uri="")


def _types(schema: dict[str, Any]) -> frozenset[str]:
    declared = schema.get("type")
    if declared is None:
        return ALL_TYPES
    found = {declared} if isinstance(declared, str) else set(declared)
    if "number" in found:
        found.add("integer")
    return frozenset(found)


def _closed(schema: dict[str, Any]) -> bool:
    return schema.get("additionalProperties") is False


class _Comparison:
    def __init__(self, reader: JsonSchema, writer: JsonSchema):
        self.compared: set[tuple[int, int]] = set()

    def compare(self, reader: Any, writer: Any, path: str, reader_refs: Resolver,
                writer_refs: Resolver) -> list[Incompatibility]:
        reader, reader_refs = _follow(reader, reader_refs)
        writer, writer_refs = _follow(writer, writer_refs)
        if reader is True or reader == {} or writer is False:
            return []
        if reader is False:
            return [Incompatibility("SCHEMA_NARROWED", path, "the reader accepts nothing")]
        if writer is True:
            writer = {}
        key = (id(reader), id(writer))
        if key in self.compared:
            return []
        self.compared.add(key)
        found: list[Incompatibility] = []
        reader_types, writer_types = _types(reader), _types(writer)
        if not writer_types <= reader_types:
            kind = "TYPE_CHANGED" if not writer_types & reader_types else "TYPE_NARROWED"
            found.append(Incompatibility(kind, f"{path}/type",
                                         f"the type {sorted(writer_types)} became "
                                         f"{sorted(reader_types)}"))
            if kind == "TYPE_CHANGED":
                return found
        found.extend(_values(reader, writer, path))
        found.extend(_bounds(reader, writer, path))
        if "object" in reader_types & writer_types:
            found.extend(self.objects(reader, writer, path, reader_refs, writer_refs))
        if "array" in reader_types & writer_types:
            reader_items, writer_items = reader.get("items", True), writer.get("items", True)
            if isinstance(reader_items, dict | bool) and isinstance(writer_items, dict | bool):
                found.extend(self.compare(reader_items, writer_items, f"{path}/items",
                                          reader_refs, writer_refs))
        for combiner in ("oneOf", "anyOf"):
            if combiner in reader:
                writer_branches = writer.get(combiner, writer.get("oneOf" if combiner == "anyOf"
                                                                  else "anyOf", [writer]))
                for index, branch in enumerate(writer_branches):
                    if not any(not self.compare(r, branch, f"{path}/{combiner}/{index}",
                                                reader_refs, writer_refs)
                               for r in reader[combiner]):
                        found.append(Incompatibility(
                            "COMBINED_TYPE_SUBSCHEMAS_CHANGED", f"{path}/{combiner}",
                            f"no {combiner} branch of the reader reads the writer's branch "
                            f"{index}"))
        return found

    def objects(self, reader: dict[str, Any], writer: dict[str, Any], path: str,
                reader_refs: Resolver, writer_refs: Resolver) -> list[Incompatibility]:
        found: list[Incompatibility] = []
        reader_properties = reader.get("properties", {})
        writer_properties = writer.get("properties", {})
        reader_extra = reader.get("additionalProperties", True)
        writer_extra = writer.get("additionalProperties", True)
        for name, schema in writer_properties.items():
            where = f"{path}/properties/{name}"
            if name in reader_properties:
                found.extend(self.compare(reader_properties[name], schema, where,
                                          reader_refs, writer_refs))
            elif reader_extra is False:
                found.append(Incompatibility(
                    "PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL", where,
                    f"the property {name!r} is gone from a closed content model"))
            elif isinstance(reader_extra, dict):
                found.extend(self.compare(reader_extra, schema, where, reader_refs,
                                          writer_refs))
        for name, schema in reader_properties.items():
            if name in writer_properties:
                continue
            where = f"{path}/properties/{name}"
            if writer_extra is False:
                continue  # the writer's data never holds it
            if isinstance(writer_extra, dict):
                found.extend(self.compare(schema, writer_extra, where, reader_refs,
                                          writer_refs))
            elif schema not in (True, {}):
                found.append(Incompatibility(
                    "PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL", where,
                    f"the property {name!r} is new, and the writer's open content model may "
                    f"have held anything under that name"))
        newly_required = set(reader.get("required", ())) - set(writer.get("required", ()))
        for name in sorted(newly_required):
            found.append(Incompatibility("REQUIRED_ATTRIBUTE_ADDED", f"{path}/required",
                                         f"the property {name!r} is now required"))
        if reader_extra is False and writer_extra is not False:
            kind = "ADDITIONAL_PROPERTIES_REMOVED" if writer_extra is True \
                else "ADDITIONAL_PROPERTIES_NARROWED"
            found.append(Incompatibility(kind, f"{path}/additionalProperties",
                                         "the reader closes the content model"))
        elif isinstance(reader_extra, dict) and writer_extra is not False:
            found.extend(self.compare(reader_extra, {} if writer_extra is True
                                      else writer_extra, f"{path}/additionalProperties",
                                      reader_refs, writer_refs))
        return found


def _follow(schema: Any, resolver: Resolver) -> tuple[Any, Resolver]:
    """``schema`` with its ``$ref`` followed (repeatedly), and the resolver for inside it."""
    seen = 0
    while isinstance(schema, dict) and "$ref" in schema and seen < 50:
        try:
            resolved = resolver.lookup(schema["$ref"])
        except Unresolvable:
            return schema, resolver
        schema, resolver = resolved.contents, resolved.resolver
        seen += 1
    return schema, resolver


def _values(reader: dict[str, Any], writer: dict[str, Any], path: str
            ) -> list[Incompatibility]:
    found = []
    if "enum" in reader:
        if "enum" not in writer:
            found.append(Incompatibility("ENUM_ARRAY_NARROWED", f"{path}/enum",
                                         "the reader restricts the values to an enum"))
        else:
            missing = [v for v in writer["enum"] if v not in reader["enum"]]
            if missing:
                found.append(Incompatibility("ENUM_ARRAY_NARROWED", f"{path}/enum",
                                             f"the reader's enum lacks {missing}"))
    if "const" in reader and reader.get("const") != writer.get("const", object()):
        found.append(Incompatibility("ENUM_ARRAY_NARROWED", f"{path}/const",
                                     "the reader's const differs"))
    if "pattern" in reader and reader["pattern"] != writer.get("pattern"):
        kind = "PATTERN_ADDED" if "pattern" not in writer else "PATTERN_CHANGED"
        found.append(Incompatibility(kind, f"{path}/pattern", "the pattern is stricter"))
    if "multipleOf" in reader:
        if "multipleOf" not in writer:
            found.append(Incompatibility("MULTIPLE_OF_ADDED", f"{path}/multipleOf",
                                         "the reader adds multipleOf"))
        elif writer["multipleOf"] % reader["multipleOf"]:
            found.append(Incompatibility("MULTIPLE_OF_CHANGED", f"{path}/multipleOf",
                                         f"{writer['multipleOf']} is not a multiple of "
                                         f"{reader['multipleOf']}"))
    if reader.get("uniqueItems") and not writer.get("uniqueItems"):
        found.append(Incompatibility("UNIQUE_ITEMS_ADDED", f"{path}/uniqueItems",
                                     "the reader requires unique items"))
    return found


def _bounds(reader: dict[str, Any], writer: dict[str, Any], path: str
            ) -> list[Incompatibility]:
    found = []
    for keyword in (*UPPER_BOUNDS, *LOWER_BOUNDS):
        if keyword not in reader or isinstance(reader[keyword], bool):
            continue
        stem = ERROR_NAMES[keyword]
        if keyword not in writer or isinstance(writer[keyword], bool):
            found.append(Incompatibility(f"{stem}_ADDED", f"{path}/{keyword}",
                                         f"the reader adds {keyword} {reader[keyword]}"))
            continue
        stricter = reader[keyword] < writer[keyword] if keyword in UPPER_BOUNDS \
            else reader[keyword] > writer[keyword]
        if stricter:
            change = "DECREASED" if keyword in UPPER_BOUNDS else "INCREASED"
            found.append(Incompatibility(f"{stem}_{change}", f"{path}/{keyword}",
                                         f"{keyword} went from {writer[keyword]} to "
                                         f"{reader[keyword]}"))
    return found
