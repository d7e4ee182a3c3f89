"""SASL OAUTHBEARER (RFC 7628) as Kafka uses it (KIP-255, KIP-768).

The client sends one message, the GS2 header then ``auth`` and optional extensions, separated by
``\\x01``::

    n,,\\x01auth=Bearer <token>\\x01[<key>=<value>\\x01 ...]\\x01

The server answers an empty message on success; on failure it sends an error JSON
(``{"status":"invalid_token"}``), the client answers ``\\x01`` and the server then fails the
exchange (RFC 7628, 3.2.2).

Tokens come from one of three sources (:func:`token_provider`):

* Kafka's **unsecured JWS** for local use (``OAuthBearerLoginModule`` options
  ``unsecuredLoginStringClaim_sub="alice"``, ``unsecuredLoginNumberClaim_<name>``,
  ``unsecuredLoginListClaim_<name>`` (the first character separates the items),
  ``unsecuredLoginLifetimeSeconds`` (3600)): ``base64url({"alg":"none"}).base64url(claims).``
  with ``iat`` and ``exp``;
* a user-supplied callable (``oauth_cb``, as confluent-kafka names it) returning
  ``(token, expiry in seconds since the epoch)``;
* the OIDC **client-credentials** flow (``sasl.oauthbearer.token.endpoint.url``; JAAS options
  ``clientId``, ``clientSecret``, ``scope``): an HTTP POST of ``grant_type=client_credentials``
  with HTTP Basic authentication, as Kafka's ``HttpAccessTokenRetriever``; the answer's
  ``access_token`` and ``expires_in``.

:class:`UnsecuredTokenValidator` checks unsecured tokens on the server side as Kafka's
``OAuthBearerUnsecuredValidatorCallbackHandler``: ``alg`` ``none``, a principal claim
(``sub``), a numeric ``exp`` in the future, ``iat`` (if present) not after ``exp``, and the
required scopes. :class:`JwtValidator` checks signed tokens from an identity provider as
Kafka's ``OAuthBearerValidatorCallbackHandler`` (KIP-768): the signature against the provider's
key set (:mod:`.jwks`), then the claims (see the class). Tokens are secrets: they never appear
in error messages.

>>> token = unsecured_jws({"sub": "alice"}, lifetime_s=60, now=1000.0)
>>> token.split(".")[0], token.endswith(".")
('eyJhbGciOiJub25lIn0', True)
>>> UnsecuredTokenValidator().validate(token, now=1010.0).principal
'alice'
"""

from __future__ import annotations

import base64
import binascii
import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from .errors import SaslAuthenticationError, SecurityConfigError
from .jwks import ALGORITHMS, JwksKeys, verify

MECHANISM = "OAUTHBEARER"
_SEP = b"\x01"
_ERROR_RESPONSE = b'{"status":"invalid_token"}'


@dataclass(frozen=True)
class Token:
    """A bearer token (a secret), and when it expires (seconds since the epoch)."""

    value: str
    expires_at: float
    principal: str = ""

    def __repr__(self) -> str:
        return f"Token(<hidden>, expires_at={self.expires_at}, principal={self.principal!r})"


# -- client side ----------------------------------------------------------------------------------


def client_message(token: str, extensions: Mapping[str, str] | None = None) -> bytes:
    """The client's initial message (RFC 7628, 3.1)."""
    parts = [f"auth=Bearer {token}".encode()]
    parts += [f"{key}={value}".encode() for key, value in (extensions or {}).items()]
    return b"n,," + _SEP + _SEP.join(parts) + _SEP + _SEP


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def unsecured_jws(claims: Mapping[str, object], *, lifetime_s: float = 3600,
                  now: float | None = None) -> str:
    """An unsecured JWS (``alg`` ``none``) with ``claims`` plus ``iat`` and ``exp``."""
    now = time.time() if now is None else now
    body = {"iat": now, "exp": now + lifetime_s, **claims}
    return (f"{_b64url(json.dumps({'alg': 'none'}, separators=(',', ':')).encode())}."
            f"{_b64url(json.dumps(body, separators=(',', ':')).encode())}.")


