"""SASL on a connection of a ``SASL_PLAINTEXT`` or ``SASL_SSL`` listener, as Kafka's
``SaslServerAuthenticator`` runs it: the processor hands it every frame until the client is
authenticated, and it answers them itself. The mechanisms' exchanges are
:class:`broker_lite.security.sasl_server.ServerAuthenticator`'s.

States (a frame that fits none of them fails the authentication)::

    state                    frame                          answer, next state
    -----------------------  -----------------------------  ---------------------------------
    INITIAL                  ApiVersions (any version)      the broker's ApiVersions answer
                                                            -> HANDSHAKE (UNSUPPORTED_VERSION:
                                                            stays)
    INITIAL, HANDSHAKE       SaslHandshake v0 or v1         NONE and the enabled mechanisms
                                                            -> AUTHENTICATE (v0: raw tokens);
                                                            a mechanism not enabled:
                                                            UNSUPPORTED_SASL_MECHANISM, closed
    AUTHENTICATE (v1)        SaslAuthenticate v0-v2         the mechanism's next message; once
                                                            the exchange completes, with the
                                                            session lifetime (v1+) -> COMPLETE;
                                                            refused: SASL_AUTHENTICATION_FAILED
                                                            (or ILLEGAL_SASL_STATE) and its
                                                            reason, then closed
    AUTHENTICATE (v0)        a raw token (size + bytes)     the raw answer (size + bytes, empty
                                                            when there is none) -> COMPLETE at
                                                            the end; refused: closed, no answer
    COMPLETE                 SaslHandshake, the session     re-authentication: as INITIAL's
                             having a lifetime, at most     SaslHandshake, then AUTHENTICATE;
                             once a second                  another mechanism fails at the next
                                                            frame; another principal is refused

Anything else before COMPLETE (a request of another API, a SaslAuthenticate before the
handshake, a second ApiVersions, bytes that are no Kafka request) closes the connection without
an answer, as Kafka's ``IllegalSaslStateException`` and ``InvalidRequestException`` do; a frame
larger than ``sasl.server.max.receive.size`` does too. Requests that reach the handlers once
COMPLETE (a SaslHandshake that cannot re-authenticate, a SaslAuthenticate) are answered
ILLEGAL_SASL_STATE there, as Kafka's ``KafkaApis`` answers them.

A session with a lifetime (``connections.max.reauth.ms``, or an OAUTHBEARER token's expiry)
expires then: a request received after it, without a re-authentication, closes the connection
(Kafka's ``serverAuthenticationSessionExpired``). Failures are logged with the mechanism and the
reason, never a password or a token.
"""

import time
from collections.abc import Callable

from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
    ProtocolError,
    Reader,
    api_for,
    decode,
    encode_response,
    parse_request_header,
)
from broker_lite.security import SaslAuthenticationError
from broker_lite.security.principal import ANONYMOUS
from broker_lite.security.sasl_server import ServerAuthenticator

from .authenticator import AuthenticationFailed

INITIAL, HANDSHAKE, AUTHENTICATE, COMPLETE, REAUTH_BAD_MECHANISM = range(5)
MIN_REAUTH_INTERVAL_S = 1.0  # Kafka's KafkaChannel.MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS
_SIZE_BYTES = 4

# (ApiVersions request frame) -> (response chunks, accepted: False for an unsupported version)
ApiVersionsAnswer = Callable[[bytes], tuple[list, bool]]


