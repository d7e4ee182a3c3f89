"""DescribeConfigs, AlterConfigs and IncrementalAlterConfigs, for topics and this broker, as a
Kafka 3.9 broker in ZooKeeper mode answers them.

Values, sources and synonyms come from :mod:`broker_lite.config.resolution`. Every resource is
first checked as Kafka's ``ConfigAdminManager`` checks it (INVALID_REQUEST for a resource named
twice, a config named twice, a null value where one is needed, an unknown resource type).
AlterConfigs replaces a topic's whole override set; IncrementalAlterConfigs edits it with SET,
DELETE, APPEND and SUBTRACT. Both validate every name and value with the broker's own parser
(INVALID_CONFIG) and write through the topic admin, which applies the overrides to this broker's
logs at once. Broker resources (dynamic broker configs) are :mod:`.broker_configs`', group
resources (share groups' configs) :mod:`.group_configs`'. Group resources come with share groups
(Kafka 4's, ``group.share.enable``); without them a GROUP resource is an unsupported resource
type, INVALID_REQUEST, as Kafka 3.9 answers it.

Authorization, as Kafka's: describing a topic's configs needs DescribeConfigs on the topic, a
broker's DescribeConfigs on the cluster; changing them AlterConfigs. A refusal is
TOPIC_AUTHORIZATION_FAILED or CLUSTER_AUTHORIZATION_FAILED for that resource alone, answered
after the request-level checks above (Kafka checks a broker resource's new values before its
authorization; here the authorization comes first).
"""

import logging
from collections import Counter
from collections.abc import Callable, Mapping

from broker_lite.config.parsers import ConfigError
from broker_lite.config.resolution import (
    ConfigOperationError,
    InvalidConfigurationError,
    UnknownTopicConfigError,
    apply_incremental_operations,
    topic_config_entries,
    validate_topic_overrides,
)
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.config_entry import ConfigEntry
from broker_lite.protocol.enums import (
    AclOperation,
    AlterConfigOpType,
    ConfigResourceType,
    ResourceType,
)
from broker_lite.security.acl import AUTHORIZATION_ERRORS, CLUSTER_NAME
from broker_lite.zk.admin import validate_topic_name
from broker_lite.zk.errors import InvalidTopicError, UnknownTopicError, ZooKeeperError

from ..dispatcher import RequestContext
from ..errors import ApiError, error_code_for
from ..services import HandlerServices
from . import group_configs
from .broker_configs import (
    alter_broker,
    describe_broker,
    incremental_alter_broker,
    operations_of,
)

logger = logging.getLogger(__name__)

# Resource types (Kafka's ConfigResource.Type).
TOPIC, BROKER, BROKER_LOGGER = (ConfigResourceType.TOPIC, ConfigResourceType.BROKER,
                                ConfigResourceType.BROKER_LOGGER)
GROUP = ConfigResourceType.GROUP  # group configs (KIP-932's share groups): .group_configs


def _check_authorized(context: RequestContext, operation: AclOperation, resource: dict) -> None:
    """Raise TOPIC_ or CLUSTER_AUTHORIZATION_FAILED unless the principal may do ``operation``
    (DescribeConfigs, AlterConfigs) on the resource: a topic, or the cluster for a broker."""
    kind = resource["resource_type"]
    if kind == GROUP:
        if not context.authorize(operation, ResourceType.GROUP, resource["resource_name"]):
            raise ApiError(ErrorCode.GROUP_AUTHORIZATION_FAILED)
        return
    if kind not in (TOPIC, BROKER, BROKER_LOGGER):
        return  # refused for its type
    resource_type, name = (ResourceType.TOPIC, resource["resource_name"]) if kind == TOPIC \
        else (ResourceType.CLUSTER, CLUSTER_NAME)
    if not context.authorize(operation, resource_type, name):
        error = AUTHORIZATION_ERRORS[resource_type]  # DescribeConfigs gives its message
        raise ApiError(error, error.message if operation == AclOperation.DESCRIBE_CONFIGS
                       else None)


def _unknown_topic(topic: str) -> ApiError:
    return ApiError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, f"The topic '{topic}' does not exist.")


