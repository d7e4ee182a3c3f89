"""Cross-check of the declared schemas against Kafka's JSON message specs.

The project declares its schemas as Python data (broker_lite/protocol/messages); this test reads
the specs in ``shared/reference/kafka-message-schemas`` (beside the repository) with their ``//``
comments stripped and checks, for every declared message and every version of the spec: the
API key, validVersions, flexibleVersions, and the ordered list of fields present in that version
with their type, nullability in that version, tag (when tagged in that version), field-level
flexibleVersions, ignorable flag and default, recursing into arrays of structs and struct fields.

The version ranges are evaluated here with a parser of this test's own, not the package's.
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import pytest

from broker_lite.protocol import API_SCHEMAS, ApiKey
from broker_lite.protocol.messages import ALL_MESSAGES

SPECS = (Path(__file__).resolve().parents[3].parent
         / "shared" / "reference" / "kafka-message-schemas")

pytestmark = pytest.mark.skipif(
    not SPECS.is_dir(),
    reason=f"Kafka's JSON message specs are not at {SPECS} (shared/reference is absent outside "
    "this project's workspace), so the declared schemas cannot be cross-checked",
)

REQUIRED_APIS = ["ApiVersions", "Metadata", "Produce", "Fetch", "ListOffsets",
                 "OffsetForLeaderEpoch", "CreateTopics", "DeleteTopics", "DeleteRecords",
                 "CreatePartitions",
                 "DescribeConfigs", "AlterConfigs", "IncrementalAlterConfigs", "DescribeCluster",
                 "FindCoordinator", "JoinGroup", "SyncGroup", "Heartbeat", "LeaveGroup",
                 "OffsetCommit", "OffsetFetch", "ListGroups", "DescribeGroups", "DeleteGroups",
                 "OffsetDelete", "SaslHandshake", "SaslAuthenticate", "InitProducerId",
                 "DescribeProducers",
                 "AddPartitionsToTxn", "AddOffsetsToTxn", "EndTxn", "WriteTxnMarkers",
                 "TxnOffsetCommit", "DescribeTransactions", "ListTransactions",
                 "DescribeAcls", "CreateAcls", "DeleteAcls",
                 "ControlledShutdown", "ElectLeaders", "AlterPartitionReassignments",
                 "ListPartitionReassignments",
                 "DescribeUserScramCredentials", "AlterUserScramCredentials",
                 "ConsumerGroupHeartbeat", "ConsumerGroupDescribe"]

# Messages declared at Kafka 4.2's versions, newer than the reference snapshot (whose ranges are
# the 3.9-era ones): their valid versions as Kafka 4.2 has them. Every version the snapshot has
# is still checked field by field; the newer ones are checked in test_kafka_42_versions.
KAFKA_42_VERSIONS = {
    "ConsumerGroupDescribeRequest": "0-1",  # v1: the same request (KIP-1099)
    "ConsumerGroupDescribeResponse": "0-1",  # v1: Members[].MemberType, int8, default -1
}

# Declared at Kafka 4.2's versions (KIP-932 share groups), newer than the snapshot's: they are
# cross-checked against the specs of Kafka 4.2 in Kafka's repository, not the snapshot (whose
# versions of them are 4.0's early access, since removed).
SHARE_GROUP_APIS = ["ShareGroupHeartbeat", "ShareGroupDescribe", "ShareFetch", "ShareAcknowledge",
                    "InitializeShareGroupState", "ReadShareGroupState", "WriteShareGroupState",
                    "DeleteShareGroupState", "ReadShareGroupStateSummary",
                    "DescribeShareGroupOffsets", "AlterShareGroupOffsets",
                    "DeleteShareGroupOffsets"]
NEWER_THAN_THE_SNAPSHOT = {f"{api}{kind}" for api in SHARE_GROUP_APIS
                           for kind in ("Request", "Response")}

KEYS_AFTER_THE_SNAPSHOT = [key for key in ApiKey if key >= ApiKey.STREAMS_GROUP_HEARTBEAT]

PRIMITIVES = {"bool", "int8", "int16", "uint16", "int32", "uint32", "int64", "float64", "string",
              "uuid", "bytes", "records"}
MAX_PROBE = 40  # versions 0..MAX_PROBE are probed for open-ended ranges


def load_spec(name: str) -> dict:
    text = (SPECS / f"{name}.json").read_text()
    text = "\n".join(re.sub(r"^\s*//.*$", "", line) for line in text.splitlines())
    return json.loads(text)


def version_set(spec: str | None) -> frozenset[int]:
    """The versions in 0..MAX_PROBE that a spec range covers."""
    if spec is None or spec == "none":
        return frozenset()
    if spec.endswith("+"):
        return frozenset(range(int(spec[:-1]), MAX_PROBE + 1))
    if "-" in spec:
        lo, hi = spec.split("-")
        return frozenset(range(int(lo), int(hi) + 1))
    return frozenset({int(spec)})


def declared_set(versions) -> frozenset[int]:
    return frozenset(v for v in range(MAX_PROBE + 1) if v in versions)


def spec_default(f: dict):
    t = f["type"]
    if t.startswith("[]"):
        return []
    if t not in PRIMITIVES:
        return "<struct>"
    d = f.get("default")
    if d is None:
        return {"bool": False, "float64": 0.0, "string": "", "uuid": uuid.UUID(int=0),
                "bytes": b"", "records": None}.get(t, 0)
    if t == "string":
        return None if d == "null" else d
    if t == "bool":
        return {"true": True, "false": False}[str(d).lower()]
    if t == "float64":
        return float(d)
    return int(str(d), 0)


def declared_default(f):
    if f.is_array:
        return f.default
    if f.struct is not None:
        return "<struct>"
    return f.default


def spec_fields(fields: list, version: int) -> list:
    out = []
    for f in fields:
        if version not in version_set(f["versions"]):
            continue
        tag = f.get("tag") if version in version_set(f.get("taggedVersions")) else None
        row = (
            f["name"], f["type"], version in version_set(f.get("nullableVersions")), tag,
            f.get("flexibleVersions"), bool(f.get("ignorable", False)), spec_default(f),
        )
        out.append(row)
        if "fields" in f:
            out.append((f["name"], spec_fields(f["fields"], version)))
    return out


def our_fields(fields, version: int) -> list:
    out = []
    for f in fields:
        if version not in f.versions:
            continue
        tag = f.tag if version in f.tagged else None
        row = (
            f.name, f.type, version in f.nullable, tag,
            None if f.flexible is None else str(f.flexible), f.ignorable, declared_default(f),
        )
        out.append(row)
        if f.struct is not None:
            out.append((f.name, our_fields(f.struct.fields, version)))
    return out


def inline_common_structs(spec: dict) -> None:
    """Give every field typed with one of the spec's ``commonStructs`` that struct's fields."""
    common = {c["name"]: c["fields"] for c in spec.get("commonStructs", ())}

    def walk(fields):
        for f in fields:
            struct = f["type"].removeprefix("[]")
            if "fields" not in f and struct in common:
                f["fields"] = common[struct]
            walk(f.get("fields", ()))

    walk(spec["fields"])


def test_every_required_api_is_declared():
    names = {api.name for api in API_SCHEMAS.values()}
    assert names == set(REQUIRED_APIS) | set(SHARE_GROUP_APIS)
    assert {"RequestHeader", "ResponseHeader"} <= set(ALL_MESSAGES)


@pytest.mark.parametrize("name", sorted(set(ALL_MESSAGES) - NEWER_THAN_THE_SNAPSHOT))
def test_message_matches_spec(name):
    spec = load_spec(name)
    ours = ALL_MESSAGES[name]
    assert ours.kind == spec["type"]
    assert ours.api_key == spec.get("apiKey")
    assert declared_set(ours.valid_versions) == version_set(
        KAFKA_42_VERSIONS.get(name, spec["validVersions"]))
    assert declared_set(ours.flexible_versions) == version_set(spec.get("flexibleVersions"))
    inline_common_structs(spec)
    for version in sorted(version_set(spec["validVersions"])):
        assert our_fields(ours.fields, version) == spec_fields(spec["fields"], version), (
            f"{name} v{version}"
        )


@pytest.mark.parametrize("name", sorted(ALL_MESSAGES))
def test_no_field_outside_every_valid_version(name):
    """A declared field present in no valid version would escape the per-version comparison."""
    valid = declared_set(ALL_MESSAGES[name].valid_versions)

    def walk(fields):
        for f in fields:
            assert declared_set(f.versions) & valid, f"{name}.{f.name}"
            if f.struct is not None:
                walk(f.struct.fields)

    walk(ALL_MESSAGES[name].fields)


def test_api_keys_match_specs():
    """Every request spec's apiKey has the ApiKey member of the same (UPPER_SNAKE) name."""
    checked = 0
    for path in sorted(SPECS.glob("*Request.json")):
        spec = load_spec(path.stem)
        name = path.stem[: -len("Request")]
        words = re.sub(r"(.)([A-Z][a-z]+)", r"\1_\2", name)
        member = re.sub(r"([a-z0-9])([A-Z])", r"\1_\2", words).upper()
        assert ApiKey[member] == spec["apiKey"], name
        checked += 1
    # the keys Kafka added after the snapshot: the streams groups' and the share groups' admin
    assert checked == len(ApiKey) - len(KEYS_AFTER_THE_SNAPSHOT)
    assert all(key.name.startswith(("STREAMS_GROUP", "DESCRIBE_SHARE", "ALTER_SHARE",
                                    "DELETE_SHARE_GROUP_OFFSETS"))
               for key in KEYS_AFTER_THE_SNAPSHOT)


