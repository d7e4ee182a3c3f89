"""Who a TLS client is: the principal Kafka's ``DefaultKafkaPrincipalBuilder`` gives an ``SSL``
connection, ``User:<name>``, where the name comes from the client certificate's subject through
``ssl.principal.mapping.rules`` (Kafka's ``SslPrincipalMapper``, KIP-371). A connection without
a client certificate (``ssl.client.auth`` ``none``, or ``requested`` and none sent) is
``User:ANONYMOUS``.

The subject is written as Java's ``X500Principal.getName()`` writes it (RFC 2253): the relative
distinguished names from the most specific (``CN``) to the least, ``,``-separated, several in
one RDN joined by ``+``; the attribute types RFC 2253 names (``CN C L ST O OU STREET DC UID``)
by name, others by OID with the value as ``#`` and the hex of its DER encoding; ``,+"\\<>;``
and a leading ``#`` or space, a trailing space, escaped with ``\\``.

``ssl.principal.mapping.rules`` is a list (``,`` or newline separated) of ``DEFAULT`` (the
subject as it is) and ``RULE:<pattern>/<replacement>/[L|U]``: the first rule whose pattern
matches the whole subject gives the name, the replacement's ``$1``... naming its groups, then
lower-cased (``L``) or upper-cased (``U``). A subject no rule matches fails the connection.

>>> mapper = PrincipalMapper("RULE:^CN=([^,]*),OU=ServiceUsers.*$/$1/L, DEFAULT")
>>> mapper.name("CN=Alice,OU=ServiceUsers,O=Example"), mapper.name("CN=broker,O=Example")
('alice', 'CN=broker,O=Example')
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .errors import SecurityConfigError, SecurityError

ANONYMOUS = "User:ANONYMOUS"
_RFC2253_NAMES = {"2.5.4.3": "CN", "2.5.4.6": "C", "2.5.4.7": "L", "2.5.4.8": "ST",
                  "2.5.4.10": "O", "2.5.4.11": "OU", "2.5.4.9": "STREET",
                  "0.9.2342.19200300.100.1.25": "DC", "0.9.2342.19200300.100.1.1": "UID"}
_ESCAPED = set(',+"\\<>;')
# Kafka's SslPrincipalMapper.RULE_PATTERN and RULE_SPLITTER.
_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*([,\n]\s*|$)")
_PARSER = re.compile(_RULE)


class NoMatchingRule(SecurityError):
    """No ``ssl.principal.mapping.rules`` rule applies to a certificate's subject."""


def _escape(value: str) -> str:
    text = "".join("\\" + c if c in _ESCAPED else c for c in value)
    if text.startswith(("#", " ")):
        text = "\\" + text
    if text.endswith(" ") and not text.endswith("\\ "):
        text = text[:-1] + "\\ "
    return text


def _der_length(size: int) -> bytes:
    if size < 0x80:
        return bytes([size])
    body = size.to_bytes((size.bit_length() + 7) // 8, "big")
    return bytes([0x80 | len(body)]) + body


def _attribute(attribute) -> str:
    oid = attribute.oid.dotted_string
    name = _RFC2253_NAMES.get(oid)
    if name is not None:
        return f"{name}={_escape(attribute.value)}"
    value = attribute.value if isinstance(attribute.value, bytes) \
        else attribute.value.encode("utf-8")
    tag = attribute._type.value  # the ASN.1 string type, as encoded in the certificate
    return f"{oid}=#{(bytes([tag]) + _der_length(len(value)) + value).hex()}"


def distinguished_name(certificate) -> str:
    """The subject of a :class:`cryptography.x509.Certificate`, RFC 2253 (see above).

    >>> from cryptography import x509
    >>> from cryptography.x509.oid import NameOID
    >>> class Certificate:
    ...     subject = x509.Name([x509.NameAttribute(NameOID.COUNTRY_NAME, "US"),
    ...                          x509.NameAttribute(NameOID.ORGANIZATION_NAME, "Acme, Inc"),
    ...                          x509.NameAttribute(NameOID.COMMON_NAME, "alice"),
    ...                          x509.NameAttribute(NameOID.EMAIL_ADDRESS, "a@b.c")])
    >>> distinguished_name(Certificate())
    '1.2.840.113549.1.9.1=#16056140622e63,CN=alice,O=Acme\\\\, Inc,C=US'
    """
    return ",".join("+".join(_attribute(a) for a in rdn)
                    for rdn in reversed(list(certificate.subject.rdns)))


@dataclass(frozen=True)
class _Rule:
    default: bool
    pattern: re.Pattern | None = None
    replacement: str = ""
    case: str = ""

    def apply(self, subject: str) -> str | None:
        if self.default:
            return subject
        match = self.pattern.fullmatch(subject)
        if match is None:
            return None
        name = self.pattern.sub(self.replacement, subject)
        return name.lower() if self.case == "L" else name.upper() if self.case == "U" else name


def _python_replacement(java: str) -> str:
    """A Java ``Matcher.replaceAll`` replacement (``$1``, ``\\$``) for :func:`re.sub`."""
    out, index = [], 0
    while index < len(java):
        char = java[index]
        if char == "\\" and index + 1 < len(java):
            out.append(java[index + 1].replace("\\", "\\\\"))
            index += 2
        elif char == "$" and index + 1 < len(java) and java[index + 1].isdigit():
            end = index + 1
            while end < len(java) and java[end].isdigit():
                end += 1
            out.append(f"\\g<{java[index + 1:end]}>")
            index = end
        else:
            out.append("\\\\" if char == "\\" else char)
            index += 1
    return "".join(out)


def _parse_rules(text: str) -> list[_Rule]:
    rules = []
    for match in _SPLITTER.finditer(text.strip()):
        item = match.group(1)
        if not item:
            continue
        parsed = _PARSER.fullmatch(item)
        if parsed is None or parsed.group(7):
            raise SecurityConfigError("ssl.principal.mapping.rules",
                                      f"invalid rule: {item!r}")
        if parsed.group(1):
            rules.append(_Rule(True))
            continue
        try:
            pattern = re.compile(parsed.group(2))
        except re.error as exc:
            raise SecurityConfigError("ssl.principal.mapping.rules",
                                      f"invalid pattern in {item!r}: {exc}") from None
        rules.append(_Rule(False, pattern, _python_replacement(parsed.group(4)),
                           parsed.group(6)))
    return rules


class PrincipalMapper:
    """``ssl.principal.mapping.rules`` (Kafka's ``SslPrincipalMapper``)."""

    def __init__(self, rules: str | None = "DEFAULT"):
        self.rules = _parse_rules(rules or "DEFAULT")

    def name(self, subject: str) -> str:
        for rule in self.rules:
            name = rule.apply(subject)
            if name is not None:
                return name
        raise NoMatchingRule(f"No rules apply to {subject}, rules {self.rules}")

    def principal(self, certificate) -> str:
        """``User:<name>`` for a client certificate, ``User:ANONYMOUS`` for None."""
        if certificate is None:
            return ANONYMOUS
        return f"User:{self.name(distinguished_name(certificate))}"
