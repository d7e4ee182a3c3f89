"""Certificates and identity providers made at run time for tests (nothing secret is ever
committed): a test certificate authority, a server certificate for given host names and
addresses, a client certificate, as PEM text, written to files and to PKCS12 stores on demand;
and an OIDC identity provider issuing signed JWTs, with its JWKS and token endpoints.

>>> ca = TestCertificateAuthority()
>>> server = ca.issue("broker", hosts=["localhost", "127.0.0.1"])
>>> server.certificate_pem.startswith("-----BEGIN CERTIFICATE-----")
True
>>> "ENCRYPTED" in server.key_pem_encrypted("pw")
True
"""

from __future__ import annotations

import base64
import datetime
import ipaddress
import json
import threading
import time
import urllib.parse
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import decode_dss_signature
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.UTC)
    return builder.not_valid_before(now - datetime.timedelta(minutes=5)).not_valid_after(
        now + datetime.timedelta(days=2))


@dataclass
class IssuedCertificate:
    """A certificate, its private key and the chain up to (excluding) the root."""

    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey
    ca_pem: str

    @property
    def certificate_pem(self) -> str:
        return self.certificate.public_bytes(serialization.Encoding.PEM).decode()

    @property
    def key_pem(self) -> str:
        return self.key.private_bytes(serialization.Encoding.PEM,
                                      serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption()).decode()

    def key_pem_encrypted(self, password: str) -> str:
        return self.key.private_bytes(
            serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
            serialization.BestAvailableEncryption(password.encode())).decode()

    def write_pem(self, directory: Path, name: str, password: str | None = None
                  ) -> tuple[Path, Path]:
        """``<name>.crt`` and ``<name>.key`` (encrypted with ``password`` if given)."""
        certificate, key = Path(directory) / f"{name}.crt", Path(directory) / f"{name}.key"
        certificate.write_text(self.certificate_pem)
        key.write_text(self.key_pem_encrypted(password) if password else self.key_pem)
        return certificate, key

    def write_pkcs12(self, path: Path, password: str) -> Path:
        """A PKCS12 keystore with the key and certificate."""
        Path(path).write_bytes(pkcs12.serialize_key_and_certificates(
            b"kpy", self.key, self.certificate, None,
            serialization.BestAvailableEncryption(password.encode())))
        return Path(path)


class TestCertificateAuthority:
    """A self-signed CA that issues server and client certificates (EC P-256 keys)."""

    __test__ = False  # not a pytest test class

    def __init__(self, common_name: str = "kpy test CA"):
        self.key = ec.generate_private_key(ec.SECP256R1())
        self.certificate = _validity(x509.CertificateBuilder()).subject_name(
            _name(common_name)).issuer_name(_name(common_name)).public_key(
            self.key.public_key()).serial_number(x509.random_serial_number()).add_extension(
            x509.BasicConstraints(ca=True, path_length=None), critical=True).add_extension(
            x509.KeyUsage(digital_signature=True, key_cert_sign=True, crl_sign=True,
                          content_commitment=False, key_encipherment=False,
                          data_encipherment=False, key_agreement=False, encipher_only=False,
                          decipher_only=False), critical=True).sign(self.key, hashes.SHA256())

    @property
    def certificate_pem(self) -> str:
        return self.certificate.public_bytes(serialization.Encoding.PEM).decode()

    def write_pem(self, path: Path) -> Path:
        Path(path).write_text(self.certificate_pem)
        return Path(path)

    def write_pkcs12_truststore(self, path: Path, password: str) -> Path:
        Path(path).write_bytes(pkcs12.serialize_key_and_certificates(
            None, None, None, [self.certificate],
            serialization.BestAvailableEncryption(password.encode())))
        return Path(path)

    def issue(self, common_name: str, *, hosts: list[str] = (), client: bool = False,
              server: bool | None = None) -> IssuedCertificate:
        """A certificate for ``hosts`` (DNS names or IP addresses, as subject alternative
        names) for a server, or for a client (``client=True``), or both (``client=True,
        server=True``: a broker, which is a client of the other brokers too)."""
        server = not client if server is None else server
        key = ec.generate_private_key(ec.SECP256R1())
        names = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        builder = _validity(x509.CertificateBuilder()).subject_name(_name(common_name)) \
            .issuer_name(self.certificate.subject).public_key(key.public_key()) \
            .serial_number(x509.random_serial_number()) \
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True) \
            .add_extension(x509.ExtendedKeyUsage(
                [*([ExtendedKeyUsageOID.SERVER_AUTH] if server else []),
                 *([ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])]), critical=False)
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        certificate = builder.sign(self.key, hashes.SHA256())
        return IssuedCertificate(certificate, key, self.certificate_pem)


