"""SaslHandshake (key 17): declared for completeness; broker_lite does not authenticate.
"""

from ..schema import INT16, STRING, A, F, Request, Response

SASL_HANDSHAKE_REQUEST = Request("SaslHandshakeRequest", 17, "0-1", "none", [
    F("Mechanism", STRING, "0+"),
])

SASL_HANDSHAKE_RESPONSE = Response("SaslHandshakeResponse", 17, "0-1", "none", [
    F("ErrorCode", INT16, "0+"),
    A("Mechanisms", STRING, "0+"),
])


__all__ = [
    "SASL_HANDSHAKE_REQUEST",
    "SASL_HANDSHAKE_RESPONSE",
]
