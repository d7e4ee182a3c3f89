"""The records of __consumer_offsets: the declared schemas against Kafka's coordinator-records
specs, golden bytes built here field by field with struct, every readable version, and bad bytes
refused with CoordinatorRecordError."""

import json
import re
import struct
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from broker_lite.coordinator.group.offsets import OffsetAndMetadata
from broker_lite.coordinator.group.records import (
    SCHEMAS,
    CoordinatorRecordError,
    GroupMetadataKey,
    GroupRecord,
    MemberRecord,
    OffsetCommitKey,
    group_metadata_key,
    group_metadata_value,
    offset_commit_key,
    offset_commit_value,
    parse_group_metadata_value,
    parse_key,
    parse_offset_commit_value,
)

SPECS = Path(__file__).resolve().parents[3].parent / "shared" / "reference" / \
    "kafka-message-schemas" / "coordinator-records"


def load_spec(name: str) -> dict:
    text = (SPECS / f"{name}.json").read_text()
    return json.loads("\n".join(re.sub(r"^\s*//.*$", "", line) for line in text.splitlines()))


def version_set(spec: str | None) -> set[int]:
    if spec is None or spec == "none":
        return set()
    if spec.endswith("+"):
        return set(range(int(spec[:-1]), 20))
    if "-" in spec:
        lo, hi = spec.split("-")
        return set(range(int(lo), int(hi) + 1))
    return {int(spec)}


def spec_fields(fields: list, version: int, common: dict) -> list:
    rows = []
    for f in fields:
        if version not in version_set(f["versions"]):
            continue
        default = f.get("default")
        rows.append((f["name"], f["type"], version in version_set(f.get("nullableVersions")),
                     bool(f.get("ignorable", False)),
                     None if default in (None, "null") else int(default)))
        item = f["type"][2:] if f["type"].startswith("[]") else f["type"]
        nested = f.get("fields") or common.get(item)
        if nested:
            rows.append((f["name"], spec_fields(nested, version, common)))
    return rows


def our_fields(fields, version: int) -> list:
    rows = []
    for f in fields:
        if version not in f.versions:
            continue
        default = f.default if f.explicit_default else None
        rows.append((f.name, f.type, version in f.nullable, f.ignorable, default))
        if f.struct is not None:
            rows.append((f.name, our_fields(f.struct.fields, version)))
    return rows


@pytest.mark.skipif(not SPECS.is_dir(), reason=f"Kafka's coordinator record specs are not at "
                    f"{SPECS} (shared/reference is absent outside this project's workspace)")
@pytest.mark.parametrize("name", ["OffsetCommitKey", "OffsetCommitValue", "GroupMetadataKey",
                                  "GroupMetadataValue"])
def test_schema_matches_kafkas_spec(name):
    spec = load_spec(name)
    ours = SCHEMAS[name]
    common = {s["name"]: s["fields"] for s in spec.get("commonStructs", [])}
    assert set(ours.versions) == version_set(spec["validVersions"])
    assert {v for v in range(20) if v in ours.flexible_versions} == \
        version_set(spec.get("flexibleVersions"))
    for version in sorted(version_set(spec["validVersions"])):
        assert our_fields(ours.fields, version) == spec_fields(spec["fields"], version, common), \
            f"{name} v{version}"


def string(text: str) -> bytes:
    data = text.encode()
    return struct.pack(">h", len(data)) + data


def nullable_string(text: str | None) -> bytes:
    return struct.pack(">h", -1) if text is None else string(text)


def blob(data: bytes) -> bytes:
    return struct.pack(">i", len(data)) + data


# -- golden bytes ------------------------------------------------------------------------------


def test_offset_commit_key_is_version_1():
    expected = struct.pack(">h", 1) + string("group-a") + string("events") + struct.pack(">i", 7)
    assert offset_commit_key("group-a", "events", 7) == expected
    assert parse_key(expected) == OffsetCommitKey("group-a", "events", 7)


def test_offset_commit_key_version_0_still_reads():
    data = struct.pack(">h", 0) + string("g") + string("t") + struct.pack(">i", 0)
    assert parse_key(data) == OffsetCommitKey("g", "t", 0)


def test_group_metadata_key_is_version_2():
    expected = struct.pack(">h", 2) + string("group-a")
    assert group_metadata_key("group-a") == expected
    assert parse_key(expected) == GroupMetadataKey("group-a")


def test_offset_commit_value_is_version_3():
    value = OffsetAndMetadata(offset=42, leader_epoch=5, metadata="meta",
                              commit_timestamp=1_700_000_000_000)
    expected = struct.pack(">hqi", 3, 42, 5) + string("meta") + struct.pack(">q", 1_700_000_000_000)
    assert offset_commit_value(value) == expected
    assert parse_offset_commit_value(expected) == value


def test_offset_commit_value_with_an_expire_timestamp_is_version_1():
    value = OffsetAndMetadata(offset=9, metadata="", commit_timestamp=1000, expire_timestamp=5000)
    expected = struct.pack(">hq", 1, 9) + string("") + struct.pack(">qq", 1000, 5000)
    assert offset_commit_value(value) == expected
    assert parse_offset_commit_value(expected) == value  # v1 has no leader epoch: -1


