"""Who is at the other end of a connection (Kafka's Authenticator).

A channel's authenticator runs in its processor once the transport is ready, and before any of
the connection's requests reaches the request queue (Kafka's KafkaChannel.prepare). It sees the
channel's frames and answers them itself (``channel.receive``, ``channel.queue_send``), sets
``complete`` and ``principal`` once the client proved who it is, and raises
:class:`AuthenticationFailed` to close the connection (after the answer it queued, when the
channel is marked ``closing``). Until ``complete``, no request is dispatched; the principal then
travels with every request (``Request.principal``) for the authorizer, in Kafka's form:
``User:ANONYMOUS``, ``User:alice``, ``User:CN=client,O=Example``.

=========================  ======================  =========================================
authenticator              listeners               principal
=========================  ======================  =========================================
:class:`NoAuthentication`  ``PLAINTEXT``           ``User:ANONYMOUS``, at once
:class:`SslAuthenticator`  ``SSL``                 the client certificate's subject through
                                                   ``ssl.principal.mapping.rules``;
                                                   ``User:ANONYMOUS`` without one
SASL (:mod:`.sasl`)        ``SASL_PLAINTEXT``,     ``User:<the SASL authorization id>``
                           ``SASL_SSL``
=========================  ======================  =========================================

A SASL session may have a lifetime (KIP-368): a request arriving after it, without a
re-authentication first, closes the connection (:meth:`Authenticator.session_expired`), and a
SaslHandshake on an authenticated connection starts a re-authentication
(:meth:`Authenticator.begin_reauthentication`), as Kafka's processors do.
"""

from typing import Protocol

from broker_lite.security.principal import ANONYMOUS, NoMatchingRule, PrincipalMapper


class AuthenticationFailed(Exception):
    """The client failed to authenticate: the connection is closed."""


class Authenticator(Protocol):
    complete: bool
    principal: str

    def authenticate(self, channel) -> None:
        """Take the authentication exchange one step further with what ``channel`` received."""

    def session_expired(self, now: float) -> bool:
        """Whether the authenticated session is over (``now``: ``time.monotonic()``)."""

    def begin_reauthentication(self, channel, payload, now: float) -> bool:
        """Start again with this SaslHandshake (``payload``) if a re-authentication may start
        now; False: the request goes to the handlers like any other."""


class NoAuthentication:
    """A listener without authentication (``PLAINTEXT``): complete at once, anonymous."""

    __slots__ = ()

    complete = True
    principal = ANONYMOUS

    def authenticate(self, channel) -> None:
        """Nothing to exchange."""

    def session_expired(self, now: float) -> bool:
        return False

    def begin_reauthentication(self, channel, payload, now: float) -> bool:
        return False


class SslAuthenticator(NoAuthentication):
    """An ``SSL`` listener: the principal of the client certificate, once the TLS handshake is
    done (Kafka's DefaultKafkaPrincipalBuilder with an SslAuthenticationContext)."""

    __slots__ = ("_mapper", "complete", "principal")

    def __init__(self, mapper: PrincipalMapper):
        self._mapper = mapper
        self.complete = False
        self.principal = ANONYMOUS

    def authenticate(self, channel) -> None:
        try:
            self.principal = self._mapper.principal(channel.transport.peer_certificate)
        except NoMatchingRule as exc:
            raise AuthenticationFailed(str(exc)) from None
        self.complete = True
