"""``broker-lite configs`` as a user runs it: child processes against a live broker, checked
against what the cluster itself reports."""

import pytest

from broker_lite.client import KafkaClient
from broker_lite.server.testing import bootstrap
from broker_lite.tools.testing import closed_port, run_tool


@pytest.fixture
def servers(broker) -> str:
    return bootstrap(broker)


def configs(servers: str, *args: str):
    return run_tool("configs", "--bootstrap-server", servers, *args)


def ok(result) -> str:
    assert result.returncode == 0, result.stderr
    return result.stdout


def failed(result, *fragments: str) -> str:
    """The error line of a run that failed with exit status 1."""
    assert result.returncode == 1, (result.stdout, result.stderr)
    assert result.stderr.startswith("broker-lite configs: error: "), result.stderr
    for fragment in fragments:
        assert fragment in result.stderr
    return result.stderr



def test_topic_configs_are_described_added_and_deleted(servers):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([("events", 1, 1, {"retention.ms": "60000"})])
    assert ok(configs(servers, "--entity-type", "topics", "--entity-name", "events",
                      "--describe")).splitlines() == [
        "Dynamic configs for topic events are:",
        "  retention.ms=60000 sensitive=false synonyms={DYNAMIC_TOPIC_CONFIG:retention.ms=60000}"]
    assert ok(configs(servers, "--topic", "events", "--alter", "--add-config",
                      "segment.ms=100000,cleanup.policy=[compact,delete]",
                      "--delete-config", "retention.ms")) == \
        "Completed updating config for topic events.\n"
    with KafkaClient({"bootstrap.servers": servers}) as client:
        current = client.admin.describe_configs("events")
    assert (current["segment.ms"], current["cleanup.policy"]) == ("100000", "compact,delete")
    assert current["retention.ms"] == "604800000"  # the broker's default again
    described = ok(configs(servers, "--topic", "events", "--describe")).splitlines()
    assert described[0] == "Dynamic configs for topic events are:"
    assert described[1].startswith("  cleanup.policy=compact,delete sensitive=false synonyms="
                                   "{DYNAMIC_TOPIC_CONFIG:cleanup.policy=compact,delete, "
                                   "DEFAULT_CONFIG:log.cleanup.policy=delete}")
    assert described[2].startswith("  segment.ms=100000 ")
    everything = ok(configs(servers, "--topic", "events", "--describe", "--all")).splitlines()
    assert everything[0] == "All configs for topic events are:"
    names = [line.split("=")[0].strip() for line in everything[1:]]
    assert names == sorted(names) and "retention.ms" in names and "max.message.bytes" in names


def test_config_errors(servers, broker):
    with KafkaClient({"bootstrap.servers": servers}) as client:
        client.admin.create_topics([("events", 1, 1)])
    failed(configs(servers, "--topic", "events", "--alter", "--delete-config", "retention.ms"),
           "Invalid config(s): retention.ms")
    failed(configs(servers, "--topic", "events", "--alter", "--add-config", "bogus=1"),
           "INVALID_CONFIG", "bogus")
    failed(configs(servers, "--topic", "events", "--alter", "--add-config", "segment.ms=soon"),
           "INVALID_CONFIG", "segment.ms")
    failed(configs(servers, "--topic", "missing", "--describe"), "topic missing")
    failed(configs(servers, "--topic", "missing", "--alter", "--add-config", "segment.ms=1"),
           "topic missing")
    failed(configs(servers, "--broker", str(broker.broker_id), "--alter", "--add-config",
                   "log.dirs=/elsewhere"), "INVALID_REQUEST", "Cannot update these configs "
           "dynamically")
    failed(configs(servers, "--entity-type", "brokers", "--entity-default", "--alter",
                   "--delete-config", "log.retention.ms"), "Invalid config(s): log.retention.ms")
    failed(configs(servers, "--broker", "42", "--describe"), "broker 42 is not in the cluster")


