"""SASL PLAIN (RFC 4616): one message from the client, ``[authzid] NUL authcid NUL passwd``.

As Kafka's ``PlainSaslServer``, the authorization id must be empty or equal to the user name,
and the server answers with an empty message on success. Passwords are compared in constant
time (:func:`hmac.compare_digest`). Only use PLAIN over TLS: the password travels as it is.

>>> message = plain_client_message("alice", "alice-secret")
>>> message
b'\\x00alice\\x00alice-secret'
>>> server = PlainServer({"alice": "alice-secret"})
>>> server.respond(message), server.complete, server.username
(b'', True, 'alice')
"""

from __future__ import annotations

import hmac
from collections.abc import Callable, Mapping

from .errors import SaslAuthenticationError

MECHANISM = "PLAIN"


def plain_client_message(username: str, password: str, authzid: str = "") -> bytes:
    """The client's only message."""
    if "\0" in username or "\0" in password or "\0" in authzid:
        raise ValueError("PLAIN user names and passwords cannot contain NUL")
    return f"{authzid}\0{username}\0{password}".encode()


class PlainServer:
    """The server side of one PLAIN exchange: ``users`` maps user names to passwords (Kafka's
    ``user_<name>="<password>"`` JAAS options), or is a function of the user name giving the
    password (None for an unknown user)."""

    mechanism = MECHANISM

    def __init__(self, users: Mapping[str, str] | Callable[[str], str | None]):
        self._password_of = users.get if isinstance(users, Mapping) else users
        self.complete = False
        self.username: str | None = None

    def respond(self, message: bytes) -> bytes:
        if self.complete:
            raise SaslAuthenticationError("PLAIN: the exchange is already complete",
                                          illegal_state=True)
        parts = bytes(message).split(b"\0")
        if len(parts) != 3:
            raise SaslAuthenticationError(
                "PLAIN: invalid message: expected [authzid] NUL username NUL password")
        try:
            authzid, username, password = (p.decode() for p in parts)
        except UnicodeDecodeError:
            raise SaslAuthenticationError("PLAIN: invalid message: not UTF-8") from None
        if not username:
            raise SaslAuthenticationError("PLAIN: authentication failed: empty user name")
        if not password:
            raise SaslAuthenticationError("PLAIN: authentication failed: empty password")
        if authzid and authzid != username:
            raise SaslAuthenticationError(
                "PLAIN: authentication failed: the authorization id differs from the user name")
        expected = self._password_of(username)
        if expected is None or not hmac.compare_digest(expected.encode(), password.encode()):
            raise SaslAuthenticationError(
                f"PLAIN: authentication failed: invalid user name or password for {username!r}")
        self.username = username
        self.complete = True
        return b""