def _check_topic_exists(services: HandlerServices, topic: str) -> None:
    if services.cluster.partition_count(topic) is None:
        raise _unknown_topic(topic)


def _resource_failure(result: dict, resource: dict, what: str, exc: Exception) -> None:
    """Answer an unexpected failure (ZooKeeper trouble) for one resource."""
    logger.error("%s of %s failed", what, resource["resource_name"], exc_info=exc)
    result.update(error_code=ErrorCode.UNKNOWN_SERVER_ERROR, error_message=str(exc))


# -- describing ------------------------------------------------------------------------------------


def entry_dict(entry: ConfigEntry, *, include_synonyms: bool = False,
               include_documentation: bool = False) -> dict:
    """A config entry as DescribeConfigs' response lists it."""
    return {
        "name": entry.name, "value": entry.value, "read_only": entry.read_only,
        "is_default": entry.is_default, "config_source": entry.source,
        "is_sensitive": entry.sensitive,
        "synonyms": [{"name": s.name, "value": s.value, "source": s.source}
                     for s in entry.synonyms] if include_synonyms else [],
        "config_type": entry.config_type,
        "documentation": entry.documentation if include_documentation else None,
    }


def _describe(services: HandlerServices, resource: dict) -> list[ConfigEntry]:
    kind, name = resource["resource_type"], resource["resource_name"]
    if kind == TOPIC:
        try:
            validate_topic_name(name)
        except InvalidTopicError as exc:
            raise ApiError(ErrorCode.INVALID_TOPIC_EXCEPTION, str(exc)) from None
        _check_topic_exists(services, name)
        return topic_config_entries(services.config, services.admin.topic_config(name))
    if kind == BROKER:
        return describe_broker(services, name)
    if kind == GROUP and services.config["group.share.enable"]:
        return group_configs.describe_group(services, name)
    raise ApiError(ErrorCode.INVALID_REQUEST,
                   f"Unsupported resource type: {_resource_type_name(kind)}")


def describe_configs(context: RequestContext, body: dict) -> dict:
    include_synonyms = bool(body.get("include_synonyms"))
    include_documentation = bool(body.get("include_documentation"))
    results = []
    for resource in body["resources"]:
        result = {"error_code": 0, "error_message": None,
                  "resource_type": resource["resource_type"],
                  "resource_name": resource["resource_name"], "configs": []}
        try:
            _check_authorized(context, AclOperation.DESCRIBE_CONFIGS, resource)
            entries = _describe(context.services, resource)
        except ApiError as exc:
            result.update(error_code=exc.code, error_message=exc.message)
        except ZooKeeperError as exc:
            _resource_failure(result, resource, "describing configs", exc)
        else:
            keys = resource.get("configuration_keys")
            result["configs"] = [
                entry_dict(e, include_synonyms=include_synonyms,
                           include_documentation=include_documentation)
                for e in entries if not keys or e.name in keys]
        results.append(result)
    return {"throttle_time_ms": 0, "results": results}


# -- altering ------------------------------------------------------------------------------------


def _alter_topic(services: HandlerServices, topic: str, overrides: dict[str, str],
                 validate_only: bool) -> None:
    if not topic:
        raise ApiError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    _check_topic_exists(services, topic)
    try:
        validate_topic_overrides(services.config, overrides)
    except InvalidConfigurationError as exc:
        raise ApiError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    except ConfigError as exc:
        raise ApiError(ErrorCode.INVALID_CONFIG,
                       f"Invalid config value for resource ConfigResource(type=TOPIC, "
                       f"name='{topic}'): {exc}") from None
    if validate_only:
        return
    try:
        services.admin.alter_topic_config(topic, overrides)
    except UnknownTopicError:
        raise _unknown_topic(topic) from None
    logger.info("updated topic %s with new configuration %s", topic, overrides)


