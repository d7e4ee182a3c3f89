"""OAUTHBEARER: unsecured tokens from JAAS options, the validator, the server exchange with its
error round, the OIDC client-credentials flow against a local token endpoint, a token callable;
signed tokens checked against an identity provider's key set (KIP-768), claim by claim."""

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import ClassVar
from urllib.parse import parse_qs

import pytest
from cryptography.hazmat.primitives.asymmetric import rsa

from broker_lite.security import SaslAuthenticationError, SecurityConfigError
from broker_lite.security.jwks import JwksKeys
from broker_lite.security.oauthbearer import (
    JwtValidator,
    OAuthBearerServer,
    UnsecuredTokenValidator,
    client_message,
    unsecured_jws,
    unsecured_token_from_options,
)
from broker_lite.security.sasl_client import SaslClientFactory
from broker_lite.security.testing import SigningKey, TestIdentityProvider

OAUTH_JAAS = ("org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required "
              "{options};")


def test_unsecured_tokens_from_jaas_options_validate():
    token = unsecured_token_from_options({
        "unsecuredLoginStringClaim_sub": "alice", "unsecuredLoginListClaim_scope": ",read,write",
        "unsecuredLoginNumberClaim_level": "3", "unsecuredLoginLifetimeSeconds": "60"})
    assert token.principal == "alice" and token.expires_at == pytest.approx(time.time() + 60, 5)
    validator = UnsecuredTokenValidator({"unsecuredValidatorRequiredScope": "read"})
    assert validator.validate(token.value).principal == "alice"
    with pytest.raises(SaslAuthenticationError, match="lacks the required scope admin"):
        UnsecuredTokenValidator({"unsecuredValidatorRequiredScope": "admin"}).validate(
            token.value)


BAD_TOKEN_ERRORS = ["not an unsecured JWS", "not base64url JSON", "alg none", "no 'sub' claim",
                    "expired", "no numeric 'exp'"]


@pytest.mark.parametrize("token, error", [
    ("abc", "not an unsecured JWS"),
    ("!!.!!.", "not base64url JSON"),
    (unsecured_jws({"sub": "a"}, now=0).replace("eyJhbGciOiJub25lIn0", "eyJhbGciOiJIUzI1NiJ9"),
     "alg none"),
    (unsecured_jws({}, now=time.time()), "no 'sub' claim"),
    (unsecured_jws({"sub": "a"}, lifetime_s=10, now=time.time() - 60), "expired"),
    (unsecured_jws({"sub": "a", "exp": "soon"}), "no numeric 'exp'"),
], ids=BAD_TOKEN_ERRORS)  # named by the error: the tokens carry the time
def test_the_validator_refuses_bad_tokens(token, error):
    with pytest.raises(SaslAuthenticationError, match=error):
        UnsecuredTokenValidator().validate(token)


def test_the_server_answers_an_error_round_then_fails():
    server = OAuthBearerServer()
    expired = unsecured_jws({"sub": "alice"}, lifetime_s=1, now=time.time() - 10)
    assert json.loads(server.respond(client_message(expired))) == {"status": "invalid_token"}
    with pytest.raises(SaslAuthenticationError, match="expired") as failure:
        server.respond(b"\x01")
    assert expired not in str(failure.value)
    good = OAuthBearerServer()
    assert good.respond(client_message(unsecured_jws({"sub": "alice"}))) == b""
    assert good.complete and good.username == "alice"
    with pytest.raises(SaslAuthenticationError, match="invalid client message"):
        OAuthBearerServer().respond(b"garbage")


class _TokenEndpoint(BaseHTTPRequestHandler):
    requests: ClassVar[list] = []  # every request, whichever handler took it

    def do_POST(self):  # http.server's name
        form = parse_qs(self.rfile.read(int(self.headers["Content-Length"])).decode())
        basic = base64.b64decode(self.headers["Authorization"].removeprefix("Basic ")).decode()
        self.requests.append((form, basic))
        if basic != "kpy-client:client-secret":
            self.send_response(401)
            self.end_headers()
            return
        body = json.dumps({"access_token": "opaque-token", "token_type": "bearer",
                           "expires_in": 120}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def token_endpoint():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _TokenEndpoint)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}/token"
    server.shutdown()
    server.server_close()


