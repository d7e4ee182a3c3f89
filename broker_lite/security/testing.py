"""Certificates generated at run time for tests (nothing secret is ever committed): a test
certificate authority, a server certificate for given host names and addresses, a client
certificate, as PEM text, written to files and to PKCS12 stores on demand.

>>> ca = TestCertificateAuthority()
>>> server = ca.issue("broker", hosts=["localhost", "127.0.0.1"])
>>> server.certificate_pem.startswith("-----BEGIN CERTIFICATE-----")
True
>>> "ENCRYPTED" in server.key_pem_encrypted("pw")
True
"""

from __future__ import annotations

import datetime
import ipaddress
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.serialization import pkcs12
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID


def _name(common_name: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])


def _validity(builder: x509.CertificateBuilder) -> x509.CertificateBuilder:
    now = datetime.datetime.now(datetime.timezone.utc)
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

    def issue(self, common_name: str, *, hosts: list[str] = (), client: bool = False
              ) -> IssuedCertificate:
        """A certificate for ``hosts`` (DNS names or IP addresses, as subject alternative
        names) for a server, or for a client (``client=True``)."""
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
                [ExtendedKeyUsageOID.CLIENT_AUTH if client else ExtendedKeyUsageOID.SERVER_AUTH]),
                critical=False)
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        certificate = builder.sign(self.key, hashes.SHA256())
        return IssuedCertificate(certificate, key, self.certificate_pem)
