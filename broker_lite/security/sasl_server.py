"""The server's side of Kafka's SASL authentication (KIP-43 SaslHandshake, KIP-152
SaslAuthenticate, KIP-368 re-authentication), without I/O.

After ApiVersions, the client sends SaslHandshake with a mechanism (answered with
UNSUPPORTED_SASL_MECHANISM and the enabled list if it is not enabled), then SaslAuthenticate
requests carrying the mechanism's messages until the exchange completes. A SaslAuthenticate
before the handshake is ILLEGAL_SASL_STATE; a token larger than ``sasl.server.max.receive.size``
(512 KiB by default) fails the exchange; a failed exchange is SASL_AUTHENTICATION_FAILED with a
message that names the mechanism and the reason, never a secret. A completed connection may
re-authenticate (handshake and exchange again) with the same mechanism, as the same principal.
The session lifetime returned with the last SaslAuthenticate response is the smaller of
``connections.max.reauth.ms`` and the OAUTHBEARER token's remaining life (0: no limit).

>>> from broker_lite.security.scram import ScramCredential
>>> auth = ServerAuthenticator(["PLAIN"], plain_users={"alice": "alice-secret"})
>>> auth.handshake("SCRAM-SHA-256")
(<ErrorCode.UNSUPPORTED_SASL_MECHANISM: 33>, ['PLAIN'])
>>> auth.handshake("PLAIN")
(<ErrorCode.NONE: 0>, ['PLAIN'])
>>> auth.authenticate(b"\\0alice\\0alice-secret"), auth.complete, auth.principal
(b'', True, 'User:alice')
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping

from broker_lite.protocol import ErrorCode

from . import oauthbearer, scram
from .errors import SaslAuthenticationError
from .plain import PlainServer

DEFAULT_MAX_RECEIVE_SIZE = 524288  # Kafka's sasl.server.max.receive.size


class ServerAuthenticator:
    """SASL state of one connection on a listener.

    ``plain_users`` maps user names to passwords; ``scram_credentials(mechanism, user)`` gives a
    :class:`~.scram.ScramCredential` or None; ``oauth_validate(token) -> Token`` checks
    OAUTHBEARER tokens (Kafka's unsecured validator by default).
    """

    def __init__(self, enabled_mechanisms: Iterable[str], *,
                 plain_users: Mapping[str, str] | None = None,
                 scram_credentials: Callable[[str, str], scram.ScramCredential | None]
                 | None = None,
                 oauth_validate: Callable[[str], oauthbearer.Token] | None = None,
                 max_receive_size: int = DEFAULT_MAX_RECEIVE_SIZE,
                 max_reauth_ms: int = 0):
        self.enabled = list(enabled_mechanisms)
        self._plain_users = plain_users or {}
        self._scram_credentials = scram_credentials or (lambda mechanism, user: None)
        self._oauth_validate = oauth_validate
        self.max_receive_size = max_receive_size
        self.max_reauth_ms = max_reauth_ms
        self.mechanism: str | None = None
        self.principal: str | None = None
        self.complete = False
        self._exchange = None

    def handshake(self, mechanism: str) -> tuple[int, list[str]]:
        """SaslHandshake: ``(error code, enabled mechanisms)``."""
        if mechanism not in self.enabled:
            return ErrorCode.UNSUPPORTED_SASL_MECHANISM, self.enabled
        if self.principal is not None and mechanism != self.mechanism:
            return ErrorCode.ILLEGAL_SASL_STATE, self.enabled  # re-authentication: same mechanism
        self.mechanism = mechanism
        self._exchange = self._new_exchange(mechanism)
        self.complete = False
        return ErrorCode.NONE, self.enabled

    def _new_exchange(self, mechanism: str):
        if mechanism == "PLAIN":
            return PlainServer(self._plain_users)
        if mechanism in scram.MECHANISMS:
            return scram.ScramServer(mechanism,
                                     lambda user: self._scram_credentials(mechanism, user))
        return oauthbearer.OAuthBearerServer(self._oauth_validate)

    def authenticate(self, token: bytes) -> bytes:
        """SaslAuthenticate: the server's next message; raises
        :class:`SaslAuthenticationError` (``illegal_state`` for out-of-order requests)."""
        if self._exchange is None or self.complete:
            raise SaslAuthenticationError("SaslAuthenticate without a SaslHandshake first",
                                          illegal_state=True)
        if len(token) > self.max_receive_size:
            self._exchange = None
            raise SaslAuthenticationError(
                f"{self.mechanism}: the SASL token of {len(token)} bytes exceeds "
                f"sasl.server.max.receive.size ({self.max_receive_size})")
        try:
            answer = self._exchange.respond(token)
        except SaslAuthenticationError:
            self._exchange = None
            raise
        if self._exchange.complete:
            principal = f"User:{self._exchange.username}"
            if self.principal is not None and principal != self.principal:
                self._exchange = None
                raise SaslAuthenticationError(
                    f"{self.mechanism}: re-authentication as another principal is not allowed")
            self.principal = principal
            self.complete = True
        return answer

    def session_lifetime_ms(self, now: float | None = None) -> int:
        """The lifetime of the authenticated session (0: unlimited), KIP-368."""
        limits = [self.max_reauth_ms] if self.max_reauth_ms > 0 else []
        token = getattr(self._exchange, "token", None)
        if token is not None:
            now = time.time() if now is None else now
            limits.append(max(1, int((token.expires_at - now) * 1000)))
        return min(limits) if limits else 0
