"""Spark's DDL types parsed into Arrow types, without Spark: ``value.schema`` of the ``json``
format, which executors need as Arrow and the Python data source API parses nowhere (Spark's own
parser runs in its JVM, which a source's Python process does not have).

The grammar is Spark's for types: a top-level list of fields (``name type [NOT NULL]
[COMMENT '...']``, commas between; ``name: type`` too), ``struct<...>``, ``array<T>``,
``map<K, V>``, ``decimal(p, s)``, and the names ``boolean``, ``tinyint``/``byte``,
``smallint``/``short``, ``int``/``integer``, ``bigint``/``long``, ``float``/``real``,
``double``, ``string``, ``varchar(n)``, ``char(n)``, ``binary``, ``date``, ``timestamp``,
``timestamp_ntz``, in any case; names may be quoted with backticks.

>>> arrow_of_ddl("id bigint NOT NULL, tags array<string>, at timestamp")
StructType(struct<id: int64 not null, tags: list<element: string>, at: timestamp[us, tz=UTC]>)
>>> arrow_of_ddl("a struct<b: map<string, decimal(10,2)>>").field("a").type
StructType(struct<b: map<string, decimal128(10, 2)>>)
>>> arrow_of_ddl("a nope")
Traceback (most recent call last):
...
ValueError: unknown type 'nope' at character 2 of 'a nope'
"""

from __future__ import annotations

import re

import pyarrow as pa

SIMPLE = {"boolean": pa.bool_(), "tinyint": pa.int8(), "byte": pa.int8(),
          "smallint": pa.int16(), "short": pa.int16(), "int": pa.int32(), "integer": pa.int32(),
          "bigint": pa.int64(), "long": pa.int64(), "float": pa.float32(), "real": pa.float32(),
          "double": pa.float64(), "string": pa.string(), "binary": pa.binary(),
          "date": pa.date32(), "timestamp": pa.timestamp("us", tz="UTC"),
          "timestamp_ltz": pa.timestamp("us", tz="UTC"), "timestamp_ntz": pa.timestamp("us")}
TOKEN = re.compile(r"\s*(`(?:[^`]|``)*`|[A-Za-z_][A-Za-z0-9_]*|\d+|'(?:[^'\\]|\\.)*'|[<>(),:])")


class _Parser:
    def __init__(self, text: str):
        self.text = text
        self.tokens: list[tuple[str, int]] = []
        position = 0
        while position < len(text):
            if text[position:].strip() == "":
                break
            match = TOKEN.match(text, position)
            if match is None:
                raise ValueError(f"unexpected {text[position:].strip()[:1]!r} at character "
                                 f"{position} of {text!r}")
            self.tokens.append((match.group(1), match.start(1)))
            position = match.end()
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at][0] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token.lower() != expected):
            where = self.tokens[self.at][1] if token is not None else len(self.text)
            raise ValueError(f"expected {expected or 'more'} at character {where} of "
                             f"{self.text!r}")
        self.at += 1
        return token

    def fields(self, closing: str | None) -> list[pa.Field]:
        fields = []
        while True:
            name = self.take()
            name = name[1:-1].replace("``", "`") if name.startswith("`") else name
            if self.peek() == ":":
                self.take(":")
            kind = self.type()
            nullable = True
            if (self.peek() or "").lower() == "not":
                self.take("not")
                self.take("null")
                nullable = False
            if (self.peek() or "").lower() == "comment":
                self.take("comment")
                self.take()
            fields.append(pa.field(name, kind, nullable))
            if self.peek() != ",":
                break
            self.take(",")
        if closing is not None:
            self.take(closing)
        return fields

    def type(self) -> pa.DataType:
        at = self.tokens[self.at][1] if self.at < len(self.tokens) else len(self.text)
        name = self.take().lower()
        if name == "struct":
            self.take("<")
            return pa.struct(self.fields(">"))
        if name == "array":
            self.take("<")
            item = self.type()
            self.take(">")
            return pa.list_(pa.field("element", item, True))
        if name == "map":
            self.take("<")
            key = self.type()
            self.take(",")
            value = self.type()
            self.take(">")
            return pa.map_(pa.field("key", key, False), pa.field("value", value, True))
        if name in ("decimal", "dec", "numeric"):
            precision, scale = 10, 0
            if self.peek() == "(":
                self.take("(")
                precision = int(self.take())
                if self.peek() == ",":
                    self.take(",")
                    scale = int(self.take())
                self.take(")")
            return pa.decimal128(precision, scale)
        if name in ("varchar", "char"):
            self.take("(")
            self.take()
            self.take(")")
            return pa.string()
        if name not in SIMPLE:
            raise ValueError(f"unknown type {name!r} at character {at} of {self.text!r}")
        return SIMPLE[name]


def arrow_of_ddl(ddl: str) -> pa.DataType:
    """The Arrow type of Spark DDL: a list of fields (a struct), or one type."""
    parser = _Parser(ddl)
    if not parser.tokens:
        raise ValueError("an empty type")
    second = parser.tokens[1][0] if len(parser.tokens) > 1 else None
    if second is not None and second not in ("<", "("):
        result: pa.DataType = pa.struct(parser.fields(None))
    else:
        result = parser.type()
    if parser.peek() is not None:
        raise ValueError(f"unexpected {parser.peek()!r} at character "
                         f"{parser.tokens[parser.at][1]} of {ddl!r}")
    return result