def unsecured_token_from_options(options: Mapping[str, str]) -> Token:
    """A token from ``OAuthBearerLoginModule``'s ``unsecuredLogin*`` options (Kafka's
    ``OAuthBearerUnsecuredLoginCallbackHandler``)."""
    claims: dict[str, object] = {}
    for name, value in options.items():
        if name.startswith("unsecuredLoginStringClaim_"):
            claims[name.removeprefix("unsecuredLoginStringClaim_")] = value
        elif name.startswith("unsecuredLoginNumberClaim_"):
            try:
                claims[name.removeprefix("unsecuredLoginNumberClaim_")] = float(value) \
                    if "." in value else int(value)
            except ValueError:
                raise SecurityConfigError("sasl.jaas.config",
                                          f"option {name}: expected a number") from None
        elif name.startswith("unsecuredLoginListClaim_"):
            claims[name.removeprefix("unsecuredLoginListClaim_")] = \
                [item for item in value[1:].split(value[0])] if value else []
    principal_claim = options.get("unsecuredLoginPrincipalClaimName", "sub")
    principal = claims.get(principal_claim)
    if not isinstance(principal, str) or not principal:
        raise SecurityConfigError(
            "sasl.jaas.config", f"OAuthBearerLoginModule: unsecured tokens need the principal "
                                f"claim: set unsecuredLoginStringClaim_{principal_claim}")
    try:
        lifetime = float(options.get("unsecuredLoginLifetimeSeconds", "3600"))
    except ValueError:
        raise SecurityConfigError("sasl.jaas.config", "option unsecuredLoginLifetimeSeconds: "
                                                      "expected a number of seconds") from None
    now = time.time()
    return Token(unsecured_jws(claims, lifetime_s=lifetime, now=now), now + lifetime, principal)


def client_credentials_token(url: str, client_id: str, client_secret: str, *,
                             scope: str | None = None, timeout_s: float = 10) -> Token:
    """A token from an OIDC token endpoint with the client-credentials grant (RFC 6749, 4.4)."""
    form = {"grant_type": "client_credentials"}
    if scope:
        form["scope"] = scope
    basic = base64.b64encode(f"{client_id}:{client_secret}".encode()).decode()
    request = urllib.request.Request(
        url, data=urllib.parse.urlencode(form).encode(), method="POST",
        headers={"Authorization": f"Basic {basic}", "Accept": "application/json",
                 "Content-Type": "application/x-www-form-urlencoded"})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = json.loads(response.read())
    except urllib.error.HTTPError as exc:
        raise SaslAuthenticationError(f"OAUTHBEARER: the token endpoint {url} answered HTTP "
                                      f"{exc.code} {exc.reason}") from None
    except (urllib.error.URLError, OSError) as exc:
        raise SaslAuthenticationError(f"OAUTHBEARER: cannot reach the token endpoint {url}: "
                                      f"{getattr(exc, 'reason', exc)}") from None
    except ValueError:
        raise SaslAuthenticationError(f"OAUTHBEARER: the token endpoint {url} did not answer "
                                      f"JSON") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("access_token"), str):
        raise SaslAuthenticationError(f"OAUTHBEARER: the token endpoint {url} answered "
                                      f"without an access_token")
    expires_in = answer.get("expires_in", 3600)
    return Token(answer["access_token"], time.time() + float(expires_in))


def token_from_callable(callback: Callable[..., tuple[str, float]], config: str | None) -> Token:
    """A token from confluent-kafka's ``oauth_cb`` convention: ``callback(config) -> (token,
    expiry in seconds since the epoch)``."""
    token, expires_at = callback(config)
    return Token(str(token), float(expires_at))


