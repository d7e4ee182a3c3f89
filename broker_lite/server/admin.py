"""Topic administration for the request handlers, through ZooKeeper (the handlers'
:class:`~.services.TopicAdmin`): the checks and znode writes of :mod:`broker_lite.zk.admin`, with
this broker's defaults for new topics, and changed overrides and dynamic broker configs applied
by this broker at once (other brokers apply them when the ``/config/changes`` notification
reaches them).
"""

from collections.abc import Callable, Mapping, Sequence

from kazoo.client import KazooClient
from kazoo.exceptions import KazooException

from broker_lite.config.broker import BrokerConfig
from broker_lite.zk import admin, group_configs, users
from broker_lite.zk.admin import TopicPlan, TopicSpec
from broker_lite.zk.errors import ZooKeeperConnectionError, ZooKeeperUnreachableError


class ZkTopicAdmin:
    """Parameters
    ----------
    client : KazooClient
    config : BrokerConfig
        ``num.partitions`` and ``default.replication.factor`` for topics created without them.
    on_config_changed : callable
        ``on_config_changed(topic, overrides)`` after the overrides were written.
    on_broker_config_changed : callable
        ``on_broker_config_changed()`` after dynamic broker configs were written.
    on_user_config_changed : callable
        ``on_user_config_changed(user)`` after a user's config (its SCRAM credentials) was
        written.
    on_group_config_changed : callable
        ``on_group_config_changed(group_id)`` after a group's configs were written.
    """

    def __init__(self, client: KazooClient, config: BrokerConfig,
                 on_config_changed: Callable[[str, Mapping[str, str]], object] = lambda t, o: None,
                 on_broker_config_changed: Callable[[], object] = lambda: None,
                 on_user_config_changed: Callable[[str], object] = lambda user: None,
                 on_group_config_changed: Callable[[str], object] = lambda group: None):
        self.client = client
        self.config = config
        self.on_config_changed = on_config_changed
        self.on_broker_config_changed = on_broker_config_changed
        self.on_user_config_changed = on_user_config_changed
        self.on_group_config_changed = on_group_config_changed

    def _writable(self) -> None:
        """Raise unless ZooKeeper can be written now: a broker cut off from it is no
        controller, and its client asks another broker (NOT_CONTROLLER) instead of waiting
        for a connection that may not come back."""
        if not self.client.connected:
            raise ZooKeeperUnreachableError("this broker is cut off from ZooKeeper")

    def create_topic(self, spec: TopicSpec, *, validate_only: bool = False) -> TopicPlan:
        self._writable()
        config = self.config
        plan = admin.plan_topic(self.client, spec, default_partitions=config["num.partitions"],
                                default_replication_factor=config["default.replication.factor"])
        if not validate_only:
            admin.create_topic(self.client, spec.name, plan.partitions, plan.replication_factor,
                               plan.overrides, replica_assignment=plan.assignment)
        return plan

    def delete_topic(self, name: str) -> None:
        self._writable()
        admin.delete_topic(self.client, name)

    def is_marked_for_deletion(self, name: str) -> bool:
        return admin.is_marked_for_deletion(self.client, name)

    def create_partitions(self, name: str, count: int,
                          assignment: Sequence[Sequence[int]] | None = None, *,
                          validate_only: bool = False) -> list[int]:
        self._writable()
        manual = admin.check_new_partitions(self.client, name, count, assignment)
        if validate_only:
            existing = admin.get_topic_assignment(self.client, name).partitions
            return list(range(len(existing), count))
        return sorted(admin.add_partitions(self.client, name, count, replica_assignment=manual))

    def topic_config(self, name: str) -> dict[str, str]:
        return admin.get_topic_config(self.client, name)

    def alter_topic_config(self, name: str, overrides: dict[str, str]) -> None:
        admin.set_topic_config(self.client, name, overrides)
        self.on_config_changed(name, overrides)

    def broker_config(self, entity: str) -> dict[str, str]:
        return admin.get_broker_config(self.client, entity)

    def alter_broker_config(self, entity: str, configs: dict[str, str]) -> None:
        admin.set_broker_config(self.client, entity, configs)
        self.on_broker_config_changed()

    def users_with_config(self) -> list[str]:
        return _zk(users.users_with_config, self.client)

    def user_config(self, user: str) -> dict[str, str]:
        return _zk(users.user_config, self.client, user)

    def alter_user_config(self, user: str, config: dict[str, str]) -> None:
        _zk(users.set_user_config, self.client, user, config)
        self.on_user_config_changed(user)


    def group_config(self, group_id: str) -> dict[str, str]:
        return _zk(group_configs.get_group_config, self.client, group_id)

    def alter_group_config(self, group_id: str, configs: dict[str, str]) -> None:
        _zk(group_configs.set_group_config, self.client, group_id, configs)
        self.on_group_config_changed(group_id)


def _zk(function, *args):
    """``function(*args)``, a lost ZooKeeper connection as :class:`ZooKeeperConnectionError`."""
    try:
        return function(*args)
    except KazooException as exc:
        raise ZooKeeperConnectionError(f"ZooKeeper: {type(exc).__name__} {exc}") from None
