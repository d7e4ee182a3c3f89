"""``sasl.jaas.config``: one JAAS login module entry in Kafka's syntax (Kafka's ``JaasConfig``)::

    <login module class> <flag> [<option>=<value> ...];

where the flag is ``required``, ``requisite``, ``sufficient`` or ``optional``, option values are
double-quoted strings (``\\"`` and ``\\\\`` escaped inside) or bare words, and the entry ends
with ``;``. A client's configuration holds exactly one entry. The login modules known here:

=====================================================================  ===========================
class                                                                  mechanisms
=====================================================================  ===========================
``org.apache.kafka.common.security.plain.PlainLoginModule``            PLAIN
``org.apache.kafka.common.security.scram.ScramLoginModule``            SCRAM-SHA-256, -512
``org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule``  OAUTHBEARER
=====================================================================  ===========================

(also under a shading prefix, e.g. ``kafkashaded.org.apache.kafka...``). Kerberos
(``Krb5LoginModule``) and other modules are refused by name. Errors give the position and what
was expected, never the text itself: it holds passwords.

>>> entry = parse_jaas_config('org.apache.kafka.common.security.scram.ScramLoginModule required '
...                           'username="alice" password="s3cr=t;";')
>>> entry.module, entry.options["username"]
('ScramLoginModule', 'alice')
>>> entry  # option values are hidden
JaasEntry(module='ScramLoginModule', flag='required', options=['username', 'password'])
>>> parse_jaas_config('org.apache.kafka.common.security.plain.PlainLoginModule required '
...                   'username="alice" password="oops"')  # doctest: +NORMALIZE_WHITESPACE
Traceback (most recent call last):
...
broker_lite.security.errors.JaasConfigError: sasl.jaas.config: expected ';' after the last option
(at the end)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .errors import JaasConfigError

FLAGS = ("required", "requisite", "sufficient", "optional")
_PACKAGE = "org.apache.kafka.common.security."
#: Login module short name -> its package-qualified class (under Kafka's security package).
LOGIN_MODULES = {
    "PlainLoginModule": _PACKAGE + "plain.PlainLoginModule",
    "ScramLoginModule": _PACKAGE + "scram.ScramLoginModule",
    "OAuthBearerLoginModule": _PACKAGE + "oauthbearer.OAuthBearerLoginModule",
}
#: SASL mechanism -> the short name of its login module.
MECHANISM_LOGIN_MODULES = {"PLAIN": "PlainLoginModule", "SCRAM-SHA-256": "ScramLoginModule",
                           "SCRAM-SHA-512": "ScramLoginModule",
                           "OAUTHBEARER": "OAuthBearerLoginModule"}
_REFUSED = {
    "Krb5LoginModule": "Kerberos (GSSAPI) is not supported by this client",
}


@dataclass(frozen=True)
class JaasEntry:
    """One login module entry: ``module`` is the class's short name (``PlainLoginModule``)."""

    module: str
    flag: str
    options: dict[str, str] = field(repr=False)

    def __repr__(self) -> str:
        return (f"JaasEntry(module={self.module!r}, flag={self.flag!r}, "
                f"options={list(self.options)!r})")


class _Scanner:
    def __init__(self, text: str):
        self.text = text
        self.pos = 0

    def fail(self, message: str) -> JaasConfigError:
        where = (f"at character {self.pos + 1} of {len(self.text)}"
                 if self.pos < len(self.text) else "at the end")
        return JaasConfigError(f"{message} ({where})")

    def skip_space(self) -> None:
        while self.pos < len(self.text) and self.text[self.pos].isspace():
            self.pos += 1

    def at_end(self) -> bool:
        self.skip_space()
        return self.pos >= len(self.text)

    def peek(self) -> str:
        self.skip_space()
        return self.text[self.pos] if self.pos < len(self.text) else ""

    def word(self, what: str) -> str:
        self.skip_space()
        start = self.pos
        while self.pos < len(self.text) and not self.text[self.pos].isspace() \
                and self.text[self.pos] not in '=;"':
            self.pos += 1
        if self.pos == start:
            raise self.fail(f"expected {what}")
        return self.text[start:self.pos]

    def value(self, option: str) -> str:
        if self.peek() != '"':
            return self.word(f"a value for option {option!r}")
        self.pos += 1
        chars = []
        while self.pos < len(self.text):
            char = self.text[self.pos]
            self.pos += 1
            if char == '"':
                return "".join(chars)
            if char == "\\" and self.pos < len(self.text):
                char = self.text[self.pos]
                self.pos += 1
            chars.append(char)
        raise self.fail(f"the value of option {option!r} has no closing quote")


def _module_name(class_name: str, scanner: _Scanner) -> str:
    short = class_name.rsplit(".", 1)[-1]
    if short in _REFUSED:
        raise JaasConfigError(f"{short}: {_REFUSED[short]}")
    if short not in LOGIN_MODULES or not class_name.endswith(LOGIN_MODULES[short]):
        known = ", ".join(LOGIN_MODULES.values())
        raise scanner.fail(f"unknown login module {class_name!r}; known: {known}")
    return short


def parse_jaas_config(text: str) -> JaasEntry:
    """The one login module entry of a client's ``sasl.jaas.config``."""
    scanner = _Scanner(str(text))
    if scanner.at_end():
        raise JaasConfigError("empty; expected '<login module class> required "
                              "<option>=\"<value>\" ...;'")
    module = _module_name(scanner.word("a login module class"), scanner)
    flag = scanner.word("a control flag (required, requisite, sufficient, optional)")
    if flag.lower() not in FLAGS:
        raise scanner.fail(f"invalid control flag {flag!r}; expected one of {', '.join(FLAGS)}")
    options: dict[str, str] = {}
    while scanner.peek() not in (";", ""):
        name = scanner.word("an option name")
        if scanner.peek() != "=":
            raise scanner.fail(f"expected '=' after option {name!r}")
        scanner.pos += 1
        if name in options:
            raise scanner.fail(f"option {name!r} given twice")
        options[name] = scanner.value(name)
    if scanner.peek() != ";":
        raise scanner.fail("expected ';' after the last option")
    scanner.pos += 1
    if not scanner.at_end():
        raise scanner.fail("a client's sasl.jaas.config holds one login module entry; "
                           "unexpected text after ';'")
    return JaasEntry(module, flag.lower(), options)


def jaas_config(mechanism: str, **options: str) -> str:
    """A ``sasl.jaas.config`` in Kafka's syntax, the login module of ``mechanism`` with
    ``options`` (quoted, ``"`` and ``\\`` escaped); :func:`parse_jaas_config` reads it back.

    >>> text = jaas_config("PLAIN", username="alice", password='pa"ss')
    >>> text
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" \
password="pa\\\\"ss";'
    >>> parse_jaas_config(text).options["password"]
    'pa"ss'
    """
    module = LOGIN_MODULES[MECHANISM_LOGIN_MODULES[mechanism]]
    quoted = "".join(' {}="{}"'.format(name, value.replace("\\", "\\\\").replace('"', '\\"'))
                     for name, value in options.items())
    return f"{module} required{quoted};"
