"""A decoder as a program: a (writer schema, reader schema) pair compiled once into a small
table of instructions, which an interpreter runs over each payload.

Avro's binary encoding carries no types or names: a record is its fields' encodings one after
another, in the writer's order. To read it with another schema (the reader's: the subject's
latest version, say) Avro's resolution rules pair them up (the specification, "Schema
Resolution"): fields by name or by the reader's aliases, a writer's field the reader lacks
skipped, a reader's field the writer lacks filled from its default, ``int`` read as ``long``,
``float`` or ``double``, ``long`` as ``float`` or ``double``, ``float`` as ``double``, ``string``
and ``bytes`` as each other, an enum symbol by name (or the reader's default symbol), a union
branch by the first reader branch that matches it. Those decisions depend on the two schemas
only, so they are made here, once per pair, and what is left for each record is a walk over a
flat list of instructions: read this, put it there.

The program's output is a set of **slots**: one builder for each column of the reader's Spark
type (:mod:`.schema`): a struct's, a list's offsets, each leaf's values. The program is a tree
of nodes written into one ``int32`` array (:attr:`Program.code`), each node an opcode and its
arguments, children referred to by their position in the array:

==============  ===============================  ===============================================
opcode          arguments                        what it does
==============  ===============================  ===============================================
``NULL``        slot                             nothing to read; a null into slot
``BOOLEAN``     slot                             one byte, 0 or 1
``INT``         slot                             a zigzag varint that fits in 32 bits
``LONG``        slot, scale                      a zigzag varint, times scale (1000: a
                                                 ``timestamp-millis`` into microseconds)
``FLOAT``       slot                             4 bytes, little-endian IEEE 754
``DOUBLE``      slot                             8 bytes
``BYTES``       slot, utf8                       a long length, then that many bytes (utf8:
                                                 checked to be UTF-8, for a string slot)
``FIXED``       slot, size                       size bytes
``DECIMAL``     slot, size, precision            size bytes (-1: a long length first), a
                                                 big-endian two's-complement unscaled value
``ENUM``        slot, n, symbol_0..symbol_n-1    an int index; the reader's symbol (a
                                                 constant) for each writer symbol, -1 for none
``RECORD``      slot, n, child_0..child_n-1      a struct value into slot, then each child
``ARRAY``       slot, item                       blocks of items: a long count (negative: its
                                                 absolute value, then a long byte size), 0 ends
``MAP``         slot, entries, key, value        blocks like an array's, each entry a string key
                                                 (into slot key) and a value
``UNION``       n, branch_0..branch_n-1          a long branch index, then that branch
``NULL_INTO``   slot                             a null into slot (and into a struct's fields)
``MEMBER``      slot, index, child               a union read as a struct of members: slot's
                                                 member index set, the others null
``DEFAULT``     constant, child                  child run over the constant's bytes: a
                                                 reader's field the writer lacks
``FAIL``        constant                         the record cannot be read: the constant says why
==============  ===============================  ===============================================

A slot of -1 reads and discards (a writer's field the reader does not have). Integers land in
their slot's width (a writer's ``int`` in a reader's ``long`` slot is the promotion), so the
opcode names the writer's encoding and the slot the reader's type.

The interpreters are :mod:`.decode` (Python, the reference) and ``_native/avro_decode.c`` (its
compiled twin); both run this same table.

>>> from broker_lite.serde.avro.schema import expand
>>> node = expand({"type": "record", "name": "R", "fields": [
...     {"name": "a", "type": "int"}, {"name": "b", "type": "string"}]}, {})
>>> program = compile_program(node, node)
>>> [SLOT_KINDS[slot.kind] for slot in program.slots]
['struct', 'int32', 'binary']
>>> describe(program)
['0: INT slot=1', '2: BYTES slot=2 utf8=1', '5: RECORD slot=0 [0, 2]']
"""

from __future__ import annotations

import io
import struct
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from ..errors import IncompatibleSchemaError
from .schema import arrow_type, decimal_of, type_name, union_kind

# -- slots -------------------------------------------------------------------------------------

#: slot kinds: the layout of a slot's Arrow buffers
K_NULL, K_BOOL, K_INT32, K_INT64, K_FLOAT32, K_FLOAT64, K_BINARY, K_DECIMAL, K_STRUCT, K_LIST = \
    range(10)
SLOT_KINDS = ["null", "bool", "int32", "int64", "float32", "float64", "binary", "decimal",
              "struct", "list"]


