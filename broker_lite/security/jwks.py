"""An identity provider's JSON Web Key Set (RFC 7517) and JWS signature checks (RFC 7515, 7518)
with its keys: what Kafka's OAuthBearerValidatorCallbackHandler checks OIDC tokens against
(Kafka's ``RefreshingHttpsJwks`` and ``JwksFileVerificationKeyResolver``, with jose4j's
``VerificationJwkSelector``).

``sasl.oauthbearer.jwks.endpoint.url`` names the set: ``https://`` or ``http://`` (fetched with
a GET) or ``file:`` (read once). An HTTP set is fetched when the listener is made, and a
failure stops the broker's start (Kafka's "Could not refresh JWKS"); a background thread then
fetches it again every ``sasl.oauthbearer.jwks.endpoint.refresh.ms`` (3600000), retrying a
failed fetch ``sasl.oauthbearer.jwks.endpoint.retry.backoff.ms`` (100) later, the wait doubling
up to ``sasl.oauthbearer.jwks.endpoint.retry.backoff.max.ms`` (10000), and keeping the keys it
has meanwhile. A token naming a key id the set lacks is refused, and schedules a fetch at once
(once a minute per key id, for 16 ids at most, ids up to 1000 characters), as a provider
rotating its keys publishes the new one before signing with it. Checking a token never waits
for the network: it runs on the network threads.

The keys used: ``kty`` RSA (``n``, ``e``) or EC (``crv`` P-256, P-384, P-521 with ``x``, ``y``),
``use`` ``sig`` or absent, ``alg`` absent or the token's. Algorithms: RS256/384/512,
PS256/384/512, ES256/384/512; ``none`` never (jose4j's ``DISALLOW_NONE``), nor the HMAC ones
(a shared secret has no place in a published key set). A key is chosen by the token's ``kid``
when it has one, else the first key that fits the algorithm.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import OrderedDict
from dataclasses import dataclass

from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

logger = logging.getLogger(__name__)

MISSING_KEY_ID_CACHE_MAX_ENTRIES = 16
MISSING_KEY_ID_CACHE_IN_FLIGHT_S = 60.0
MISSING_KEY_ID_MAX_KEY_LENGTH = 1000
FETCH_TIMEOUT_S = 10.0

_HASHES = {"256": hashes.SHA256, "384": hashes.SHA384, "512": hashes.SHA512}
_CURVES = {"P-256": (ec.SECP256R1, 32), "P-384": (ec.SECP384R1, 48), "P-521": (ec.SECP521R1, 66)}
#: algorithm -> (key type, curve for ES*)
ALGORITHMS = {**{f"RS{n}": ("RSA", None) for n in _HASHES},
              **{f"PS{n}": ("RSA", None) for n in _HASHES},
              "ES256": ("EC", "P-256"), "ES384": ("EC", "P-384"), "ES512": ("EC", "P-521")}


class JwksError(Exception):
    """A key set that cannot be read, or a token no key of it verifies; the message names the
    URL or the reason, never a token."""


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _integer(jwk: dict, name: str) -> int:
    value = jwk.get(name)
    if not isinstance(value, str):
        raise JwksError(f"the key has no {name!r}")
    try:
        return int.from_bytes(_unb64url(value), "big")
    except (ValueError, binascii.Error):
        raise JwksError(f"the key's {name!r} is not base64url") from None


@dataclass(frozen=True)
class Jwk:
    """One verification key of the set."""

    kid: str | None
    kty: str
    alg: str | None
    crv: str | None
    key: object  # cryptography's RSAPublicKey or EllipticCurvePublicKey

    def fits(self, alg: str) -> bool:
        kty, curve = ALGORITHMS[alg]
        return self.kty == kty and (curve is None or self.crv == curve) \
            and self.alg in (None, alg)


def parse_jwk(jwk: dict) -> Jwk:
    """A verification key from its JSON form; raises :class:`JwksError`."""
    kty = jwk.get("kty")
    if kty == "RSA":
        key = rsa.RSAPublicNumbers(_integer(jwk, "e"), _integer(jwk, "n")).public_key()
        crv = None
    elif kty == "EC":
        crv = jwk.get("crv")
        if crv not in _CURVES:
            raise JwksError(f"unsupported curve {crv!r}")
        try:
            key = ec.EllipticCurvePublicNumbers(_integer(jwk, "x"), _integer(jwk, "y"),
                                                _CURVES[crv][0]()).public_key()
        except ValueError:
            raise JwksError("the EC key is not on its curve") from None
    else:
        raise JwksError(f"unsupported key type {kty!r}")
    alg = jwk.get("alg")
    kid = jwk.get("kid")
    return Jwk(kid if isinstance(kid, str) else None, kty,
               alg if isinstance(alg, str) else None, crv, key)


def parse_jwks(data: bytes) -> list[Jwk]:
    """The signature keys of a JWKS document (``{"keys": [...]}``); keys of other uses or
    unsupported types are left out. Raises :class:`JwksError` for a document that is not
    one."""
    try:
        document = json.loads(data)
    except ValueError:
        raise JwksError("not JSON") from None
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise JwksError('not a JWKS document ({"keys": [...]})')
    keys = []
    for jwk in document["keys"]:
        if not isinstance(jwk, dict) or jwk.get("use", "sig") != "sig":
            continue
        try:
            keys.append(parse_jwk(jwk))
        except JwksError as exc:
            logger.debug("JWKS key %r left out: %s", jwk.get("kid"), exc)
    return keys


def select_key(keys: list[Jwk], alg: str, kid: str | None) -> Jwk | None:
    """The key that verifies a token signed with ``alg`` by key ``kid`` (jose4j's
    VerificationJwkSelector): matching kid when given, and fitting the algorithm."""
    for key in keys:
        if (kid is None or key.kid == kid) and key.fits(alg):
            return key
    return None


def verify(alg: str, key: Jwk, signing_input: bytes, signature: bytes) -> bool:
    """Whether ``signature`` is ``key``'s ``alg`` signature of ``signing_input``."""
    digest = _HASHES[alg[2:]]()
    try:
        if alg.startswith("RS"):
            key.key.verify(signature, signing_input, padding.PKCS1v15(), digest)
        elif alg.startswith("PS"):
            key.key.verify(signature, signing_input,
                           padding.PSS(padding.MGF1(digest), digest.digest_size), digest)
        else:  # ES*: the JWS signature is R || S, fixed length (RFC 7518, 3.4)
            size = _CURVES[ALGORITHMS[alg][1]][1]
            if len(signature) != 2 * size:
                return False
            r, s = (int.from_bytes(signature[i:i + size], "big") for i in (0, size))
            key.key.verify(encode_dss_signature(r, s), signing_input, ec.ECDSA(digest))
    except InvalidSignature:
        return False
    return True


