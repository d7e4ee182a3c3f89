"""SaslHandshake (key 17) and SaslAuthenticate (key 36): SASL authentication of a connection
(KIP-43, KIP-152; re-authentication, KIP-368, adds the session lifetime in v1).

SaslHandshake picks the mechanism; in v1 the mechanism's messages then travel in
SaslAuthenticate requests (in v0 they followed as raw size-prefixed frames).
"""

from ..schema import BYTES, INT16, INT64, STRING, A, F, Request, Response

SASL_HANDSHAKE_REQUEST = Request("SaslHandshakeRequest", 17, "0-1", "none", [
    F("Mechanism", STRING, "0+"),
])

SASL_HANDSHAKE_RESPONSE = Response("SaslHandshakeResponse", 17, "0-1", "none", [
    F("ErrorCode", INT16, "0+"),
    A("Mechanisms", STRING, "0+"),
])

SASL_AUTHENTICATE_REQUEST = Request("SaslAuthenticateRequest", 36, "0-2", "2+", [
    F("AuthBytes", BYTES, "0+"),
])

SASL_AUTHENTICATE_RESPONSE = Response("SaslAuthenticateResponse", 36, "0-2", "2+", [
    F("ErrorCode", INT16, "0+"),
    F("ErrorMessage", STRING, "0+", nullable="0+"),
    F("AuthBytes", BYTES, "0+"),
    F("SessionLifetimeMs", INT64, "1+", default=0, ignorable=True),
])


__all__ = [
    "SASL_HANDSHAKE_REQUEST",
    "SASL_HANDSHAKE_RESPONSE",
    "SASL_AUTHENTICATE_REQUEST",
    "SASL_AUTHENTICATE_RESPONSE",
]
