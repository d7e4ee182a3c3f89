"""The certificate authorities a TLS listener names when it asks for a client certificate.

A server that wants a client certificate says which issuers it accepts: the
``certificate_authorities`` of the CertificateRequest (TLS 1.2, RFC 5246 7.4.4; an extension in
TLS 1.3, RFC 8446 4.2.4). Kafka's brokers, on Java's SSLEngine, name every CA of their
truststore there, and clients choose by it: librdkafka sends no certificate whose issuer is not
named (so a client with an untrusted certificate is refused for sending none, and on a SASL_SSL
listener with ``ssl.client.auth=requested`` still gets in with its SASL login).

Python's :mod:`ssl` trusts CAs (``load_verify_locations``) without naming them, and has no call
for OpenSSL's ``SSL_CTX_add_client_CA``. :func:`name_trusted_cas` makes that call on the
context's ``SSL_CTX`` through :mod:`ctypes`, on the libssl that :mod:`ssl` itself runs on; it
checks first that the library and the context are the ones it expects (same OpenSSL version;
the context's verify mode and security level read back through OpenSSL), and otherwise leaves
the context as it is and says why (:class:`CaNamesUnavailable`).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import ssl
import sys
from functools import cache

# OpenSSL's SSL_VERIFY_* bits for each ssl.VerifyMode
_VERIFY_BITS = {ssl.CERT_NONE: 0, ssl.CERT_OPTIONAL: 1, ssl.CERT_REQUIRED: 3}


class CaNamesUnavailable(Exception):
    """This Python's ssl module cannot be reached through ctypes (another OpenSSL, a static
    build): the listener works, without naming its CAs."""


@cache
def _libraries() -> tuple[ctypes.CDLL, ctypes.CDLL]:
    """libssl and libcrypto as loaded by the ssl module."""
    paths = {}
    try:
        with open("/proc/self/maps") as maps:
            for line in maps:
                path = line.split()[-1]
                for name in ("libssl", "libcrypto"):
                    if f"/{name}." in path or f"/{name}-" in path:
                        paths.setdefault(name, path)
    except OSError:
        pass
    for name in ("libssl", "libcrypto"):
        paths.setdefault(name, ctypes.util.find_library(name[3:]))
    if not paths["libssl"] or not paths["libcrypto"]:
        raise CaNamesUnavailable(f"OpenSSL's libraries are not found ({sys.platform})")
    libssl, libcrypto = ctypes.CDLL(paths["libssl"]), ctypes.CDLL(paths["libcrypto"])
    libcrypto.OpenSSL_version_num.restype = ctypes.c_ulong
    if libcrypto.OpenSSL_version_num() != ssl.OPENSSL_VERSION_NUMBER:
        raise CaNamesUnavailable(f"{paths['libcrypto']} is not the OpenSSL of the ssl module "
                                 f"({ssl.OPENSSL_VERSION})")
    libssl.SSL_CTX_get_verify_mode.argtypes = [ctypes.c_void_p]
    libssl.SSL_CTX_get_security_level.argtypes = [ctypes.c_void_p]
    libssl.SSL_CTX_add_client_CA.argtypes = [ctypes.c_void_p, ctypes.c_void_p]
    libcrypto.d2i_X509.restype = ctypes.c_void_p
    libcrypto.d2i_X509.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_char_p),
                                   ctypes.c_long]
    libcrypto.X509_free.argtypes = [ctypes.c_void_p]
    return libssl, libcrypto


def _ssl_ctx(context: ssl.SSLContext, libssl: ctypes.CDLL) -> int:
    """The SSL_CTX pointer of ``context`` (CPython's PySSLContext holds it right after the
    object header), checked against the context's own verify mode and security level."""
    pointer = ctypes.c_void_p.from_address(id(context) + object.__basicsize__).value
    if not pointer or (libssl.SSL_CTX_get_verify_mode(pointer) != _VERIFY_BITS[
            context.verify_mode]
            or libssl.SSL_CTX_get_security_level(pointer) != context.security_level):
        raise CaNamesUnavailable("the ssl module's context is not laid out as expected")
    return pointer


def name_trusted_cas(context: ssl.SSLContext) -> int:
    """Name the context's trusted CAs (those loaded from files or PEM data) in its certificate
    requests; the number named. Raises :class:`CaNamesUnavailable`."""
    libssl, libcrypto = _libraries()
    pointer = _ssl_ctx(context, libssl)
    named = 0
    for der in context.get_ca_certs(binary_form=True):
        data = ctypes.c_char_p(der)
        x509 = libcrypto.d2i_X509(None, ctypes.byref(data), len(der))
        if not x509:
            continue
        try:
            named += libssl.SSL_CTX_add_client_CA(pointer, x509) == 1  # copies the name
        finally:
            libcrypto.X509_free(x509)
    return named
