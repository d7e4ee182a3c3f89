"""Configs that change while the broker runs: topic overrides and dynamic broker configs, followed
through ZooKeeper's ``/config/changes`` as Kafka's ``ZkConfigManager`` follows them.

Whoever changes a config (AlterConfigs on any broker, ``broker-lite configs``, Kafka's tools)
rewrites ``/config/topics/[topic]`` or ``/config/brokers/[id|<default>]`` and then creates a
sequential ``/config/changes/config_change_[seq]`` znode naming the entity
(``{"version":2,"entity_path":"brokers/1"}``). :class:`ConfigChangeListener` watches the
notifications and hands each new one, in order, to the handler of its entity type; one it cannot
read is skipped. The notifications already there when it starts were applied by the broker's
start itself, which reads every config.

:class:`DynamicBrokerConfigs` puts a broker's dynamic configs in force: the cluster-wide defaults
and the broker's own, read from ZooKeeper and filtered by the rules of
:mod:`broker_lite.config.dynamic`, go into the broker's config (which every part of the broker
reads) and the defaults of its running logs, without a restart.
"""

import logging
from collections.abc import Callable

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from broker_lite.config.broker import BrokerConfig
from broker_lite.config.dynamic import usable_configs
from broker_lite.config.parsers import ConfigError
from broker_lite.log.manager import LogManager
from broker_lite.zk.errors import MalformedZnodeError
from broker_lite.zk.layout import (
    CONFIG_CHANGES_PATH,
    DEFAULT_ENTITY,
    ConfigEntityChangeNotificationSequenceZNode,
)

logger = logging.getLogger(__name__)

_PREFIX = ConfigEntityChangeNotificationSequenceZNode.PATH_PREFIX.rsplit("/", 1)[1]


def _sequence(child: str) -> int | None:
    if not child.startswith(_PREFIX) or not child[len(_PREFIX):].isdigit():
        return None
    return int(child[len(_PREFIX):])


class ConfigChangeListener:
    """Calls ``handlers[entity_type](entity_name)`` for each new config change notification
    (``topics/events`` -> ``handlers["topics"]("events")``), in sequence order."""

    def __init__(self, client: KazooClient, handlers: dict[str, Callable[[str], object]]):
        self.client = client
        self.handlers = handlers
        self._last = -1
        self._stopped = False

    def mark_existing(self) -> None:
        """Take the notifications there now as applied (call before reading the configs)."""
        try:
            children = self.client.get_children(CONFIG_CHANGES_PATH)
        except NoNodeError:
            return
        self._last = max((s for s in map(_sequence, children) if s is not None), default=-1)

    def start(self) -> None:
        self.client.ensure_path(CONFIG_CHANGES_PATH)
        self.client.ChildrenWatch(CONFIG_CHANGES_PATH, self._on_children)

    def stop(self) -> None:
        self._stopped = True

    def _on_children(self, children: list[str]) -> bool:
        if self._stopped:
            return False  # ends the watch
        new = sorted((s, c) for c in children
                     if (s := _sequence(c)) is not None and s > self._last)
        for sequence, child in new:
            self._last = sequence
            self._process(f"{CONFIG_CHANGES_PATH}/{child}")
        return True

    def _process(self, path: str) -> None:
        try:
            entity_path = ConfigEntityChangeNotificationSequenceZNode.decode(
                self.client.get(path)[0], path)
        except (NoNodeError, MalformedZnodeError) as exc:
            logger.warning("config change notification %s skipped: %s", path, exc)
            return
        entity_type, _, name = entity_path.partition("/")
        handler = self.handlers.get(entity_type)
        if handler is None or not name:
            return  # clients, users: nothing here follows them
        try:
            handler(name)
        except Exception:  # a deleted topic, a bad override: keep following the others
            logger.exception("could not apply the config change of %s", entity_path)


class DynamicBrokerConfigs:
    """Keeps ``config`` (and ``logs``, once set) in step with the dynamic configs stored for
    this broker and for every broker; ``read(entity)`` reads them from ZooKeeper."""

    def __init__(self, config: BrokerConfig, read: Callable[[str], dict[str, str]],
                 broker_id: Callable[[], int], logs: LogManager | None = None):
        self.config = config
        self.read = read
        self.broker_id = broker_id
        self.logs = logs

    def reload(self, _entity: str | None = None) -> bool:
        """Read both layers again and put them in force; True when something changed."""
        broker_id = self.broker_id()
        default = usable_configs(self.read(DEFAULT_ENTITY), per_broker=False)
        mine = usable_configs(self.read(str(broker_id)), per_broker=True) \
            if broker_id >= 0 else {}
        config = self.config
        if (default, mine) == (config.dynamic_default, config.dynamic_broker):
            return False
        try:
            config.update_dynamic(default, mine)
        except ConfigError:
            logger.exception("dynamic broker configs could not be applied")
            return False
        if self.logs is not None:
            self.logs.reconfigure()
        logger.info("dynamic broker configs in force: cluster-wide %s, broker %d %s",
                    sorted(default), broker_id, sorted(mine))
        return True
