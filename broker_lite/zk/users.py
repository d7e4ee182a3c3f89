"""Users in Kafka's ZooKeeper layout: the config of each user entity, where the brokers find the
users' SCRAM credentials (Kafka's ``AdminZkClient.changeConfigs(ConfigType.User, ...)``)::

    /config/users/[sanitized user]  -> {"version":1,"config":{
                                          "SCRAM-SHA-256":"salt=<b64>,stored_key=<b64>,
                                                           server_key=<b64>,iterations=<n>",
                                          "SCRAM-SHA-512":"...",
                                          "producer_byte_rate":"1048576"}}
    /config/changes/config_change_[seq]  -> {"version":2,"entity_path":"users/<sanitized user>"}

A user's config holds one entry per SCRAM mechanism it has a credential for (Kafka's
``ScramCredentialUtils.credentialToString``; see :class:`~broker_lite.security.scram.
ScramCredential`), beside any quota of the user, which is kept as it is. Every change is written
whole and then announced by a change notification, which every broker follows
(:mod:`broker_lite.server.scram_credentials`).

User names are written sanitized, as Kafka's ``Sanitizer.sanitize``: URL-encoded as Java's
``URLEncoder`` encodes UTF-8 (letters, digits and ``.-_`` kept, every other byte as ``%XX``),
with ``*`` as ``%2A`` and a space as ``%20``; :func:`desanitize` reads them back.

>>> sanitize("alice"), sanitize("CN=a b,O=x*"), desanitize("CN%3Da%20b%2CO%3Dx%2A")
('alice', 'CN%3Da%20b%2CO%3Dx%2A', 'CN=a b,O=x*')
"""

from __future__ import annotations

from collections.abc import Mapping
from urllib.parse import unquote

from kazoo.client import KazooClient
from kazoo.exceptions import NoNodeError

from broker_lite.security.scram import MECHANISMS, ScramCredential

from .admin import _entity_config, _notify_config_change, _write_entity_config
from .errors import MalformedZnodeError
from .layout import ConfigEntityZNode, config_entity_type_path

USERS = "users"
_KEPT = frozenset(b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789.-_")


def sanitize(name: str) -> str:
    """A user (or client id) as a znode name, as Kafka's ``Sanitizer.sanitize``."""
    return "".join(chr(byte) if byte in _KEPT else f"%{byte:02X}"
                   for byte in name.encode("utf-8"))


def desanitize(text: str) -> str:
    """The name :func:`sanitize` wrote (Kafka's ``Sanitizer.desanitize``, Java's
    ``URLDecoder``: ``+`` is a space too)."""
    return unquote(text.replace("+", " "), encoding="utf-8", errors="strict")


def user_config(client: KazooClient, user: str) -> dict[str, str]:
    """The config of ``user`` (empty when it has none)."""
    return _entity_config(client, USERS, sanitize(user))


def set_user_config(client: KazooClient, user: str, config: Mapping[str, str]) -> None:
    """Write the whole config of ``user`` and notify the brokers."""
    _write_entity_config(client, USERS, sanitize(user), {str(k): str(v)
                                                         for k, v in config.items()})
    _notify_config_change(client, f"{USERS}/{sanitize(user)}")


def users_with_config(client: KazooClient) -> list[str]:
    """Every user that has a config znode, by name (desanitized), sorted."""
    try:
        children = client.get_children(config_entity_type_path(USERS))
    except NoNodeError:
        return []
    return sorted(desanitize(child) for child in children)


def scram_credentials(config: Mapping[str, str], path: str = "") -> dict[str, ScramCredential]:
    """The SCRAM credentials in a user's config, by mechanism; raises
    :class:`MalformedZnodeError` for a credential that does not parse."""
    found = {}
    for mechanism in MECHANISMS:
        text = config.get(mechanism)
        if text is None:
            continue
        try:
            found[mechanism] = ScramCredential.parse(text)
        except ValueError as exc:
            raise MalformedZnodeError(path or "/config/users", f"{mechanism}: {exc}") from None
    return found


def user_path(user: str) -> str:
    return ConfigEntityZNode.path(USERS, sanitize(user))