def test_offset_commit_value_versions_0_and_4_read():
    v0 = struct.pack(">hq", 0, 3) + string("m") + struct.pack(">q", 77)
    assert parse_offset_commit_value(v0) == OffsetAndMetadata(3, -1, "m", 77)
    # v4 is flexible: compact string (length + 1 as a varint) and an empty tagged-field section
    v4 = struct.pack(">hqi", 4, 3, 2) + bytes([2]) + b"m" + struct.pack(">q", 77) + b"\x00"
    assert parse_offset_commit_value(v4) == OffsetAndMetadata(3, 2, "m", 77)


def test_group_metadata_value_is_version_3():
    record = GroupRecord(
        protocol_type="consumer", generation=4, protocol="range", leader="m-1",
        current_state_timestamp=1234,
        members=(MemberRecord("m-1", "instance-1", "client", "/127.0.0.1", 300000, 10000,
                              b"sub", b"assign"),))
    expected = (struct.pack(">h", 3) + string("consumer") + struct.pack(">i", 4)
                + nullable_string("range") + nullable_string("m-1") + struct.pack(">q", 1234)
                + struct.pack(">i", 1) + string("m-1") + nullable_string("instance-1")
                + string("client") + string("/127.0.0.1") + struct.pack(">ii", 300000, 10000)
                + blob(b"sub") + blob(b"assign"))
    assert group_metadata_value(record) == expected
    assert parse_group_metadata_value(expected) == record


def test_an_empty_group_has_null_protocol_and_leader():
    record = GroupRecord("consumer", 5, None, None, 99, ())
    data = group_metadata_value(record)
    assert data == (struct.pack(">h", 3) + string("consumer") + struct.pack(">i", 5)
                    + nullable_string(None) + nullable_string(None) + struct.pack(">qi", 99, 0))
    assert parse_group_metadata_value(data) == record


def test_group_metadata_value_version_0_uses_the_session_timeout_as_rebalance_timeout():
    v0 = (struct.pack(">h", 0) + string("consumer") + struct.pack(">i", 1)
          + nullable_string("range") + nullable_string("m") + struct.pack(">i", 1)
          + string("m") + string("c") + string("/h")
          + struct.pack(">i", 6000) + blob(b"s") + blob(b"a"))
    parsed = parse_group_metadata_value(v0)
    assert parsed.current_state_timestamp == -1
    assert parsed.members == (MemberRecord("m", None, "c", "/h", 6000, 6000, b"s", b"a"),)


def test_tombstones_parse_to_none():
    assert parse_offset_commit_value(None) is None
    assert parse_group_metadata_value(None) is None


# -- bad bytes ---------------------------------------------------------------------------------


@pytest.mark.parametrize("key,message", [
    (None, "without a key"),
    (b"", "no version"),
    (b"\x00", "no version"),
    (struct.pack(">h", 3) + string("g"), "unknown key version 3"),
    (struct.pack(">h", -1), "unknown key version -1"),
    (struct.pack(">h", 1) + string("g"), "malformed offset commit key"),  # no topic
    (struct.pack(">h", 2) + b"\x00\x05ab", "malformed group metadata key"),  # short string
])
def test_bad_keys(key, message):
    with pytest.raises(CoordinatorRecordError, match=message):
        parse_key(key)


@pytest.mark.parametrize("value,message", [
    (b"\x00", "malformed offset commit value"),
    (struct.pack(">h", 5) + bytes(30), "unknown offset commit value version 5"),
    (struct.pack(">hq", 3, 1), "malformed offset commit value"),  # truncated after the offset
])
def test_bad_offset_commit_values(value, message):
    with pytest.raises(CoordinatorRecordError, match=message):
        parse_offset_commit_value(value)


@pytest.mark.parametrize("value,message", [
    (struct.pack(">h", 9), "unknown group metadata value version 9"),
    (struct.pack(">h", 3) + string("consumer") + struct.pack(">i", 1), "malformed"),
    (struct.pack(">h", 3) + string("consumer") + struct.pack(">i", 1) + nullable_string(None)
     + nullable_string(None) + struct.pack(">qi", 0, 1000), "malformed"),  # 1000 members, none
])
def test_bad_group_metadata_values(value, message):
    with pytest.raises(CoordinatorRecordError, match=message):
        parse_group_metadata_value(value)


@given(st.binary(max_size=200))
def test_any_bytes_parse_or_fail_with_the_records_error(data):
    for parse in (parse_key, parse_offset_commit_value, parse_group_metadata_value):
        try:
            parse(data)
        except CoordinatorRecordError:
            pass


@given(st.builds(OffsetAndMetadata, st.integers(-1, 2**63 - 1), st.integers(-1, 2**31 - 1),
                 st.text(max_size=50), st.integers(-1, 2**62),
                 st.one_of(st.none(), st.integers(0, 2**62))))
def test_offset_commit_values_round_trip(value):
    parsed = parse_offset_commit_value(offset_commit_value(value))
    if value.expire_timestamp is not None:  # v1 keeps no leader epoch
        value = OffsetAndMetadata(value.offset, -1, value.metadata, value.commit_timestamp,
                                  value.expire_timestamp)
    assert parsed == value
