"""``ssl.SSLContext`` from Kafka's TLS settings (Kafka's ``SslConfigs``; librdkafka's names too).

Trust (which certificates a peer may present), by the first of:

* ``ssl.truststore.certificates`` -- PEM certificates given inline;
* ``ssl.truststore.location`` with ``ssl.truststore.type`` ``PEM`` (a PEM file) or ``PKCS12``
  (with ``ssl.truststore.password``); librdkafka's ``ssl.ca.location`` (a PEM file or a
  directory of them) and ``ssl.ca.pem`` (inline);
* otherwise the system's default certificate authorities.

Identity (the certificate this side presents: a client certificate, or the server's):

* ``ssl.keystore.certificate.chain`` + ``ssl.keystore.key`` -- PEM given inline;
* ``ssl.keystore.location`` with ``ssl.keystore.type`` ``PEM`` (certificate chain and key in
  one file) or ``PKCS12`` (``ssl.keystore.password``); librdkafka's
  ``ssl.certificate.location`` + ``ssl.key.location`` (or ``ssl.certificate.pem`` +
  ``ssl.key.pem``);
* ``ssl.key.password`` decrypts an encrypted PEM private key (PKCS#8 or traditional).

Kafka's default store type is JKS, a Java-only format: it is refused with the ``keytool`` command
that converts it to PKCS12. PKCS12 files and encrypted keys are read with the ``cryptography``
library; the decrypted key never touches the disk (it is handed to OpenSSL re-encrypted with a
one-time password, because :meth:`ssl.SSLContext.load_cert_chain` reads files only).

Others: ``ssl.endpoint.identification.algorithm`` (``https``, the default: the broker's host
name is checked against its certificate; empty, or librdkafka's ``none``: not checked),
``enable.ssl.certificate.verification`` (librdkafka; ``false`` trusts any certificate),
``ssl.enabled.protocols`` (``TLSv1.2,TLSv1.3`` by default; the lowest and highest given bound
the versions), ``ssl.cipher.suites`` (OpenSSL cipher names for TLS 1.2; TLS 1.3 suites are
always enabled by OpenSSL), and on the server side ``ssl.client.auth``
(``required``, ``requested``, ``none``).
"""

from __future__ import annotations

import logging
import os
import secrets
import ssl
import tempfile
from collections.abc import Mapping
from pathlib import Path

from .client_ca_names import CaNamesUnavailable, name_trusted_cas
from .errors import SecurityConfigError

logger = logging.getLogger(__name__)

_PROTOCOLS = {
    "TLSv1": ssl.TLSVersion.TLSv1, "TLSv1.1": ssl.TLSVersion.TLSv1_1,
    "TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3,
}
_CLIENT_AUTH = {"required": ssl.CERT_REQUIRED, "requested": ssl.CERT_OPTIONAL,
                "none": ssl.CERT_NONE}
_STORE_TYPES = ("JKS", "PKCS12", "PEM")


def _get(settings: Mapping[str, str], name: str) -> str | None:
    value = settings.get(name)
    if value is None:
        return None
    value = str(value).strip()
    return value or None


def _password(settings: Mapping[str, str], name: str) -> bytes | None:
    value = settings.get(name)
    return str(value).encode() if value not in (None, "") else None


