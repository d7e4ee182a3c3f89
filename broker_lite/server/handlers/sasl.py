"""SaslHandshake and SaslAuthenticate once a connection is authenticated, or on a listener
without SASL: ILLEGAL_SASL_STATE, as Kafka's ``KafkaApis`` answers them. (Before
authentication, a SASL listener's connections hand them to their authenticator,
:mod:`broker_lite.server.network.sasl`, and they never reach the handlers; a SaslHandshake
that starts a re-authentication does not either.) Both APIs are advertised on every listener,
as Kafka 3.9 advertises them."""

from broker_lite.protocol import ErrorCode


def sasl_handshake(context, body: dict) -> dict:
    return {"error_code": ErrorCode.ILLEGAL_SASL_STATE, "mechanisms": []}


def sasl_authenticate(context, body: dict) -> dict:
    return {"error_code": ErrorCode.ILLEGAL_SASL_STATE,
            "error_message": "SaslAuthenticate request received after successful authentication",
            "auth_bytes": b"", "session_lifetime_ms": 0}
