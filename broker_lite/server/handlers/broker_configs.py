"""Broker resources of DescribeConfigs, AlterConfigs and IncrementalAlterConfigs: the dynamic
broker configs, as a Kafka 3.9 broker in ZooKeeper mode handles them.

A broker resource is named by this broker's id (its own dynamic configs,
``/config/brokers/[id]``) or by the empty string (the cluster-wide defaults,
``/config/brokers/<default>``). A change goes in two steps, as in Kafka (``ConfigAdminManager``
then ``ZkAdminManager``):

1. checked: the name (INVALID_REQUEST "Node id must be an integer, but it is: x" or "Unexpected
   broker id, expected 1, but received 2"), then the resulting configs against the rules of
   :mod:`broker_lite.config.dynamic` (INVALID_REQUEST with Kafka's message); an incremental
   edit Kafka refuses (APPEND to a non-list) is INVALID_CONFIG;
2. written to ZooKeeper unless ``validate_only``, with a change notification every broker
   follows; passwords are refused here (INVALID_CONFIG, "Invalid config value for resource
   ConfigResource(type=BROKER, name='1'): Password encoder secret not configured").

AlterConfigs replaces the resource's dynamic configs with the ones given; IncrementalAlterConfigs
edits them. The broker applies what it wrote at once (the other brokers when the notification
reaches them): its configs, and the defaults of its running logs.
"""

import logging

from broker_lite.config.dynamic import (
    DynamicConfigError,
    check_dynamic_change,
    persistent_configs,
    usable_configs,
)
from broker_lite.config.resolution import (
    ConfigOperationError,
    apply_incremental_operations,
    broker_config_entries,
    default_broker_config_entries,
)
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.config_entry import ConfigEntry
from broker_lite.protocol.enums import AlterConfigOpType
from broker_lite.zk.layout import DEFAULT_ENTITY

from ..errors import ApiError
from ..services import HandlerServices

logger = logging.getLogger(__name__)


def describe_broker(services: HandlerServices, name: str) -> list[ConfigEntry]:
    """This broker's configs (``name`` its id), or the cluster-wide dynamic defaults (empty
    ``name``)."""
    if not name:
        return default_broker_config_entries(services.config)
    _own_id(services, name, "Broker id", f"{services.broker_id} or empty string")
    return broker_config_entries(services.config)


def _own_id(services: HandlerServices, name: str, what: str, expected: str) -> int:
    """``name`` as this broker's id; INVALID_REQUEST with Kafka's messages (which differ a
    little between describing and changing) when it is not a number, or another broker's."""
    try:
        broker_id = int(name)
    except ValueError:
        raise ApiError(ErrorCode.INVALID_REQUEST,
                       f"{what} must be an integer, but it is: {name}") from None
    if broker_id != services.broker_id:
        raise ApiError(ErrorCode.INVALID_REQUEST,
                       f"Unexpected broker id, expected {expected}, but received {name}")
    return broker_id


def _entity(services: HandlerServices, name: str) -> str:
    """The ZooKeeper entity of a broker resource being changed: this broker's id, or
    ``<default>``."""
    if not name:
        return DEFAULT_ENTITY
    return str(_own_id(services, name, "Node id", str(services.broker_id)))


def _check(services: HandlerServices, props: dict[str, str], per_broker: bool) -> None:
    try:
        check_dynamic_change(props, per_broker=per_broker, config=services.config)
    except DynamicConfigError as exc:  # INVALID_REQUEST, as Kafka since KAFKA-13609
        raise ApiError(ErrorCode.INVALID_REQUEST, str(exc)) from None


def _write(services: HandlerServices, name: str, entity: str, props: dict[str, str],
           validate_only: bool) -> None:
    if validate_only:
        return
    per_broker = entity != DEFAULT_ENTITY
    try:
        persistent = persistent_configs(props, per_broker=per_broker)
    except DynamicConfigError as exc:
        raise ApiError(ErrorCode.INVALID_CONFIG,
                       f"Invalid config value for resource ConfigResource(type=BROKER, "
                       f"name='{name}'): {exc}") from None
    services.admin.alter_broker_config(entity, persistent)
    logger.info("updated %s with new configuration %s",
                f"broker {entity}" if per_broker else "brokers", sorted(persistent))


def alter_broker(services: HandlerServices, name: str, configs: list[dict],
                 validate_only: bool) -> None:
    """AlterConfigs of a broker resource: its dynamic configs become ``configs``."""
    entity = _entity(services, name)
    props = {c["name"]: c["value"] for c in configs}
    _check(services, props, entity != DEFAULT_ENTITY)
    _write(services, name, entity, props, validate_only)


def incremental_alter_broker(services: HandlerServices, name: str, configs: list[dict],
                             validate_only: bool) -> None:
    """IncrementalAlterConfigs of a broker resource: SET, DELETE, APPEND and SUBTRACT on its
    dynamic configs."""
    entity = _entity(services, name)
    per_broker = entity != DEFAULT_ENTITY
    unknown = [c["config_operation"] for c in configs
               if c["config_operation"] not in set(AlterConfigOpType)]
    if unknown:
        raise ApiError(ErrorCode.INVALID_REQUEST, f"Unknown operations type {unknown[0]}")
    current = usable_configs(services.admin.broker_config(entity), per_broker=per_broker)
    try:
        props = apply_incremental_operations(current, operations_of(configs), broker=True)
    except ConfigOperationError as exc:
        raise ApiError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    _check(services, props, per_broker)
    _write(services, name, entity, props, validate_only)


def operations_of(configs: list[dict]) -> list[tuple[str, AlterConfigOpType, str | None]]:
    """The edits an IncrementalAlterConfigs resource asks for, as config resolution takes them
    (their operations known)."""
    return [(c["name"], AlterConfigOpType(c["config_operation"]), c["value"]) for c in configs]