# -- an OIDC identity provider ----------------------------------------------------------------


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _b64url_int(n: int, size: int | None = None) -> str:
    return _b64url(n.to_bytes(size or (n.bit_length() + 7) // 8, "big"))


@dataclass
class SigningKey:
    """A key the provider signs with: ``kid``, an RSA key (RS*, PS*) or an EC P-256 key
    (ES256)."""

    kid: str
    private: rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey

    def jwk(self) -> dict:
        numbers = self.private.public_key().public_numbers()
        if isinstance(self.private, rsa.RSAPrivateKey):
            return {"kty": "RSA", "kid": self.kid, "use": "sig", "n": _b64url_int(numbers.n),
                    "e": _b64url_int(numbers.e)}
        return {"kty": "EC", "kid": self.kid, "use": "sig", "crv": "P-256",
                "x": _b64url_int(numbers.x, 32), "y": _b64url_int(numbers.y, 32)}

    def sign(self, alg: str, data: bytes) -> bytes:
        digest = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}[alg[2:]]()
        if alg.startswith("RS"):
            return self.private.sign(data, padding.PKCS1v15(), digest)
        if alg.startswith("PS"):
            return self.private.sign(data, padding.PSS(padding.MGF1(digest),
                                                       digest.digest_size), digest)
        r, s = decode_dss_signature(self.private.sign(data, ec.ECDSA(digest)))
        return r.to_bytes(32, "big") + s.to_bytes(32, "big")


class TestIdentityProvider:
    """An OIDC identity provider on 127.0.0.1 from :meth:`start` to :meth:`stop`: its key set at
    ``jwks_url`` (an RSA key ``rsa-1`` and an EC key ``ec-1``), a client-credentials token
    endpoint at ``token_url`` (RS256 tokens whose subject is the client id, for any secret but
    ``wrong``), and :meth:`token` to sign any claims. ``jwks_requests`` counts the key set's
    fetches; :meth:`rotate` publishes a new RSA key.

    >>> with TestIdentityProvider() as idp:
    ...     token = idp.token({"sub": "alice"})
    >>> token.count("."), json.loads(base64.urlsafe_b64decode(token.split(".")[0] + "=="))
    (2, {'alg': 'RS256', 'kid': 'rsa-1', 'typ': 'JWT'})
    """

    __test__ = False  # not a pytest test class

    def __init__(self, *, issuer: str = "https://idp.kpy.test", audience: str = "kafka",
                 lifetime_s: int = 3600):
        self.issuer, self.audience, self.lifetime_s = issuer, audience, lifetime_s
        self.keys = {"rsa-1": SigningKey("rsa-1", rsa.generate_private_key(65537, 2048)),
                     "ec-1": SigningKey("ec-1", ec.generate_private_key(ec.SECP256R1()))}
        self.published = list(self.keys)
        self.jwks_requests = 0
        self._server: ThreadingHTTPServer | None = None

    def __enter__(self) -> TestIdentityProvider:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def start(self) -> TestIdentityProvider:
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True,
                         name="test-identity-provider").start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}{path}"

    @property
    def jwks_url(self) -> str:
        return self.url("/jwks")

    @property
    def token_url(self) -> str:
        return self.url("/token")

    def jwks(self) -> dict:
        return {"keys": [self.keys[kid].jwk() for kid in self.published]}

    def rotate(self) -> str:
        """Publish a new RSA key; its kid."""
        kid = f"rsa-{len(self.keys) + 1}"
        self.keys[kid] = SigningKey(kid, rsa.generate_private_key(65537, 2048))
        self.published.append(kid)
        return kid

    def token(self, claims: dict | None = None, *, alg: str = "RS256", kid: str | None = None,
              lifetime_s: float | None = None, key: SigningKey | None = None) -> str:
        """A signed JWT with ``iss``, ``aud``, ``iat`` and ``exp`` and ``claims`` over them (a
        claim given as None is left out); ``key`` signs instead of the provider's own."""
        now = int(time.time())
        body = {"iss": self.issuer, "aud": self.audience, "iat": now,
                "exp": now + (self.lifetime_s if lifetime_s is None else lifetime_s)}
        body.update(claims or {})
        body = {name: value for name, value in body.items() if value is not None}
        signer = key or self.keys[kid or ("ec-1" if alg.startswith("ES") else "rsa-1")]
        header = {"alg": alg, "kid": signer.kid, "typ": "JWT"}
        signing_input = (f"{_b64url(json.dumps(header).encode())}."
                         f"{_b64url(json.dumps(body).encode())}")
        return f"{signing_input}.{_b64url(signer.sign(alg, signing_input.encode()))}"

    def _handler(self):
        provider = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def _answer(self, status: int, document: dict) -> None:
                body = json.dumps(document).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self):  # http.server's name
                if self.path == "/jwks":
                    provider.jwks_requests += 1
                    self._answer(200, provider.jwks())
                else:
                    self._answer(404, {"error": "not_found"})

            def do_POST(self):  # http.server's name
                length = int(self.headers.get("Content-Length") or 0)
                form = urllib.parse.parse_qs(self.rfile.read(length).decode())
                basic = self.headers.get("Authorization", "").removeprefix("Basic ")
                client_id, _, secret = base64.b64decode(basic).decode().partition(":")
                if self.path != "/token" or form.get("grant_type") != ["client_credentials"] \
                        or not client_id or secret == "wrong":
                    self._answer(401, {"error": "invalid_client"})
                    return
                scope = (form.get("scope") or [None])[0]
                self._answer(200, {"access_token": provider.token(
                    {"sub": client_id, "scope": scope}), "token_type": "Bearer",
                    "expires_in": provider.lifetime_s})

        return Handler
