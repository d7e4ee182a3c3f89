"""The configs of GROUP resources (DescribeConfigs, IncrementalAlterConfigs, AlterConfigs on
resource type 32): a share group's settings (KIP-932's group configs,
:mod:`broker_lite.coordinator.share.group_configs`), stored per group by the topic admin
(``/config/groups/[group]``). Unknown names and values out of the broker's bounds are
INVALID_CONFIG; a change reaches every broker through ``/config/changes``.

Authorization, as Kafka's: DescribeConfigs or AlterConfigs on the group (else
GROUP_AUTHORIZATION_FAILED).
"""

from __future__ import annotations

from broker_lite.config.resolution import ConfigOperationError, apply_incremental_operations
from broker_lite.coordinator.share import group_configs
from broker_lite.coordinator.share.config import ShareConfig
from broker_lite.protocol import ErrorCode
from broker_lite.protocol.config_entry import ConfigEntry
from broker_lite.protocol.enums import ConfigSource, ConfigType

from ..errors import ApiError
from ..services import HandlerServices
from .broker_configs import operations_of


def _broker(services: HandlerServices) -> ShareConfig:
    return ShareConfig.from_broker_config(services.config)


def describe_group(services: HandlerServices, group_id: str) -> list[ConfigEntry]:
    stored = services.admin.group_config(group_id)
    entries = []
    for name, default in group_configs.defaults(_broker(services)).items():
        value = stored.get(name, default)
        entries.append(ConfigEntry(
            name, value, ConfigSource.GROUP_CONFIG if name in stored
            else ConfigSource.DEFAULT_CONFIG,
            config_type=ConfigType.INT if name.endswith((".ms", ".limit"))
            else ConfigType.STRING))
    return entries


def _store(services: HandlerServices, group_id: str, configs: dict[str, str],
           validate_only: bool) -> None:
    if not group_id:
        raise ApiError(ErrorCode.INVALID_REQUEST, "Group id must not be empty.")
    try:
        group_configs.validate(configs, _broker(services))
    except group_configs.InvalidGroupConfigError as exc:
        raise ApiError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    if not validate_only:
        services.admin.alter_group_config(group_id, configs)


def alter_group(services: HandlerServices, group_id: str, configs: list[dict],
                validate_only: bool) -> None:
    """AlterConfigs: the group's whole config set."""
    _store(services, group_id, {c["name"]: c["value"] for c in configs}, validate_only)


def incremental_alter_group(services: HandlerServices, group_id: str, configs: list[dict],
                            validate_only: bool) -> None:
    """IncrementalAlterConfigs: SET and DELETE (APPEND and SUBTRACT have no list to act on)."""
    current = services.admin.group_config(group_id)
    try:
        edited = apply_incremental_operations(current, operations_of(configs))
    except ConfigOperationError as exc:
        raise ApiError(ErrorCode.INVALID_CONFIG, str(exc)) from None
    _store(services, group_id, edited, validate_only)