def kind_of(arrow: pa.DataType) -> int:
    """The slot kind that holds values of ``arrow``."""
    if pa.types.is_null(arrow):
        return K_NULL
    if pa.types.is_boolean(arrow):
        return K_BOOL
    if pa.types.is_int32(arrow) or pa.types.is_date32(arrow):
        return K_INT32
    if pa.types.is_int64(arrow) or pa.types.is_timestamp(arrow):
        return K_INT64
    if pa.types.is_float32(arrow):
        return K_FLOAT32
    if pa.types.is_float64(arrow):
        return K_FLOAT64
    if pa.types.is_binary(arrow) or pa.types.is_string(arrow):
        return K_BINARY
    if pa.types.is_decimal(arrow):
        return K_DECIMAL
    if pa.types.is_struct(arrow):
        return K_STRUCT
    return K_LIST  # list and map: int32 offsets and one child


@dataclass
class Slot:
    """One builder of the output: its ``kind``, its Arrow type, and its ``children`` (a
    struct's fields, or a list's or map's one child), by slot number."""

    kind: int
    arrow: pa.DataType
    children: list[int] = field(default_factory=list)


# -- the reader's side: where each part of the reader's type goes ---------------------------


@dataclass
class Out:
    """A part of the reader's schema and the slot its values go to. ``fields`` for a record
    (name, aliases, default or :data:`NO_DEFAULT`, out), ``item`` for an array, ``value`` (and
    ``entries``, ``key``: slots) for a map, ``branches`` for a union (the out each reader branch
    is read into; None for its null branch)."""

    node: Any
    slot: int
    fields: list[tuple[str, list[str], Any, Out]] = field(default_factory=list)
    item: Out | None = None
    value: Out | None = None
    entries: int = -1
    key: int = -1
    branches: list[Out | None] = field(default_factory=list)
    union: str = ""


NO_DEFAULT = object()


def layout(node: Any, slots: list[Slot]) -> Out:
    """The outs (and slots, appended to ``slots``) of the reader's schema ``node``."""
    arrow, _ = arrow_type(node)
    if isinstance(node, list):
        kind = union_kind(node)
        if kind == "nullable":  # null and T, or T alone: T's own slots
            inner = layout(next(b for b in node if b["type"] != "null"), slots)
            return Out(node, inner.slot, branches=[None if b["type"] == "null" else inner
                                                   for b in node], union=kind)
        if kind in ("promoted", "null"):  # one slot of the wider type (or of nulls)
            slot = len(slots)
            slots.append(Slot(kind_of(arrow), arrow))
            return Out(node, slot, branches=[None if b["type"] == "null" else Out(b, slot)
                                             for b in node], union=kind)
        slot = len(slots)
        slots.append(Slot(K_STRUCT, arrow))
        branches: list[Out | None] = []
        for branch in node:
            if branch["type"] == "null":
                branches.append(None)
                continue
            member = layout(branch, slots)
            slots[slot].children.append(member.slot)
            branches.append(member)
        return Out(node, slot, branches=branches, union="members")
    slot = len(slots)
    slots.append(Slot(kind_of(arrow), arrow))
    kind = node["type"]
    if kind == "record":
        out = Out(node, slot)
        for f in node["fields"]:
            inner = layout(f["type"], slots)
            slots[slot].children.append(inner.slot)
            out.fields.append((f["name"], list(f.get("aliases", ())),
                               f.get("default", NO_DEFAULT), inner))
        return out
    if kind == "array":
        item = layout(node["items"], slots)
        slots[slot].children.append(item.slot)
        return Out(node, slot, item=item)
    if kind == "map":
        entries = len(slots)
        slots.append(Slot(K_STRUCT, pa.struct([arrow.key_field, arrow.item_field])))
        key = len(slots)
        slots.append(Slot(K_BINARY, pa.string()))
        value = layout(node["values"], slots)
        slots[entries].children.extend([key, value.slot])
        slots[slot].children.append(entries)
        return Out(node, slot, value=value, entries=entries, key=key)
    return Out(node, slot)


# -- the program --------------------------------------------------------------------------------

(OP_NULL, OP_BOOLEAN, OP_INT, OP_LONG, OP_FLOAT, OP_DOUBLE, OP_BYTES, OP_FIXED, OP_DECIMAL,
 OP_ENUM, OP_RECORD, OP_ARRAY, OP_MAP, OP_UNION, OP_NULL_INTO, OP_MEMBER, OP_DEFAULT,
 OP_FAIL) = range(1, 19)
