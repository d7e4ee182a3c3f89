"""The REST routes and operations over an in-memory store: what Confluent answers, as tables.
Bad input gets Confluent's status and error code and writes nothing; the API keeps serving."""

import json

import pytest

from broker_lite.registry.rest import Request, RestApi
from broker_lite.registry.testing import memory_service

JSON_TYPE = {"Content-Type": "application/vnd.schemaregistry.v1+json"}
AVRO_RECORD = json.dumps({"type": "record", "name": "User", "namespace": "ex",
                          "fields": [{"name": "name", "type": "string"}]})


def call(api, method, path, body=None, query="", headers=JSON_TYPE, raw=None):
    data = raw if raw is not None else (json.dumps(body).encode() if body is not None else b"")
    answer = api.handle(Request(method, path, query, headers, data))
    try:
        return answer.status, json.loads(answer.body)
    except ValueError:
        return answer.status, answer.body.decode()


@pytest.fixture
def api():
    api = RestApi(memory_service())
    assert call(api, "POST", "/subjects/users-value/versions", {"schema": AVRO_RECORD}) == \
        (200, {"id": 1, "version": 1})
    return api


BAD_INPUT = [
    ("malformed JSON", "POST", "/subjects/s/versions", None, b'{"schema": ', JSON_TYPE,
     400, 400),
    ("an invalid Avro schema", "POST", "/subjects/s/versions",
     {"schema": '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "nope"}]}'},
     None, JSON_TYPE, 422, 42201),
    ("Avro that is not JSON", "POST", "/subjects/s/versions", {"schema": "{not json"}, None,
     JSON_TYPE, 422, 42201),
    ("an invalid JSON schema", "POST", "/subjects/s/versions",
     {"schema": '{"type": "strung"}', "schemaType": "JSON"}, None, JSON_TYPE, 422, 42201),
    ("an invalid Protobuf schema", "POST", "/subjects/s/versions",
     {"schema": 'syntax = "proto3"; message M { int32 a = 1 ', "schemaType": "PROTOBUF"},
     None, JSON_TYPE, 422, 42201),
    ("a Protobuf type that resolves nowhere", "POST", "/subjects/s/versions",
     {"schema": 'syntax = "proto3"; message M { Missing a = 1; }', "schemaType": "PROTOBUF"},
     None, JSON_TYPE, 422, 42201),
    ("an unknown schema type", "POST", "/subjects/s/versions",
     {"schema": "<xs:schema/>", "schemaType": "XML"}, None, JSON_TYPE, 422, 42201),
    ("a reference to a version that does not exist", "POST", "/subjects/s/versions",
     {"schema": '"ex.User"', "references": [{"name": "ex.User", "subject": "nope",
                                             "version": 1}]}, None, JSON_TYPE, 422, 42201),
    ("no schema", "POST", "/subjects/s/versions", {"schemaType": "AVRO"}, None, JSON_TYPE,
     422, 42201),
    ("a body that is not an object", "POST", "/subjects/s/versions", [1, 2], None, JSON_TYPE,
     422, 422),
    ("a wrong content type", "POST", "/subjects/s/versions", {"schema": '"int"'}, None,
     {"Content-Type": "text/plain"}, 415, 415),
    ("an unknown subject", "GET", "/subjects/nope/versions", None, None, JSON_TYPE, 404, 40401),
    ("an unknown subject's version", "GET", "/subjects/nope/versions/1", None, None, JSON_TYPE,
     404, 40401),
    ("an unknown version", "GET", "/subjects/users-value/versions/9", None, None, JSON_TYPE,
     404, 40402),
    ("a version that is not a number", "GET", "/subjects/users-value/versions/one", None, None,
     JSON_TYPE, 422, 42202),
    ("a version out of range", "GET", "/subjects/users-value/versions/0", None, None,
     JSON_TYPE, 422, 42202),
    ("an unknown id", "GET", "/schemas/ids/999", None, None, JSON_TYPE, 404, 40403),
    ("an id that is not a number", "GET", "/schemas/ids/x", None, None, JSON_TYPE, 404, 40403),
    ("a lookup of a schema the subject lacks", "POST", "/subjects/users-value",
     {"schema": '"int"'}, None, JSON_TYPE, 404, 40403),
    ("an invalid compatibility level", "PUT", "/config", {"compatibility": "SIDEWAYS"}, None,
     JSON_TYPE, 422, 42203),
    ("an invalid mode", "PUT", "/mode", {"mode": "WRITEONLY"}, None, JSON_TYPE, 422, 42204),
    ("an explicit id outside IMPORT mode", "POST", "/subjects/s/versions",
     {"schema": '"int"', "id": 50}, None, JSON_TYPE, 422, 42205),
    ("a subject config that is not set", "GET", "/config/users-value", None, None, JSON_TYPE,
     404, 40408),
    ("a subject mode that is not set", "GET", "/mode/users-value", None, None, JSON_TYPE,
     404, 40409),
    ("a permanent delete before a soft one", "DELETE", "/subjects/users-value", None, None,
     JSON_TYPE, 404, 40405),
    ("no such route", "GET", "/nothing/here", None, None, JSON_TYPE, 404, 404),
    ("a method the route lacks", "PATCH", "/config", None, None, JSON_TYPE, 405, 405),
]