def test_the_oidc_client_credentials_flow(token_endpoint):
    factory = SaslClientFactory.from_settings({
        "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": token_endpoint,
        "sasl.jaas.config": OAUTH_JAAS.format(
            options='clientId="kpy-client" clientSecret="client-secret" scope="kafka"')})
    message = factory.exchange().respond(None)
    assert message == b"n,,\x01auth=Bearer opaque-token\x01\x01"
    form, _ = _TokenEndpoint.requests[-1]
    assert form == {"grant_type": ["client_credentials"], "scope": ["kafka"]}
    factory.exchange().respond(None)  # the token is reused within its lifetime
    assert len(_TokenEndpoint.requests) == 1
    wrong = SaslClientFactory.from_settings({
        "sasl.mechanism": "OAUTHBEARER", "sasl.oauthbearer.token.endpoint.url": token_endpoint,
        "sasl.jaas.config": OAUTH_JAAS.format(options='clientId="kpy-client" '
                                                      'clientSecret="bad-secret"')})
    with pytest.raises(SaslAuthenticationError, match="answered HTTP 401") as failure:
        wrong.exchange().respond(None)
    assert "bad-secret" not in str(failure.value)


def test_a_token_callable_and_missing_token_sources():
    factory = SaslClientFactory.from_settings(
        {"sasl.mechanism": "OAUTHBEARER"}, oauth_cb=lambda config: ("cb-token", time.time() + 60))
    assert b"auth=Bearer cb-token" in factory.exchange().respond(None)
    with pytest.raises(SecurityConfigError, match="needs a token source"):
        SaslClientFactory.from_settings({"sasl.mechanism": "OAUTHBEARER"})


# -- signed tokens (KIP-768) ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def idp():
    with TestIdentityProvider() as provider:
        yield provider


@pytest.fixture(scope="module")
def jwt_validator(idp):
    keys = JwksKeys(idp.jwks_url).start()
    yield JwtValidator(keys, expected_audience=("kafka", "other"),
                       expected_issuer="https://idp.kpy.test")
    keys.stop()


def test_a_signed_token_gives_its_subject_and_expiry(idp, jwt_validator):
    token = idp.token({"sub": "alice", "scope": "kafka"}, lifetime_s=120)
    checked = jwt_validator.validate(token)
    assert checked.principal == "alice" and checked.value == token
    assert checked.expires_at == pytest.approx(time.time() + 120, abs=5)
    for alg in ("RS512", "PS256", "ES256"):
        assert jwt_validator.validate(idp.token({"sub": "bob"}, alg=alg)).principal == "bob"
    assert jwt_validator.validate(idp.token({"sub": "a", "aud": ["x", "other"]})).principal


SIGNED_TOKEN_CASES = {
    # name: (claims over the provider's defaults, token() options, the error); a callable claim
    # is evaluated when the test runs, so that times are relative to then, not to collection
    "expired": ({"sub": "a"}, {"lifetime_s": -31}, "has expired"),
    "not yet valid": ({"sub": "a", "nbf": lambda: time.time() + 60}, {}, "not valid yet"),
    "no exp": ({"sub": "a", "exp": None}, {}, "no 'exp' claim"),
    "no iat": ({"sub": "a", "iat": None}, {}, "no 'iat' claim"),
    "exp not a number": ({"sub": "a", "exp": "later"}, {}, "'exp' claim is not a non-negative"),
    "other issuer": ({"sub": "a", "iss": "https://evil.test"}, {}, "issuer"),
    "other audience": ({"sub": "a", "aud": "billing"}, {}, r"audience \('aud'\) is none of"),
    "no audience": ({"sub": "a", "aud": None}, {}, "no audience"),
    "no subject": ({"sub": None}, {}, "'sub' claim is not a non-blank string"),
    "blank subject": ({"sub": "  "}, {}, "'sub' claim is not a non-blank string"),
    "repeated scope": ({"sub": "a", "scope": ["read", "read"]}, {}, "repeats 'read'"),
    "unknown key id": ({"sub": "a"}, {"kid": "ghost"}, "with key id 'ghost'"),
}


