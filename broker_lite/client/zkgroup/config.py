"""Settings of a ZooKeeper-based group consumer, under the names of Kafka 0.8's Scala consumer.

======================================  ===========  ===============================================
setting                                 default      meaning
======================================  ===========  ===============================================
``zookeeper.connect``                   (required)   ``host:port[,...][/chroot]`` of the ensemble
``group.id``                            (required)   the group: ``/consumers/[group.id]``
``consumer.id``                         generated    this member's name within the group (below)
``offsets.storage``                     zookeeper    ``zookeeper`` or ``kafka`` (group coordinator)
``dual.commit.enabled``                 false        with ``kafka`` storage, commit to ZooKeeper too
``auto.offset.reset``                   largest      ``smallest`` or ``largest``: where to start
                                                     without a committed offset
``rebalance.max.retries``               4            attempts of one rebalance
``rebalance.backoff.ms``                2000         wait between rebalance attempts
``zookeeper.session.timeout.ms``        6000         ZooKeeper session timeout
``zookeeper.connection.timeout.ms``     6000         longest wait to connect to ZooKeeper
``bootstrap.servers``                   discovered   brokers to fetch from; by default the live
                                                     brokers registered under ``/brokers/ids``
======================================  ===========  ===============================================

Values parse as Kafka 0.8's consumer reads them (with :mod:`broker_lite.config.parsers`), trimmed:
``offsets.storage`` in any case (Kafka lower-cases it), ``auto.offset.reset`` exactly
(``SMALLEST`` is refused, as Kafka refuses it), booleans in any case.

As in Kafka, the member registers as ``[group.id]_[consumer.id]``, and ``consumer.id`` defaults
to ``[hostname]-[ms since the epoch]-[8 hex digits of a random UUID]``. Every other setting is a
:class:`broker_lite.client.ClientConfig` setting of the client that fetches (``fetch.max.wait.ms``,
``request.timeout.ms``, ...), validated by it: an unknown name is a :class:`ConfigError`.

>>> config = ZooKeeperConsumerConfig({"zookeeper.connect": "zk:2181/kafka", "group.id": "g",
...                                   "consumer.id": "c1", "offsets.storage": "kafka"})
>>> config.consumer_id, config.offsets_storage, config.dual_commit_enabled, config.auto_offset_reset
('g_c1', 'kafka', False, 'largest')
>>> ZooKeeperConsumerConfig({"zookeeper.connect": "zk", "group.id": "g",
...                          "auto.offset.reset": "earliest"})  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
broker_lite.client.errors.ConfigError: auto.offset.reset: expected one of smallest, largest,
got 'earliest'
"""

from __future__ import annotations

import socket
import uuid
from collections.abc import Callable, Mapping
from typing import Any

from broker_lite.common.vocabulary import now_ms
from broker_lite.config.parsers import Setting, as_text, boolean, choice, int32
from broker_lite.zk.client import parse_connect_string
from broker_lite.zk.errors import ZooKeeperConfigError

from ..config import ClientConfig, parse_servers
from ..errors import ConfigError

ZOOKEEPER_STORAGE = "zookeeper"
KAFKA_STORAGE = "kafka"
SMALLEST = "smallest"
LARGEST = "largest"


def _znode_name(what: str) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if not text:
            raise ValueError(f"{what} cannot be empty")
        if "/" in text:  # it becomes a znode name
            raise ValueError(f"{what} cannot contain '/', got {text!r}")
        return text
    return parse


def _connect(text: str) -> str:
    try:
        parse_connect_string(text)
    except ZooKeeperConfigError as exc:
        raise ValueError(str(exc)) from None
    return text


def _servers(text: str) -> str:
    parse_servers(text)  # raises ValueError with the reason
    return text


# Case as in Kafka 0.8's ConsumerConfig: offsets.storage is lower-cased before it is checked,
# auto.offset.reset is matched exactly.
#: setting -> Setting; a default of None: required, or computed
SETTINGS: dict[str, Setting] = {s.name: s for s in (
    Setting("zookeeper.connect", _connect, None),
    Setting("group.id", _znode_name("a group id"), None),
    Setting("consumer.id", _znode_name("a consumer id"), None),
    Setting("offsets.storage", choice(ZOOKEEPER_STORAGE, KAFKA_STORAGE, case_sensitive=False),
            ZOOKEEPER_STORAGE),
    Setting("dual.commit.enabled", boolean, False),
    Setting("auto.offset.reset", choice(SMALLEST, LARGEST), LARGEST),
    Setting("rebalance.max.retries", int32(1), 4),
    Setting("rebalance.backoff.ms", int32(0), 2000),
    Setting("zookeeper.session.timeout.ms", int32(1), 6000),
    Setting("zookeeper.connection.timeout.ms", int32(1), 6000),
    Setting("bootstrap.servers", _servers, None),
)}
REQUIRED = ("zookeeper.connect", "group.id")


def generated_consumer_id() -> str:
    """Kafka's default ``consumer.id``: ``[hostname]-[ms since the epoch]-[uuid prefix]``."""
    return f"{socket.gethostname()}-{now_ms()}-{uuid.uuid4().hex[:8]}"


class ZooKeeperConsumerConfig:
    """Validated settings: attributes named after the settings (``zookeeper_connect``,
    ``rebalance_backoff_ms``, ...), :attr:`consumer_id` as registered (``[group]_[consumer.id]``),
    and :attr:`client_settings`, the rest, for the fetching :class:`~broker_lite.client.KafkaClient`
    (checked here by :class:`ClientConfig`, so a misspelt name fails at once)."""

    # The settings of SETTINGS as parsed, set by __init__ (a name's dots made underscores;
    # tests/broker_lite/client/test_zk_group_config.py checks the list).
    zookeeper_connect: str
    group_id: str
    offsets_storage: str
    dual_commit_enabled: bool
    auto_offset_reset: str
    rebalance_max_retries: int
    rebalance_backoff_ms: int
    zookeeper_session_timeout_ms: int
    zookeeper_connection_timeout_ms: int
    bootstrap_servers: str | None

    def __init__(self, settings: Mapping[str, Any]):
        values = {name: setting.default for name, setting in SETTINGS.items()}
        self.client_settings: dict[str, str] = {}
        for key, raw in settings.items():
            if key in SETTINGS:
                try:
                    values[key] = SETTINGS[key].value_of(raw)
                except ValueError as exc:
                    raise ConfigError(key, str(exc)) from None
            else:
                self.client_settings[key] = as_text(raw)
        for key in REQUIRED:
            if values[key] is None:
                raise ConfigError(key, "required")
        for name, value in values.items():
            setattr(self, name.replace(".", "_"), value)
        consumer_id = values["consumer.id"] or generated_consumer_id()
        self.consumer_id: str = f"{self.group_id}_{consumer_id}"
        # validate the client's settings now, against a placeholder when brokers are discovered
        ClientConfig({**self.client_settings,
                      "bootstrap.servers": self.bootstrap_servers or "127.0.0.1:9092"})

    def client_config(self, bootstrap_servers: str) -> ClientConfig:
        """The fetching client's settings, with the group as its default group."""
        return ClientConfig({**self.client_settings, "bootstrap.servers": bootstrap_servers,
                             "group.id": self.group_id})