def test_registry_versions_come_from_the_specs():
    for key, api in API_SCHEMAS.items():
        if api.name in SHARE_GROUP_APIS:
            continue
        spec = load_spec(f"{api.name}Request")
        assert key == spec["apiKey"]
        assert declared_set(api.request.valid_versions) == version_set(
            KAFKA_42_VERSIONS.get(f"{api.name}Request", spec["validVersions"]))
        assert declared_set(api.response.flexible_versions) == version_set(
            load_spec(f"{api.name}Response").get("flexibleVersions"))


def test_kafka_42_versions():
    """ConsumerGroupDescribe v1 (Kafka 4.2, KIP-1099): the request as v0; each member of the
    response gains MemberType (int8, default -1: unknown; 0 classic, 1 consumer), last."""
    request = ALL_MESSAGES["ConsumerGroupDescribeRequest"]
    assert our_fields(request.fields, 1) == our_fields(request.fields, 0)
    response = ALL_MESSAGES["ConsumerGroupDescribeResponse"]
    v0, v1 = our_fields(response.fields, 0), our_fields(response.fields, 1)
    groups_v0, groups_v1 = v0[2][1], v1[2][1]
    members_v0 = next(f for f in groups_v0 if f[0] == "Members" and isinstance(f[1], list))[1]
    members_v1 = next(f for f in groups_v1 if f[0] == "Members" and isinstance(f[1], list))[1]
    assert members_v1 == [*members_v0, ("MemberType", "int8", False, None, None, False, -1)]
    assert [f for f in groups_v1 if f[0] != "Members"] == [f for f in groups_v0
                                                           if f[0] != "Members"]