@pytest.mark.parametrize(("method", "path", "body", "raw", "headers", "status", "code"),
                         [pytest.param(*case[1:], id=case[0]) for case in BAD_INPUT])
def test_bad_input_gets_confluents_status_and_code_and_writes_nothing(
        api, method, path, body, raw, headers, status, code):
    written = len(api.service.store.records)
    query = "permanent=true" if method == "DELETE" else ""
    answer = call(api, method, path, body, query, headers, raw)
    assert answer[0] == status, answer
    assert answer[1]["error_code"] == code
    assert isinstance(answer[1]["message"], str) and answer[1]["message"]
    assert len(api.service.store.records) == written
    assert call(api, "GET", "/subjects/users-value/versions/latest")[0] == 200  # still serving


def test_one_id_per_distinct_schema_and_registering_again_returns_it(api):
    assert call(api, "POST", "/subjects/other-value/versions", {"schema": AVRO_RECORD}) == \
        (200, {"id": 1, "version": 1})
    spaced = json.dumps(json.loads(AVRO_RECORD), indent=2)  # the same schema, spelled apart
    assert call(api, "POST", "/subjects/users-value/versions", {"schema": spaced}) == \
        (200, {"id": 1, "version": 1})
    assert call(api, "GET", "/schemas/ids/1/versions") == \
        (200, [{"subject": "other-value", "version": 1}, {"subject": "users-value",
                                                          "version": 1}])
    assert call(api, "GET", "/schemas/ids/1/subjects") == (200, ["other-value", "users-value"])
    status, body = call(api, "POST", "/subjects/users-value", {"schema": spaced})
    assert (status, body["id"], body["version"]) == (200, 1, 1)


def test_soft_then_hard_deletes_as_confluent_does(api):
    newer = AVRO_RECORD.replace('"string"}]', '"string"}, {"name": "n", "type": "int", '
                                              '"default": 0}]')
    assert call(api, "POST", "/subjects/users-value/versions", {"schema": newer}) == \
        (200, {"id": 2, "version": 2})
    assert call(api, "DELETE", "/subjects/users-value/versions/2") == (200, 2)
    assert call(api, "GET", "/subjects/users-value/versions") == (200, [1])
    assert call(api, "GET", "/subjects/users-value/versions", query="deleted=true") == \
        (200, [1, 2])
    assert call(api, "GET", "/subjects/users-value/versions/2")[1]["error_code"] == 40402
    assert call(api, "GET", "/subjects/users-value/versions/2", query="deleted=true")[0] == 200
    assert call(api, "DELETE", "/subjects/users-value/versions/2")[1]["error_code"] == 40406
    assert call(api, "DELETE", "/subjects/users-value/versions/2", query="permanent=true") == \
        (200, 2)
    assert call(api, "GET", "/schemas/ids/2")[1]["error_code"] == 40403
    assert call(api, "DELETE", "/subjects/users-value") == (200, [1])
    assert call(api, "GET", "/subjects") == (200, [])
    assert call(api, "GET", "/subjects", query="deleted=true") == (200, ["users-value"])
    assert call(api, "DELETE", "/subjects/users-value")[1]["error_code"] == 40404
    assert call(api, "DELETE", "/subjects/users-value", query="permanent=true") == (200, [1])
    assert call(api, "GET", "/subjects", query="deleted=true") == (200, [])
    # a subject deleted for good starts again at version 1; ids are never given twice
    assert call(api, "POST", "/subjects/users-value/versions", {"schema": AVRO_RECORD}) == \
        (200, {"id": 3, "version": 1})


def test_references_and_referenced_by(api):
    order = json.dumps({"type": "record", "name": "Order", "namespace": "ex",
                        "fields": [{"name": "buyer", "type": "ex.User"}]})
    reference = [{"name": "ex.User", "subject": "users-value", "version": 1}]
    status, body = call(api, "POST", "/subjects/orders-value/versions",
                        {"schema": order, "references": reference})
    assert status == 200
    assert call(api, "GET", "/subjects/users-value/versions/1/referencedby") == \
        (200, [body["id"]])
    assert call(api, "GET", f"/schemas/ids/{body['id']}")[1]["references"] == reference
    assert call(api, "DELETE", "/subjects/users-value/versions/1")[1]["error_code"] == 42206


