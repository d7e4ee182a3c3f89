"""Users' SCRAM credentials stored as Kafka stores them in ZooKeeper (``/config/users/<user>``,
announced under ``/config/changes``), followed by every broker; DescribeUserScramCredentials and
AlterUserScramCredentials with Kafka's checks and errors, on the controller only; and
``broker-lite configs --entity-type users`` through a broker and with ``--zookeeper``."""

import json
import os
import re

import pytest

from broker_lite.client import KafkaClient
from broker_lite.client.admin.scram import (
    ScramCredentialInfo,
    UserScramCredentialDeletion,
    UserScramCredentialUpsertion,
)
from broker_lite.client.errors import (
    DuplicateResourceError,
    ResourceNotFoundError,
    SaslAuthenticationFailedError,
    UnacceptableCredentialError,
)
from broker_lite.client.retry import Deadline
from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.security.scram import ScramCredential
from broker_lite.tools.testing import run_tool
from broker_lite.zk.testing import wait_until
from broker_lite.zk.users import sanitize, set_user_config

Up, Del = UserScramCredentialUpsertion, UserScramCredentialDeletion


@pytest.fixture
def cluster(kpy_secured_brokers):
    """Two SASL_SSL brokers (the second is not the controller), admin user ``root``."""
    return kpy_secured_brokers("SASL_SSL", users={"root": "root-pw"},
                               mechanisms=("SCRAM-SHA-256", "SCRAM-SHA-512", "PLAIN"), count=2)


def admin_client(cluster, broker_index=None):
    settings = cluster.client_settings("root", "PLAIN")
    if broker_index is not None:
        settings["bootstrap.servers"] = f"127.0.0.1:{cluster.brokers[broker_index].port}"
    return KafkaClient(settings)


def logs_in(cluster, broker_index, user, password, mechanism) -> bool:
    settings = {**cluster.client_settings("root", mechanism),
                "bootstrap.servers": f"127.0.0.1:{cluster.brokers[broker_index].port}",
                "sasl.jaas.config": "org.apache.kafka.common.security.scram.ScramLoginModule "
                                    f'required username="{user}" password="{password}";',
                "request.timeout.ms": "10000"}
    with KafkaClient(settings) as client:
        try:
            client.topics()
        except SaslAuthenticationFailedError:
            return False
    return True


def test_credentials_are_stored_in_kafkas_format_and_reach_every_broker(cluster):
    zk = cluster.broker.zookeeper.client
    changes_before = set(zk.get_children("/config/changes"))
    with admin_client(cluster) as client:
        client.admin.scram_credentials.alter([
            Up("alice", "SCRAM-SHA-256", "alice-pw", iterations=8192),
            Up("alice", "SCRAM-SHA-512", "alice-pw")])
        assert client.admin.scram_credentials.describe(["alice"]) == {"alice": [
            ScramCredentialInfo("SCRAM-SHA-256", 8192), ScramCredentialInfo("SCRAM-SHA-512", 4096)]}
    data, _ = zk.get("/config/users/alice")
    stored = json.loads(data)
    assert list(stored) == ["version", "config"] and stored["version"] == 1
    assert set(stored["config"]) == {"SCRAM-SHA-256", "SCRAM-SHA-512"}
    text = stored["config"]["SCRAM-SHA-256"]
    assert re.fullmatch(r"salt=[A-Za-z0-9+/]+=*,stored_key=[A-Za-z0-9+/]{43}=,"
                        r"server_key=[A-Za-z0-9+/]{43}=,iterations=8192", text), text
    credential = ScramCredential.parse(text)
    assert len(credential.salt) == 32  # the client's random salt
    # the keys derive from the password and the client's salt; the password is not stored
    assert credential == ScramCredential.from_password("SCRAM-SHA-256", "alice-pw",
                                                       iterations=8192, salt=credential.salt)
    assert b"alice-pw" not in data
    notes = [json.loads(zk.get(f"/config/changes/{c}")[0])
             for c in sorted(set(zk.get_children("/config/changes")) - changes_before)]
    assert {"version": 2, "entity_path": "users/alice"} in notes
    # the other broker followed the notification
    wait_until(lambda: cluster.brokers[1].scram_credentials.get("SCRAM-SHA-512", "alice"),
               message="broker 2 never read alice's credentials")
    assert logs_in(cluster, 1, "alice", "alice-pw", "SCRAM-SHA-512")
    assert not logs_in(cluster, 1, "alice", "not-alice-pw", "SCRAM-SHA-512")
    with admin_client(cluster) as client:
        client.admin.scram_credentials.alter([Del("alice", "SCRAM-SHA-512")])
    wait_until(lambda: cluster.brokers[1].scram_credentials.get("SCRAM-SHA-512", "alice")
               is None, message="broker 2 kept a deleted credential")
    assert not logs_in(cluster, 1, "alice", "alice-pw", "SCRAM-SHA-512")
    assert logs_in(cluster, 1, "alice", "alice-pw", "SCRAM-SHA-256")


