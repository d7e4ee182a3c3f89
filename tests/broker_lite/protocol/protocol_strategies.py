"""Hypothesis strategies for message bodies, generated from the declared schemas, and helpers to
compare bodies (used by the round-trip and kafka-python cross-implementation tests)."""

from __future__ import annotations

import uuid

from hypothesis import strategies as st

from broker_lite.protocol.codec import UNKNOWN_TAGGED_FIELDS
from broker_lite.protocol.schema import Field, Struct

_INTS = {
    "int8": (-(1 << 7), (1 << 7) - 1),
    "int16": (-(1 << 15), (1 << 15) - 1),
    "uint16": (0, (1 << 16) - 1),
    "int32": (-(1 << 31), (1 << 31) - 1),
    "uint32": (0, (1 << 32) - 1),
    "int64": (-(1 << 63), (1 << 63) - 1),
}

# Tags no declared struct uses, for unknown tagged fields.
UNKNOWN_TAGS = st.integers(min_value=200, max_value=100_000)


def _primitive(type_name: str) -> st.SearchStrategy:
    if type_name in _INTS:
        lo, hi = _INTS[type_name]
        return st.one_of(st.integers(lo, hi), st.sampled_from([lo, hi, 0, -1 if lo < 0 else 1]))
    if type_name == "bool":
        return st.booleans()
    if type_name == "float64":
        return st.floats(allow_nan=False)
    if type_name == "string":
        return st.text(max_size=12)
    if type_name == "bytes":
        return st.binary(max_size=12)
    if type_name == "uuid":
        return st.one_of(st.just(uuid.UUID(int=0)), st.uuids())
    if type_name == "records":
        return st.binary(max_size=40)
    raise AssertionError(type_name)


def value_strategy(field: Field, version: int, flexible: bool,
                   unknown_tags: bool) -> st.SearchStrategy:
    if field.struct is not None:
        item = body_strategy(field.struct, version, flexible, unknown_tags)
    else:
        item = _primitive(field.item_type)
    value = st.lists(item, max_size=3) if field.is_array else item
    if version in field.nullable:  # (ShareFetchResponse's records are not, from v1 on)
        value = st.one_of(st.none(), value)
    return value


def body_strategy(struct: Struct, version: int, flexible: bool, unknown_tags: bool = False):
    """Bodies with a value for every field present in ``version`` (and, when asked for and the
    version is flexible, some unknown tagged fields)."""
    parts = {
        f.key: value_strategy(f, version, flexible, unknown_tags)
        for f in struct.fields
        if version in f.versions
    }
    optional = {}
    if flexible and unknown_tags:
        optional[UNKNOWN_TAGGED_FIELDS] = st.dictionaries(UNKNOWN_TAGS, st.binary(max_size=6),
                                                          min_size=1, max_size=2)
    return st.fixed_dictionaries(parts, optional=optional)


def expected_body(struct: Struct, version: int, body: dict, flexible: bool) -> dict:
    """What decoding the encoding of ``body`` must give: every field, defaults where the version
    lacks the field."""
    out = {}
    for f in struct.fields:
        if version not in f.versions:
            out[f.key] = f.default
            continue
        value = body.get(f.key, f.default)
        if f.struct is not None and value is not None:
            if f.is_array:
                value = [expected_body(f.struct, version, item, flexible) for item in value]
            else:
                value = expected_body(f.struct, version, value, flexible)
        out[f.key] = value
    if flexible and body.get(UNKNOWN_TAGGED_FIELDS):
        out[UNKNOWN_TAGGED_FIELDS] = dict(body[UNKNOWN_TAGGED_FIELDS])
    return out


def normalize(value):
    """Memoryviews (records) to bytes, recursively, for comparisons."""
    if isinstance(value, memoryview):
        return value.tobytes()
    if isinstance(value, dict):
        return {k: normalize(v) for k, v in value.items()}
    if isinstance(value, list):
        return [normalize(v) for v in value]
    return value


def subset(expected, actual, path="body"):
    """Every key of ``expected`` has the same value in ``actual`` (recursively; lists are
    compared element by element and must have the same length; memoryviews as bytes)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{path}: {actual!r} is not a dict"
        for key, value in expected.items():
            assert key in actual, f"{path}: no key {key!r} in {sorted(actual)}"
            subset(value, actual[key], f"{path}.{key}")
    elif isinstance(expected, list):
        assert isinstance(actual, list) and len(actual) == len(expected), f"{path}: {actual!r}"
        for i, (e, a) in enumerate(zip(expected, actual, strict=True)):
            subset(e, a, f"{path}[{i}]")
    else:
        if isinstance(actual, memoryview):
            actual = actual.tobytes()
        assert actual == expected, f"{path}: {actual!r} != {expected!r}"