OPCODES = ["", "NULL", "BOOLEAN", "INT", "LONG", "FLOAT", "DOUBLE", "BYTES", "FIXED", "DECIMAL",
           "ENUM", "RECORD", "ARRAY", "MAP", "UNION", "NULL_INTO", "MEMBER", "DEFAULT", "FAIL"]


@dataclass
class Program:
    """A compiled (writer, reader) pair: :attr:`code` from :attr:`root`, writing
    :attr:`slots` (slot 0 the reader's whole type), with :attr:`constants` (enum symbols as
    UTF-8, defaults as Avro bytes, failure messages as UTF-8)."""

    code: list[int]
    root: int
    slots: list[Slot]
    constants: list[bytes]
    arrow: pa.DataType
    nullable: bool

    def code_bytes(self) -> bytes:
        return struct.pack(f"<{len(self.code)}i", *self.code)

    def slot_table(self) -> bytes:
        """The slots for the compiled interpreter: per slot, kind, child count, children."""
        table: list[int] = []
        for slot in self.slots:
            table += [slot.kind, len(slot.children), *slot.children]
        return struct.pack(f"<{len(table)}i", *table)


def compile_program(writer: Any, reader: Any) -> Program:
    """The program reading payloads written with ``writer`` as ``reader`` (both expanded,
    :func:`.schema.expand`). A pair that cannot be resolved still compiles: each record then
    fails with the reason, through a ``FAIL`` node, so that the caller decides (FAILFAST or
    PERMISSIVE)."""
    slots: list[Slot] = []
    out = layout(reader, slots)
    arrow, nullable = arrow_type(reader)
    compiler = _Compiler()
    root = compiler.emit(writer, out)
    return Program(compiler.code, root, slots, compiler.constants, arrow, nullable)


