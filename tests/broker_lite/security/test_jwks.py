"""JWKS key sets and JWS signatures: keys read from JSON (RSA, EC; others left out), chosen by
key id and algorithm, RS/PS/ES signatures checked; a set fetched over HTTP or from a file, a
start that cannot fetch it failing, an unknown key id fetching the set again at once, a failed
refresh keeping the keys held."""

import json
import time

import pytest
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from broker_lite.security.jwks import (
    JwksError,
    JwksKeys,
    fetch,
    parse_jwks,
    select_key,
    verify,
)
from broker_lite.security.testing import SigningKey, TestIdentityProvider


@pytest.fixture(scope="module")
def idp():
    with TestIdentityProvider() as provider:
        yield provider


def signed(key: SigningKey, alg: str, data: bytes = b"header.claims") -> tuple[bytes, bytes]:
    return data, key.sign(alg, data)


def test_the_signature_keys_of_a_set_are_read(idp):
    document = {"keys": [
        *idp.jwks()["keys"],
        {"kty": "RSA", "kid": "for-encryption", "use": "enc", "n": "AQAB", "e": "AQAB"},
        {"kty": "oct", "kid": "shared-secret", "k": "c2VjcmV0"},
        {"kty": "EC", "kid": "odd-curve", "crv": "secp256k1", "x": "AA", "y": "AA"},
        {"kty": "RSA", "kid": "broken", "n": "!!"}]}
    keys = parse_jwks(json.dumps(document).encode())
    assert [(k.kid, k.kty, k.crv) for k in keys] == [("rsa-1", "RSA", None),
                                                      ("ec-1", "EC", "P-256")]


@pytest.mark.parametrize("data, error", [
    (b"<html>", "not JSON"), (b"[]", "not a JWKS document"), (b'{"keys": 1}', "not a JWKS")])
def test_a_document_that_is_no_key_set_is_refused(data, error):
    with pytest.raises(JwksError, match=error):
        parse_jwks(data)


def test_keys_are_chosen_by_key_id_and_algorithm(idp):
    keys = parse_jwks(json.dumps(idp.jwks()).encode())
    assert select_key(keys, "RS256", "rsa-1").kid == "rsa-1"
    assert select_key(keys, "PS384", None).kid == "rsa-1"  # no kid: the first that fits
    assert select_key(keys, "ES256", None).kid == "ec-1"
    assert select_key(keys, "ES256", "rsa-1") is None  # an RSA key signs no ES256
    assert select_key(keys, "ES384", "ec-1") is None  # P-256 is ES256's curve only
    assert select_key(keys, "RS256", "unknown") is None


@pytest.mark.parametrize("alg", ["RS256", "RS384", "RS512", "PS256", "PS512", "ES256"])
def test_signatures_are_checked(idp, alg):
    keys = parse_jwks(json.dumps(idp.jwks()).encode())
    signer = idp.keys["ec-1" if alg.startswith("ES") else "rsa-1"]
    key = select_key(keys, alg, signer.kid)
    data, signature = signed(signer, alg)
    assert verify(alg, key, data, signature)
    assert not verify(alg, key, data + b"x", signature)
    assert not verify(alg, key, data, signature[:-1] + bytes([signature[-1] ^ 1]))
    assert not verify(alg, key, data, signature[:-1])
    other = ec.generate_private_key(ec.SECP256R1()) if alg.startswith("ES") \
        else rsa.generate_private_key(65537, 2048)
    assert not verify(alg, key, *signed(SigningKey(signer.kid, other), alg))


def test_a_set_is_fetched_over_http_or_read_from_a_file(idp, tmp_path):
    assert [k.kid for k in fetch(idp.jwks_url)] == ["rsa-1", "ec-1"]
    path = tmp_path / "jwks.json"
    path.write_text(json.dumps(idp.jwks()))
    assert [k.kid for k in fetch(path.as_uri())] == ["rsa-1", "ec-1"]
    with pytest.raises(JwksError, match="answered HTTP 404"):
        fetch(idp.url("/nothing"))
    with pytest.raises(JwksError, match="must be http, https or file"):
        fetch("ftp://idp.example.com/jwks")


def test_a_start_that_cannot_fetch_the_set_fails():
    with TestIdentityProvider() as gone:
        url = gone.jwks_url
    with pytest.raises(JwksError, match=f"cannot read {url}"):
        JwksKeys(url).start()


def wait_for(condition, timeout_s: float = 10) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_an_unknown_key_id_fetches_the_set_again_at_once():
    with TestIdentityProvider() as idp:
        keys = JwksKeys(idp.jwks_url, retry_backoff_ms=10).start()
        try:
            assert idp.jwks_requests == 1
            new = idp.rotate()
            assert keys.find("RS256", new) is None  # refused now, fetched in the background
            wait_for(lambda: keys.find("RS256", new) is not None)
            assert idp.jwks_requests == 2
            assert keys.find("RS256", "never-published") is None
            wait_for(lambda: idp.jwks_requests == 3)
            wait_for(lambda: not keys._wake.is_set())
            keys.find("RS256", "never-published")  # asked again within a minute: no fetch
            assert not keys._wake.is_set()
        finally:
            keys.stop()


def test_a_failed_refresh_keeps_the_keys_held(caplog):
    idp = TestIdentityProvider().start()
    keys = JwksKeys(idp.jwks_url, retry_backoff_ms=10, retry_backoff_max_ms=100).start()
    try:
        idp.stop()
        assert keys.find("RS256", "rotated-in") is None  # a refresh, that fails
        wait_for(lambda: "keeping the keys held" in caplog.text)
        assert [k.kid for k in keys.keys] == ["rsa-1", "ec-1"]
    finally:
        keys.stop()
