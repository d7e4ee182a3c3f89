"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as Kafka speaks them.

The exchange, each message a comma-separated list of ``key=value`` attributes::

    client-first  n,,n=<user>,r=<client nonce>            gs2 header "n,," + the "bare" part
    server-first  r=<client nonce><server nonce>,s=<base64 salt>,i=<iterations>
    client-final  c=biws,r=<full nonce>,p=<base64 ClientProof>   ("biws" = base64 of "n,,")
    server-final  v=<base64 ServerSignature>                 (or e=<error>)

with, ``H`` the hash, ``HMAC`` keyed with its first argument, ``Hi`` PBKDF2-HMAC::

    SaltedPassword  = Hi(password, salt, iterations)
    ClientKey       = HMAC(SaltedPassword, "Client Key")    StoredKey = H(ClientKey)
    ServerKey       = HMAC(SaltedPassword, "Server Key")
    AuthMessage     = client-first-bare + "," + server-first + "," + client-final-without-proof
    ClientProof     = ClientKey XOR HMAC(StoredKey, AuthMessage)
    ServerSignature = HMAC(ServerKey, AuthMessage)

The server keeps only (salt, StoredKey, ServerKey, iterations): Kafka stores them in ZooKeeper
under ``/config/users/<user>`` as ``SCRAM-SHA-256=salt=<b64>,stored_key=<b64>,
server_key=<b64>,iterations=<n>`` (Kafka's ``ScramCredentialUtils``, ``ScramFormatter``);
:class:`ScramCredential` reads and writes that text. As Kafka, iterations are at least 4096;
user names escape ``=`` and ``,`` as ``=3D`` and ``=2C``; channel binding is not supported.

:class:`ScramClient` and :class:`ScramServer` are pure state machines, bytes in and bytes out.
Their errors (:class:`~.errors.SaslAuthenticationError`) never contain the password or keys.

RFC 7677's test vector (section 3):

>>> client = ScramClient("SCRAM-SHA-256", "user", "pencil", nonce="rOprNGfwEbeRWgbNEkqO")
>>> client.first_message()
b'n,,n=user,r=rOprNGfwEbeRWgbNEkqO'
>>> client.final_message(b"r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,"
...                      b"s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096")
b'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ='
>>> client.verify_server_final(b"v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=")
>>> client.complete
True
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .errors import SaslAuthenticationError

#: Mechanism name -> hash name (hashlib).
MECHANISMS = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}
#: Mechanism name -> its number on the wire (Kafka's ``ScramMechanism.type``; 0 is UNKNOWN).
MECHANISM_TYPES = {"SCRAM-SHA-256": 1, "SCRAM-SHA-512": 2}
MIN_ITERATIONS = 4096  # Kafka's ScramMechanism.minIterations
MAX_ITERATIONS = 16384  # the most AlterUserScramCredentials accepts
_GS2_HEADER = b"n,,"


def hash_name(mechanism: str) -> str:
    try:
        return MECHANISMS[mechanism]
    except KeyError:
        raise ValueError(f"unknown SCRAM mechanism {mechanism!r}; expected one of "
                         f"{', '.join(MECHANISMS)}") from None


def _hmac(hash_: str, key: bytes, message: bytes) -> bytes:
    return hmac.new(key, message, hash_).digest()


def _salted_password(hash_: str, password: str, salt: bytes, iterations: int) -> bytes:
    return hashlib.pbkdf2_hmac(hash_, password.encode(), salt, iterations)


def salted_password(mechanism: str, password: str, salt: bytes, iterations: int) -> bytes:
    """``Hi(password, salt, iterations)``: what a client sends with AlterUserScramCredentials."""
    return _salted_password(hash_name(mechanism), password, salt, iterations)


def _nonce() -> str:
    """A printable random nonce (no ``,``), as Kafka's ScramFormatter.secureRandomString."""
    return base64.b64encode(secrets.token_bytes(24)).decode().replace("/", "_")


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _unb64(text: str, what: str) -> bytes:
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        raise SaslAuthenticationError(f"SCRAM: {what} is not valid base64") from None


