"""One redaction rule for every printed setting."""

import pytest

from broker_lite.security.redaction import REDACTED, is_secret, redact


@pytest.mark.parametrize("name", [
    "sasl.jaas.config", "kafka.sasl.jaas.config", "ssl.key.password", "ssl.keystore.password",
    "ssl.truststore.password", "ssl.keystore.key", "kafka.ssl.keystore.key", "sasl.password",
    "sasl.oauthbearer.client.secret", "ssl.key.pem",
])
def test_secret_names(name):
    assert is_secret(name)
    assert redact({name: "s3cret"}) == {name: REDACTED}


@pytest.mark.parametrize("name", [
    "bootstrap.servers", "ssl.truststore.certificates", "ssl.keystore.certificate.chain",
    "sasl.mechanism", "sasl.oauthbearer.token.endpoint.url", "ssl.keystore.location",
    "sasl.username",
])
def test_public_names(name):
    assert not is_secret(name)
