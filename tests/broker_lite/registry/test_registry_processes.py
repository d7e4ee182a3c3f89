"""Registry processes on one cluster: a second process (``broker-lite schema-registry``, a
process of its own) sees the first's writes within a second and forwards its own to the
primary; a registry restarted, and one whose broker was SIGKILLed and restarted, serve the
same ids, versions, configs, modes and deletions; a broker with ``schema.registry.listeners``
runs one."""

import json
import sys
import time

import httpx
import pytest

from broker_lite.local.cluster import START_TIMEOUT_S
from broker_lite.tools.testing import CommandProcess
from broker_lite.zk.testing import wait_until

SCHEMA = '{"type": "record", "name": "R", "fields": [{"name": "a", "type": "int"}]}'
JSON_TYPE = {"Content-Type": "application/vnd.schemaregistry.v1+json"}


def avro(fields: int) -> str:
    return json.dumps({"type": "record", "name": "R", "fields": [
        {"name": f"f{i}", "type": "int", "default": i} for i in range(fields)]})


def register(url: str, subject: str, schema: str) -> dict:
    answer = httpx.post(f"{url}/subjects/{subject}/versions", json={"schema": schema},
                        headers=JSON_TYPE, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()


def snapshot(url: str) -> dict:
    """What a registry serves: subjects (deleted ones too), versions, ids, configs, modes."""
    with httpx.Client(base_url=url, timeout=30) as http:
        found = {"config": http.get("/config").json(), "mode": http.get("/mode").json(),
                 "live": http.get("/subjects").json(), "subjects": {}}
        for subject in http.get("/subjects", params={"deleted": "true"}).json():
            versions = http.get(f"/subjects/{subject}/versions",
                                params={"deleted": "true"}).json()
            found["subjects"][subject] = {
                "versions": [http.get(f"/subjects/{subject}/versions/{v}",
                                      params={"deleted": "true"}).json() for v in versions],
                "config": http.get(f"/config/{subject}").json(),
                "mode": http.get(f"/mode/{subject}").json()}
        return found


def populate(url: str) -> None:
    """Writes of every kind: versions, a shared id, configs, modes, soft and hard deletes."""
    register(url, "kept-value", avro(1))
    register(url, "kept-value", avro(2))
    register(url, "shared-value", avro(1))
    register(url, "soft-value", SCHEMA)
    register(url, "hard-value", SCHEMA)
    with httpx.Client(base_url=url, headers=JSON_TYPE, timeout=30) as http:
        assert http.put("/config", json={"compatibility": "FULL_TRANSITIVE"}).status_code == 200
        assert http.put("/config/kept-value", json={"compatibility": "NONE"}).status_code == 200
        assert http.put("/mode/shared-value", json={"mode": "READONLY"}).status_code == 200
        assert http.delete("/subjects/soft-value").status_code == 200
        assert http.delete("/subjects/hard-value").status_code == 200
        assert http.delete("/subjects/hard-value", params={"permanent": "true"}).json() == [1]


@pytest.mark.slow
def test_a_second_process_sees_writes_within_a_second_and_forwards_its_own(
        kpy_schema_registries, kpy_bootstrap_servers, tmp_path):
    first = kpy_schema_registries()
    topic, group = first.config["kafkastore.topic"], first.config["schema.registry.group.id"]
    overrides = {"kafkastore.bootstrap.servers": kpy_bootstrap_servers,
                 "listeners": "http://127.0.0.1:0", "kafkastore.topic": topic,
                 "schema.registry.group.id": group}
    second = CommandProcess([sys.executable, "-m", "broker_lite", "schema-registry",
                             *(arg for name, value in overrides.items()
                               for arg in ("--override", f"{name}={value}"))],
                            tmp_path / "registry.log")
    try:
        second_url = second.address()  # "broker-lite: schema registry listening on <url>"
        assert first.wait_for_primary(30) is not None
        wait_until(lambda: httpx.get(f"{second_url}/subjects").status_code == 200, 30,
                   "the second process serving")
        for i in range(5):  # each write of the first is served by the second within a second
            written = register(first.url, "seen-value", avro(i + 1))
            start = time.monotonic()
            wait_until(lambda w=written: httpx.get(f"{second_url}/schemas/ids/{w['id']}")
                       .status_code == 200, 1.0, f"id {written['id']} at the second process")
            assert time.monotonic() - start < 1.0
        # the second's writes go to the primary, and it answers them with its own state read
        for i in range(3):
            written = register(second_url, "forwarded-value", avro(i + 1))
            assert written["version"] == i + 1
            assert httpx.get(f"{second_url}/subjects/forwarded-value/versions/latest"
                             ).json()["id"] == written["id"]  # a client sees its own write
            assert httpx.get(f"{first.url}/schemas/ids/{written['id']}").status_code == 200
        assert httpx.put(f"{second_url}/config/forwarded-value", headers=JSON_TYPE,
                         json={"compatibility": "NONE"}).json() == {"compatibility": "NONE"}
        assert httpx.get(f"{first.url}/config/forwarded-value").json() == \
            {"compatibilityLevel": "NONE"}
        assert snapshot(first.url) == snapshot(second_url)
    finally:
        assert second.stop() == 0, second.log_tail()


@pytest.mark.slow
def test_a_restarted_registry_serves_the_same_state(kpy_schema_registries):
    first = kpy_schema_registries()
    populate(first.url)
    before = snapshot(first.url)
    assert before["subjects"]["soft-value"]["versions"][0]["version"] == 1
    assert "hard-value" not in before["subjects"]
    properties = {"kafkastore.topic": first.config["kafkastore.topic"],
                  "schema.registry.group.id": first.config["schema.registry.group.id"]}
    first.stop()
    again = kpy_schema_registries(properties=properties)
    assert snapshot(again.url) == before
    # and it goes on from there: the next id and version follow the ones read
    assert httpx.put(f"{again.url}/mode/shared-value", headers=JSON_TYPE,
                     json={"mode": "READWRITE"}).status_code == 200
    written = register(again.url, "kept-value", avro(3))
    assert written["version"] == 3
    assert written["id"] == max(v["id"] for s in before["subjects"].values()
                                for v in s["versions"]) + 1


@pytest.mark.slow
def test_a_registry_rides_out_a_broker_killed_and_restarted(kpy_cluster,
                                                            kpy_schema_registries):
    bootstrap = kpy_cluster.bootstrap_servers
    registry = kpy_schema_registries(bootstrap, {"kafkastore.topic.replication.factor": "3"})
    topic = registry.config["kafkastore.topic"]
    kpy_cluster.wait_for_isr(topic, 0, {1, 2, 3})
    populate(registry.url)
    before = snapshot(registry.url)
    leader = kpy_cluster.leader(topic, 0)
    kpy_cluster.kill(leader)
    kpy_cluster.wait_for_leader(topic, 0, other_than=leader)
    after_kill = register(registry.url, "after-kill-value", SCHEMA)  # writes go on
    kpy_cluster.start_broker(leader)
    kpy_cluster.wait_for_isr(topic, 0, {1, 2, 3}, timeout_s=START_TIMEOUT_S)
    registry.stop()
    again = kpy_schema_registries(bootstrap, {
        "kafkastore.topic": topic,
        "schema.registry.group.id": registry.config["schema.registry.group.id"]})
    found = snapshot(again.url)
    assert found["subjects"].pop("after-kill-value")["versions"][0]["id"] == after_kill["id"]
    found["live"].remove("after-kill-value")
    assert found == before


@pytest.mark.slow
def test_a_broker_runs_a_registry_on_its_own_sasl_ssl_cluster(kpy_secured_brokers):
    broker = kpy_secured_brokers("SASL_SSL", users={"alice": "alice-secret"},
                                 properties={"schema.registry.listeners": "http://127.0.0.1:0",
                                             "schema.registry.kafkastore.topic": "_schemas"})
    registry = broker.broker.schema_registry
    assert registry is not None
    written = register(registry.url, "in-broker-value", SCHEMA)
    assert httpx.get(f"{registry.url}/schemas/ids/{written['id']}").json() == \
        {"schema": json.dumps(json.loads(SCHEMA), separators=(",", ":"))}
    assert registry.store.client.config.security_protocol.upper() == "SASL_SSL"
