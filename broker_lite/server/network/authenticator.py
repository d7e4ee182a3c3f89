"""Who is at the other end of a connection (Kafka's Authenticator): nobody is checked today;
SASL is to come here.

A channel's authenticator runs in its processor once the transport is ready, and before any of
the connection's requests reaches the request queue (Kafka's KafkaChannel.prepare). It sees the
channel's frames and answers them itself: a SASL authenticator takes SaslHandshake and
SaslAuthenticate (and ApiVersions, which clients send first) from ``channel.receive``, answers
through ``channel.queue_send``, and sets ``complete`` and ``principal`` once the client proved
who it is; a failure raises :class:`AuthenticationFailed`, and the connection is closed (after
the error response is sent, when there is one). Until ``complete``, no request is dispatched.
The principal then travels with every request (``Request.principal``) for the authorizer.
"""

from typing import Protocol

ANONYMOUS = "User:ANONYMOUS"  # Kafka's principal on a connection nobody authenticated


class AuthenticationFailed(Exception):
    """The client failed to authenticate: the connection is closed."""


class Authenticator(Protocol):
    complete: bool
    principal: str

    def authenticate(self, channel) -> None:
        """Take the authentication exchange one step further with what ``channel`` received."""


class NoAuthentication:
    """A listener without SASL (``PLAINTEXT``, ``SSL``): complete at once, anonymous."""

    __slots__ = ()

    complete = True
    principal = ANONYMOUS

    def authenticate(self, channel) -> None:
        """Nothing to exchange."""