def test_broker_configs_are_described(servers, broker):
    name = str(broker.broker_id)
    assert ok(configs(servers, "--entity-type", "brokers", "--entity-name", name,
                      "--describe")) == f"Dynamic configs for broker {name} are:\n"
    everything = ok(configs(servers, "--broker", name, "--describe", "--all")).splitlines()
    assert everything[0] == f"All configs for broker {name} are:"
    assert f"  broker.id={name} sensitive=false synonyms={{STATIC_BROKER_CONFIG:broker.id={name}" \
           f", DEFAULT_CONFIG:broker.id=-1}}" in everything
    every_broker = ok(configs(servers, "--entity-type", "brokers", "--describe"))
    assert every_broker == f"Dynamic configs for broker {name} are:\n" \
        "Default configs for brokers in the cluster are:\n"


def test_dynamic_broker_configs_are_altered(servers, broker):
    name = str(broker.broker_id)
    assert ok(configs(servers, "--entity-type", "brokers", "--entity-default", "--alter",
                      "--add-config", "log.retention.ms=3600000")) == \
        "Completed updating default config for brokers in the cluster.\n"
    assert ok(configs(servers, "--entity-type", "brokers", "--entity-name", name, "--alter",
                      "--add-config", "log.cleaner.backoff.ms=500,message.max.bytes=2000000")) \
        == f"Completed updating config for broker {name}.\n"
    assert broker.services.config.log_config().retention_ms == 3_600_000
    assert broker.services.config["message.max.bytes"] == 2_000_000
    assert ok(configs(servers, "--entity-type", "brokers", "--entity-default",
                      "--describe")).splitlines() == [
        "Default configs for brokers in the cluster are:",
        "  log.retention.ms=3600000 sensitive=false synonyms={DYNAMIC_DEFAULT_BROKER_CONFIG:"
        "log.retention.ms=3600000}"]
    own = ok(configs(servers, "--broker", name, "--describe")).splitlines()
    assert own[0] == f"Dynamic configs for broker {name} are:"
    assert own[1] == ("  log.cleaner.backoff.ms=500 sensitive=false synonyms={"
                      "DYNAMIC_BROKER_CONFIG:log.cleaner.backoff.ms=500, "
                      "DEFAULT_CONFIG:log.cleaner.backoff.ms=15000}")
    assert own[2].startswith("  message.max.bytes=2000000 sensitive=false synonyms="
                             "{DYNAMIC_BROKER_CONFIG:message.max.bytes=2000000, ")
    assert len(own) == 3
    assert ok(configs(servers, "--broker", name, "--alter", "--delete-config",
                      "message.max.bytes")) == f"Completed updating config for broker {name}.\n"
    assert broker.services.config["message.max.bytes"] == 1048588


@pytest.mark.parametrize("args, message", [
    (["--describe"], "name one entity"),
    (["--describe", "--entity-name", "t"], "--entity-name needs --entity-type"),
    (["--describe", "--topic", "t", "--broker", "1"], "name one entity"),
    (["--alter", "--entity-type", "topics"], "--alter needs an entity name"),
    (["--describe", "--entity-type", "topics", "--entity-default"],
     "--entity-default goes only with --entity-type brokers"),
    (["--describe", "--entity-type", "brokers", "--entity-name", "1", "--entity-default"],
     "--entity-default goes only with --entity-type brokers"),
    (["--alter", "--topic", "t"], "--alter needs --add-config or --delete-config"),
    (["--alter", "--topic", "t", "--add-config", "novalue"], "--add-config"),
    (["--alter", "--topic", "t", "--add-config", "a=1", "--delete-config", "a"],
     "Invalid config(s): a"),
    (["--describe", "--topic", "t", "--add-config", "a=1"], "go only with --alter"),
    (["--describe", "--broker", "one"], "broker is named by its id"),
    (["--describe", "--entity-type", "clients", "--entity-name", "u"], "invalid choice"),
])
def test_bad_configs_usage_exits_2(args, message):
    result = configs(f"127.0.0.1:{closed_port()}", *args)
    assert result.returncode == 2, result.stderr
    assert message in result.stderr