def escape_username(name: str) -> str:
    """RFC 5802 ``saslname``: ``=`` as ``=3D``, ``,`` as ``=2C``.

    >>> escape_username("a=b,c")
    'a=3Db=2Cc'
    """
    return name.replace("=", "=3D").replace(",", "=2C")


def unescape_username(text: str) -> str:
    if "=" in text.replace("=3D", "").replace("=2C", ""):
        raise SaslAuthenticationError("SCRAM: invalid user name: '=' not followed by 3D or 2C")
    return text.replace("=2C", ",").replace("=3D", "=")


def _attributes(message: bytes, what: str) -> list[tuple[str, str]]:
    """``k=v,k=v`` as a list of pairs, in order."""
    try:
        text = bytes(message).decode()
    except UnicodeDecodeError:
        raise SaslAuthenticationError(f"SCRAM: invalid {what}: not UTF-8") from None
    pairs = []
    for item in text.split(","):
        key, sep, value = item.partition("=")
        if not sep or len(key) != 1 or not key.isalpha():
            raise SaslAuthenticationError(f"SCRAM: invalid {what}: expected key=value "
                                          f"attributes separated by ','")
        pairs.append((key, value))
    return pairs


def _expect(pairs: list[tuple[str, str]], keys: str, what: str) -> list[str]:
    """The values of the leading attributes ``keys`` (one letter each), in that order."""
    if len(pairs) < len(keys) or "".join(k for k, _ in pairs[:len(keys)]) != keys:
        expected = ",".join(f"{k}=..." for k in keys)
        raise SaslAuthenticationError(f"SCRAM: invalid {what}: expected {expected}")
    return [v for _, v in pairs[:len(keys)]]


@dataclass(frozen=True)
class ScramCredential:
    """What a broker stores for one user and mechanism (never the password).

    >>> text = "salt=c2FsdA==,stored_key=c3RvcmVk,server_key=c2VydmVy,iterations=4096"
    >>> ScramCredential.parse(text)
    ScramCredential(salt=b'salt', stored_key=<6 bytes>, server_key=<6 bytes>, iterations=4096)
    >>> ScramCredential.parse(text).to_text() == text
    True
    """

    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def __repr__(self) -> str:  # the keys are password equivalents: show their sizes only
        return (f"ScramCredential(salt={self.salt!r}, stored_key=<{len(self.stored_key)} bytes>, "
                f"server_key=<{len(self.server_key)} bytes>, iterations={self.iterations})")

    @classmethod
    def from_password(cls, mechanism: str, password: str, *, iterations: int = MIN_ITERATIONS,
                      salt: bytes | None = None) -> ScramCredential:
        """A credential for ``password`` (a random salt unless given), as Kafka's
        ``ScramFormatter.generateCredential``."""
        if not MIN_ITERATIONS <= iterations <= MAX_ITERATIONS:
            raise ValueError(f"SCRAM iterations must be within {MIN_ITERATIONS}-"
                             f"{MAX_ITERATIONS}, got {iterations}")
        salt = salt if salt is not None else _nonce().encode()
        return cls.from_salted_password(
            mechanism, salted_password(mechanism, password, salt, iterations), salt, iterations)

    @classmethod
    def from_salted_password(cls, mechanism: str, salted: bytes, salt: bytes,
                             iterations: int) -> ScramCredential:
        """The credential of a salted password (``Hi(password, salt, iterations)``), as an
        AlterUserScramCredentials request carries it (Kafka's
        ``ScramFormatter.generateCredential(salt, saltedPassword, iterations)``)."""
        hash_ = hash_name(mechanism)
        stored_key = hashlib.new(hash_, _hmac(hash_, salted, b"Client Key")).digest()
        server_key = _hmac(hash_, salted, b"Server Key")
        return cls(bytes(salt), stored_key, server_key, iterations)

    @classmethod
    def parse(cls, text: str) -> ScramCredential:
        """Kafka's ``salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>``."""
        fields = {}
        for item in text.split(","):
            key, sep, value = item.partition("=")
            if not sep:
                raise ValueError(f"invalid SCRAM credential: {key[:20]!r} is not key=value")
            fields[key.strip()] = value.strip()
        expected = {"salt", "stored_key", "server_key", "iterations"}
        if set(fields) != expected:
            raise ValueError(f"invalid SCRAM credential: expected the fields "
                             f"{', '.join(sorted(expected))}, got {', '.join(sorted(fields))}")
        try:
            return cls(*(base64.b64decode(fields[k], validate=True)
                         for k in ("salt", "stored_key", "server_key")),
                       int(fields["iterations"]))
        except (binascii.Error, ValueError):
            raise ValueError("invalid SCRAM credential: bad base64 or iterations") from None

    def to_text(self) -> str:
        return (f"salt={_b64(self.salt)},stored_key={_b64(self.stored_key)},"
                f"server_key={_b64(self.server_key)},iterations={self.iterations}")


