"""The SASL authenticator of the network layer, frame by frame, without sockets: Kafka's
SaslServerAuthenticator states (ApiVersions, SaslHandshake v0/v1, SaslAuthenticate v0-v2, raw
tokens after a v0 handshake), what is answered and what closes the connection without an
answer, the frame limit before authentication, session lifetimes and re-authentication."""

import time
import types

import pytest

from broker_lite.protocol import (
    ApiKey,
    ErrorCode,
    encode_request,
    parse_response,
)
from broker_lite.security.oauthbearer import client_message, unsecured_jws
from broker_lite.security.plain import plain_client_message
from broker_lite.security.sasl_server import ServerAuthenticator
from broker_lite.security.scram import ScramClient, ScramCredential
from broker_lite.server.apis import handlers
from broker_lite.server.dispatcher import Dispatcher, supported_versions
from broker_lite.server.network.authenticator import AuthenticationFailed
from broker_lite.server.network.receive import FrameReceive, InvalidFrameSize
from broker_lite.server.network.sasl import SaslAuthenticator

PASSWORD = "alice-pw"
CREDENTIALS = {m: ScramCredential.from_password(m, PASSWORD)
               for m in ("SCRAM-SHA-256", "SCRAM-SHA-512")}
MECHANISMS = ["PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER"]


class Channel:
    """What the authenticator uses of a channel: its frames, its answers, ``closing``."""

    def __init__(self, max_request_bytes=100 << 20):
        self.receive = FrameReceive(max_request_bytes)
        self.sent: list[bytes] = []
        self.closing = False

    def queue_send(self, chunks, request=None):
        self.sent.append(b"".join(bytes(c) for c in chunks))


@pytest.fixture
def dispatcher():
    api = handlers()
    return Dispatcher(api, types.SimpleNamespace(api_versions=supported_versions(api),
                                                 features=()))


def authenticator(dispatcher, **reauth_ms):
    server = ServerAuthenticator(
        MECHANISMS, plain_users={"alice": PASSWORD, "bob": "bob-pw"},
        scram_credentials=lambda mechanism, user: CREDENTIALS[mechanism]
        if user == "alice" else None)
    return SaslAuthenticator(server, dispatcher.api_versions, max_receive_size=1024,
                             max_reauth_ms=reauth_ms)


def send(auth, channel, *frames):
    for frame in frames:
        channel.receive.feed(frame)
    auth.authenticate(channel)


def request(api_key, version, body, correlation_id=1) -> bytes:
    return encode_request(api_key, version, correlation_id, "t", body)


def answer(channel, api_key, version, index=-1) -> dict:
    _correlation_id, body = parse_response(api_key, version, channel.sent[index][4:])
    return body


def handshake(mechanism, version=1):
    return request(ApiKey.SASL_HANDSHAKE, version, {"mechanism": mechanism})


def authenticate(token, version=2):
    return request(ApiKey.SASL_AUTHENTICATE, version, {"auth_bytes": token})


def raw(token: bytes) -> bytes:
    return len(token).to_bytes(4, "big") + token


API_VERSIONS = request(ApiKey.API_VERSIONS, 3, {"client_software_name": "t",
                                                "client_software_version": "1"})


def test_api_versions_then_plain_with_kafka_headers(dispatcher):
    auth, channel = authenticator(dispatcher), Channel()
    send(auth, channel, API_VERSIONS)
    keys = {k["api_key"]: (k["min_version"], k["max_version"])
            for k in answer(channel, ApiKey.API_VERSIONS, 3)["api_keys"]}
    assert keys[ApiKey.SASL_HANDSHAKE] == (0, 1) and keys[ApiKey.SASL_AUTHENTICATE] == (0, 2)
    send(auth, channel, handshake("PLAIN"))
    assert answer(channel, ApiKey.SASL_HANDSHAKE, 1) == {"error_code": 0,
                                                         "mechanisms": MECHANISMS}
    assert not auth.complete
    send(auth, channel, authenticate(plain_client_message("alice", PASSWORD)))
    response = answer(channel, ApiKey.SASL_AUTHENTICATE, 2)
    assert response["error_code"] == 0 and response["session_lifetime_ms"] == 0
    assert (auth.complete, auth.principal) == (True, "User:alice")
    assert auth.session_expires_at is None and not auth.session_expired(time.monotonic() + 1e6)


