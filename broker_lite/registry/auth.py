"""HTTP Basic authentication, configured as Confluent's registry configures it.

With ``authentication.method=BASIC``, every request needs an ``Authorization: Basic ...``
header naming a user of the realm ``authentication.realm`` and that user's password; the user
must hold one of ``authentication.roles`` (``*``, the default: any role). Confluent reads the
realm from a JAAS file (the JVM's ``java.security.auth.login.config``), whose entry names the
users' file through Jetty's ``PropertyFileLoginModule`` (Confluent's documentation, "HTTP Basic
Authentication")::

    SchemaRegistry {
      org.eclipse.jetty.jaas.spi.PropertyFileLoginModule required
      file="/etc/schema-registry/password.properties";
    };

and the users' file has Jetty's format, one user a line, ``user: password[,role ...]``; the
password plain or ``MD5:<hex digest>``::

    fred: OBF-free-password,admin
    barney: MD5:6a1a8e0e8f3b7f5b2b8d4f3e0a1c2d3e,developer

A refused request is 401 (with ``WWW-Authenticate: Basic realm="..."``) or 403 (a user
without a role let in). Passwords are compared in constant time and never logged or echoed.

>>> users = parse_users("fred: secret,admin,dev\\n# a comment\\nwilma: MD5:"
...                     "5ebe2294ecd0e0f08eab7690d2a6ee69")
>>> users["fred"].roles, users["wilma"].matches("secret")
(('admin', 'dev'), True)
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import re
from dataclasses import dataclass, field
from pathlib import Path

from broker_lite.config.parsers import ConfigError

from .errors import Forbidden, Unauthorized

_ENTRY = re.compile(r"(?P<name>[\w.-]+)\s*\{(?P<body>.*?)\}\s*;", re.S)
_FILE_OPTION = re.compile(r"\bfile\s*=\s*\"(?P<path>[^\"]*)\"")


@dataclass(frozen=True)
class User:
    name: str
    credential: str = field(repr=False)
    roles: tuple[str, ...] = ()

    def matches(self, password: str) -> bool:
        if self.credential.startswith("MD5:"):
            digest = hashlib.md5(password.encode("utf-8")).hexdigest()
            return hmac.compare_digest(digest, self.credential[4:].lower())
        return hmac.compare_digest(password.encode("utf-8"), self.credential.encode("utf-8"))


def parse_users(text: str) -> dict[str, User]:
    """Jetty's users file: ``user: password[,role ...]`` a line."""
    users = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith(("#", "!")):
            continue
        name, separator, rest = line.partition(":")
        if not separator or not name.strip():
            raise ConfigError(f"the users file's line {number} is not 'user: password[,role]'")
        credential, *roles = [part.strip() for part in rest.split(",")]
        if credential.startswith(("OBF:", "CRYPT:")):
            raise ConfigError(f"the users file's line {number}: only plain and MD5: passwords "
                              "are supported")
        users[name.strip()] = User(name.strip(), credential, tuple(r for r in roles if r))
    return users


def users_file(jaas_path: str, realm: str) -> Path:
    """The users' file that the realm's entry of the JAAS file names."""
    try:
        text = Path(jaas_path).read_text(encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"java.security.auth.login.config: cannot read {jaas_path}: "
                          f"{exc.strerror}") from None
    for entry in _ENTRY.finditer(text):
        if entry.group("name") == realm:
            found = _FILE_OPTION.search(entry.group("body"))
            if found is None:
                raise ConfigError(f"the JAAS entry {realm} names no file=\"...\" of users")
            return Path(found.group("path"))
    raise ConfigError(f"authentication.realm: the JAAS file {jaas_path} has no entry {realm}")


class BasicAuthenticator:
    """Checks ``Authorization`` headers against the realm's users and the roles let in."""

    def __init__(self, realm: str, users: dict[str, User], roles: tuple[str, ...] = ("*",)):
        self.realm = realm
        self.users = users
        self.roles = roles

    @classmethod
    def from_files(cls, jaas_path: str, realm: str, roles: tuple[str, ...]
                   ) -> BasicAuthenticator:
        path = users_file(jaas_path, realm)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise ConfigError(f"the users file {path} cannot be read: {exc.strerror}") from None
        return cls(realm, parse_users(text), roles)

    def challenge(self) -> str:
        return f'Basic realm="{self.realm}"'

    def authenticate(self, header: str | None) -> str:
        """The user a request's ``Authorization`` header proves; :class:`Unauthorized` or
        :class:`Forbidden` otherwise."""
        if not header or not header.startswith("Basic "):
            raise Unauthorized("Unauthorized")
        try:
            decoded = base64.b64decode(header[6:].strip(), validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError):
            raise Unauthorized("Unauthorized") from None
        name, separator, password = decoded.partition(":")
        user = self.users.get(name)
        if not separator or user is None or not user.matches(password):
            raise Unauthorized("Unauthorized")
        if "*" not in self.roles and not set(user.roles) & set(self.roles):
            raise Forbidden("Forbidden")
        return name
