"""SASL PLAIN (RFC 4616) on the server side: users, authorization ids, malformed messages."""

import pytest

from broker_lite.security import SaslAuthenticationError
from broker_lite.security.plain import PlainServer, plain_client_message

USERS = {"alice": "alice-secret"}


def test_a_known_user_with_its_password_is_authenticated():
    server = PlainServer(USERS)
    assert server.respond(plain_client_message("alice", "alice-secret", "alice")) == b""
    assert server.complete and server.username == "alice"


@pytest.mark.parametrize("message, error", [
    (plain_client_message("alice", "wrong-secret"), "invalid user name or password for 'alice'"),
    (plain_client_message("bob", "alice-secret"), "invalid user name or password for 'bob'"),
    (plain_client_message("alice", "alice-secret", "admin"), "authorization id differs"),
    (b"alice-secret", "expected \\[authzid\\] NUL username NUL password"),
    (b"\0\0alice-secret", "empty user name"),
    (b"\0alice\0\xff", "not UTF-8"),
])
def test_bad_messages_fail_without_showing_the_password(message, error):
    with pytest.raises(SaslAuthenticationError, match=error) as failure:
        PlainServer(USERS).respond(message)
    assert "alice-secret" not in str(failure.value)
    assert "wrong-secret" not in str(failure.value)