@pytest.mark.parametrize("claims, options, error", SIGNED_TOKEN_CASES.values(),
                         ids=SIGNED_TOKEN_CASES.keys())
def test_signed_tokens_are_refused_with_the_reason(idp, jwt_validator, claims, options, error):
    if options.get("kid") == "ghost":
        options = {"key": SigningKey("ghost", idp.keys["rsa-1"].private)}
    claims = {name: value() if callable(value) else value for name, value in claims.items()}
    token = idp.token(claims, **options)
    with pytest.raises(SaslAuthenticationError, match=error) as refused:
        jwt_validator.validate(token)
    assert token not in str(refused.value)
    assert str(refused.value).startswith("OAUTHBEARER: could not validate the access token")


def test_forged_and_malformed_tokens_are_refused(idp, jwt_validator):
    good = idp.token({"sub": "alice"})
    head, body, signature = good.split(".")
    forged = f"{head}.{unsecured_jws({'sub': 'admin'}).split('.')[1]}.{signature}"
    cases = {
        forged: "the signature is invalid",
        idp.token({"sub": "a"}, key=SigningKey("rsa-1", rsa.generate_private_key(65537, 2048))):
            "the signature is invalid",
        unsecured_jws({"sub": "admin"}): "three sections",
        f"{head}.{body}": "three sections",
        "a.b.c": "not base64url JSON",
        good.replace(head, unsecured_jws({}).split(".")[0]): "algorithm 'none' is not accepted",
    }
    for token, error in cases.items():
        with pytest.raises(SaslAuthenticationError, match=error):
            jwt_validator.validate(token)


def test_expiry_and_audience_rules_of_the_jose4j_defaults(idp):
    keys = JwksKeys(idp.jwks_url).start()
    try:
        no_audience = JwtValidator(keys)
        with pytest.raises(SaslAuthenticationError, match=r"names an audience .* not set"):
            no_audience.validate(idp.token({"sub": "a"}))
        assert no_audience.validate(idp.token({"sub": "a", "aud": None})).principal == "a"
        # exp is honoured within sasl.oauthbearer.clock.skew.seconds (30 by default)
        assert no_audience.validate(idp.token({"sub": "a", "aud": None}, lifetime_s=-20))
        strict = JwtValidator(keys, clock_skew_s=0)
        with pytest.raises(SaslAuthenticationError, match="has expired"):
            strict.validate(idp.token({"sub": "a", "aud": None}, lifetime_s=-1))
        custom = JwtValidator(keys, expected_audience=("kafka",), sub_claim="client_id",
                              scope_claim="scp")
        token = idp.token({"sub": None, "client_id": "svc-1", "scp": ["a", "b"]})
        assert custom.validate(token).principal == "svc-1"
    finally:
        keys.stop()


def test_the_client_answers_an_error_so_that_the_broker_ends_the_exchange():
    client = SaslClientFactory.from_settings(
        {"sasl.mechanism": "OAUTHBEARER"},
        oauth_cb=lambda config: ("cb-token", time.time() + 60)).exchange()
    assert client.respond(None).startswith(b"n,,\x01auth=Bearer cb-token")
    assert client.respond(b'{"status":"invalid_token"}') == b"\x01"  # RFC 7628, 3.2.2
    with pytest.raises(SaslAuthenticationError, match="refused the token: invalid_token"):
        client.respond(b"")  # a broker that goes on all the same
    assert not client.complete
