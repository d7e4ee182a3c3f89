"""The _schemas records: Confluent's key and value JSON byte for byte, both ways, and the state
machine they rebuild, as tables."""

import pytest

from broker_lite.registry.records import (
    ClearSubjectKey,
    ClearSubjectValue,
    ConfigKey,
    ConfigValue,
    DeleteSubjectKey,
    DeleteSubjectValue,
    ModeKey,
    ModeValue,
    NoopKey,
    RecordFormatError,
    SchemaKey,
    SchemaValue,
    decode_key,
    decode_value,
    encode_key,
    encode_value,
)
from broker_lite.registry.schemas import Reference
from broker_lite.registry.state import RegistryState

# (key, value, the key's bytes, the value's bytes) as Confluent's registry writes them
GOLDEN = [
    (SchemaKey("orders-value", 1), SchemaValue("orders-value", 1, 7, '"string"'),
     b'{"keytype":"SCHEMA","subject":"orders-value","version":1,"magic":1}',
     b'{"subject":"orders-value","version":1,"id":7,"schema":"\\"string\\"","deleted":false}'),
    (SchemaKey("p", 2), SchemaValue("p", 2, 9, "syntax = \"proto3\";\n", "PROTOBUF",
                                    (Reference("other.proto", "other", 1),), deleted=True),
     b'{"keytype":"SCHEMA","subject":"p","version":2,"magic":1}',
     b'{"subject":"p","version":2,"id":9,"schemaType":"PROTOBUF","references":[{"name":'
     b'"other.proto","subject":"other","version":1}],"schema":"syntax = \\"proto3\\";\\n",'
     b'"deleted":true}'),
    (SchemaKey("gone", 3), None,
     b'{"keytype":"SCHEMA","subject":"gone","version":3,"magic":1}', None),
    (ConfigKey(None), ConfigValue("FULL"),
     b'{"keytype":"CONFIG","subject":null,"magic":0}', b'{"compatibilityLevel":"FULL"}'),
    (ConfigKey("s"), None, b'{"keytype":"CONFIG","subject":"s","magic":0}', None),
    (ModeKey(None), ModeValue("READONLY"),
     b'{"keytype":"MODE","subject":null,"magic":0}', b'{"mode":"READONLY"}'),
    (DeleteSubjectKey("s"), DeleteSubjectValue("s", 4),
     b'{"keytype":"DELETE_SUBJECT","subject":"s","magic":0}', b'{"subject":"s","version":4}'),
    (ClearSubjectKey("s"), ClearSubjectValue("s"),
     b'{"keytype":"CLEAR_SUBJECT","subject":"s","magic":0}', b'{"subject":"s"}'),
    (NoopKey(), None, b'{"keytype":"NOOP","magic":0}', None),
]


@pytest.mark.parametrize(("key", "value", "key_bytes", "value_bytes"), GOLDEN)
def test_records_are_written_and_read_as_confluent_writes_them(key, value, key_bytes,
                                                               value_bytes):
    assert encode_key(key) == key_bytes
    assert encode_value(value) == value_bytes
    assert decode_key(key_bytes) == key
    assert decode_value(key, value_bytes) == value


@pytest.mark.parametrize(("key_bytes", "value_bytes", "expected"), [
    # Karapace writes spaces, and a SCHEMA value's AVRO type explicitly
    (b'{"keytype": "SCHEMA", "subject": "k", "version": 1, "magic": 1}',
     b'{"deleted": false, "id": 3, "schema": "\\"int\\"", "schemaType": "AVRO", '
     b'"subject": "k", "version": 1}', SchemaValue("k", 1, 3, '"int"')),
    # an older Confluent writes no references and no deleted flag
    (b'{"keytype":"SCHEMA","subject":"k","version":2,"magic":0}',
     b'{"subject":"k","version":2,"id":4,"schema":"\\"long\\""}', SchemaValue("k", 2, 4, '"long"')),
])
def test_other_registries_spellings_are_read(key_bytes, value_bytes, expected):
    assert decode_value(decode_key(key_bytes), value_bytes) == expected


