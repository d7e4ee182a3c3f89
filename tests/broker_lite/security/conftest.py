"""Certificates generated once per test module run (never committed)."""

import pytest

from broker_lite.security.testing import TestCertificateAuthority


@pytest.fixture(scope="session")
def ca():
    return TestCertificateAuthority()


@pytest.fixture(scope="session")
def server_certificate(ca):
    return ca.issue("broker", hosts=["localhost", "127.0.0.1"])


@pytest.fixture(scope="session")
def client_certificate(ca):
    return ca.issue("alice", client=True)
