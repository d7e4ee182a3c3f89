"""``sasl.jaas.config`` in Kafka's JAAS syntax: the three login modules, quoting, and errors
that never show the text."""

import pytest

from broker_lite.security import JaasConfigError
from broker_lite.security.jaas import parse_jaas_config

SCRAM = "org.apache.kafka.common.security.scram.ScramLoginModule"


@pytest.mark.parametrize("text, module, options", [
    ('org.apache.kafka.common.security.plain.PlainLoginModule required username="a" '
     'password="p";', "PlainLoginModule", {"username": "a", "password": "p"}),
    (f'{SCRAM} required\n  username="a b"\n  password="q\\"uo;te\\\\";',
     "ScramLoginModule", {"username": "a b", "password": 'q"uo;te\\'}),
    ('kafkashaded.org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule '
     'required unsecuredLoginStringClaim_sub=alice;',
     "OAuthBearerLoginModule", {"unsecuredLoginStringClaim_sub": "alice"}),
    (f"{SCRAM} Optional ;", "ScramLoginModule", {}),
])
def test_entries_parse(text, module, options):
    entry = parse_jaas_config(text)
    assert (entry.module, entry.options) == (module, options)


@pytest.mark.parametrize("text, error", [
    ("", "empty"),
    (f'{SCRAM} required username="a" password="topsecret"', "expected ';'"),
    (f'{SCRAM} required username="a" password="topsecret;', "no closing quote"),
    (f'{SCRAM} mandatory password="topsecret";', "invalid control flag 'mandatory'"),
    (f'{SCRAM} required password "topsecret";', "expected '=' after option 'password'"),
    (f'{SCRAM} required password="topsecret" password="topsecret";', "given twice"),
    (f'{SCRAM} required password="topsecret"; {SCRAM} required;', "one login module entry"),
    ('com.example.MyLoginModule required password="topsecret";', "unknown login module"),
    ('com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true;', "Kerberos"),
])
def test_malformed_text_fails_clearly_without_the_secret(text, error):
    with pytest.raises(JaasConfigError, match=error) as failure:
        parse_jaas_config(text)
    assert "topsecret" not in str(failure.value)
    assert str(failure.value).startswith("sasl.jaas.config: ")
