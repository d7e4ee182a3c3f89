"""Topic and broker configuration: DescribeConfigs with sources and synonyms, and
IncrementalAlterConfigs.

A resource is a topic or a broker (:class:`ConfigResource`). Topic resources can go to any broker;
a broker's own configuration only to that broker, which is where Kafka's admin client sends it
too; the cluster-wide dynamic broker defaults (:meth:`ConfigResource.broker_default`, the broker
resource named "") to any broker. Each config comes back as a :class:`ConfigEntry`: its value,
where the value comes from (``source``: a topic override, a broker setting, a default; Kafka's
``ConfigSource`` names) and, when asked for, its synonyms (the settings it falls back to, in
order).

IncrementalAlterConfigs changes overrides one at a time (:class:`AlterConfigOp`: SET, DELETE,
APPEND, SUBTRACT), leaving the others as they are (AlterConfigs, which replaces them all, is
not offered). A topic the cluster does not know is a final :class:`UnknownTopicOrPartitionError`,
since the broker answers it from ZooKeeper, not from a possibly stale cache.

>>> AlterConfigOp.set("retention.ms", "60000")
AlterConfigOp(name='retention.ms', operation=<AlterConfigOpType.SET: 0>, value='60000')
>>> ConfigResource.topic("events")
ConfigResource(type=<ConfigResourceType.TOPIC: 2>, name='events')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from broker_lite.protocol import ApiKey, ErrorCode
from broker_lite.protocol.config_entry import ConfigEntry, ConfigSynonym
from broker_lite.protocol.enums import AlterConfigOpType, ConfigResourceType, ConfigSource

from ..cluster.cluster import Cluster
from ..cluster.connection import BrokerConnection
from ..errors import (
    BrokerNotAvailableError,
    InvalidArgumentError,
    InvalidResponseError,
    KafkaClientError,
    error_for,
    final_error,
)
from ..retry import Deadline, retry

T = TypeVar("T")
TOPIC = ConfigResourceType.TOPIC
BROKER = ConfigResourceType.BROKER
FIRST_DESCRIBE_CONFIGS_WITH_SOURCES = 1  # ConfigSource and synonyms instead of IsDefault


@dataclass(frozen=True)
class ConfigResource:
    type: ConfigResourceType  # TOPIC or BROKER
    name: str

    @classmethod
    def topic(cls, name: str) -> ConfigResource:
        return cls(TOPIC, name)

    @classmethod
    def broker(cls, broker_id: int | str) -> ConfigResource:
        return cls(BROKER, str(broker_id))

    @classmethod
    def broker_default(cls) -> ConfigResource:
        """The dynamic configs every broker shares (kafka-configs' ``--entity-default``)."""
        return cls(BROKER, "")

    def __str__(self) -> str:
        if self.type == BROKER and not self.name:
            return "the brokers' default"
        return f"{'topic' if self.type == TOPIC else 'broker'} {self.name}"


@dataclass(frozen=True)
class AlterConfigOp:
    name: str
    operation: int
    value: str | None = None

    @classmethod
    def set(cls, name: str, value: str) -> AlterConfigOp:
        return cls(name, AlterConfigOpType.SET, value)

    @classmethod
    def delete(cls, name: str) -> AlterConfigOp:
        return cls(name, AlterConfigOpType.DELETE)


# -- requests and responses (sans I/O) ----------------------------------------------------------


def describe_configs_request(resources: Iterable[ConfigResource], *,
                             include_synonyms: bool = False) -> dict:
    return {"resources": [{"resource_type": r.type, "resource_name": r.name,
                           "configuration_keys": None} for r in resources],
            "include_synonyms": include_synonyms, "include_documentation": False}


def parse_describe_configs(body: dict, version: int
                           ) -> dict[ConfigResource, list[ConfigEntry] | KafkaClientError]:
    """Per resource: its entries, or the error the broker answered for it."""
    results: dict[ConfigResource, list[ConfigEntry] | KafkaClientError] = {}
    for result in body["results"]:
        resource = ConfigResource(result["resource_type"], result["resource_name"])
        error = error_for(result["error_code"], result.get("error_message"),
                          where=str(resource))
        if error is not None:
            if result["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
                final_error(error)  # the broker looked in ZooKeeper: asking again won't help
            results[resource] = error
            continue
        results[resource] = [_entry(c, version) for c in result["configs"]]
    return results


def _entry(config: dict, version: int) -> ConfigEntry:
    if version >= FIRST_DESCRIBE_CONFIGS_WITH_SOURCES:
        source = ConfigSource.of(config["config_source"])
    else:  # v0 says only whether the value is the default
        source = ConfigSource.DEFAULT_CONFIG if config["is_default"] else ConfigSource.UNKNOWN
    synonyms = tuple(ConfigSynonym(s["name"], s["value"], ConfigSource.of(s["source"]))
                     for s in config.get("synonyms") or ())
    return ConfigEntry(config["name"], config["value"], source, config["read_only"],
                       config["is_sensitive"], synonyms)


def incremental_alter_configs_request(changes: Mapping[ConfigResource, Iterable[AlterConfigOp]],
                                      *, validate_only: bool = False) -> dict:
    return {"resources": [
        {"resource_type": resource.type, "resource_name": resource.name,
         "configs": [{"name": op.name, "config_operation": int(op.operation), "value": op.value}
                     for op in ops]}
        for resource, ops in changes.items()], "validate_only": validate_only}


def parse_alter_configs(body: dict) -> dict[ConfigResource, KafkaClientError | None]:
    """Per resource: None when altered, else the error (INVALID_CONFIG with the reason, ...)."""
    results = {}
    for r in body["responses"]:
        resource = ConfigResource(r["resource_type"], r["resource_name"])
        error = error_for(r["error_code"], r.get("error_message"), where=str(resource))
        if error is not None and r["error_code"] == ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
            final_error(error)
        results[resource] = error
    return results


# -- the client side ------------------------------------------------------------------------------


class ConfigsAdmin:
    """Configuration of topics and brokers over a client's connections; get one from
    :attr:`.admin.Admin.configs`."""

    def __init__(self, cluster: Cluster):
        self.cluster = cluster

    def describe(self, resources: Iterable[ConfigResource], *, include_synonyms: bool = False
                 ) -> dict[ConfigResource, list[ConfigEntry]]:
        """Every config of each resource, in the broker's order; raises the first resource's
        error (an unknown topic: :class:`UnknownTopicOrPartitionError`, final)."""
        found: dict[ConfigResource, list[ConfigEntry]] = {}
        for resource in dict.fromkeys(resources):
            def parse(version: int, response: dict, resource=resource) -> list[ConfigEntry]:
                outcome = parse_describe_configs(response, version).get(resource)
                if outcome is None:
                    raise InvalidResponseError(f"the DescribeConfigs response has no {resource}")
                if isinstance(outcome, KafkaClientError):
                    raise outcome
                return outcome

            found[resource] = self._send(
                f"describe_configs({resource})", resource, ApiKey.DESCRIBE_CONFIGS,
                describe_configs_request([resource], include_synonyms=include_synonyms), parse)
        return found

    def incremental_alter(self, changes: Mapping[ConfigResource, Iterable[AlterConfigOp]], *,
                          validate_only: bool = False) -> None:
        """Apply each resource's operations; raises the first resource's error
        (:class:`InvalidConfigurationError` naming a bad name or value, ...)."""
        for resource, ops in changes.items():
            ops = list(ops)
            for op in ops:
                if op.operation != AlterConfigOpType.DELETE and op.value is None:
                    raise InvalidArgumentError(f"{AlterConfigOpType(op.operation).name} of "
                                               f"{op.name} for {resource} needs a value")

            def parse(version: int, response: dict, resource=resource) -> None:
                results = parse_alter_configs(response)
                if resource not in results:
                    raise InvalidResponseError(f"the IncrementalAlterConfigs response has no "
                                               f"{resource}")
                error = results[resource]
                if error is not None:
                    raise error

            body = incremental_alter_configs_request({resource: ops}, validate_only=validate_only)
            self._send(f"incremental_alter_configs({resource})", resource,
                       ApiKey.INCREMENTAL_ALTER_CONFIGS, body, parse)

    def _send(self, what: str, resource: ConfigResource, api_key: ApiKey, body: dict,
              parse: Callable[[int, dict], T]) -> T:
        """``parse(version, response)`` of ``body`` sent for ``resource``: a broker's to that
        broker, a topic's or the brokers' default to any broker; retriable errors retried until
        the deadline."""
        deadline = self.cluster.deadline()

        def attempt() -> T:
            if resource.type != BROKER or not resource.name:
                return parse(*self.cluster.request_any(api_key, body, deadline))
            return parse(*self._broker(resource, deadline).request(api_key, body, deadline))

        return retry(what, deadline, self.cluster.backoff(), attempt, self.cluster.on_retriable)

    def _broker(self, resource: ConfigResource, deadline: Deadline) -> BrokerConnection:
        try:
            broker_id = int(resource.name)
        except ValueError:
            raise InvalidArgumentError(f"a broker id is an integer, got {resource.name!r}") \
                from None
        self.cluster.ensure_metadata(deadline)
        if self.cluster.metadata.broker(broker_id) is None:
            self.cluster.refresh_metadata((), deadline)
            if self.cluster.metadata.broker(broker_id) is None:
                raise final_error(BrokerNotAvailableError(
                    f"broker {broker_id} is not in the cluster (brokers: "
                    f"{sorted(self.cluster.metadata.brokers())})"))
        return self.cluster.node(broker_id)
