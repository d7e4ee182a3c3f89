"""The principal of a TLS client: its certificate's subject written as Java's RFC 2253 form,
mapped by ssl.principal.mapping.rules as Kafka's SslPrincipalMapper (KIP-371)."""

import pytest
from cryptography import x509
from cryptography.x509.oid import NameOID

from broker_lite.security import SecurityConfigError
from broker_lite.security.principal import (
    ANONYMOUS,
    NoMatchingRule,
    PrincipalMapper,
    distinguished_name,
)


class Certificate:
    def __init__(self, *attributes):
        self.subject = x509.Name([x509.NameAttribute(oid, value) for oid, value in attributes])


ALICE = Certificate((NameOID.COUNTRY_NAME, "US"), (NameOID.ORGANIZATION_NAME, "Example"),
                    (NameOID.ORGANIZATIONAL_UNIT_NAME, "ServiceUsers"),
                    (NameOID.COMMON_NAME, "alice"))


@pytest.mark.parametrize("certificate, expected", [
    (ALICE, "CN=alice,OU=ServiceUsers,O=Example,C=US"),
    (Certificate((NameOID.COMMON_NAME, "a,b+c\"d\\e<f>g;h")), r'CN=a\,b\+c\"d\\e\<f\>g\;h'),
    (Certificate((NameOID.COMMON_NAME, "#lead ")), r"CN=\#lead\ "),
    (Certificate((NameOID.DOMAIN_COMPONENT, "example"), (NameOID.USER_ID, "u1"),
                 (NameOID.LOCALITY_NAME, "Paris"), (NameOID.STATE_OR_PROVINCE_NAME, "IDF"),
                 (NameOID.STREET_ADDRESS, "1 rue")),
     "STREET=1 rue,ST=IDF,L=Paris,UID=u1,DC=example"),
    (Certificate((NameOID.SERIAL_NUMBER, "42")), "2.5.4.5=#13023432"),
])
def test_the_subject_is_written_as_javas_rfc2253(certificate, expected):
    assert distinguished_name(certificate) == expected


@pytest.mark.parametrize("rules, subject, name", [
    ("DEFAULT", "CN=alice,OU=ServiceUsers,O=Example", "CN=alice,OU=ServiceUsers,O=Example"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/", "CN=alice,OU=ServiceUsers,O=Example", "alice"),
    ("RULE:^CN=(.*?),OU=(.*?),O=(.*?)$/$1@$3/L,DEFAULT", "CN=Alice,OU=x,O=Example.COM",
     "alice@example.com"),
    ("RULE:^CN=(.*?),O=(.*?)$/$1/U", "CN=alice,O=x", "ALICE"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/,\nDEFAULT", "CN=bob,O=x", "CN=bob,O=x"),
    ("RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/L", "CN=Broker.Example,O=x", "broker.example"),
    ("RULE:^CN=(.*)$/\\$$1/", "CN=alice", "$alice"),
])
def test_mapping_rules_pick_the_first_match(rules, subject, name):
    assert PrincipalMapper(rules).name(subject) == name


def test_a_subject_no_rule_matches_is_refused():
    with pytest.raises(NoMatchingRule, match="No rules apply to CN=bob"):
        PrincipalMapper("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/").name("CN=bob")


@pytest.mark.parametrize("rules", ["RULE:^CN=(.*$/$1/", "NOT A RULE", "RULE:missing/slash"])
def test_malformed_rules_name_the_setting(rules):
    with pytest.raises(SecurityConfigError, match=r"ssl\.principal\.mapping\.rules"):
        PrincipalMapper(rules)


def test_the_principal_of_a_certificate_or_of_none():
    mapper = PrincipalMapper("DEFAULT")
    assert mapper.principal(ALICE) == "User:CN=alice,OU=ServiceUsers,O=Example,C=US"
    assert mapper.principal(None) == ANONYMOUS == "User:ANONYMOUS"
