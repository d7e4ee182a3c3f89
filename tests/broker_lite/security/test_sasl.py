"""The client's mechanism from settings, and the server's handshake/authenticate state, run
against each other for every mechanism; bad input on the server side."""

import pytest

from broker_lite.protocol import ErrorCode
from broker_lite.security import SaslAuthenticationError, SecurityConfigError
from broker_lite.security.sasl_client import SaslClientFactory
from broker_lite.security.sasl_server import ServerAuthenticator
from broker_lite.security.scram import ScramCredential

CREDENTIALS = {m: {"alice": ScramCredential.from_password(m, "alice-secret")}
               for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
MODULES = {"PLAIN": "plain.PlainLoginModule", "SCRAM-SHA-256": "scram.ScramLoginModule",
           "SCRAM-SHA-512": "scram.ScramLoginModule",
           "OAUTHBEARER": "oauthbearer.OAuthBearerLoginModule"}


def jaas(mechanism, options):
    return f"org.apache.kafka.common.security.{MODULES[mechanism]} required {options};"


def settings(mechanism, password="alice-secret"):
    options = ('unsecuredLoginStringClaim_sub="alice"' if mechanism == "OAUTHBEARER"
               else f'username="alice" password="{password}"')
    return {"sasl.mechanism": mechanism, "sasl.jaas.config": jaas(mechanism, options)}


def server(**kwargs):
    return ServerAuthenticator(["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"],
                               plain_users={"alice": "alice-secret"},
                               scram_credentials=lambda m, user: CREDENTIALS[m].get(user),
                               **kwargs)


def run(exchange, authenticator):
    challenge = None
    for _ in range(10):  # every mechanism here takes three at most
        message = exchange.respond(challenge)
        if message is None:
            return
        challenge = authenticator.authenticate(message)
        if authenticator.complete and exchange.complete:
            return
    raise AssertionError("the exchange did not end within 10 round trips")


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"])
def test_each_mechanism_authenticates_and_re_authenticates(mechanism):
    factory = SaslClientFactory.from_settings(settings(mechanism))
    authenticator = server(max_reauth_ms=60000)
    for _ in range(2):  # KIP-368: the same connection authenticates again
        assert authenticator.handshake(mechanism)[0] == ErrorCode.NONE
        run(factory.exchange(), authenticator)
        assert authenticator.complete and authenticator.principal == "User:alice"
    assert 0 < authenticator.session_lifetime_ms() <= 60000


@pytest.mark.parametrize("mechanism", ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_a_wrong_password_fails_and_the_message_hides_it(mechanism):
    authenticator = server()
    authenticator.handshake(mechanism)
    with pytest.raises(SaslAuthenticationError, match="alice") as failure:
        run(SaslClientFactory.from_settings(settings(mechanism, "wrong-pass")).exchange(),
            authenticator)
    assert "wrong-pass" not in str(failure.value) and "alice-secret" not in str(failure.value)


def test_server_bad_input():
    authenticator = server(max_receive_size=1024)
    with pytest.raises(SaslAuthenticationError, match="without a SaslHandshake") as failure:
        authenticator.authenticate(b"\0alice\0alice-secret")
    assert failure.value.illegal_state
    assert authenticator.handshake("GSSAPI") == (ErrorCode.UNSUPPORTED_SASL_MECHANISM,
                                                 authenticator.enabled)
    authenticator.handshake("SCRAM-SHA-256")
    with pytest.raises(SaslAuthenticationError, match="2048 bytes exceeds"):
        authenticator.authenticate(b"x" * 2048)
    authenticator.handshake("SCRAM-SHA-256")
    with pytest.raises(SaslAuthenticationError, match="invalid client-first message"):
        authenticator.authenticate(b"\x00\xff garbage")


def test_re_authentication_must_keep_the_mechanism():
    authenticator = server()
    authenticator.handshake("PLAIN")
    authenticator.authenticate(b"\0alice\0alice-secret")
    assert authenticator.handshake("SCRAM-SHA-256")[0] == ErrorCode.ILLEGAL_SASL_STATE


@pytest.mark.parametrize("given, error", [
    ({}, "GSSAPI is not supported by this client .Kerberos"),
    ({"sasl.mechanism": "AWS_MSK_IAM"}, "AWS_MSK_IAM is not supported"),
    ({"sasl.mechanism": "PLAIN", "sasl.jaas.config": jaas("SCRAM-SHA-256", 'username="a"')},
     "PLAIN needs PlainLoginModule, not ScramLoginModule"),
    ({"sasl.mechanism": "SCRAM-SHA-256"}, "needs a user name and password"),
])
def test_client_settings_errors(given, error):
    with pytest.raises(SecurityConfigError, match=error):
        SaslClientFactory.from_settings(given)


def test_librdkafka_user_name_and_password():
    factory = SaslClientFactory.from_settings({"sasl.mechanisms": "PLAIN",
                                               "sasl.username": "alice",
                                               "sasl.password": "alice-secret"})
    authenticator = server()
    authenticator.handshake("PLAIN")
    run(factory.exchange(), authenticator)
    assert authenticator.principal == "User:alice"