class OAuthBearerClient:
    """The client side of one exchange, with the token from ``get_token()``."""

    mechanism = MECHANISM

    def __init__(self, get_token: Callable[[], Token],
                 extensions: Mapping[str, str] | None = None):
        self._get_token = get_token
        self._extensions = dict(extensions or {})
        self._state = "first"
        self._status = ""
        self.complete = False
        self.token: Token | None = None

    def respond(self, challenge: bytes | None) -> bytes:
        if self._state == "first":
            self.token = self._get_token()
            self._state = "sent"
            return client_message(self.token.value, self._extensions)
        if self._state == "sent" and challenge:
            # The broker's error (RFC 7628, 3.2.2): answer %x01 so that it ends the exchange
            # with SASL_AUTHENTICATION_FAILED and its reason.
            self._state = "error"
            try:
                self._status = json.loads(challenge).get("status", "invalid_token")
            except (ValueError, AttributeError):
                self._status = "invalid_token"
            return _SEP
        if self._state == "error":
            raise SaslAuthenticationError(f"OAUTHBEARER: the broker refused the token: "
                                          f"{self._status}")
        self.complete = True
        return b""


# -- server side ----------------------------------------------------------------------------------


class UnsecuredTokenValidator:
    """Checks unsecured JWS tokens, with the options of Kafka's
    ``OAuthBearerUnsecuredValidatorCallbackHandler``: ``unsecuredValidatorPrincipalClaimName``
    (sub), ``unsecuredValidatorScopeClaimName`` (scope), ``unsecuredValidatorRequiredScope``
    (comma-separated), ``unsecuredValidatorAllowableClockSkewMs`` (0)."""

    def __init__(self, options: Mapping[str, str] | None = None):
        options = options or {}
        self.principal_claim = options.get("unsecuredValidatorPrincipalClaimName", "sub")
        self.scope_claim = options.get("unsecuredValidatorScopeClaimName", "scope")
        self.required_scope = [s.strip() for s in options.get(
            "unsecuredValidatorRequiredScope", "").split(",") if s.strip()]
        self.skew_s = int(options.get("unsecuredValidatorAllowableClockSkewMs", "0")) / 1000

    def validate(self, token: str, *, now: float | None = None) -> Token:
        now = time.time() if now is None else now
        parts = token.split(".")
        if len(parts) != 3 or parts[2]:
            raise SaslAuthenticationError("OAUTHBEARER: not an unsecured JWS "
                                          "(header.claims. with an empty signature)")
        try:
            header, claims = (json.loads(_unb64url(p)) for p in parts[:2])
        except (ValueError, binascii.Error):
            raise SaslAuthenticationError("OAUTHBEARER: the token's header or claims are not "
                                          "base64url JSON") from None
        if not isinstance(header, dict) or header.get("alg") != "none":
            raise SaslAuthenticationError("OAUTHBEARER: unsecured tokens must have alg none")
        if not isinstance(claims, dict):
            raise SaslAuthenticationError("OAUTHBEARER: the token's claims are not an object")
        principal = claims.get(self.principal_claim)
        if not isinstance(principal, str) or not principal.strip():
            raise SaslAuthenticationError(
                f"OAUTHBEARER: the token has no {self.principal_claim!r} claim")
        expires = claims.get("exp")
        if not isinstance(expires, int | float) or isinstance(expires, bool):
            raise SaslAuthenticationError("OAUTHBEARER: the token has no numeric 'exp' claim")
        if now - self.skew_s >= expires:
            raise SaslAuthenticationError("OAUTHBEARER: the token has expired")
        issued = claims.get("iat")
        if issued is not None and (not isinstance(issued, int | float) or issued > expires):
            raise SaslAuthenticationError("OAUTHBEARER: the token's 'iat' is not a number "
                                          "before 'exp'")
        scope = claims.get(self.scope_claim, [])
        scope = scope.split() if isinstance(scope, str) else scope
        missing = [s for s in self.required_scope if s not in scope]
        if missing:
            raise SaslAuthenticationError(f"OAUTHBEARER: the token lacks the required scope "
                                          f"{', '.join(missing)}")
        return Token(token, float(expires), principal)