class ScramClient:
    """The client side of one exchange: :meth:`first_message`, then :meth:`final_message` with
    the server's first message, then :meth:`verify_server_final` with its last."""

    def __init__(self, mechanism: str, username: str, password: str, *,
                 nonce: str | None = None):
        self.mechanism = mechanism
        self._hash = hash_name(mechanism)
        self._username = username
        self._password = password
        self._nonce = nonce or _nonce()
        self._state = "first"
        self._server_signature = b""
        self.complete = False

    def _step(self, expected: str) -> None:
        if self._state != expected:
            raise SaslAuthenticationError(f"{self.mechanism}: message out of order "
                                          f"(at step {self._state!r})", illegal_state=True)

    def __repr__(self) -> str:
        return f"<ScramClient {self.mechanism} user {self._username!r} {self._state}>"

    def first_message(self) -> bytes:
        self._step("first")
        self._client_first_bare = f"n={escape_username(self._username)},r={self._nonce}"
        self._state = "server-first"
        return _GS2_HEADER + self._client_first_bare.encode()

    def final_message(self, server_first: bytes) -> bytes:
        self._step("server-first")
        pairs = _attributes(server_first, "server-first message")
        if pairs and pairs[0][0] == "e":
            raise SaslAuthenticationError(f"{self.mechanism}: the server refused: {pairs[0][1]}")
        nonce, salt_text, iterations_text = _expect(pairs, "rsi", "server-first message")
        if not nonce.startswith(self._nonce) or len(nonce) == len(self._nonce):
            raise SaslAuthenticationError(
                f"{self.mechanism}: invalid server nonce: it does not extend the client's")
        salt = _unb64(salt_text, "salt")
        try:
            iterations = int(iterations_text)
        except ValueError:
            raise SaslAuthenticationError(f"{self.mechanism}: invalid iteration count") from None
        if iterations < MIN_ITERATIONS:
            raise SaslAuthenticationError(f"{self.mechanism}: the server asks for {iterations} "
                                          f"iterations, fewer than the minimum {MIN_ITERATIONS}")
        salted = _salted_password(self._hash, self._password, salt, iterations)
        client_key = _hmac(self._hash, salted, b"Client Key")
        stored_key = hashlib.new(self._hash, client_key).digest()
        without_proof = f"c={_b64(_GS2_HEADER)},r={nonce}"
        auth_message = ",".join((self._client_first_bare, bytes(server_first).decode(),
                                 without_proof)).encode()
        signature = _hmac(self._hash, stored_key, auth_message)
        proof = bytes(a ^ b for a, b in zip(client_key, signature, strict=True))
        self._server_signature = _hmac(self._hash, _hmac(self._hash, salted, b"Server Key"),
                                       auth_message)
        self._state = "server-final"
        return f"{without_proof},p={_b64(proof)}".encode()

    def verify_server_final(self, server_final: bytes) -> None:
        self._step("server-final")
        pairs = _attributes(server_final, "server-final message")
        if pairs and pairs[0][0] == "e":
            raise SaslAuthenticationError(f"{self.mechanism}: the server refused: {pairs[0][1]}")
        (signature,) = _expect(pairs, "v", "server-final message")
        if not hmac.compare_digest(_unb64(signature, "server signature"),
                                   self._server_signature):
            raise SaslAuthenticationError(
                f"{self.mechanism}: the server's signature is wrong (not the expected server)")
        self._state = "done"
        self.complete = True


