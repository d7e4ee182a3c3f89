"""Connection limits: counting per address and in total, overrides, and waiting for a slot."""

import threading

import pytest

from broker_lite.config.parsers import ConfigError
from broker_lite.server.network.quotas import ConnectionQuotas, TooManyConnections, parse_overrides


def test_overrides_use_kafkas_syntax_and_resolve_hosts():
    assert parse_overrides("") == {}
    assert parse_overrides("localhost:5, 127.0.0.3:0,[::1]:7") == {
        "127.0.0.1": 5, "127.0.0.3": 0, "::1": 7}


@pytest.mark.parametrize("text", ["127.0.0.1", "127.0.0.1:x", ":3", "127.0.0.1:-1"])
def test_malformed_overrides_name_the_setting(text):
    with pytest.raises(ConfigError, match=r"max\.connections\.per\.ip\.overrides"):
        parse_overrides(text)


def test_a_zero_limit_per_address_needs_overrides():
    with pytest.raises(ConfigError, match=r"max\.connections\.per\.ip is 0"):
        ConnectionQuotas(10, 0)
    quotas = ConnectionQuotas(10, 0, {"127.0.0.2": 1})
    quotas.inc("127.0.0.2")
    with pytest.raises(TooManyConnections, match="maximum = 0"):
        quotas.inc("127.0.0.1")


def test_closing_frees_the_address_and_the_broker_slot():
    quotas = ConnectionQuotas(2, 1)
    quotas.inc("127.0.0.1")
    with pytest.raises(TooManyConnections, match=r"/127\.0\.0\.1 \(maximum = 1\)"):
        quotas.inc("127.0.0.1")
    quotas.inc("127.0.0.2")
    assert quotas.total == 2 and not quotas.wait_for_slot(0.05)
    released = threading.Timer(0.1, quotas.dec, ["127.0.0.1"])
    released.start()
    assert quotas.wait_for_slot(5)
    assert quotas.count("127.0.0.1") == 0 and quotas.total == 1
    quotas.inc("127.0.0.1")