class _Compiler:
    def __init__(self) -> None:
        self.code: list[int] = []
        self.constants: list[bytes] = []

    def node(self, *words: int) -> int:
        at = len(self.code)
        self.code.extend(words)
        return at

    def constant(self, value: bytes) -> int:
        self.constants.append(value)
        return len(self.constants) - 1

    def fail(self, message: str) -> int:
        return self.node(OP_FAIL, self.constant(message.encode()))

    def emit(self, w: Any, out: Out | None) -> int:
        """The node reading writer type ``w`` into ``out`` (None: read and discard)."""
        if isinstance(w, list):
            if out is not None and isinstance(out.node, list):
                branches = [self.into_union(b, out) for b in w]
            else:
                branches = [self.emit(b, out) if out is None or _matches(b, out.node)
                            else self.mismatch(b, out.node) for b in w]
            return self.node(OP_UNION, len(branches), *branches)
        if out is not None and isinstance(out.node, list):
            return self.into_union(w, out)
        if out is not None and not _matches(w, out.node):
            return self.mismatch(w, out.node)
        slot = -1 if out is None else out.slot
        kind = w["type"]
        if kind == "null":
            return self.node(OP_NULL, slot)
        if kind == "boolean":
            return self.node(OP_BOOLEAN, slot)
        if kind == "int":
            return self.node(OP_INT, slot)
        if kind == "long":
            scale = 1000 if out is not None and out.node.get("logicalType") in (
                "timestamp-millis", "local-timestamp-millis") else 1
            return self.node(OP_LONG, slot, scale)
        if kind == "float":
            return self.node(OP_FLOAT, slot)
        if kind == "double":
            return self.node(OP_DOUBLE, slot)
        if kind in ("bytes", "string", "fixed"):
            size = w["size"] if kind == "fixed" else -1
            decimal = decimal_of(out.node) if out is not None else None
            if decimal is not None:
                return self.node(OP_DECIMAL, slot, size, decimal[0])
            if kind == "fixed":
                return self.node(OP_FIXED, slot, size)
            utf8 = out is not None and out.node["type"] == "string"
            return self.node(OP_BYTES, slot, int(utf8))
        if kind == "enum":
            return self.enum(w, out)
        if kind == "record":
            return self.record(w, out)
        if kind == "array":
            item = self.emit(w["items"], None if out is None else out.item)
            return self.node(OP_ARRAY, slot, item)
        if kind == "map":
            value = self.emit(w["values"], None if out is None else out.value)
            return self.node(OP_MAP, slot, -1 if out is None else out.entries,
                             -1 if out is None else out.key, value)
        raise IncompatibleSchemaError(f"unknown Avro type {type_name(w)}")

    def mismatch(self, w: Any, r: Any) -> int:
        return self.fail(f"the writer's {type_name(w)} cannot be read as the reader's "
                         f"{type_name(r)}")

    def into_union(self, w: Any, out: Out) -> int:
        """Writer type ``w`` (not a union) read into the reader's union ``out``: its first
        branch of the same type, else the first ``w`` promotes to (Avro's rules, as Java's
        ``ResolvingGrammarGenerator.bestBranch`` chooses)."""
        branches = out.node
        chosen = next((i for i, b in enumerate(branches) if _same(w, b)), None)
        if chosen is None:
            chosen = next((i for i, b in enumerate(branches) if _matches(w, b)), None)
        if chosen is None:
            return self.mismatch(w, branches)
        target = out.branches[chosen]
        if target is None:  # the null branch
            return self.node(OP_NULL_INTO, out.slot) if w["type"] == "null" else \
                self.mismatch(w, branches)
        if out.union == "members":
            member = [b for b in out.branches if b is not None].index(target)
            return self.node(OP_MEMBER, out.slot, member, self.emit(w, target))
        if w["type"] == "null":
            return self.node(OP_NULL_INTO, out.slot)
        return self.emit(w, target)

    def enum(self, w: Any, out: Out | None) -> int:
        symbols: list[int] = []
        reader = [] if out is None else out.node["symbols"]
        default = None if out is None else out.node.get("default")
        for symbol in w["symbols"]:
            if out is None:
                symbols.append(-1)
            elif symbol in reader:
                symbols.append(self.constant(symbol.encode()))
            elif default is not None:
                symbols.append(self.constant(default.encode()))
            else:
                symbols.append(-2)  # not in the reader's symbols, and no default
        return self.node(OP_ENUM, -1 if out is None else out.slot, len(symbols), *symbols)

    def record(self, w: Any, out: Out | None) -> int:
        children = []
        filled: set[int] = set()
        for wf in w["fields"]:
            target = None
            if out is not None:
                for index, (name, aliases, _, inner) in enumerate(out.fields):
                    if wf["name"] == name or wf["name"] in aliases:
                        target = inner
                        filled.add(index)
                        break
            children.append(self.emit(wf["type"], target))
        if out is not None:
            for index, (name, _, default, inner) in enumerate(out.fields):
                if index in filled:
                    continue
                if default is NO_DEFAULT:
                    children.append(self.fail(
                        f"the reader's field {out.node['name']}.{name} is not in the writer's "
                        "schema and has no default"))
                    continue
                try:
                    encoded = encode_default(inner.node, default)
                except (ValueError, TypeError, KeyError) as exc:
                    children.append(self.fail(f"the default of {out.node['name']}.{name} does "
                                              f"not fit its type: {exc}"))
                    continue
                children.append(self.node(OP_DEFAULT, self.constant(encoded),
                                          self.emit(inner.node, inner)))
        return self.node(OP_RECORD, -1 if out is None else out.slot, len(children), *children)


def _short(name: str) -> str:
    return name.rpartition(".")[2]


def _names_match(w: Any, r: Any) -> bool:
    """Named types match by unqualified name, or the reader's aliases name the writer's."""
    return _short(w["name"]) == _short(r["name"]) or w["name"] in r.get("aliases", ()) or \
        _short(w["name"]) in map(_short, r.get("aliases", ()))


PROMOTIONS = {("int", "long"), ("int", "float"), ("int", "double"), ("long", "float"),
              ("long", "double"), ("float", "double"), ("string", "bytes"), ("bytes", "string")}


def _same(w: Any, r: Any) -> bool:
    """The same type (and name, for named types): a union branch chosen first."""
    if isinstance(r, list) or w["type"] != r["type"]:
        return False
    return _names_match(w, r) if w["type"] in ("record", "enum", "fixed") else True


def _matches(w: Any, r: Any) -> bool:
    """Whether writer type ``w`` (not a union) can be read as reader type ``r`` (not a union)
    at this level (Avro's "match" rules; nested mismatches fail where they are)."""
    if isinstance(r, list):
        return any(_matches(w, b) for b in r)
    if (w["type"], r["type"]) in PROMOTIONS:
        return True
    if w["type"] != r["type"]:
        return False
    if w["type"] in ("record", "enum"):
        return _names_match(w, r)
    if w["type"] == "fixed":
        return _names_match(w, r) and w["size"] == r["size"]
    return True


