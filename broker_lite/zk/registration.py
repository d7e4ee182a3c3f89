"""Broker membership: ids from ``/brokers/seqid`` and ephemeral ``/brokers/ids/[id]`` znodes.

A broker is live while its session holds ``/brokers/ids/[id]``. A second session registering the
same id is refused (:class:`BrokerIdInUseError`), as Kafka's ``checkedEphemeralCreate`` does; the
same session registering again (after a retried request) is not an error.

Generated ids: every empty setData on ``/brokers/seqid`` bumps its version, and the new version
plus ``reserved.broker.max.id`` (1000 by default) is the id, so generated ids start at 1001 and
never collide with configured ids up to 1000.
"""

import socket

from kazoo.client import KazooClient
from kazoo.exceptions import NodeExistsError, NoNodeError

from broker_lite.common.vocabulary import now_ms
from broker_lite.config.broker import BrokerConfig

from .endpoints import EndPoint, parse_endpoints, parse_protocol_map
from .errors import BrokerIdInUseError, ZooKeeperConfigError
from .layout import (
    BROKER_IDS_PATH,
    BrokerIdZNode,
    BrokerRegistration,
    BrokerSequenceIdZNode,
)

RESERVED_BROKER_MAX_ID = 1000


def generate_broker_id(client: KazooClient,
                       reserved_broker_max_id: int = RESERVED_BROKER_MAX_ID) -> int:
    """A new broker id, unique across the cluster."""
    try:
        stat = client.set(BrokerSequenceIdZNode.PATH, b"")
    except NoNodeError:
        client.ensure_path(BrokerSequenceIdZNode.PATH)
        stat = client.set(BrokerSequenceIdZNode.PATH, b"")
    return stat.version + reserved_broker_max_id


def advertised_endpoints(config: BrokerConfig) -> tuple[EndPoint, ...]:
    """``advertised.listeners`` (else ``listeners``); an empty host becomes this machine's name."""
    protocol_map = parse_protocol_map(config.get("listener.security.protocol.map"))
    endpoints = parse_endpoints(config["advertised.listeners"] or config["listeners"], protocol_map)
    if any(e.host == "0.0.0.0" for e in endpoints):
        raise ZooKeeperConfigError("advertised.listeners cannot use the nonroutable meta-address "
                                   "0.0.0.0; use a routable IP address")
    return tuple(EndPoint(e.listener_name, e.host or socket.getfqdn(), e.port, e.security_protocol)
                 for e in endpoints)


def broker_registration(config: BrokerConfig, broker_id: int,
                        endpoints: tuple[EndPoint, ...] | None = None) -> BrokerRegistration:
    """What this broker writes under ``/brokers/ids``; ``endpoints`` overrides the config (for
    listeners on port 0, once bound)."""
    return BrokerRegistration(
        broker_id=broker_id,
        endpoints=endpoints if endpoints is not None else advertised_endpoints(config),
        timestamp_ms=now_ms(),
        rack=config.get("broker.rack"),
    )


def _session_id(client: KazooClient) -> int | None:
    client_id = client.client_id
    return client_id[0] if client_id else None


def _refuse(path: str, owner: int, client: KazooClient) -> BrokerIdInUseError:
    return BrokerIdInUseError(
        f"broker id {path.rsplit('/', 1)[-1]} is in use: {path} belongs to the live session "
        f"0x{owner:x}, not to this one (0x{_session_id(client) or 0:x}); another broker runs "
        f"with this broker.id")


def check_broker_id_free(client: KazooClient, broker_id: int) -> None:
    """Raise :class:`BrokerIdInUseError` if another session holds ``/brokers/ids/[id]``."""
    path = BrokerIdZNode.path(broker_id)
    stat = client.exists(path)
    if stat is not None and stat.ephemeralOwner != _session_id(client):
        raise _refuse(path, stat.ephemeralOwner, client)


def register_broker(client: KazooClient, registration: BrokerRegistration) -> None:
    """Create the ephemeral ``/brokers/ids/[id]`` of this session."""
    path = BrokerIdZNode.path(registration.broker_id)
    try:
        client.create(path, BrokerIdZNode.encode(registration), ephemeral=True, makepath=True)
    except NodeExistsError:
        stat = client.exists(path)
        if stat is None:  # its session ended meanwhile: try again
            register_broker(client, registration)
        elif stat.ephemeralOwner != _session_id(client):
            raise _refuse(path, stat.ephemeralOwner, client) from None


def unregister_broker(client: KazooClient, broker_id: int) -> None:
    """Delete ``/brokers/ids/[id]`` if this session holds it."""
    path = BrokerIdZNode.path(broker_id)
    stat = client.exists(path)
    if stat is not None and stat.ephemeralOwner == _session_id(client):
        try:
            client.delete(path, version=stat.version)
        except NoNodeError:
            pass


def live_broker_ids(client: KazooClient, watch=None) -> list[int]:
    """The registered broker ids, sorted (children that are not ids are ignored)."""
    return sorted(int(c) for c in client.get_children(BROKER_IDS_PATH, watch=watch) if c.isdigit())


def get_broker(client: KazooClient, broker_id: int) -> BrokerRegistration | None:
    path = BrokerIdZNode.path(broker_id)
    try:
        data, _stat = client.get(path)
    except NoNodeError:
        return None
    return BrokerIdZNode.decode(data, path)
