"""Test tiers: what a test needs running (a ZooKeeper server, a broker, Spark), declared on the
fixtures that start it, so that a run can leave the slow parts out. The markers, their marking of
collected tests and the check that a test starts nothing of a tier it is not marked with are the
kpy pytest plugin's (:mod:`kspark.testing.tiers`); the broker's own test support declares its
fixtures with :func:`needs` from here, below everything that starts them.

>>> @needs("zookeeper")
... def zookeeper_fixture(): ...
>>> declared_tiers(zookeeper_fixture)
('zookeeper',)
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

TIERS = {
    "zookeeper": "talks to a real ZooKeeper server",
    "broker": "starts or uses a broker_lite broker",
    "spark": "uses a SparkSession",
    "slow": "a benchmark, the demo, a notebook, or a loop of crashes and restarts",
}

_ATTRIBUTE = "kpy_tiers"
F = TypeVar("F", bound=Callable)


def needs(*tiers: str) -> Callable[[F], F]:
    """Declare what a fixture function starts; put it under ``@pytest.fixture``::

        @pytest.fixture
        @needs("broker", "zookeeper")
        def my_cluster(...): ...
    """
    unknown = set(tiers) - TIERS.keys()
    if unknown:
        raise ValueError(f"unknown tier {sorted(unknown)[0]!r}; known: {', '.join(TIERS)}")

    def declare(func: F) -> F:
        setattr(func, _ATTRIBUTE, (*getattr(func, _ATTRIBUTE, ()), *tiers))
        return func

    return declare


def declared_tiers(func: Callable) -> tuple[str, ...]:
    """The tiers that :func:`needs` declared on ``func``."""
    return getattr(func, _ATTRIBUTE, ())