class SaslAuthenticator:
    """The SASL state of one connection (see the module docstring).

    ``server`` holds the mechanisms' state; ``api_versions`` answers ApiVersions;
    ``max_reauth_ms`` gives each mechanism's ``connections.max.reauth.ms``; frames are at most
    ``max_receive_size`` bytes until the client is authenticated.
    """

    def __init__(self, server: ServerAuthenticator, api_versions: ApiVersionsAnswer, *,
                 max_receive_size: int, max_reauth_ms: dict[str, int] | None = None):
        self._server = server
        self._api_versions = api_versions
        self._max_receive_size = max_receive_size
        self._max_reauth_ms = max_reauth_ms or {}
        self._state = INITIAL
        self._raw_tokens = False  # SaslHandshake v0: tokens travel without Kafka headers
        self._mechanism: str | None = None  # the one authenticated with (kept for re-auth)
        self._bad_mechanism = ""
        self._reauth_started = 0.0
        self._request_limit: int | None = None
        self.session_expires_at: float | None = None  # monotonic
        self.complete = False
        self.principal = ANONYMOUS
        self.reauthentications = 0

    # -- the processor's calls ------------------------------------------------------------

    def authenticate(self, channel) -> None:
        """Handle the frames received, one at a time, until authenticated or failed."""
        self._limit_frames(channel)
        while not self.complete and not channel.closing:
            payload = channel.receive.next_frame()
            if payload is None:
                return
            self._handle(channel, bytes(payload))
        if self.complete:
            self._restore_frames(channel)

    def session_expired(self, now: float) -> bool:
        return self.session_expires_at is not None and now > self.session_expires_at

    def begin_reauthentication(self, channel, payload, now: float) -> bool:
        if self.session_expires_at is None or (
                self._reauth_started and now - self._reauth_started < MIN_REAUTH_INTERVAL_S):
            return False
        self._reauth_started = now
        self.complete = False
        self._state = INITIAL
        self._limit_frames(channel)
        self._handle(channel, bytes(payload))
        return True

    # -- frames -----------------------------------------------------------------------------

    def _limit_frames(self, channel) -> None:
        receive = channel.receive
        if self._request_limit is None:
            self._request_limit = receive.max_size
        receive.max_size = min(self._request_limit, self._max_receive_size)

    def _restore_frames(self, channel) -> None:
        if self._request_limit is not None:
            channel.receive.max_size = self._request_limit

    def _handle(self, channel, payload: bytes) -> None:
        state = self._state
        if state == REAUTH_BAD_MECHANISM:
            raise AuthenticationFailed(self._bad_mechanism)
        if state == AUTHENTICATE:
            if self._raw_tokens:
                self._raw_token(channel, payload)
            else:
                self._sasl_authenticate(channel, payload)
            return
        header, body_offset = self._header(payload, state)
        if header.api_key == ApiKey.API_VERSIONS and state == INITIAL:
            try:
                chunks, accepted = self._api_versions(payload)
            except ProtocolError as exc:
                raise AuthenticationFailed(f"malformed ApiVersions request: {exc}") from None
            channel.queue_send(chunks)
            if accepted:
                self._state = HANDSHAKE
        elif header.api_key == ApiKey.SASL_HANDSHAKE:
            self._handshake(channel, header, self._body(header, payload, body_offset))
        else:
            raise AuthenticationFailed(f"Unexpected Kafka request of type "
                                       f"{_api_name(header.api_key)} during SASL handshake.")

    @staticmethod
    def _header(payload: bytes, state: int):
        try:
            return parse_request_header(payload)
        except ProtocolError as exc:
            if state == INITIAL:
                raise AuthenticationFailed(
                    "Invalid request, potential reasons: kafka client configured with the "
                    "wrong security protocol, it does not support KIP-43 or it is not a kafka "
                    f"client ({exc})") from None
            raise AuthenticationFailed(f"unreadable request during SASL handshake: {exc}") \
                from None

    @staticmethod
    def _body(header, payload: bytes, offset: int) -> dict:
        try:
            return decode(api_for(header.api_key).request, header.api_version,
                          Reader(payload, offset))
        except ProtocolError as exc:
            raise AuthenticationFailed(f"malformed {_api_name(header.api_key)} request: {exc}") \
                from None

    def _handshake(self, channel, header, body: dict) -> None:
        mechanism = body["mechanism"]
        server = self._server
        reauthenticating = self._mechanism is not None
        if mechanism not in server.enabled:
            channel.queue_send(encode_response(
                ApiKey.SASL_HANDSHAKE, header.api_version, header.correlation_id,
                {"error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                 "mechanisms": server.enabled}))
            channel.closing = True
            raise AuthenticationFailed(f"Unsupported SASL mechanism {mechanism}")
        channel.queue_send(encode_response(
            ApiKey.SASL_HANDSHAKE, header.api_version, header.correlation_id,
            {"error_code": ErrorCode.NONE, "mechanisms": server.enabled}))
        self._raw_tokens = header.api_version == 0
        if reauthenticating and mechanism != self._mechanism:
            self._bad_mechanism = (f"SASL mechanism '{mechanism}' requested by client is not "
                                   f"supported for re-authentication of mechanism "
                                   f"'{self._mechanism}'")
            self._state = REAUTH_BAD_MECHANISM
            return
        server.handshake(mechanism)
        server.max_reauth_ms = self._max_reauth_ms.get(mechanism, 0)
        self._state = AUTHENTICATE

    def _raw_token(self, channel, token: bytes) -> None:
        try:
            answer = self._server.authenticate(token)
        except SaslAuthenticationError as exc:
            raise AuthenticationFailed(str(exc)) from None
        channel.queue_send([len(answer).to_bytes(_SIZE_BYTES, "big"), answer])
        if self._server.complete:
            self._completed()

    def _sasl_authenticate(self, channel, payload: bytes) -> None:
        header, body_offset = self._header(payload, AUTHENTICATE)
        if header.api_key != ApiKey.SASL_AUTHENTICATE:
            raise AuthenticationFailed(f"Unexpected Kafka request of type "
                                       f"{_api_name(header.api_key)} during SASL "
                                       f"authentication.")
        body = self._body(header, payload, body_offset)
        version, correlation_id = header.api_version, header.correlation_id
        try:
            answer = self._server.authenticate(bytes(body["auth_bytes"]))
        except SaslAuthenticationError as exc:
            code = ErrorCode.ILLEGAL_SASL_STATE if exc.illegal_state \
                else ErrorCode.SASL_AUTHENTICATION_FAILED
            channel.queue_send(encode_response(ApiKey.SASL_AUTHENTICATE, version, correlation_id, {
                "error_code": code, "error_message": str(exc), "auth_bytes": b"",
                "session_lifetime_ms": 0}))
            channel.closing = True
            raise AuthenticationFailed(str(exc)) from None
        lifetime_ms = self._completed() if self._server.complete else 0
        channel.queue_send(encode_response(ApiKey.SASL_AUTHENTICATE, version, correlation_id, {
            "error_code": ErrorCode.NONE, "error_message": None, "auth_bytes": answer,
            "session_lifetime_ms": lifetime_ms}))

    def _completed(self) -> int:
        """The exchange is over: the principal and the session's lifetime (ms, 0: none)."""
        principal = self._server.principal
        if principal is None:  # a mechanism completes only once it knows who authenticated
            raise AuthenticationFailed("the SASL exchange ended without a principal")
        lifetime_ms = self._server.session_lifetime_ms()
        self.session_expires_at = time.monotonic() + lifetime_ms / 1000 if lifetime_ms else None
        if self._mechanism is not None:
            self.reauthentications += 1
        self._mechanism = self._server.mechanism
        self.principal = principal
        self._state = COMPLETE
        self.complete = True
        return lifetime_ms


def _api_name(api_key: int) -> str:
    try:
        return ApiKey(api_key).name
    except ValueError:
        return str(api_key)