def fetch(url: str, timeout_s: float = FETCH_TIMEOUT_S) -> list[Jwk]:
    """The keys at ``url`` (http, https or file); raises :class:`JwksError`."""
    scheme = urllib.parse.urlsplit(url).scheme.lower()
    if scheme not in ("http", "https", "file"):
        raise JwksError(f"{url}: the URL must be http, https or file")
    try:
        with urllib.request.urlopen(url, timeout=timeout_s) as answer:  # scheme checked above
            data = answer.read()
    except urllib.error.HTTPError as exc:
        raise JwksError(f"{url} answered HTTP {exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise JwksError(f"cannot read {url}: {getattr(exc, 'reason', exc)}") from None
    try:
        return parse_jwks(data)
    except JwksError as exc:
        raise JwksError(f"{url}: {exc}") from None


class JwksKeys:
    """The key set at ``url``, fetched by :meth:`start` and kept fresh (see the module
    docstring); ``keys`` never waits for the network."""

    def __init__(self, url: str, *, refresh_ms: int = 3600000, retry_backoff_ms: int = 100,
                 retry_backoff_max_ms: int = 10000):
        self.url = url
        self.refresh_s = refresh_ms / 1000
        self.retry_backoff_s = retry_backoff_ms / 1000
        self.retry_backoff_max_s = max(retry_backoff_max_ms, retry_backoff_ms) / 1000
        self.keys: list[Jwk] = []
        self._refreshes = urllib.parse.urlsplit(url).scheme.lower() != "file"
        self._missing: OrderedDict[str, float] = OrderedDict()  # kid -> when to ask again
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> JwksKeys:
        """Fetch the keys (raises :class:`JwksError`), then keep them fresh."""
        self.keys = fetch(self.url)
        logger.info("JWKS of %s: %d signature key(s)", self.url, len(self.keys))
        if self._refreshes and self.refresh_s > 0:
            self._thread = threading.Thread(target=self._run, daemon=True,
                                            name="jwks-refresh")
            self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._wake.set()
        if self._thread is not None:
            self._thread.join(FETCH_TIMEOUT_S)
            self._thread = None

    def find(self, alg: str, kid: str | None) -> Jwk | None:
        """The key for a token; None (and a refresh scheduled, for an unknown ``kid``) when
        the set has none."""
        key = select_key(self.keys, alg, kid)
        if key is None and kid is not None:
            self._expedite(kid)
        return key

    def _expedite(self, kid: str) -> None:
        if not self._refreshes or len(kid) > MISSING_KEY_ID_MAX_KEY_LENGTH:
            return
        now = time.monotonic()
        with self._lock:
            again = self._missing.get(kid)
            if again is not None and again > now:
                return
            self._missing[kid] = now + MISSING_KEY_ID_CACHE_IN_FLIGHT_S
            self._missing.move_to_end(kid)
            while len(self._missing) > MISSING_KEY_ID_CACHE_MAX_ENTRIES:
                self._missing.popitem(last=False)
        logger.debug("JWKS of %s has no key %r: fetching it now", self.url, kid[:100])
        self._wake.set()

    def _run(self) -> None:
        while not self._stopping.is_set():
            self._wake.wait(self.refresh_s)
            self._wake.clear()
            if not self._stopping.is_set():
                self._refresh()

    def _refresh(self) -> None:
        """Fetch the set, retrying within ``retry.backoff.max.ms`` (Kafka's ``Retry``)."""
        backoff, deadline = self.retry_backoff_s, time.monotonic() + self.retry_backoff_max_s
        while not self._stopping.is_set():
            try:
                keys = fetch(self.url)
            except JwksError as exc:
                wait = min(backoff, deadline - time.monotonic())
                if wait <= 0:
                    logger.warning("JWKS refresh of %s failed; keeping the keys held: %s",
                                   self.url, exc)
                    return
                self._stopping.wait(wait)
                backoff *= 2
                continue
            with self._lock:
                for key in keys:
                    self._missing.pop(key.kid, None)
                self.keys = keys
            logger.info("JWKS of %s refreshed: %d signature key(s)", self.url, len(keys))
            return