@pytest.mark.parametrize("mechanism", ["SCRAM-SHA-256", "SCRAM-SHA-512"])
def test_scram_with_a_session_lifetime(dispatcher, mechanism):
    auth, channel = authenticator(dispatcher, **{mechanism: 60_000}), Channel()
    client = ScramClient(mechanism, "alice", PASSWORD)
    send(auth, channel, handshake(mechanism), authenticate(client.first_message(), 1))
    first = answer(channel, ApiKey.SASL_AUTHENTICATE, 1)
    assert first["session_lifetime_ms"] == 0 and not auth.complete
    send(auth, channel, authenticate(client.final_message(first["auth_bytes"]), 1))
    final = answer(channel, ApiKey.SASL_AUTHENTICATE, 1)
    client.verify_server_final(final["auth_bytes"])
    assert final["session_lifetime_ms"] == 60_000
    assert auth.principal == "User:alice"
    now = time.monotonic()
    assert not auth.session_expired(now) and auth.session_expired(now + 61)


def test_oauthbearer_lifetime_is_the_tokens(dispatcher):
    auth, channel = authenticator(dispatcher), Channel()
    token = unsecured_jws({"sub": "carol"}, lifetime_s=30)
    send(auth, channel, handshake("OAUTHBEARER"), authenticate(client_message(token)))
    response = answer(channel, ApiKey.SASL_AUTHENTICATE, 2)
    assert 28_000 < response["session_lifetime_ms"] <= 30_000
    assert auth.principal == "User:carol"


def test_handshake_v0_then_raw_tokens(dispatcher):
    auth, channel = authenticator(dispatcher), Channel()
    client = ScramClient("SCRAM-SHA-256", "alice", PASSWORD)
    send(auth, channel, handshake("SCRAM-SHA-256", 0), raw(client.first_message()))
    server_first = channel.sent[-1]
    assert int.from_bytes(server_first[:4], "big") == len(server_first) - 4
    send(auth, channel, raw(client.final_message(server_first[4:])))
    client.verify_server_final(channel.sent[-1][4:])
    assert auth.complete and auth.principal == "User:alice"
    auth, channel = authenticator(dispatcher), Channel()
    send(auth, channel, handshake("PLAIN", 0), raw(plain_client_message("bob", "bob-pw")))
    assert channel.sent[-1] == b"\0\0\0\0"  # PLAIN's empty answer, framed
    assert auth.principal == "User:bob"


def test_a_mechanism_not_enabled_is_answered_then_closed(dispatcher):
    auth, channel = authenticator(dispatcher), Channel()
    with pytest.raises(AuthenticationFailed, match="Unsupported SASL mechanism GSSAPI"):
        send(auth, channel, handshake("GSSAPI"))
    assert answer(channel, ApiKey.SASL_HANDSHAKE, 1) == {
        "error_code": ErrorCode.UNSUPPORTED_SASL_MECHANISM, "mechanisms": MECHANISMS}
    assert channel.closing


@pytest.mark.parametrize("mechanism, token", [
    ("PLAIN", plain_client_message("alice", "wrong-pw")),
    ("PLAIN", plain_client_message("nobody", "wrong-pw")),
    ("SCRAM-SHA-256", ScramClient("SCRAM-SHA-256", "nobody", "wrong-pw").first_message()),
], ids=["PLAIN-wrong-password", "PLAIN-unknown-user", "SCRAM-unknown-user"])
def test_a_refused_login_is_answered_sasl_authentication_failed_then_closed(dispatcher,
                                                                             mechanism, token):
    auth, channel = authenticator(dispatcher), Channel()
    with pytest.raises(AuthenticationFailed, match="invalid"):
        send(auth, channel, handshake(mechanism), authenticate(token, 1))
    response = answer(channel, ApiKey.SASL_AUTHENTICATE, 1)
    assert response["error_code"] == ErrorCode.SASL_AUTHENTICATION_FAILED
    assert "wrong-pw" not in response["error_message"] and PASSWORD not in \
        response["error_message"]
    assert channel.closing and not auth.complete


def test_a_scram_exchange_with_a_wrong_nonce_is_refused(dispatcher):
    auth, channel = authenticator(dispatcher), Channel()
    client = ScramClient("SCRAM-SHA-512", "alice", PASSWORD)
    send(auth, channel, handshake("SCRAM-SHA-512"), authenticate(client.first_message()))
    final = client.final_message(answer(channel, ApiKey.SASL_AUTHENTICATE, 2)["auth_bytes"])
    tampered = final.replace(b",r=", b",r=x", 1)
    with pytest.raises(AuthenticationFailed, match="invalid nonce"):
        send(auth, channel, authenticate(tampered))
    assert answer(channel, ApiKey.SASL_AUTHENTICATE, 2)["error_code"] == \
        ErrorCode.SASL_AUTHENTICATION_FAILED


def test_a_refused_raw_token_closes_without_an_answer(dispatcher):
    auth, channel = authenticator(dispatcher), Channel()
    send(auth, channel, handshake("PLAIN", 0))
    with pytest.raises(AuthenticationFailed, match="invalid"):
        send(auth, channel, raw(plain_client_message("alice", "wrong-pw")))
    assert len(channel.sent) == 1 and not channel.closing