# -- defaults -----------------------------------------------------------------------------------


def encode_default(node: Any, value: Any) -> bytes:
    """A field's default (JSON, as the schema gives it) in Avro's binary encoding, so that the
    interpreters read it as they read a payload. A union's default is of its first branch;
    ``bytes`` and ``fixed`` defaults are strings whose code points are the bytes."""
    out = io.BytesIO()
    _write_default(out, node, value)
    return out.getvalue()


def _write_long(out: io.BytesIO, value: int) -> None:
    encoded = (value << 1) ^ (value >> 63)
    while True:
        byte = encoded & 0x7F
        encoded >>= 7
        out.write(bytes([byte | (0x80 if encoded else 0)]))
        if not encoded:
            return


def _write_default(out: io.BytesIO, node: Any, value: Any) -> None:
    if isinstance(node, list):
        _write_long(out, 0)
        _write_default(out, node[0], value)
        return
    kind = node["type"]
    if kind == "null":
        if value is not None:
            raise ValueError(f"{value!r} is not null")
    elif kind == "boolean":
        if not isinstance(value, bool):
            raise TypeError(f"{value!r} is not a boolean")
        out.write(b"\x01" if value else b"\x00")
    elif kind in ("int", "long"):
        if isinstance(value, bool) or not isinstance(value, int):
            raise TypeError(f"{value!r} is not an integer")
        _write_long(out, value)
    elif kind == "float":
        out.write(struct.pack("<f", float(value)))
    elif kind == "double":
        out.write(struct.pack("<d", float(value)))
    elif kind in ("bytes", "string"):
        raw = value.encode("latin-1" if kind == "bytes" else "utf-8")
        _write_long(out, len(raw))
        out.write(raw)
    elif kind == "fixed":
        raw = value.encode("latin-1")
        if len(raw) != node["size"]:
            raise ValueError(f"{value!r} is not {node['size']} bytes")
        out.write(raw)
    elif kind == "enum":
        _write_long(out, node["symbols"].index(value))
    elif kind == "record":
        for f in node["fields"]:
            _write_default(out, f["type"], value[f["name"]] if f["name"] in value
                           else f["default"])
    elif kind == "array":
        if value:
            _write_long(out, len(value))
            for item in value:
                _write_default(out, node["items"], item)
        _write_long(out, 0)
    elif kind == "map":
        if value:
            _write_long(out, len(value))
            for key, item in value.items():
                _write_default(out, {"type": "string"}, key)
                _write_default(out, node["values"], item)
        _write_long(out, 0)


def describe(program: Program) -> list[str]:
    """The program's nodes, one line each with its position, in the order they are written
    (children before their parents, the root last), for tests and debugging."""
    lines, pc, code = [], 0, program.code
    widths = {OP_NULL: 1, OP_BOOLEAN: 1, OP_INT: 1, OP_LONG: 2, OP_FLOAT: 1, OP_DOUBLE: 1,
              OP_BYTES: 2, OP_FIXED: 2, OP_DECIMAL: 3, OP_ARRAY: 2, OP_MAP: 4, OP_NULL_INTO: 1,
              OP_MEMBER: 3, OP_DEFAULT: 2, OP_FAIL: 1}
    while pc < len(code):
        op = code[pc]
        if op in (OP_RECORD, OP_ENUM):
            n = code[pc + 2]
            args = code[pc + 1:pc + 3 + n]
            lines.append(f"{pc}: {OPCODES[op]} slot={args[0]} {list(args[2:])}")
            pc += 3 + n
        elif op == OP_UNION:
            n = code[pc + 1]
            lines.append(f"{pc}: UNION {list(code[pc + 2:pc + 2 + n])}")
            pc += 2 + n
        else:
            args = code[pc + 1:pc + 1 + widths[op]]
            names = {OP_LONG: ["slot", "scale"], OP_BYTES: ["slot", "utf8"],
                     OP_FIXED: ["slot", "size"], OP_DECIMAL: ["slot", "size", "precision"],
                     OP_MAP: ["slot", "entries", "key", "value"],
                     OP_MEMBER: ["slot", "index", "child"], OP_DEFAULT: ["constant", "child"],
                     OP_FAIL: ["constant"]}.get(op, ["slot"])
            lines.append(" ".join([f"{pc}: {OPCODES[op]}"] + [
                f"{n}={a}" for n, a in zip(names, args, strict=True)]))
            pc += 1 + widths[op]
    return lines
