"""Who a broker takes this client for: the principal its ACLs must name.

Kafka's ``DefaultKafkaPrincipalBuilder`` gives a SASL connection ``User:<the authenticated
name>`` (PLAIN and SCRAM: the username; OAUTHBEARER: the token's subject), an SSL connection
with a client certificate ``User:<its subject>`` as the broker's ``ssl.principal.mapping.rules``
map it, and any other connection ``User:ANONYMOUS`` (Kafka's documentation, "Authorization and
ACLs"). The client knows the first exactly; of the others it says where the name comes from.
Authorization errors name it, so that the ACL to grant can be written from the message.

>>> from broker_lite.client.config import ClientConfig
>>> principal_of(ClientConfig({"bootstrap.servers": "b:9092"}))
'User:ANONYMOUS'
>>> principal_of(ClientConfig({"bootstrap.servers": "b:9092",
...     "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "SCRAM-SHA-512",
...     "sasl.username": "etl", "sasl.password": "secret"}))
'User:etl'
"""

from __future__ import annotations

from broker_lite.security.principal import ANONYMOUS

from .config import ClientConfig

# the settings that give an SSL client a certificate (Kafka's names and librdkafka's)
_CLIENT_CERTIFICATE = ("ssl.keystore.location", "ssl.keystore.certificate.chain",
                       "ssl.certificate.location", "ssl.certificate.pem")


def principal_of(config: ClientConfig) -> str:
    """The principal a broker with Kafka's default principal builder gives this client."""
    sasl = config.sasl
    if sasl is not None:
        if sasl.mechanism == "OAUTHBEARER":
            return "User:<the subject (sub) of the client's OAUTHBEARER token>"
        return f"User:{sasl.username}"
    if config.ssl_context is not None and any(config.security.get(s) for s in
                                              _CLIENT_CERTIFICATE):
        return ("User:<the subject of the client's certificate, as the broker's "
                "ssl.principal.mapping.rules map it>")
    return ANONYMOUS