class JwtValidator:
    """Checks signed JWTs (RFC 7519) as Kafka's ``OAuthBearerValidatorCallbackHandler`` does
    with jose4j (``BrokerJwtValidator``), in this order:

    1. three base64url sections; a header with an ``alg`` of :data:`.jwks.ALGORITHMS` (never
       ``none``) and a key of ``keys`` for it (by ``kid``), whose signature it bears;
    2. ``exp`` and ``iat`` present and numeric; ``exp`` not passed and ``nbf`` (if present)
       reached, give or take ``clock_skew_s`` (``sasl.oauthbearer.clock.skew.seconds``, 30);
    3. ``iss`` equal to ``expected_issuer`` when one is set
       (``sasl.oauthbearer.expected.issuer``);
    4. ``aud`` naming one of ``expected_audience`` (``sasl.oauthbearer.expected.audience``)
       when set; when none is set, a token with an ``aud`` is refused (jose4j's rule: an
       audience the broker was not told to accept);
    5. the subject claim ``sub_claim`` (``sasl.oauthbearer.sub.claim.name``, ``sub``) a
       non-blank string: the principal's name; the scope claim ``scope_claim``
       (``sasl.oauthbearer.scope.claim.name``, ``scope``) a string (one scope) or a list of
       them, none blank or repeated, or absent.
    """

    def __init__(self, keys: JwksKeys, *, expected_audience: tuple[str, ...] = (),
                 expected_issuer: str | None = None, scope_claim: str = "scope",
                 sub_claim: str = "sub", clock_skew_s: int = 30):
        self.keys = keys
        self.expected_audience = frozenset(expected_audience)
        self.expected_issuer = expected_issuer
        self.scope_claim = scope_claim
        self.sub_claim = sub_claim
        self.clock_skew_s = clock_skew_s

    def validate(self, token: str, *, now: float | None = None) -> Token:
        now = time.time() if now is None else now
        _header, claims = self._verified(token)
        expires, issued = claims.get("exp"), claims.get("iat")
        for name, value in (("exp", expires), ("iat", issued)):
            if value is None:
                raise _invalid(f"no {name!r} claim")
            if not _is_number(value) or value < 0:
                raise _invalid(f"the {name!r} claim is not a non-negative number")
        if now - self.clock_skew_s >= expires:
            raise _invalid("the token has expired")
        not_before = claims.get("nbf")
        if not_before is not None and (not _is_number(not_before)
                                       or now + self.clock_skew_s < not_before):
            raise _invalid("the token is not valid yet ('nbf')")
        if self.expected_issuer is not None and claims.get("iss") != self.expected_issuer:
            raise _invalid(f"the issuer ('iss') is not {self.expected_issuer!r}")
        self._check_audience(claims.get("aud"))
        subject = claims.get(self.sub_claim)
        if not isinstance(subject, str) or not subject.strip():
            raise _invalid(f"the {self.sub_claim!r} claim is not a non-blank string")
        self._scopes(claims.get(self.scope_claim))
        return Token(token, float(expires), subject.strip())

    def _verified(self, token: str) -> tuple[dict, dict]:
        parts = token.split(".")
        if len(parts) != 3 or not all(parts):
            raise _invalid("not a signed JWT: expected three sections (header, payload, "
                           "signature)")
        try:
            header, claims = (json.loads(_unb64url(p)) for p in parts[:2])
        except (ValueError, binascii.Error):
            raise _invalid("the token's header or claims are not base64url JSON") from None
        try:
            signature = _unb64url(parts[2])
        except (ValueError, binascii.Error):
            raise _invalid("the signature is not base64url") from None
        if not isinstance(header, dict) or not isinstance(claims, dict):
            raise _invalid("the token's header or claims are not a JSON object")
        alg, kid = header.get("alg"), header.get("kid")
        if alg not in ALGORITHMS:
            raise _invalid(f"the signature algorithm {str(alg)[:20]!r} is not accepted "
                           f"({', '.join(ALGORITHMS)})")
        key = self.keys.find(alg, kid if isinstance(kid, str) else None)
        if key is None:
            raise _invalid(f"no key of {self.keys.url} verifies {alg} signatures"
                           + (f" with key id {kid[:100]!r}" if isinstance(kid, str) else ""))
        if not verify(alg, key, f"{parts[0]}.{parts[1]}".encode(), signature):
            raise _invalid("the signature is invalid")
        return header, claims

    def _check_audience(self, audience) -> None:
        named = [audience] if isinstance(audience, str) else audience
        if audience is not None and (not isinstance(named, list)
                                     or not all(isinstance(a, str) for a in named)):
            raise _invalid("the audience ('aud') is not a string or a list of strings")
        if not self.expected_audience:
            if audience is not None:
                raise _invalid("the token names an audience ('aud') but "
                               "sasl.oauthbearer.expected.audience is not set")
            return
        if audience is None:
            raise _invalid("no audience ('aud') claim")
        if not self.expected_audience.intersection(named):
            raise _invalid(f"the audience ('aud') is none of "
                           f"{', '.join(sorted(self.expected_audience))}")

    def _scopes(self, scope) -> list[str]:
        scopes = [scope] if isinstance(scope, str) else scope if isinstance(scope, list) else []
        seen = set()
        for item in scopes:
            if not isinstance(item, str) or not item.strip():
                raise _invalid(f"the {self.scope_claim!r} claim holds a blank scope")
            if item.strip() in seen:
                raise _invalid(f"the {self.scope_claim!r} claim repeats {item.strip()!r}")
            seen.add(item.strip())
        return sorted(seen)