def test_readonly_and_import_modes(api):
    assert call(api, "PUT", "/mode/users-value", {"mode": "READONLY"}) == \
        (200, {"mode": "READONLY"})
    answer = call(api, "POST", "/subjects/users-value/versions", {"schema": '"int"'})
    assert (answer[0], answer[1]["error_code"]) == (422, 42205)
    assert call(api, "GET", "/mode/users-value") == (200, {"mode": "READONLY"})
    assert call(api, "GET", "/mode/other", query="defaultToGlobal=true") == \
        (200, {"mode": "READWRITE"})
    assert call(api, "PUT", "/mode", {"mode": "IMPORT"})[1]["error_code"] == 42205  # not empty
    assert call(api, "PUT", "/mode/fresh", {"mode": "IMPORT"}) == (200, {"mode": "IMPORT"})
    assert call(api, "POST", "/subjects/fresh/versions",
                {"schema": '"long"', "id": 100, "version": 7}) == (200, {"id": 100, "version": 7})
    assert call(api, "GET", "/schemas/ids/100") == (200, {"schema": '"long"'})
    assert call(api, "POST", "/subjects/fresh/versions",
                {"schema": '"double"', "id": 1})[1]["error_code"] == 42205  # id 1 is taken
    assert call(api, "DELETE", "/mode/users-value") == (200, {"mode": "READONLY"})


def test_config_global_and_per_subject(api):
    assert call(api, "GET", "/config") == (200, {"compatibilityLevel": "BACKWARD"})
    assert call(api, "PUT", "/config", {"compatibility": "full"}) == (200, {"compatibility":
                                                                             "FULL"})
    assert call(api, "PUT", "/config/users-value", {"compatibility": "NONE"}) == \
        (200, {"compatibility": "NONE"})
    assert call(api, "GET", "/config/users-value") == (200, {"compatibilityLevel": "NONE"})
    assert call(api, "GET", "/config/other", query="defaultToGlobal=true") == \
        (200, {"compatibilityLevel": "FULL"})
    assert call(api, "DELETE", "/config/users-value") == (200, {"compatibilityLevel": "NONE"})
    assert call(api, "DELETE", "/config") == (200, {"compatibilityLevel": "FULL"})
    assert call(api, "GET", "/config") == (200, {"compatibilityLevel": "BACKWARD"})


def test_protobuf_and_json_schema_types_and_formats(api):
    proto = 'syntax = "proto3";\npackage ex;\n\nmessage Point {\n  int32 x = 1;\n}\n'
    status, body = call(api, "POST", "/subjects/points-value/versions",
                        {"schema": proto, "schemaType": "PROTOBUF"})
    assert status == 200
    status, stored = call(api, "GET", f"/schemas/ids/{body['id']}")
    assert stored == {"schemaType": "PROTOBUF", "schema": proto}
    status, serialized = call(api, "GET", f"/schemas/ids/{body['id']}",
                              query="format=serialized")
    # the descriptor registered again (as confluent-kafka's serializer sends it) is the same
    assert call(api, "POST", "/subjects/points-value/versions",
                {"schema": serialized["schema"], "schemaType": "PROTOBUF"})[1] == body
    assert call(api, "GET", "/schemas/types") == (200, ["JSON", "PROTOBUF", "AVRO"])
    assert call(api, "GET", "/subjects/points-value/versions/1/schema") == (200, proto)


def test_normalize_makes_two_spellings_of_one_schema_meet(api):
    reordered = json.dumps({"namespace": "ex", "fields": [{"type": "string", "name": "name"}],
                            "name": "User", "type": "record"})
    assert call(api, "POST", "/subjects/users-value", {"schema": reordered})[1][
        "error_code"] == 40403  # not the same text
    status, body = call(api, "POST", "/subjects/norm-value/versions", {"schema": reordered},
                        "normalize=true")
    assert status == 200
    qualified = json.dumps({"type": "record", "name": "ex.User",
                            "fields": [{"name": "name", "type": {"type": "string"}}]})
    assert call(api, "POST", "/subjects/norm-value/versions", {"schema": qualified},
                "normalize=true") == (200, body)
    status, found = call(api, "POST", "/subjects/norm-value", {"schema": qualified},
                         "normalize=true")
    assert (status, found["id"]) == (200, body["id"])
