"""TLS contexts from Kafka's settings: PEM and PKCS12, files and inline, librdkafka's names,
checked by real handshakes over loopback; JKS refused with the conversion command; a listener
asking for client certificates names the CAs it trusts."""

import contextlib
import socket
import ssl
import threading

import pytest

from broker_lite.security import SecurityConfigError
from broker_lite.security.testing import TestCertificateAuthority
from broker_lite.security.tls import client_context, server_context


@pytest.fixture(scope="module")
def ca():
    return TestCertificateAuthority()


@pytest.fixture(scope="module")
def server_certificate(ca):
    return ca.issue("broker", hosts=["localhost", "127.0.0.1"])


@pytest.fixture(scope="module")
def client_certificate(ca):
    return ca.issue("alice", client=True)


def handshake(client_settings, server_settings, host="127.0.0.1"):
    """A real TLS handshake over loopback; the server's view of the client certificate."""
    server_ctx = server_context(server_settings)
    listener = socket.create_server(("127.0.0.1", 0))
    seen = {}

    def serve():
        conn, _ = listener.accept()
        try:
            with server_ctx.wrap_socket(conn, server_side=True) as tls:
                seen["peer"] = tls.getpeercert()
                tls.recv(1)
        except (ssl.SSLError, OSError) as exc:
            seen["error"] = exc

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        with socket.create_connection(listener.getsockname(), timeout=10) as raw, \
                client_context(client_settings).wrap_socket(raw, server_hostname=host) as tls:
            tls.sendall(b"x")
            thread.join(10)
            assert not thread.is_alive(), "the server's side still in its handshake after 10 s"
    finally:
        listener.close()
    return seen


@pytest.fixture
def server_settings(server_certificate):
    return {"ssl.keystore.certificate.chain": server_certificate.certificate_pem,
            "ssl.keystore.key": server_certificate.key_pem}


def test_inline_pem_truststore_trusts_the_broker(ca, server_settings):
    seen = handshake({"ssl.truststore.certificates": ca.certificate_pem}, server_settings)
    assert seen == {"peer": None}  # no client certificate asked for


def test_pem_files_and_encrypted_key_with_client_authentication(ca, server_certificate,
                                                                client_certificate, tmp_path):
    server_pem = tmp_path / "server.pem"
    server_pem.write_text(server_certificate.certificate_pem
                          + server_certificate.key_pem_encrypted("server-pw"))
    server = {"ssl.keystore.type": "PEM", "ssl.keystore.location": str(server_pem),
              "ssl.key.password": "server-pw", "ssl.client.auth": "required",
              "ssl.truststore.type": "PEM",
              "ssl.truststore.location": str(ca.write_pem(tmp_path / "ca.pem"))}
    client = {"ssl.truststore.type": "PEM", "ssl.truststore.location": str(tmp_path / "ca.pem"),
              "ssl.keystore.certificate.chain": client_certificate.certificate_pem,
              "ssl.keystore.key": client_certificate.key_pem_encrypted("client-pw"),
              "ssl.key.password": "client-pw"}
    seen = handshake(client, server)
    assert dict(x[0] for x in seen["peer"]["subject"]) == {"commonName": "alice"}


def test_pkcs12_keystore_and_truststore(ca, server_certificate, client_certificate, tmp_path):
    server = {"ssl.keystore.type": "PKCS12", "ssl.keystore.password": "ks-pw",
              "ssl.keystore.location": str(server_certificate.write_pkcs12(
                  tmp_path / "server.p12", "ks-pw")),
              "ssl.client.auth": "required", "ssl.truststore.certificates": ca.certificate_pem}
    client = {"ssl.truststore.type": "PKCS12", "ssl.truststore.password": "ts-pw",
              "ssl.truststore.location": str(ca.write_pkcs12_truststore(
                  tmp_path / "trust.p12", "ts-pw")),
              "ssl.keystore.type": "PKCS12", "ssl.keystore.password": "c-pw",
              "ssl.keystore.location": str(client_certificate.write_pkcs12(
                  tmp_path / "client.p12", "c-pw"))}
    assert "peer" in handshake(client, server)


def test_librdkafka_names(ca, client_certificate, server_settings, tmp_path):
    certificate, key = client_certificate.write_pem(tmp_path, "client", password="k-pw")
    client = {"ssl.ca.location": str(ca.write_pem(tmp_path / "ca.pem")),
              "ssl.certificate.location": str(certificate), "ssl.key.location": str(key),
              "ssl.key.password": "k-pw"}
    server = {**server_settings, "ssl.client.auth": "requested",
              "ssl.truststore.certificates": ca.certificate_pem}
    assert handshake(client, server)["peer"]


def test_host_name_verification_is_on_by_default_and_can_be_turned_off(ca, server_settings):
    trust = {"ssl.truststore.certificates": ca.certificate_pem}
    with pytest.raises(ssl.SSLCertVerificationError, match="Hostname mismatch"):
        handshake(trust, server_settings, host="broker.example.com")
    handshake({**trust, "ssl.endpoint.identification.algorithm": ""}, server_settings,
              host="broker.example.com")


def test_an_untrusted_broker_is_refused(server_settings):
    other_ca = TestCertificateAuthority("another CA")
    with pytest.raises(ssl.SSLCertVerificationError, match="certificate verify failed"):
        handshake({"ssl.truststore.certificates": other_ca.certificate_pem}, server_settings)