@pytest.mark.parametrize("frames, reason", [
    ([request(ApiKey.METADATA, 9, {"topics": None, "allow_auto_topic_creation": False,
                                   "include_topic_authorized_operations": False})],
     "Unexpected Kafka request of type METADATA during SASL handshake."),
    ([authenticate(plain_client_message("alice", PASSWORD))],
     "Unexpected Kafka request of type SASL_AUTHENTICATE during SASL handshake."),
    ([API_VERSIONS, API_VERSIONS],
     "Unexpected Kafka request of type API_VERSIONS during SASL handshake."),
    ([handshake("PLAIN"), request(ApiKey.METADATA, 1, {"topics": None})],
     "Unexpected Kafka request of type METADATA during SASL authentication."),
    ([b"\0\0\0\x10" + b"GET / HTTP/1.1\r\n"],
     "Invalid request, potential reasons: kafka client configured with the wrong security "
     "protocol"),
], ids=["a request before the handshake", "SaslAuthenticate before the handshake",
        "ApiVersions twice", "a request instead of SaslAuthenticate", "not Kafka at all"])
def test_frames_out_of_turn_close_without_an_answer(dispatcher, frames, reason):
    auth, channel = authenticator(dispatcher), Channel()
    with pytest.raises(AuthenticationFailed) as failed:
        send(auth, channel, *frames)
    assert str(failed.value).startswith(reason)
    answered = len(frames) - 1  # each frame before the offending one had its answer
    assert len(channel.sent) == answered and not channel.closing


def test_frames_above_sasl_server_max_receive_size_are_refused_until_authenticated(dispatcher):
    auth, channel = authenticator(dispatcher), Channel(max_request_bytes=1 << 20)
    send(auth, channel, handshake("PLAIN"))
    assert channel.receive.max_size == 1024
    with pytest.raises(InvalidFrameSize, match="larger than 1024"):
        send(auth, channel, authenticate(b"x" * 2000))
    auth, channel = authenticator(dispatcher), Channel(max_request_bytes=1 << 20)
    send(auth, channel, handshake("PLAIN"), authenticate(plain_client_message("bob", "bob-pw")))
    assert auth.complete and channel.receive.max_size == 1 << 20


def completed(dispatcher, mechanism="PLAIN", user="alice", password=PASSWORD, reauth_ms=5000):
    auth, channel = authenticator(dispatcher, **{mechanism: reauth_ms}), Channel()
    send(auth, channel, handshake(mechanism), authenticate(plain_client_message(user, password)))
    assert auth.complete
    return auth, channel


def test_re_authentication_keeps_the_principal(dispatcher):
    auth, channel = completed(dispatcher)
    now = time.monotonic()
    assert auth.begin_reauthentication(channel, handshake("PLAIN")[4:], now)
    assert not auth.complete and answer(channel, ApiKey.SASL_HANDSHAKE, 1)["error_code"] == 0
    send(auth, channel, authenticate(plain_client_message("alice", PASSWORD)))
    assert auth.complete and auth.reauthentications == 1
    assert answer(channel, ApiKey.SASL_AUTHENTICATE, 2)["session_lifetime_ms"] == 5000
    assert not auth.begin_reauthentication(channel, handshake("PLAIN")[4:], now + 0.5)  # < 1 s


def test_re_authentication_as_another_user_is_refused(dispatcher):
    auth, channel = completed(dispatcher)
    assert auth.begin_reauthentication(channel, handshake("PLAIN")[4:], time.monotonic())
    with pytest.raises(AuthenticationFailed, match="another principal"):
        send(auth, channel, authenticate(plain_client_message("bob", "bob-pw")))
    assert answer(channel, ApiKey.SASL_AUTHENTICATE, 2)["error_code"] == \
        ErrorCode.SASL_AUTHENTICATION_FAILED


def test_re_authentication_with_another_mechanism_fails_at_the_next_frame(dispatcher):
    auth, channel = completed(dispatcher)
    assert auth.begin_reauthentication(channel, handshake("SCRAM-SHA-256")[4:], time.monotonic())
    assert answer(channel, ApiKey.SASL_HANDSHAKE, 1)["error_code"] == 0
    with pytest.raises(AuthenticationFailed,
                       match="SASL mechanism 'SCRAM-SHA-256' requested by client is not "
                             "supported for re-authentication of mechanism 'PLAIN'"):
        send(auth, channel, authenticate(b"n,,n=alice,r=abc"))


def test_without_a_session_lifetime_there_is_no_re_authentication(dispatcher):
    auth, channel = completed(dispatcher, reauth_ms=0)
    assert not auth.begin_reauthentication(channel, handshake("PLAIN")[4:], time.monotonic())
