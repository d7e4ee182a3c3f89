"""Connecting to ZooKeeper with kazoo, from Kafka's ``zookeeper.*`` settings.

``zookeeper.connect`` is ``host:port[,host:port...][/chroot]``: the chroot applies to every
host and the whole string. As Kafka's broker does, :func:`connect` creates a missing chroot
through a short session on the ensemble root first, then opens the chrooted session.

>>> parse_connect_string("zk1:2181,[::1]:2182/kafka/prod")
ConnectString(hosts=(('zk1', 2181), ('::1', 2182)), chroot='/kafka/prod')
>>> str(parse_connect_string("127.0.0.1/kpy"))
'127.0.0.1:2181/kpy'
"""

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from kazoo.client import KazooClient
from kazoo.handlers.threading import KazooTimeoutError

from broker_lite.config.broker import BrokerConfig

from .errors import ZooKeeperConfigError, ZooKeeperConnectionError
from .server import EmbeddedZooKeeper

DEFAULT_PORT = 2181

# Reconnect promptly after a server restart; kazoo's own default backs off up to an hour.
_CONNECTION_RETRY = {"max_tries": -1, "delay": 0.1, "backoff": 2, "max_delay": 2.0}

_HOST_PORT = re.compile(r"^(?:\[(?P<ipv6>[0-9a-fA-F:.%]+)\]|(?P<host>[^:\[\]/]+))"
                        r"(?::(?P<port>\d+))?$")


@dataclass(frozen=True)
class ConnectString:
    hosts: tuple[tuple[str, int], ...]
    chroot: str | None

    @property
    def hosts_string(self) -> str:
        return ",".join(f"[{h}]:{p}" if ":" in h else f"{h}:{p}" for h, p in self.hosts)

    def __str__(self) -> str:
        return self.hosts_string + (self.chroot or "")


def parse_connect_string(text: str) -> ConnectString:
    """Parse ``zookeeper.connect``; a missing port is ZooKeeper's 2181, a ``/`` chroot is none."""
    hosts_part, slash, chroot = text.strip().partition("/")
    hosts = []
    for item in hosts_part.split(","):
        match = _HOST_PORT.match(item.strip())
        port = int(match.group("port") or DEFAULT_PORT) if match else 0
        if match is None or not 0 < port < 65536:
            raise ZooKeeperConfigError(
                f"invalid zookeeper.connect {text!r}: {item.strip()!r} is not host[:port]")
        hosts.append((match.group("ipv6") or match.group("host"), port))
    if not slash or not chroot:
        return ConnectString(tuple(hosts), None)
    chroot = "/" + chroot
    if chroot.endswith("/") or "//" in chroot or any(s in (".", "..") for s in chroot.split("/")):
        raise ZooKeeperConfigError(
            f"invalid zookeeper.connect {text!r}: chroot {chroot!r} is not a valid znode path")
    return ConnectString(tuple(hosts), chroot)


def _start(client: KazooClient, connect_string: str, timeout_s: float) -> KazooClient:
    try:
        client.start(timeout=timeout_s)
    except KazooTimeoutError:
        client.close()
        raise ZooKeeperConnectionError(
            f"could not connect to ZooKeeper at {connect_string} within {timeout_s:g} s "
            f"(zookeeper.connection.timeout.ms); is it running?") from None
    return client


def connect(connect_string: str, *, session_timeout_ms: int = 18000,
            connection_timeout_ms: int | None = None) -> KazooClient:
    """A started kazoo client on ``connect_string``, chrooted if it names a chroot, which is
    created when absent. The connection timeout defaults to the session timeout (as in Kafka)."""
    parsed = parse_connect_string(connect_string)
    timeout_s = (connection_timeout_ms or session_timeout_ms) / 1000

    def client(hosts: str) -> KazooClient:
        return KazooClient(hosts, timeout=session_timeout_ms / 1000,
                           connection_retry=dict(_CONNECTION_RETRY))

    if parsed.chroot:
        root = _start(client(parsed.hosts_string), connect_string, timeout_s)
        try:
            root.ensure_path(parsed.chroot)
        finally:
            root.stop()
            root.close()
    return _start(client(str(parsed)), connect_string, timeout_s)


def connect_from_config(config: BrokerConfig, connect_string: str | None = None) -> KazooClient:
    """:func:`connect` with the timeouts of ``config`` (and its ``zookeeper.connect`` unless
    given)."""
    target = connect_string or config["zookeeper.connect"]
    if target is None:
        raise ZooKeeperConfigError("zookeeper.connect is unset; use open_zookeeper() to start "
                                   "an embedded server")
    return connect(target, session_timeout_ms=config["zookeeper.session.timeout.ms"],
                   connection_timeout_ms=config["zookeeper.connection.timeout.ms"])


class ZooKeeperConnection:
    """The ZooKeeper of one broker: a kazoo client, and the embedded server it started, if any.

    Without ``zookeeper.connect`` the broker runs its own server in ``<log.dirs[0]>/zookeeper``
    on ``zookeeper.port`` (0: a free port); otherwise it uses the given ensemble.
    Closing stops the client, then the embedded server.
    """

    def __init__(self, config: BrokerConfig):
        self.config = config
        self.server: EmbeddedZooKeeper | None = None
        self.client: KazooClient | None = None

    @property
    def connect_string(self) -> str:
        if self.server is not None:
            return self.server.connect_string
        return self.config["zookeeper.connect"]

    def open(self) -> Self:
        if self.client is not None:
            raise ZooKeeperConfigError(f"already connected to {self.connect_string}")
        if self.config["zookeeper.connect"] is None:
            data_dir = Path(self.config.log_dirs[0]) / "zookeeper"
            self.server = EmbeddedZooKeeper(data_dir, self.config["zookeeper.port"]).start()
        try:
            self.client = connect_from_config(self.config, self.connect_string)
        except BaseException:
            self.close()
            raise
        return self

    def close(self) -> None:
        if self.client is not None:
            self.client.stop()
            self.client.close()
            self.client = None
        if self.server is not None:
            self.server.stop()

    def __enter__(self) -> Self:
        return self if self.client is not None else self.open()

    def __exit__(self, *exc_info) -> None:
        self.close()


def open_zookeeper(config: BrokerConfig) -> ZooKeeperConnection:
    """Open the broker's ZooKeeper (embedded or external, see :class:`ZooKeeperConnection`)."""
    return ZooKeeperConnection(config).open()