def _read(path: str, key: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise SecurityConfigError(key, f"cannot read {path}: {exc.strerror or exc}") from None


def _store_type(settings: Mapping[str, str], key: str, location: str) -> str:
    kind = (_get(settings, key) or "JKS").upper()
    if kind not in _STORE_TYPES:
        raise SecurityConfigError(key, f"unknown store type {kind!r}; expected PEM or PKCS12")
    if kind == "JKS":
        raise SecurityConfigError(
            key, f"JKS stores (Kafka's default type) are Java-only and not read by this "
                 f"client; convert {location} to PKCS12 with: keytool -importkeystore "
                 f"-srckeystore {location} -srcstoretype JKS -destkeystore "
                 f"{location}.p12 -deststoretype PKCS12, then set {key}=PKCS12 (or give PEM "
                 f"with {key}=PEM)")
    return kind


def _pkcs12(data: bytes, password: bytes | None, key: str):
    from cryptography.hazmat.primitives.serialization import pkcs12

    try:
        return pkcs12.load_pkcs12(data, password)
    except ValueError:
        raise SecurityConfigError(key, "cannot read the PKCS12 store: wrong password or not a "
                                       "PKCS12 file") from None


def _certificates_pem(certificates) -> str:
    from cryptography.hazmat.primitives.serialization import Encoding

    return "".join(c.public_bytes(Encoding.PEM).decode() for c in certificates)


# -- trust ----------------------------------------------------------------------------------------


def _load_trust(context: ssl.SSLContext, settings: Mapping[str, str],
                purpose: ssl.Purpose) -> None:
    inline = _get(settings, "ssl.truststore.certificates") or _get(settings, "ssl.ca.pem")
    location = _get(settings, "ssl.truststore.location")
    ca_location = _get(settings, "ssl.ca.location")
    try:
        if inline:
            context.load_verify_locations(cadata=inline)
        elif location:
            kind = _store_type(settings, "ssl.truststore.type", location)
            data = _read(location, "ssl.truststore.location")
            if kind == "PEM":
                context.load_verify_locations(cadata=data.decode())
            else:
                store = _pkcs12(data, _password(settings, "ssl.truststore.password"),
                                "ssl.truststore.location")
                certificates = [c.certificate for c in store.additional_certs]
                certificates += [store.cert.certificate] if store.cert else []
                if not certificates:
                    raise SecurityConfigError("ssl.truststore.location",
                                              f"{location} holds no certificate")
                context.load_verify_locations(cadata=_certificates_pem(certificates))
        elif ca_location:
            if os.path.isdir(ca_location):
                context.load_verify_locations(capath=ca_location)
            else:
                context.load_verify_locations(cafile=_readable(ca_location, "ssl.ca.location"))
        else:
            context.load_default_certs(purpose)
    except ssl.SSLError as exc:
        which = ("ssl.truststore.certificates" if inline else
                 "ssl.truststore.location" if location else "ssl.ca.location")
        raise SecurityConfigError(which, f"not valid PEM certificates ({exc.reason})") from None


def _readable(path: str, key: str) -> str:
    _read(path, key)
    return path


# -- identity -------------------------------------------------------------------------------------


def _private_key(pem: bytes, password: bytes | None, key: str):
    from cryptography.hazmat.primitives import serialization

    try:
        return serialization.load_pem_private_key(pem, password)
    except TypeError:
        raise SecurityConfigError(key, "the private key is encrypted: set ssl.key.password"
                                  if password is None else
                                  "the private key is not encrypted, yet ssl.key.password "
                                  "is set") from None
    except ValueError:
        raise SecurityConfigError(key, "cannot read the private key: wrong ssl.key.password "
                                       "or not a PEM private key") from None


def _identity(settings: Mapping[str, str]) -> tuple[str, object] | None:
    """(PEM certificate chain, private key object), or None when no identity is set."""
    from cryptography import x509

    key_password = _password(settings, "ssl.key.password")
    chain = _get(settings, "ssl.keystore.certificate.chain")
    if chain or _get(settings, "ssl.keystore.key"):
        key_pem = _get(settings, "ssl.keystore.key")
        if not chain or not key_pem:
            raise SecurityConfigError("ssl.keystore.certificate.chain",
                                      "give both ssl.keystore.certificate.chain and "
                                      "ssl.keystore.key")
        return chain, _private_key(key_pem.encode(), key_password, "ssl.keystore.key")
    location = _get(settings, "ssl.keystore.location")
    if location:
        kind = _store_type(settings, "ssl.keystore.type", location)
        data = _read(location, "ssl.keystore.location")
        if kind == "PEM":
            certificates = x509.load_pem_x509_certificates(data)
            return (_certificates_pem(certificates),
                    _private_key(data, key_password, "ssl.keystore.location"))
        store = _pkcs12(data, _password(settings, "ssl.keystore.password"),
                        "ssl.keystore.location")
        if store.key is None or store.cert is None:
            raise SecurityConfigError("ssl.keystore.location",
                                      f"{location} holds no private key with its certificate")
        chain_certs = [store.cert.certificate, *(c.certificate for c in store.additional_certs)]
        return _certificates_pem(chain_certs), store.key
    cert_location = _get(settings, "ssl.certificate.location")
    cert_pem = _get(settings, "ssl.certificate.pem")
    if cert_location or cert_pem:
        certificate = cert_pem.encode() if cert_pem else _read(cert_location,
                                                               "ssl.certificate.location")
        key_location = _get(settings, "ssl.key.location")
        key_pem = _get(settings, "ssl.key.pem")
        if not key_location and not key_pem:
            raise SecurityConfigError("ssl.certificate.location",
                                      "give the private key too (ssl.key.location)")
        key_data = key_pem.encode() if key_pem else _read(key_location, "ssl.key.location")
        return certificate.decode(), _private_key(key_data, key_password, "ssl.key.location")
    return None


def _load_identity(context: ssl.SSLContext, settings: Mapping[str, str]) -> bool:
    from cryptography.hazmat.primitives import serialization

    identity = _identity(settings)
    if identity is None:
        return False
    chain, key = identity
    one_time = secrets.token_urlsafe(24).encode()
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.BestAvailableEncryption(one_time))
    with tempfile.TemporaryDirectory(prefix="kpy-tls-") as directory:
        path = Path(directory) / "identity.pem"
        path.touch(mode=0o600)
        path.write_bytes(chain.encode() + b"\n" + key_pem)
        try:
            context.load_cert_chain(path, password=one_time)
        except ssl.SSLError as exc:
            raise SecurityConfigError("ssl.keystore", f"the certificate chain and the private "
                                                      f"key do not match ({exc.reason})") from None
    return True


