"""The compatibility rules, table-driven, for each schema type and each of the seven levels:
answered by the rules themselves (pure functions), by the compatibility endpoint and by
registration (409 when refused, nothing written), through the REST routes over an in-memory
store (no sockets: the HTTP server is tested end to end elsewhere)."""

import json

import pytest

from broker_lite.registry import compatibility
from broker_lite.registry.rest import Request, RestApi
from broker_lite.registry.schemas import parse_schema
from broker_lite.registry.testing import memory_service

from .compatibility_cases import CASES, LEVELS

TABLE = [pytest.param(schema_type, previous, new, level, expected[level],
                      id=f"{schema_type}-{name}-{level}")
         for schema_type, cases in CASES.items()
         for name, previous, new, expected in cases
         for level in LEVELS]


def call(api: RestApi, method: str, path: str, body=None, query: str = ""):
    answer = api.handle(Request(method, path, query, {"Content-Type":
                                                      "application/vnd.schemaregistry.v1+json"},
                                json.dumps(body).encode() if body is not None else b""))
    return answer.status, json.loads(answer.body) if answer.body else None


@pytest.mark.parametrize(("schema_type", "previous", "new", "level", "compatible"), TABLE)
def test_the_rules_answer_each_level(schema_type, previous, new, level, compatible):
    parsed = [parse_schema(schema_type, text) for text in previous]
    problems = compatibility.check(level, parse_schema(schema_type, new), parsed)
    assert (not problems) is compatible, problems
    assert all(p.error_type and p.description for p in problems)


@pytest.mark.parametrize(("schema_type", "previous", "new", "level", "compatible"), TABLE)
def test_the_endpoint_and_registration_answer_each_level(schema_type, previous, new, level,
                                                         compatible):
    api = RestApi(memory_service())
    subject = "cases-value"
    for text in previous:  # the history, registered without checks
        assert call(api, "PUT", f"/config/{subject}", {"compatibility": "NONE"})[0] == 200
        assert call(api, "POST", f"/subjects/{subject}/versions",
                    {"schema": text, "schemaType": schema_type})[0] == 200
    assert call(api, "PUT", f"/config/{subject}", {"compatibility": level}) == \
        (200, {"compatibility": level})
    body = {"schema": new, "schemaType": schema_type}
    status, answer = call(api, "POST", f"/compatibility/subjects/{subject}/versions/latest",
                          body, "verbose=true")
    assert status == 200
    assert answer["is_compatible"] is compatible
    assert bool(answer["messages"]) is not compatible  # verbose says why, and only when not
    if level in ("BACKWARD", "FORWARD", "FULL", "NONE"):
        status, answer = call(api, "POST", f"/compatibility/subjects/{subject}/versions/"
                              f"{len(previous)}", body)
        assert answer == {"is_compatible": compatible}
    written = len(api.service.store.records)
    status, answer = call(api, "POST", f"/subjects/{subject}/versions", body)
    if compatible:
        assert status == 200 and answer["version"] in (len(previous), len(previous) + 1)
    else:
        assert (status, answer["error_code"]) == (409, 409)
        assert "incompatible with an earlier schema" in answer["message"]
        assert len(api.service.store.records) == written  # nothing written


def test_verbose_messages_name_the_error_type_and_the_old_version():
    api = RestApi(memory_service())
    old = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}'
    new = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "string"}]}'
    call(api, "POST", "/subjects/v/versions", {"schema": old})
    _, answer = call(api, "POST", "/compatibility/subjects/v/versions/latest", {"schema": new},
                     "verbose=true")
    assert answer["is_compatible"] is False
    assert answer["messages"][0].startswith("{errorType:'TYPE_MISMATCH'")
    assert "{oldSchemaVersion: 1}" in answer["messages"]
    assert "{compatibility: 'BACKWARD'}" in answer["messages"]


def test_a_subject_without_versions_takes_any_schema_and_an_unknown_one_is_not_found():
    api = RestApi(memory_service())
    status, answer = call(api, "POST", "/compatibility/subjects/none/versions/latest",
                          {"schema": '"int"'})
    assert (status, answer["error_code"]) == (404, 40401)
    status, answer = call(api, "POST", "/compatibility/subjects/none/versions",
                          {"schema": '"int"'})
    assert (status, answer) == (200, {"is_compatible": True})
