"""Test tiers: markers that say what a test needs running, so a run can leave out the slow parts.

============  ==================================================================================
marker        the test ...
============  ==================================================================================
zookeeper     talks to a real ZooKeeper server (the embedded one starts once per session)
broker        starts or uses a broker_lite broker (in this process or as a child process)
spark         uses a SparkSession (a JVM, and Python workers)
slow          is a benchmark, runs the demo or a notebook, or loops over crashes and restarts
============  ==================================================================================

A fixture that starts one of these says so with :func:`needs`; every test whose fixtures
include it, directly or through other fixtures, gets the markers (:func:`mark_by_fixtures`,
which the kpy plugin runs on every collected test). ``slow`` is set by hand
(``pytestmark = pytest.mark.slow``). A fast loop then runs, say::

    pytest -m "not slow and not spark and not broker"

With the ini option ``kpy_enforce_tiers = true`` (:func:`enforce`), a test that starts a
broker_lite broker, an embedded ZooKeeper or a SparkSession in the test process without the
matching marker fails with :class:`TierError`, so a fast tier cannot slow down unnoticed.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable
from typing import TypeVar

import pytest

from broker_lite.common.tiers import TIERS, declared_tiers
from broker_lite.common.tiers import needs as needs  # fixtures of kpy's users declare with it too

F = TypeVar("F", bound=Callable)


def register(config: pytest.Config) -> None:
    """Declare the tier markers (so ``--strict-markers`` accepts them and ``--markers`` lists
    them)."""
    for name, meaning in TIERS.items():
        config.addinivalue_line("markers", f"{name}: {meaning}")


def tiers_of(item: pytest.Item) -> set[str]:
    """The tiers that the fixtures in ``item``'s closure declare."""
    info = getattr(item, "_fixtureinfo", None)  # doctests and other non-function items have none
    found: set[str] = set()
    for definitions in getattr(info, "name2fixturedefs", {}).values():
        found.update(declared_tiers(definitions[-1].func))  # the one in effect
    return found


def mark_by_fixtures(items: Iterable[pytest.Item]) -> None:
    """Add to each collected item the tier markers its fixtures declare."""
    for item in items:
        have = {mark.name for mark in item.iter_markers()}
        for tier in sorted(tiers_of(item) - have):
            item.add_marker(tier)


# -- enforcement ----------------------------------------------------------------------------------

#: The test being set up, run or torn down (kept by the kpy plugin).
running: list[pytest.Item] = []


class TierError(Exception):
    """A test started something of a tier it is not marked with."""


def guard(tier: str, what: str, start: F) -> F:
    """``start`` made to fail, while a test without the ``tier`` marker runs."""
    @functools.wraps(start)
    def guarded(*args, **kwargs):
        if running and running[-1].get_closest_marker(tier) is None:
            raise TierError(f"{running[-1].nodeid} starts {what} but is not marked {tier!r}: "
                            f"use a fixture declared with @needs({tier!r}), or mark the test")
        return start(*args, **kwargs)
    return guarded  # type: ignore[return-value]


_enforced = False


def enforce() -> None:
    """Guard the starts of brokers, the embedded ZooKeeper and SparkSessions (once per
    process)."""
    global _enforced
    if _enforced:
        return
    from pyspark.sql import SparkSession

    from broker_lite.server.broker import Broker
    from broker_lite.zk.server import EmbeddedZooKeeper

    Broker.start = guard("broker", "a broker_lite broker", Broker.start)
    EmbeddedZooKeeper.start = guard("zookeeper", "a ZooKeeper server", EmbeddedZooKeeper.start)
    SparkSession.Builder.getOrCreate = guard("spark", "a SparkSession",
                                             SparkSession.Builder.getOrCreate)
    _enforced = True
