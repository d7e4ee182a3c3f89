"""SCRAM (RFC 5802, RFC 7677): both sides on RFC 7677's test vector, Kafka's stored credential
format, and bad input on the server side (wrong nonce, garbage, wrong password)."""

import base64

import pytest

from broker_lite.security import SaslAuthenticationError
from broker_lite.security.scram import ScramClient, ScramCredential, ScramServer

# RFC 7677, section 3
CLIENT_NONCE = "rOprNGfwEbeRWgbNEkqO"
SERVER_NONCE = "%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0"
SALT = base64.b64decode("W22ZaJ0SNY7soEsUEjb6gQ==")
CLIENT_FIRST = b"n,,n=user,r=rOprNGfwEbeRWgbNEkqO"
SERVER_FIRST = (b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
CLIENT_FINAL = (b"c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
                b"p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=")
SERVER_FINAL = b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4="


def rfc_server():
    credential = ScramCredential.from_password("SCRAM-SHA-256", "pencil", salt=SALT)
    return ScramServer("SCRAM-SHA-256", {"user": credential}, nonce=SERVER_NONCE)


def test_the_client_produces_rfc_7677s_messages():
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    assert client.first_message() == CLIENT_FIRST
    assert client.final_message(SERVER_FIRST) == CLIENT_FINAL
    client.verify_server_final(SERVER_FINAL)
    assert client.complete


def test_the_server_produces_rfc_7677s_messages():
    server = rfc_server()
    assert server.respond(CLIENT_FIRST) == SERVER_FIRST
    assert server.respond(CLIENT_FINAL) == SERVER_FINAL
    assert server.complete and server.username == "user"


def test_kafkas_credential_text_round_trips_and_authenticates():
    credential = ScramCredential.from_password("SCRAM-SHA-512", "alice-secret", iterations=8192)
    text = credential.to_text()
    assert text.startswith("salt=") and text.endswith(",iterations=8192")
    assert [field.split("=", 1)[0] for field in text.split(",")] == \
        ["salt", "stored_key", "server_key", "iterations"]
    parsed = ScramCredential.parse(text)
    assert parsed == credential
    assert len(parsed.stored_key) == len(parsed.server_key) == 64  # SHA-512
    client = ScramClient("SCRAM-SHA-512", "alice", "alice-secret")
    server = ScramServer("SCRAM-SHA-512", {"alice": parsed})
    client.verify_server_final(server.respond(client.final_message(
        server.respond(client.first_message()))))
    assert client.complete and server.complete


def test_a_wrong_password_fails_without_showing_it():
    server = rfc_server()
    client = ScramClient("SCRAM-SHA-256", "user", "pencil-wrong")
    with pytest.raises(SaslAuthenticationError, match="invalid credentials for user 'user'") \
            as failure:
        server.respond(client.final_message(server.respond(client.first_message())))
    assert "pencil" not in str(failure.value)
    with pytest.raises(SaslAuthenticationError, match="already over"):
        server.respond(b"c=biws")


def test_a_wrong_nonce_in_the_client_final_message_fails():
    server = rfc_server()
    server.respond(CLIENT_FIRST)
    wrong = CLIENT_FINAL.replace(b"k0,p=", b"k1,p=")
    with pytest.raises(SaslAuthenticationError, match="invalid nonce"):
        server.respond(wrong)


def test_a_server_nonce_that_does_not_extend_the_clients_fails():
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    client.first_message()
    with pytest.raises(SaslAuthenticationError, match="invalid server nonce"):
        client.final_message(SERVER_FIRST.replace(b"r=rOpr", b"r=xOpr"))


def test_a_forged_server_signature_is_detected():
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    client.first_message()
    client.final_message(SERVER_FIRST)
    with pytest.raises(SaslAuthenticationError, match="signature is wrong"):
        client.verify_server_final(b"v=" + base64.b64encode(b"x" * 32))


@pytest.mark.parametrize("message, error", [
    (b"\xff\xfe", "invalid client-first message"),
    (b"garbage", "invalid client-first message"),
    (b"n,,r=abc,n=user", "expected n=...,r=..."),
    (b"p=tls-unique,,n=user,r=abc", "channel binding is not supported"),
    (b"n,,n=us=er,r=abc", "invalid user name"),
    (b"n,,n=nobody,r=abc", "invalid credentials for user 'nobody'"),
])
def test_garbage_client_first_messages_fail_clearly(message, error):
    with pytest.raises(SaslAuthenticationError, match=error):
        rfc_server().respond(message)


@pytest.mark.parametrize("message, error", [
    (b"\x00\x01", "key=value"),
    (b"c=biws", "expected c=...,r=..."),
    (CLIENT_FINAL.rsplit(b",p=", 1)[0], "no proof"),
    (CLIENT_FINAL[:-4] + b"!!!=", "not valid base64"),
])
def test_garbage_client_final_messages_fail_clearly(message, error):
    server = rfc_server()
    server.respond(CLIENT_FIRST)
    with pytest.raises(SaslAuthenticationError, match=error):
        server.respond(message)


def test_too_few_iterations_are_refused_on_both_sides():
    with pytest.raises(ValueError, match="4096-16384"):
        ScramCredential.from_password("SCRAM-SHA-256", "pw", iterations=1000)
    client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce=CLIENT_NONCE)
    client.first_message()
    with pytest.raises(SaslAuthenticationError, match="fewer than the minimum 4096"):
        client.final_message(SERVER_FIRST.replace(b"i=4096", b"i=1"))


def test_credential_text_errors_and_repr_hide_the_keys():
    with pytest.raises(ValueError, match="expected the fields"):
        ScramCredential.parse("salt=YQ==,iterations=4096")
    credential = ScramCredential.from_password("SCRAM-SHA-256", "pw")
    assert base64.b64encode(credential.stored_key).decode() not in repr(credential)
