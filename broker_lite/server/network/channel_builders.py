"""How each listener's connections are built (Kafka's ChannelBuilders): a transport and an
authenticator per connection, by the listener's security protocol.

================  =======================================  ===================================
protocol          transport (:mod:`.transport`)            authenticator
================  =======================================  ===================================
PLAINTEXT         :class:`.PlaintextTransport`             :class:`.NoAuthentication`
SSL               :class:`.TlsTransport`                   :class:`.SslAuthenticator`
SASL_PLAINTEXT    :class:`.PlaintextTransport`             :class:`.SaslAuthenticator`
SASL_SSL          :class:`.TlsTransport`                   :class:`.SaslAuthenticator`
================  =======================================  ===================================

A builder is made once per listener, when the broker starts, from settings already checked
(the TLS context, the principal mapping rules, the SASL mechanisms and what they need); making
a connection's pieces costs no I/O. :meth:`ChannelBuilder.close` releases what the builder runs
in the background (an OAUTHBEARER validator's key set refresh) when the broker stops.
"""

import ssl
from collections.abc import Callable

from broker_lite.security.principal import PrincipalMapper
from broker_lite.security.sasl_server import ServerAuthenticator

from .authenticator import NoAuthentication, SslAuthenticator
from .sasl import ApiVersionsAnswer, SaslAuthenticator
from .transport import PlaintextTransport, TlsTransport

_NO_AUTHENTICATION = NoAuthentication()


class ChannelBuilder:
    """``PLAINTEXT``: the socket as it is, nobody authenticated."""

    security_protocol = "PLAINTEXT"

    def transport(self, sock):
        return PlaintextTransport(sock)

    def authenticator(self):
        return _NO_AUTHENTICATION

    def close(self) -> None:
        """Nothing runs in the background."""


class SslChannelBuilder(ChannelBuilder):
    """``SSL``: TLS with ``context``; the principal from the client certificate."""

    security_protocol = "SSL"

    def __init__(self, context: ssl.SSLContext, mapper: PrincipalMapper):
        self.context = context
        self.mapper = mapper

    def transport(self, sock):
        return TlsTransport(sock, self.context)

    def authenticator(self):
        return SslAuthenticator(self.mapper)


class SaslChannelBuilder(ChannelBuilder):
    """``SASL_PLAINTEXT`` (``context`` None) or ``SASL_SSL``: a :class:`.SaslAuthenticator`
    per connection, its mechanisms' state from ``new_server()``."""

    def __init__(self, context: ssl.SSLContext | None, new_server: Callable[[],
                 ServerAuthenticator], api_versions: ApiVersionsAnswer, *, max_receive_size: int,
                 max_reauth_ms: dict[str, int], close: Callable[[], None] | None = None):
        self.context = context
        self._close = close
        self.security_protocol = "SASL_SSL" if context is not None else "SASL_PLAINTEXT"
        self.new_server = new_server
        self.api_versions = api_versions
        self.max_receive_size = max_receive_size
        self.max_reauth_ms = max_reauth_ms

    def transport(self, sock):
        if self.context is None:
            return PlaintextTransport(sock)
        return TlsTransport(sock, self.context)

    def authenticator(self):
        return SaslAuthenticator(self.new_server(), self.api_versions,
                                 max_receive_size=self.max_receive_size,
                                 max_reauth_ms=self.max_reauth_ms)

    def close(self) -> None:
        if self._close is not None:
            self._close()


PLAINTEXT = ChannelBuilder()