def test_a_users_other_configs_are_kept_and_names_are_sanitized(cluster):
    zk = cluster.broker.zookeeper.client
    user = "CN=bob smith,O=Example*"
    path = f"/config/users/{sanitize(user)}"
    assert path == "/config/users/CN%3Dbob%20smith%2CO%3DExample%2A"
    zk.create(path, b'{"version":1,"config":{"producer_byte_rate":"1024"}}', makepath=True)
    with admin_client(cluster) as client:
        client.admin.scram_credentials.alter([Up(user, "SCRAM-SHA-256", "bob-pw")])
        assert client.admin.scram_credentials.describe() == {
            "root": [ScramCredentialInfo("SCRAM-SHA-256", 4096),
                     ScramCredentialInfo("SCRAM-SHA-512", 4096)],
            "broker": [ScramCredentialInfo("SCRAM-SHA-256", 4096),
                       ScramCredentialInfo("SCRAM-SHA-512", 4096)],
            user: [ScramCredentialInfo("SCRAM-SHA-256", 4096)],
        }  # every user with a credential, sorted as Kafka's ZooKeeper listing gives them
    config = json.loads(zk.get(path)[0])["config"]
    assert config["producer_byte_rate"] == "1024" and "SCRAM-SHA-256" in config


@pytest.mark.parametrize("alterations, error, message", [
    ([Up("u", "SCRAM-SHA-256", "pw", iterations=4095)], UnacceptableCredentialError,
     "Too few iterations"),
    ([Up("u", "SCRAM-SHA-256", "pw", iterations=16385)], UnacceptableCredentialError,
     "Too many iterations"),
    ([Up("", "SCRAM-SHA-256", "pw")], UnacceptableCredentialError, "Username must not be empty"),
    ([Up("u", "SCRAM-SHA-256", "pw"), Del("u", "SCRAM-SHA-256")], DuplicateResourceError,
     "A user credential cannot be altered twice in the same request"),
    ([Del("nobody", "SCRAM-SHA-512")], ResourceNotFoundError,
     "Attempt to delete a user credential that does not exist"),
])
def test_alterations_kafka_refuses(cluster, alterations, error, message):
    with admin_client(cluster) as client, pytest.raises(error, match=message):
        client.admin.scram_credentials.alter(alterations)
    assert cluster.broker.zookeeper.client.exists("/config/users/u") is None


def broker_call(cluster, broker, api_key, body) -> dict:
    """One request to ``broker`` over an authenticated connection (broker_lite's client)."""
    settings = {**cluster.client_settings("root", "PLAIN"),
                "bootstrap.servers": f"127.0.0.1:{broker.port}"}
    with KafkaClient(settings) as client:
        client.topics()
        return client.cluster.node(broker.broker_id).request(api_key, body,
                                                             Deadline(10_000))[1]


def controller_first(cluster) -> list:
    zk = cluster.broker.zookeeper.client
    controller = json.loads(zk.get("/controller")[0])["brokerid"]
    return sorted(cluster.brokers, key=lambda b: b.broker_id != controller)


def test_alterations_go_to_the_controller_and_are_checked_per_user(cluster):
    controller, other = controller_first(cluster)
    body = {"deletions": [{"name": "u", "mechanism": 9}],
            "upsertions": [{"name": "v", "mechanism": 1, "iterations": 4096, "salt": b"salt",
                            "salted_password": os.urandom(32)}]}
    answered = broker_call(cluster, other, ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body)
    assert [(r["user"], r["error_code"]) for r in answered["results"]] == [
        ("u", ErrorCode.NOT_CONTROLLER), ("v", ErrorCode.NOT_CONTROLLER)]
    answered = broker_call(cluster, controller, ApiKey.ALTER_USER_SCRAM_CREDENTIALS, body)
    assert {r["user"]: (r["error_code"], r["error_message"]) for r in answered["results"]} == {
        "u": (ErrorCode.UNSUPPORTED_SASL_MECHANISM, "Unknown SCRAM mechanism"),
        "v": (ErrorCode.NONE, None)}
    with admin_client(cluster, cluster.brokers.index(other)) as client:  # finds the controller
        client.admin.scram_credentials.alter([Up("w", "SCRAM-SHA-512", "w-pw")])
        described = client.admin.scram_credentials.describe(["w", "nobody", "", "w2", "w2"])
    assert list(described) == ["w", "nobody", "", "w2"]
    assert described["w"] == [ScramCredentialInfo("SCRAM-SHA-512", 4096)]
    assert isinstance(described["nobody"], ResourceNotFoundError)
    assert "Attempt to describe a user credential that does not exist: nobody" in \
        str(described["nobody"])
    assert isinstance(described[""], ResourceNotFoundError)
    assert "Username must not be empty" in str(described[""])
    assert isinstance(described["w2"], DuplicateResourceError)