def test_enabled_protocols_bound_the_tls_version(ca, server_settings):
    client = client_context({"ssl.truststore.certificates": ca.certificate_pem,
                             "ssl.enabled.protocols": "TLSv1.3"})
    assert client.minimum_version == client.maximum_version == ssl.TLSVersion.TLSv1_3
    with pytest.raises(SecurityConfigError, match="unknown protocol SSLv3"):
        client_context({"ssl.enabled.protocols": "SSLv3"})


def test_cipher_suites(ca):
    context = client_context({"ssl.cipher.suites": "ECDHE-ECDSA-AES128-GCM-SHA256,"
                                                   "TLS_AES_128_GCM_SHA256"})
    tls12 = {c["name"] for c in context.get_ciphers() if c["protocol"] == "TLSv1.2"}
    assert tls12 == {"ECDHE-ECDSA-AES128-GCM-SHA256"}
    with pytest.raises(SecurityConfigError, match="no cipher matches NOPE"):
        client_context({"ssl.cipher.suites": "NOPE"})


@pytest.mark.parametrize("settings, error", [
    ({"ssl.truststore.location": "/x/trust.jks"},
     "keytool -importkeystore -srckeystore /x/trust.jks .* -deststoretype PKCS12"),
    ({"ssl.keystore.location": "/x/k.jks", "ssl.keystore.type": "JKS"}, "convert /x/k.jks"),
    ({"ssl.truststore.location": "/nonexistent.pem", "ssl.truststore.type": "PEM"},
     "cannot read /nonexistent.pem"),
    ({"ssl.truststore.certificates": "not a certificate"}, "not valid PEM certificates"),
    ({"ssl.keystore.key": "x"}, "give both"),
    ({"ssl.endpoint.identification.algorithm": "dns"}, "expected https or empty"),
])
def test_bad_settings_are_refused_clearly(settings, error):
    with pytest.raises(SecurityConfigError, match=error):
        client_context(settings)


def test_key_password_errors_do_not_show_it(server_certificate):
    settings = {"ssl.keystore.certificate.chain": server_certificate.certificate_pem,
                "ssl.keystore.key": server_certificate.key_pem_encrypted("right-pw")}
    with pytest.raises(SecurityConfigError, match=r"set ssl\.key\.password"):
        client_context(settings)
    with pytest.raises(SecurityConfigError, match=r"wrong ssl\.key\.password") as failure:
        client_context({**settings, "ssl.key.password": "wrong-pw"})
    assert "wrong-pw" not in str(failure.value)


def test_a_wrong_pkcs12_password(server_certificate, tmp_path):
    path = server_certificate.write_pkcs12(tmp_path / "s.p12", "good")
    with pytest.raises(SecurityConfigError, match="wrong password or not a PKCS12"):
        server_context({"ssl.keystore.location": str(path), "ssl.keystore.type": "PKCS12",
                        "ssl.keystore.password": "bad"})


def test_a_listener_needs_a_keystore():
    with pytest.raises(SecurityConfigError, match="needs a keystore"):
        server_context({})


def certificate_requests(server_settings, client_settings) -> list[bytes]:
    """The CertificateRequest messages a client receives in a real handshake (TLS 1.3 and
    1.2), read with the ssl module's message callback."""
    requests = []

    def record(connection, direction, version, content_type, message_type, data):
        if direction == "read" and message_type == ssl._TLSMessageType.CERTIFICATE_REQUEST:
            requests.append(bytes(data))

    for version in (ssl.TLSVersion.TLSv1_3, ssl.TLSVersion.TLSv1_2):
        server_ctx = server_context(server_settings)
        listener = socket.create_server(("127.0.0.1", 0))

        def serve(listener, server_ctx):
            conn, _ = listener.accept()
            with contextlib.suppress(ssl.SSLError, OSError), \
                    server_ctx.wrap_socket(conn, server_side=True) as tls:
                tls.recv(1)

        thread = threading.Thread(target=serve, args=(listener, server_ctx), daemon=True)
        thread.start()
        client_ctx = client_context(client_settings)
        client_ctx.maximum_version = version
        client_ctx._msg_callback = record
        try:
            with socket.create_connection(listener.getsockname(), timeout=10) as raw, \
                    client_ctx.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                tls.sendall(b"x")
                thread.join(10)
                assert not thread.is_alive(), "the server's side still in its handshake after 10 s"
        finally:
            listener.close()
    return requests


@pytest.mark.parametrize("client_auth", ["required", "requested"])
def test_a_listener_asking_for_certificates_names_the_cas_it_trusts(ca, server_settings,
                                                                     client_certificate,
                                                                     client_auth):
    """As Java's SSLEngine does (certificate_authorities): clients such as librdkafka send no
    certificate that none of these CAs signed."""
    other = TestCertificateAuthority("another CA")
    trust = ca.certificate_pem + other.certificate_pem
    requests = certificate_requests(
        {**server_settings, "ssl.client.auth": client_auth, "ssl.truststore.certificates": trust},
        {"ssl.truststore.certificates": ca.certificate_pem,
         "ssl.keystore.certificate.chain": client_certificate.certificate_pem,
         "ssl.keystore.key": client_certificate.key_pem})
    assert len(requests) == 2  # TLS 1.3, then TLS 1.2
    for request in requests:
        for authority in (ca, other):
            assert authority.certificate.subject.public_bytes() in request

