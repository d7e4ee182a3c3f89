"""Security machinery shared by the client and the broker: TLS contexts from Kafka's settings,
SASL mechanisms (PLAIN, SCRAM-SHA-256/512, OAUTHBEARER) as sans-I/O state machines, Kafka's
JAAS syntax, and the redaction of secrets in printed settings.

=======================  =========================================================================
module                   concept
=======================  =========================================================================
:mod:`.tls`              ``ssl.SSLContext`` from ``ssl.*`` settings (PEM, PKCS12, librdkafka's)
:mod:`.client_ca_names`  the CAs a TLS listener names when it asks for client certificates
:mod:`.jaas`             ``sasl.jaas.config`` in Kafka's JAAS syntax
:mod:`.plain`            SASL PLAIN (RFC 4616), client message and server
:mod:`.scram`            SCRAM-SHA-256/512 (RFC 5802, 7677), client, server, stored credentials
:mod:`.oauthbearer`      OAUTHBEARER (RFC 7628): tokens (unsecured, callable, OIDC), validators
:mod:`.jwks`             an identity provider's key set (JWKS), kept fresh; JWS signature checks
:mod:`.sasl_client`      the client's mechanism from ``sasl.mechanism`` and ``sasl.jaas.config``
:mod:`.sasl_server`      the server's side of SaslHandshake / SaslAuthenticate (KIP-43, KIP-152)
:mod:`.principal`        a TLS client's principal: its certificate's subject (RFC 2253), mapped
:mod:`.redaction`        secrets hidden wherever settings are printed
:mod:`.testing`          made at run time for tests: certificates, an OIDC identity provider
=======================  =========================================================================
"""

from .errors import JaasConfigError, SaslAuthenticationError, SecurityConfigError, SecurityError

__all__ = ["JaasConfigError", "SaslAuthenticationError", "SecurityConfigError", "SecurityError"]
