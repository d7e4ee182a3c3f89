"""The schema model: version ranges, body keys, and the declarations it refuses to build."""

from __future__ import annotations

import uuid

import pytest

from broker_lite.protocol.schema import (
    INT32,
    STRING,
    UUID,
    A,
    F,
    Message,
    S,
    Struct,
    Versions,
    snake_case,
)


def test_versions_and_names():
    assert 5 in Versions.parse("5") and 6 not in Versions.parse("5")
    assert not Versions.parse("none") and Versions.parse("none") == Versions.parse(None)
    assert Versions.parse("3+").intersect(Versions.parse("0-4")) == Versions.parse("3-4")
    assert snake_case("ISRNodes") == "isr_nodes" and snake_case("GroupsNames") == "groups_names"


def test_defaults_are_the_specs_or_the_types_and_fresh_for_arrays_and_structs():
    leader = S("Leader", "LeaderIdAndEpoch", "0+", [F("LeaderId", INT32, "0+", default=-1)])
    msg = Message("ExampleResponse", 99, "response", "0-2", "2+", [
        F("Name", STRING, "0+"), F("TopicId", UUID, "1+"), A("Nodes", INT32, "0+"), leader])
    assert msg.default_body() == {"name": "", "topic_id": uuid.UUID(int=0),
                                  "nodes": [], "leader": {"leader_id": -1}}
    assert msg.default_body()["nodes"] is not msg.default_body()["nodes"]
    assert list(msg.versions) == [0, 1, 2] and msg.is_flexible(2) and not msg.is_flexible(1)


@pytest.mark.parametrize("declare,message", [
    (lambda: F("Count", INT32, "0+", nullable="0+"), "cannot be nullable"),
    (lambda: F("Count", INT32, "0+", tag=0), "tag and tagged versions go together"),
    (lambda: A("Ids", INT32, "0+", [F("Id", INT32, "0+")]), "has no fields"),
    (lambda: F("Leader", "LeaderIdAndEpoch", "0+"), "needs its fields"),
    (lambda: A("Ids", INT32, "0+", default=[1]), "no custom default"),
    (lambda: S("Leader", "Leader", "0+", [F("Id", INT32, "0+")], nullable="0+", default={}),
     "a nullable struct's may be null"),
    (lambda: Struct("Twice", [F("TopicId", INT32, "0+"), F("topicId", INT32, "1+")]),
     "share a snake_case key"),
])
def test_declarations_that_cannot_be_right_are_refused(declare, message):
    with pytest.raises(ValueError, match=message):
        declare()
