"""Conversion between our body dicts and kafka-python 3.x message objects, for interop tests.

kafka-python (an implementation nobody here wrote) builds its classes from its own copy of
Kafka's JSON specs, from a later Kafka than ours: some fields were renamed since (and its
snake_case differs: ``i_s_r_nodes``), so fields are matched by position within a version, and
tagged fields by tag, which is what the wire format itself relies on.
"""

from __future__ import annotations

import importlib
import uuid

from kafka.protocol.api_message import ApiMessage
from kafka.protocol.schemas.fields.codecs import BitField

from broker_lite.protocol.schema import Struct

ZERO = uuid.UUID(int=0)

_MODULES = [
    "kafka.protocol.metadata.api_versions", "kafka.protocol.metadata.metadata",
    "kafka.protocol.metadata.find_coordinator", "kafka.protocol.producer.produce",
    "kafka.protocol.consumer.fetch", "kafka.protocol.consumer.offsets",
    "kafka.protocol.consumer.group", "kafka.protocol.admin.topics", "kafka.protocol.admin.configs",
    "kafka.protocol.admin.groups", "kafka.protocol.admin.cluster", "kafka.protocol.sasl",
    "kafka.protocol.producer.transaction", "kafka.protocol.admin.transactions",
    "kafka.protocol.admin.acl",
    "kafka.protocol.admin.users",
]


def kp_classes() -> dict[str, type]:
    """kafka-python's message classes by spec name (``"MetadataRequest"``)."""
    out = {}
    for name in _MODULES:
        module = importlib.import_module(name)
        for cls in vars(module).values():
            if (isinstance(cls, type) and issubclass(cls, ApiMessage) and cls is not ApiMessage
                    and getattr(cls, "_json", None)):
                out[cls._json["name"]] = cls
    return out


def kp_versions(cls) -> range:
    lo, hi = cls.valid_versions
    return range(lo, hi + 1)


def _ours(struct: Struct, version: int, flexible: bool):
    untagged, tagged = [], {}
    for f in struct.fields:
        if version not in f.versions:
            continue
        if flexible and f.tag is not None and version in f.tagged:
            tagged[f.tag] = f
        else:
            untagged.append(f)
    return untagged, tagged


def _theirs(kp_struct, version: int):
    untagged = list(kp_struct.untagged_fields(version))
    tagged = {
        tf._tag: tf for tf in kp_struct.fields.values()
        if tf.for_version_q(version) and tf.tagged_field_q(version)
    }
    return untagged, tagged


def _pairs(struct, kp_struct, version, flexible):
    ou, ot = _ours(struct, version, flexible)
    tu, tt = _theirs(kp_struct, version)
    assert len(ou) == len(tu), (struct.name, version, [f.name for f in ou], [t.name for t in tu])
    assert set(ot) == set(tt), (struct.name, version, sorted(ot), sorted(tt))
    return list(zip(ou, tu, strict=True)) + [(ot[t], tt[t]) for t in sorted(ot)]


def to_kp_kwargs(struct: Struct, kp_struct, body: dict, version: int, flexible: bool) -> dict:
    kwargs = {}
    for of, tf in _pairs(struct, kp_struct, version, flexible):
        value = body.get(of.key, of.default)
        if of.tag is not None and version in of.tagged and flexible \
                and _is_default(of, value, version):
            continue  # kafka-python writes every tagged field it is given; ours skip defaults
        kwargs[tf.name] = _to_kp_value(of, tf, value, version, flexible)
    return kwargs


def _is_default(of, value, version) -> bool:
    if of.struct is not None and not of.is_array and value is not None:
        return (present_only(of.struct, value, version, True)
                == present_only(of.struct, {}, version, True))
    return value == of.default


def _is_bitfield(tf) -> bool:
    # kafka-python patches the authorized-operations int32 fields into a set of bit positions
    return getattr(tf, "_type", None) is BitField


def _bits(value: int):
    raw = value & 0xFFFFFFFF
    return None if value == -(1 << 31) else {b for b in range(32) if raw >> b & 1}


def _unbits(bits) -> int:
    if bits is None:
        return -(1 << 31)
    raw = sum(1 << b for b in bits)
    return raw - (1 << 32) if raw >= 1 << 31 else raw


def _to_kp_value(of, tf, value, version, flexible):
    if _is_bitfield(tf):
        return _bits(value)
    if value is None or of.struct is None:
        if isinstance(value, memoryview):
            return value.tobytes()
        return value
    if of.is_array:
        return [tf.data_class(**to_kp_kwargs(of.struct, tf, item, version, flexible))
                for item in value]
    return tf.data_class(**to_kp_kwargs(of.struct, tf, value, version, flexible))


def to_kp(cls, message, body: dict, version: int):
    """A kafka-python message object carrying ``body``."""
    flexible = message.is_flexible(version)
    return cls(version=version, **to_kp_kwargs(message, cls._struct, body, version, flexible))


def from_kp(obj, struct: Struct, kp_struct, version: int, flexible: bool) -> dict:
    """The fields of a kafka-python object present in ``version``, keyed as ours."""
    out = {}
    for of, tf in _pairs(struct, kp_struct, version, flexible):
        value = getattr(obj, tf.name)
        if _is_bitfield(tf):
            value = _unbits(value)
        elif of.struct is not None and value is None and not of.is_array:
            value = of.default  # kafka-python leaves absent tagged structs as None
        elif of.struct is not None and value is not None:
            if of.is_array:
                value = [from_kp(item, of.struct, tf, version, flexible) for item in value]
            else:
                value = from_kp(value, of.struct, tf, version, flexible)
        elif of.item_type == "uuid" and value is None:
            value = ZERO
        elif isinstance(value, (bytearray, memoryview)):
            value = bytes(value)
        out[of.key] = value
    return out


def present_only(struct: Struct, body: dict, version: int, flexible: bool) -> dict:
    """``body`` restricted to the fields present in ``version`` (defaults filled in), without
    unknown tagged fields: the shape :func:`from_kp` returns."""
    out = {}
    for f in struct.fields:
        if version not in f.versions:
            continue
        value = body.get(f.key, f.default)
        if f.struct is not None and value is not None:
            if f.is_array:
                value = [present_only(f.struct, item, version, flexible) for item in value]
            else:
                value = present_only(f.struct, value, version, flexible)
        elif isinstance(value, (bytearray, memoryview)):
            value = bytes(value)
        out[f.key] = value
    return out
