"""OAUTHBEARER: unsecured tokens from JAAS options, the validator, the server exchange with its
error round, the OIDC client-credentials flow against a local token endpoint, a token callable."""

import base64
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs

import pytest

from broker_lite.security import SaslAuthenticationError, SecurityConfigError
from broker_lite.security.oauthbearer import (
    OAuthBearerServer,
    UnsecuredTokenValidator,
    client_message,
    unsecured_jws,
    unsecured_token_from_options,
)
from broker_lite.security.sasl_client import SaslClientFactory

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
    requests: list = []

    def do_POST(self):  # noqa: N802 (http.server's name)
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
