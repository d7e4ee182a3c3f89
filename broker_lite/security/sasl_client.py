"""The client's SASL mechanism, from Kafka's settings (and librdkafka's).

``sasl.mechanism`` (librdkafka: ``sasl.mechanisms``) picks the mechanism; Kafka's default,
GSSAPI (Kerberos), and any other mechanism outside PLAIN, SCRAM-SHA-256, SCRAM-SHA-512 and
OAUTHBEARER are refused with a message saying which are supported. The credentials come from
``sasl.jaas.config`` (:mod:`.jaas`; the login module must fit the mechanism), or from
librdkafka's ``sasl.username`` / ``sasl.password``. OAUTHBEARER's token comes from, in order: a
callable ``oauth_cb`` (confluent-kafka's convention), the OIDC client-credentials flow when
``sasl.oauthbearer.token.endpoint.url`` is set (JAAS options ``clientId``, ``clientSecret``,
``scope``; librdkafka's ``sasl.oauthbearer.client.id`` / ``.client.secret`` / ``.scope``), or
the unsecured JWS of the JAAS ``unsecuredLogin*`` options. A token is reused until 80 % of its
lifetime has passed (Kafka's ``sasl.login.refresh.window.factor``).

Each authentication of a connection runs one exchange, :meth:`SaslClientFactory.exchange`:
``respond(challenge)`` gives the next message (``challenge`` is None for the first), until
``complete``.

>>> factory = SaslClientFactory.from_settings({
...     "sasl.mechanism": "SCRAM-SHA-512",
...     "sasl.jaas.config": 'org.apache.kafka.common.security.scram.ScramLoginModule required '
...                         'username="alice" password="alice-secret";'})
>>> factory.mechanism, factory.username
('SCRAM-SHA-512', 'alice')
>>> factory.exchange().respond(None)[:12]
b'n,,n=alice,r'
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping

from . import oauthbearer, scram
from .errors import SaslAuthenticationError, SecurityConfigError
from .jaas import parse_jaas_config
from .plain import plain_client_message

SUPPORTED_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
_MODULE_OF = {"PLAIN": "PlainLoginModule", "SCRAM-SHA-256": "ScramLoginModule",
              "SCRAM-SHA-512": "ScramLoginModule", "OAUTHBEARER": "OAuthBearerLoginModule"}
_REFRESH_WINDOW_FACTOR = 0.8


class _PlainExchange:
    def __init__(self, username: str, password: str):
        self._message = plain_client_message(username, password)
        self.complete = False

    def respond(self, challenge: bytes | None) -> bytes | None:
        if challenge is None:
            return self._message
        self.complete = True
        return None


class _ScramExchange:
    def __init__(self, mechanism: str, username: str, password: str):
        self._client = scram.ScramClient(mechanism, username, password)
        self._step = 0
        self.complete = False

    def respond(self, challenge: bytes | None) -> bytes | None:
        self._step += 1
        if self._step == 1:
            return self._client.first_message()
        if self._step == 2:
            return self._client.final_message(challenge or b"")
        self._client.verify_server_final(challenge or b"")
        self.complete = True
        return None


class _OAuthExchange:
    def __init__(self, get_token: Callable[[], oauthbearer.Token]):
        self._client = oauthbearer.OAuthBearerClient(get_token)

    @property
    def complete(self) -> bool:
        return self._client.complete

    def respond(self, challenge: bytes | None) -> bytes | None:
        message = self._client.respond(challenge)
        return None if self._client.complete else message


class SaslClientFactory:
    """One mechanism with its credentials; :meth:`exchange` starts an authentication."""

    def __init__(self, mechanism: str, *, username: str = "", password: str = "",
                 get_token: Callable[[], oauthbearer.Token] | None = None):
        self.mechanism = mechanism
        self.username = username
        self._password = password
        self._get_token = get_token
        self._token: oauthbearer.Token | None = None
        self._token_refresh_at = 0.0
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"<SaslClientFactory {self.mechanism} user {self.username!r}>"

    def exchange(self):
        if self.mechanism == "PLAIN":
            return _PlainExchange(self.username, self._password)
        if self.mechanism in scram.MECHANISMS:
            return _ScramExchange(self.mechanism, self.username, self._password)
        return _OAuthExchange(self._cached_token)

    def _cached_token(self) -> oauthbearer.Token:
        with self._lock:
            now = time.time()
            if self._token is None or now >= self._token_refresh_at:
                token = self._get_token()
                self._token = token
                self._token_refresh_at = now + _REFRESH_WINDOW_FACTOR * max(
                    0.0, token.expires_at - now)
            return self._token

    @classmethod
    def from_settings(cls, settings: Mapping[str, str], *,
                      oauth_cb: Callable | None = None) -> SaslClientFactory:
        mechanism = str(settings.get("sasl.mechanism") or settings.get("sasl.mechanisms")
                        or "GSSAPI").strip().upper()
        if mechanism not in SUPPORTED_MECHANISMS:
            raise SecurityConfigError(
                "sasl.mechanism", f"{mechanism} is not supported by this client"
                                  f"{' (Kerberos; Kafka default)' if mechanism == 'GSSAPI' else ''}"
                                  f"; set it to one of {', '.join(SUPPORTED_MECHANISMS)}")
        options: dict[str, str] = {}
        jaas_text = settings.get("sasl.jaas.config")
        if jaas_text:
            entry = parse_jaas_config(jaas_text)
            if entry.module != _MODULE_OF[mechanism]:
                raise SecurityConfigError("sasl.jaas.config",
                                          f"{mechanism} needs {_MODULE_OF[mechanism]}, not "
                                          f"{entry.module}")
            options = entry.options
        if mechanism == "OAUTHBEARER":
            return cls(mechanism, get_token=_token_source(settings, options, oauth_cb))
        username = options.get("username", settings.get("sasl.username"))
        password = options.get("password", settings.get("sasl.password"))
        if not username or password is None:
            raise SecurityConfigError(
                "sasl.jaas.config", f"{mechanism} needs a user name and password: "
                                    f"{_MODULE_OF[mechanism]} required username=\"...\" "
                                    f"password=\"...\"; (or sasl.username / sasl.password)")
        return cls(mechanism, username=str(username), password=str(password))


def _token_source(settings: Mapping[str, str], options: Mapping[str, str],
                  oauth_cb: Callable | None) -> Callable[[], oauthbearer.Token]:
    if oauth_cb is not None:
        config = settings.get("sasl.oauthbearer.config")
        return lambda: oauthbearer.token_from_callable(oauth_cb, config)
    url = settings.get("sasl.oauthbearer.token.endpoint.url")
    if url:
        client_id = options.get("clientId") or settings.get("sasl.oauthbearer.client.id")
        secret = options.get("clientSecret") or settings.get("sasl.oauthbearer.client.secret")
        scope = options.get("scope") or settings.get("sasl.oauthbearer.scope")
        if not client_id or not secret:
            raise SecurityConfigError("sasl.jaas.config", "the OIDC client-credentials flow "
                                                          "needs the options clientId and "
                                                          "clientSecret")
        return lambda: oauthbearer.client_credentials_token(url, client_id, secret, scope=scope)
    if any(name.startswith("unsecuredLogin") for name in options):
        oauthbearer.unsecured_token_from_options(options)  # check the options now
        return lambda: oauthbearer.unsecured_token_from_options(options)
    raise SecurityConfigError(
        "sasl.jaas.config", "OAUTHBEARER needs a token source: "
                            "sasl.oauthbearer.token.endpoint.url with clientId and "
                            "clientSecret, unsecuredLoginStringClaim_sub for local use, or an "
                            "oauth_cb callable")


__all__ = ["SUPPORTED_MECHANISMS", "SaslAuthenticationError", "SaslClientFactory"]