@pytest.mark.parametrize("key_bytes", [b"not json", b"[1]", b'{"keytype":"WHAT","magic":0}',
                                       b'{"keytype":"SCHEMA","magic":1}'])
def test_a_key_of_another_format_is_a_record_format_error(key_bytes):
    with pytest.raises(RecordFormatError):
        decode_key(key_bytes)


def avro(subject: str, version: int, schema_id: int, text: str = '"int"',
         deleted: bool = False, references=()) -> tuple:
    return (SchemaKey(subject, version),
            SchemaValue(subject, version, schema_id, text, references=references,
                        deleted=deleted))


# (records in offset order, what the state then says)
STATE_CASES = [
    ("a schema under two subjects has one id",
     [avro("a", 1, 1), avro("b", 1, 1)],
     {"subjects": ["a", "b"], "ids": {1: [("a", 1), ("b", 1)]}, "max_id": 1}),
    ("a soft delete hides a version but keeps its id",
     [avro("a", 1, 1), avro("a", 2, 2, '"long"'), avro("a", 2, 2, '"long"', deleted=True)],
     {"subjects": ["a"], "live": {"a": [1]}, "all": {"a": [1, 2]}, "ids": {2: []}}),
    ("a hard delete removes the version, and the id with its last version",
     [avro("a", 1, 1), avro("a", 1, 1, deleted=True), (SchemaKey("a", 1), None)],
     {"subjects": [], "all": {"a": []}, "gone_ids": [1], "max_id": 1}),
    ("DELETE_SUBJECT soft-deletes every version up to its version",
     [avro("a", 1, 1), avro("a", 2, 2, '"long"'), avro("a", 3, 3, '"string"'),
      (DeleteSubjectKey("a"), DeleteSubjectValue("a", 2))],
     {"live": {"a": [3]}, "all": {"a": [1, 2, 3]}}),
    ("CLEAR_SUBJECT hard-deletes the soft-deleted versions",
     [avro("a", 1, 1), avro("a", 2, 2, '"long"'),
      (DeleteSubjectKey("a"), DeleteSubjectValue("a", 1)),
      (ClearSubjectKey("a"), ClearSubjectValue("a"))],
     {"all": {"a": [2]}, "gone_ids": [1]}),
    ("configs and modes, global and per subject, set and removed",
     [(ConfigKey(None), ConfigValue("FULL")), (ConfigKey("a"), ConfigValue("NONE")),
      (ModeKey("a"), ModeValue("READONLY")), (ConfigKey("a"), None),
      (ModeKey(None), ModeValue("IMPORT"))],
     {"configs": {None: "FULL"}, "modes": {"a": "READONLY", None: "IMPORT"}}),
    ("referenced-by follows the references of live versions",
     [avro("base", 1, 1), avro("user", 1, 2, '"x"', references=(Reference("B", "base", 1),))],
     {"referenced_by": {("base", 1): [2]}}),
    ("a NOOP changes nothing", [(NoopKey(), None)], {"subjects": [], "max_id": 0}),
]


@pytest.mark.parametrize(("records", "expected"), [pytest.param(r, e, id=n)
                                                   for n, r, e in STATE_CASES])
def test_the_state_machine_replays_records(records, expected):
    state = RegistryState()
    for key, value in records:
        state.apply(key, value)
    if "subjects" in expected:
        assert state.subject_names() == expected["subjects"]
    for subject, versions in expected.get("live", {}).items():
        assert state.live_versions(subject) == versions
    for subject, versions in expected.get("all", {}).items():
        assert state.versions(subject, deleted=True) == versions
    for schema_id, uses in expected.get("ids", {}).items():
        assert schema_id in state.schemas
        assert state.uses_of(schema_id) == uses
    for schema_id in expected.get("gone_ids", []):
        assert schema_id not in state.schemas
    if "max_id" in expected:
        assert state.max_id == expected["max_id"]
    if "configs" in expected:
        assert state.configs == expected["configs"]
    if "modes" in expected:
        assert state.modes == expected["modes"]
    for (subject, version), ids in expected.get("referenced_by", {}).items():
        assert state.referenced_by(subject, version) == ids