# -- common ---------------------------------------------------------------------------------------


def _apply_protocols_and_ciphers(context: ssl.SSLContext, settings: Mapping[str, str]) -> None:
    protocols = [p.strip() for p in (_get(settings, "ssl.enabled.protocols")
                                     or "TLSv1.2,TLSv1.3").split(",") if p.strip()]
    unknown = [p for p in protocols if p not in _PROTOCOLS]
    if unknown or not protocols:
        raise SecurityConfigError("ssl.enabled.protocols",
                                  f"unknown protocol {', '.join(unknown)}; expected some of "
                                  f"{', '.join(_PROTOCOLS)}")
    versions = sorted(_PROTOCOLS[p] for p in protocols)
    try:
        context.minimum_version, context.maximum_version = versions[0], versions[-1]
    except ValueError as exc:
        raise SecurityConfigError("ssl.enabled.protocols", str(exc)) from None
    ciphers = [c.strip() for c in (_get(settings, "ssl.cipher.suites") or "").split(",")
               if c.strip()]
    tls12 = [c for c in ciphers if not c.startswith("TLS_AES_")
             and not c.startswith("TLS_CHACHA20_")]
    if tls12:
        try:
            context.set_ciphers(":".join(tls12))
        except ssl.SSLError:
            raise SecurityConfigError(
                "ssl.cipher.suites", f"no cipher matches {', '.join(tls12)} (give OpenSSL "
                                     f"names such as ECDHE-RSA-AES128-GCM-SHA256)") from None


def endpoint_identification(settings: Mapping[str, str]) -> bool:
    """Whether the broker's host name is checked (``ssl.endpoint.identification.algorithm``)."""
    value = settings.get("ssl.endpoint.identification.algorithm", "https")
    value = str(value).strip().lower()
    if value in ("", "none"):
        return False
    if value != "https":
        raise SecurityConfigError("ssl.endpoint.identification.algorithm",
                                  f"expected https or empty, got {value!r}")
    return True


def client_context(settings: Mapping[str, str]) -> ssl.SSLContext:
    """The client's context: the broker's certificate checked against the trust settings, its
    host name checked unless turned off, a client certificate if an identity is set."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    verify = str(settings.get("enable.ssl.certificate.verification", "true")).strip().lower()
    context.check_hostname = endpoint_identification(settings) and verify != "false"
    if verify == "false":
        context.verify_mode = ssl.CERT_NONE
    _apply_protocols_and_ciphers(context, settings)
    _load_trust(context, settings, ssl.Purpose.SERVER_AUTH)
    _load_identity(context, settings)
    return context


def server_context(settings: Mapping[str, str]) -> ssl.SSLContext:
    """A listener's context: its identity (required), the trust used to check client
    certificates, and ``ssl.client.auth``."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    _apply_protocols_and_ciphers(context, settings)
    if not _load_identity(context, settings):
        raise SecurityConfigError("ssl.keystore.location", "a TLS listener needs a keystore "
                                                           "(its certificate and private key)")
    client_auth = (_get(settings, "ssl.client.auth") or "none").lower()
    if client_auth not in _CLIENT_AUTH:
        raise SecurityConfigError("ssl.client.auth", f"expected required, requested or none, "
                                                     f"got {client_auth!r}")
    context.verify_mode = _CLIENT_AUTH[client_auth]
    if client_auth != "none":
        _load_trust(context, settings, ssl.Purpose.CLIENT_AUTH)
        try:
            name_trusted_cas(context)
        except CaNamesUnavailable as exc:
            logger.warning("the TLS listener does not name its trusted CAs to clients asking "
                           "which certificate to send: %s", exc)
    return context