def test_configs_tool_manages_scram_users(cluster, tmp_path):
    settings = cluster.client_settings("root", "PLAIN")
    command_config = tmp_path / "admin.properties"
    command_config.write_text("".join(
        f"{name}={value}".replace("\\", "\\\\").replace("\n", "\\n") + "\n"
        for name, value in settings.items() if name != "bootstrap.servers"))
    through_broker = ("--bootstrap-server", settings["bootstrap.servers"],
                      "--command-config", command_config)
    added = run_tool("configs", *through_broker, "--entity-type", "users", "--entity-name",
                     "alice", "--alter", "--add-config",
                     "SCRAM-SHA-256=[iterations=8192,password=alice-pw]")
    assert (added.returncode, added.stdout) == (0, "Completed updating config for user alice.\n")
    bootstrapped = run_tool("configs", "--zookeeper", cluster.zookeeper_connect, "--user",
                            "bob", "--alter", "--add-config", "SCRAM-SHA-512=[password=bob-pw]")
    assert bootstrapped.returncode == 0, bootstrapped.stderr
    assert bootstrapped.stdout == "Completed updating config for entity: user-principal 'bob'.\n"
    described = run_tool("configs", *through_broker, "--entity-type", "users", "--describe")
    assert described.returncode == 0, described.stderr
    assert "SCRAM credential configs for user-principal 'alice' are " \
           "SCRAM-SHA-256=iterations=8192\n" in described.stdout
    assert "SCRAM credential configs for user-principal 'bob' are " \
           "SCRAM-SHA-512=iterations=4096\n" in described.stdout
    missing = run_tool("configs", *through_broker, "--user", "carol", "--describe")
    assert missing.stdout.startswith("Error retrieving SCRAM credential configs for "
                                     "user-principal 'carol': RESOURCE_NOT_FOUND")
    wait_until(lambda: cluster.broker.scram_credentials.get("SCRAM-SHA-512", "bob"),
               message="the broker never read bob's credentials")
    assert logs_in(cluster, 0, "alice", "alice-pw", "SCRAM-SHA-256")
    assert logs_in(cluster, 0, "bob", "bob-pw", "SCRAM-SHA-512")
    deleted = run_tool("configs", *through_broker, "--user", "alice", "--alter",
                       "--delete-config", "SCRAM-SHA-256")
    assert deleted.returncode == 0, deleted.stderr
    assert not logs_in(cluster, 0, "alice", "alice-pw", "SCRAM-SHA-256")
    for result in (added, bootstrapped, described, deleted):
        assert "alice-pw" not in result.stdout + result.stderr
        assert "bob-pw" not in result.stdout + result.stderr


@pytest.mark.parametrize("args, status, message", [
    (("--alter", "--add-config", "producer_byte_rate=1024"), 1,
     "Only SCRAM credential configs (SCRAM-SHA-256, SCRAM-SHA-512) can be added for 'users'"),
    (("--alter", "--add-config", "SCRAM-SHA-256=[iterations=100,password=x]"), 1,
     "Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256"),
    (("--alter", "--add-config", "SCRAM-SHA-256=[secret=x]"), 1,
     "Invalid credential property SCRAM-SHA-256"),
])
def test_configs_tool_refuses_what_kafka_refuses(cluster, args, status, message):
    result = run_tool("configs", "--zookeeper", cluster.zookeeper_connect, "--user", "dave",
                      *args)
    assert result.returncode == status, result.stderr
    assert message in result.stderr


@pytest.mark.parametrize("args, message", [
    (("--bootstrap-server", "127.0.0.1:1", "--entity-type", "users", "--entity-default",
      "--describe"), "The use of --entity-default or --user-defaults is not allowed"),
    (("--zookeeper", "127.0.0.1:1", "--topic", "t", "--describe"),
     "--zookeeper goes only with --entity-type users"),
    (("--user", "u", "--describe"), "give one of --bootstrap-server and --zookeeper"),
])
def test_configs_tool_usage_errors_for_users(args, message):
    result = run_tool("configs", *args)
    assert result.returncode == 2 and message in result.stderr, result.stderr


def test_a_malformed_credential_costs_its_user_only(cluster, caplog):
    zk = cluster.broker.zookeeper.client
    set_user_config(zk, "mallory", {"SCRAM-SHA-256": "salt=not base64!,iterations=x"})
    wait_until(lambda: "ignoring the SCRAM credentials of user 'mallory'" in caplog.text,
               message="the broker never read mallory's credentials")
    assert "not base64" not in caplog.text  # the stored value is not logged
    assert not logs_in(cluster, 0, "mallory", "anything", "SCRAM-SHA-256")
    assert logs_in(cluster, 0, "root", "root-pw", "SCRAM-SHA-256")
    with admin_client(cluster) as client:
        described = client.admin.scram_credentials.describe(["mallory", "root"])
    assert "mallory" in str(described["mallory"]) and "UNKNOWN_SERVER_ERROR" in \
        str(described["mallory"])
    assert described["root"][0].mechanism == "SCRAM-SHA-256"