CredentialLookup = Mapping[str, ScramCredential] | Callable[[str], ScramCredential | None]


class ScramServer:
    """The server side of one exchange: :meth:`respond` to the client's first message (gives
    server-first), then to its final message (gives server-final); :attr:`username` once
    :attr:`complete`. ``credentials`` maps user names to :class:`ScramCredential` (or is a
    function giving one, None for an unknown user)."""

    def __init__(self, mechanism: str, credentials: CredentialLookup, *,
                 nonce: str | None = None):
        self.mechanism = mechanism
        self._hash = hash_name(mechanism)
        self._credential_of = (credentials.get if isinstance(credentials, Mapping)
                               else credentials)
        self._server_nonce = nonce or _nonce()
        self._state = "client-first"
        self.complete = False
        self.username: str | None = None

    def respond(self, message: bytes) -> bytes:
        if self._state == "client-first":
            return self._server_first(message)
        if self._state == "client-final":
            return self._server_final(message)
        raise SaslAuthenticationError(f"{self.mechanism}: the exchange is already over",
                                      illegal_state=True)

    def _fail(self, reason: str) -> SaslAuthenticationError:
        self._state = "failed"
        return SaslAuthenticationError(f"{self.mechanism}: authentication failed: {reason}")

    def _server_first(self, message: bytes) -> bytes:
        data = bytes(message)
        gs2, sep, bare = data.partition(b",")
        authzid, sep2, bare = bare.partition(b",")
        if not sep or not sep2 or gs2 not in (b"n", b"y"):
            if gs2.startswith(b"p"):
                raise self._fail("channel binding is not supported")
            raise self._fail("invalid client-first message: expected n,[a=authzid],n=...,r=...")
        pairs = _attributes(bare, "client-first message")
        name_text, self._client_nonce = _expect(pairs, "nr", "client-first message")
        username = unescape_username(name_text)
        if authzid and authzid.decode(errors="replace") != f"a={name_text}":
            raise self._fail("the authorization id differs from the user name")
        if not self._client_nonce:
            raise self._fail("empty client nonce")
        credential = self._credential_of(username)
        if credential is None:
            raise self._fail(f"invalid credentials for user {username!r}")
        self._credential = credential
        self.username = username
        self._client_first_bare = bare.decode()
        self._server_first_text = (f"r={self._client_nonce}{self._server_nonce},"
                                   f"s={_b64(credential.salt)},i={credential.iterations}")
        self._state = "client-final"
        return self._server_first_text.encode()

    def _server_final(self, message: bytes) -> bytes:
        pairs = _attributes(message, "client-final message")
        channel_binding, nonce = _expect(pairs, "cr", "client-final message")
        if pairs[-1][0] != "p":
            raise self._fail("invalid client-final message: no proof (p=...)")
        if nonce != self._client_nonce + self._server_nonce:
            raise self._fail("invalid nonce in the client-final message")
        if _unb64(channel_binding, "channel binding") not in (b"n,,", b"y,,") \
                and not _unb64(channel_binding, "channel binding").startswith((b"n,a=", b"y,a=")):
            raise self._fail("invalid channel binding attribute")
        proof = _unb64(pairs[-1][1], "client proof")
        without_proof = bytes(message)[:bytes(message).rindex(b",p=")].decode()
        auth_message = ",".join((self._client_first_bare, self._server_first_text,
                                 without_proof)).encode()
        credential = self._credential
        signature = _hmac(self._hash, credential.stored_key, auth_message)
        if len(proof) != len(signature):
            raise self._fail(f"invalid credentials for user {self.username!r}")
        client_key = bytes(a ^ b for a, b in zip(proof, signature, strict=True))
        if not hmac.compare_digest(hashlib.new(self._hash, client_key).digest(),
                                   credential.stored_key):
            raise self._fail(f"invalid credentials for user {self.username!r}")
        self._state = "done"
        self.complete = True
        server_signature = _hmac(self._hash, credential.server_key, auth_message)
        return f"v={_b64(server_signature)}".encode()