def _is_number(value) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _invalid(reason: str) -> SaslAuthenticationError:
    return SaslAuthenticationError(f"OAUTHBEARER: could not validate the access token: {reason}")


class OAuthBearerServer:
    """The server side of one exchange (see the module docstring), with ``validate(token) ->
    Token`` (an :class:`UnsecuredTokenValidator`'s by default)."""

    mechanism = MECHANISM

    def __init__(self, validate: Callable[[str], Token] | None = None):
        self._validate = validate or UnsecuredTokenValidator().validate
        self._state = "first"
        self.complete = False
        self.username: str | None = None
        self.token: Token | None = None
        self._error: SaslAuthenticationError | None = None

    def respond(self, message: bytes) -> bytes:
        if self._state == "error-sent":
            self._state = "failed"
            raise self._error
        if self._state != "first":
            raise SaslAuthenticationError("OAUTHBEARER: the exchange is already over",
                                          illegal_state=True)
        data = bytes(message)
        gs2, sep, rest = data.partition(_SEP)
        if not sep or not gs2.startswith((b"n,", b"y,")) or not rest.endswith(_SEP + _SEP):
            self._state = "failed"
            raise SaslAuthenticationError("OAUTHBEARER: invalid client message: expected "
                                          "n,,\\x01auth=Bearer <token>\\x01...\\x01\\x01")
        fields = dict(item.partition(b"=")[::2] for item in rest[:-2].split(_SEP))
        auth = fields.get(b"auth", b"")
        if not auth.startswith(b"Bearer "):
            self._state = "failed"
            raise SaslAuthenticationError("OAUTHBEARER: invalid client message: no "
                                          "auth=Bearer <token>")
        try:
            self.token = self._validate(auth[len(b"Bearer "):].decode())
        except (SaslAuthenticationError, UnicodeDecodeError) as exc:
            self._error = exc if isinstance(exc, SaslAuthenticationError) else \
                SaslAuthenticationError("OAUTHBEARER: the token is not UTF-8")
            self._state = "error-sent"
            return _ERROR_RESPONSE
        self.username = self.token.principal
        self._state = "done"
        self.complete = True
        return b""