def _alter_each(context: RequestContext, body: dict,
                alter_one: Callable[[HandlerServices, dict, bool], None],
                is_null_update: Callable[[dict], bool]) -> dict:
    """Each resource checked as Kafka's ``ConfigAdminManager.preprocess`` checks it, then
    altered by ``alter_one``; every resource answered on its own."""
    counts = Counter((r["resource_type"], r["resource_name"]) for r in body["resources"])
    responses = []
    for resource in body["resources"]:
        kind, name = resource["resource_type"], resource["resource_name"]
        response = {"error_code": 0, "error_message": None, "resource_type": kind,
                    "resource_name": name}
        try:
            if counts[(kind, name)] > 1:
                raise ApiError(ErrorCode.INVALID_REQUEST, "Each resource must appear at most once.")
            names = [c["name"] for c in resource["configs"]]
            if len(set(names)) != len(names):
                raise ApiError(ErrorCode.INVALID_REQUEST, "Error due to duplicate config keys")
            nulls = [c["name"] for c in resource["configs"] if is_null_update(c)]
            if nulls:
                raise ApiError(ErrorCode.INVALID_REQUEST,
                               f"Null value not supported for : {', '.join(nulls)}")
            if kind not in served_resource_types(context.services):
                raise ApiError(ErrorCode.INVALID_REQUEST, f"Unknown resource type {kind}")
            _check_authorized(context, AclOperation.ALTER_CONFIGS, resource)
            alter_one(context.services, resource, bool(body.get("validate_only")))
        except ApiError as exc:
            response.update(error_code=exc.code, error_message=exc.message)
        except ZooKeeperError as exc:
            _resource_failure(response, resource, "altering configs", exc)
        responses.append(response)
    return {"throttle_time_ms": 0, "responses": responses}


def served_resource_types(services: HandlerServices) -> tuple[int, ...]:
    """The config resource types this broker describes and alters."""
    return (TOPIC, BROKER, GROUP) if services.config["group.share.enable"] else (TOPIC, BROKER)


def _alter_configs_one(services: HandlerServices, resource: dict, validate_only: bool) -> None:
    name, configs = resource["resource_name"], resource["configs"]
    if resource["resource_type"] == BROKER:
        alter_broker(services, name, configs, validate_only)
        return
    if resource["resource_type"] == GROUP:
        group_configs.alter_group(services, name, configs, validate_only)
        return
    _alter_topic(services, name, {c["name"]: c["value"] for c in configs}, validate_only)


def alter_configs(context: RequestContext, body: dict) -> dict:
    """AlterConfigs: the resource's new override set, replacing the old one."""
    return _alter_each(context, body, _alter_configs_one,
                       lambda config: config["value"] is None)


def _edited(overrides: Mapping[str, str], configs: list[dict]) -> dict[str, str]:
    try:
        return apply_incremental_operations(overrides, operations_of(configs))
    except (UnknownTopicConfigError, ConfigOperationError) as exc:
        raise ApiError(error_code_for(exc), str(exc)) from None


def _incremental_one(services: HandlerServices, resource: dict, validate_only: bool) -> None:
    name, configs = resource["resource_name"], resource["configs"]
    if resource["resource_type"] == BROKER:
        incremental_alter_broker(services, name, configs, validate_only)
        return
    if resource["resource_type"] == GROUP:
        group_configs.incremental_alter_group(services, name, configs, validate_only)
        return
    unknown_ops = sorted({c["config_operation"] for c in configs} - set(AlterConfigOpType))
    if unknown_ops:
        raise ApiError(ErrorCode.INVALID_REQUEST, f"Unknown operation type {unknown_ops[0]}")
    if not name:
        raise ApiError(ErrorCode.INVALID_REQUEST, "Default topic resources are not allowed.")
    current = services.admin.topic_config(name)
    _alter_topic(services, name, _edited(current, configs), validate_only)


def incremental_alter_configs(context: RequestContext, body: dict) -> dict:
    """IncrementalAlterConfigs: SET, DELETE, APPEND and SUBTRACT on the current overrides."""
    return _alter_each(context, body, _incremental_one,
                       lambda c: c["config_operation"] != AlterConfigOpType.DELETE
                       and c["value"] is None)


def _resource_type_name(code: int) -> str:
    """Kafka's name of a resource type code (the code itself when no type has it)."""
    return ConfigResourceType(code).name if code in set(ConfigResourceType) else str(code)
