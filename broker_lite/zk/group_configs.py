"""Group configs in ZooKeeper: ``/config/groups/[group]`` (``{"version":1,"config":{...}}``, as
topic configs are stored), each change announced through ``/config/changes`` as
``groups/[group]`` so every broker reads it again. Kafka keeps group configs (KIP-848, KIP-932)
in its KRaft metadata; a ZooKeeper-mode cluster here keeps them beside the other entities'.
"""

from collections.abc import Mapping

from kazoo.client import KazooClient

from .admin import _entity_config, _notify_config_change, _write_entity_config

GROUPS = "groups"


def get_group_config(client: KazooClient, group_id: str) -> dict[str, str]:
    """The group's stored configs (empty without a znode)."""
    return _entity_config(client, GROUPS, group_id)


def set_group_config(client: KazooClient, group_id: str, config: Mapping[str, str]) -> None:
    """Replace the group's configs and notify the brokers."""
    _write_entity_config(client, GROUPS, group_id, {str(k): str(v) for k, v in config.items()})
    _notify_config_change(client, f"{GROUPS}/{group_id}")
