"""The feature levels a broker tells clients in ApiVersions (v3+, KIP-584): what it supports,
and the levels finalized for the cluster.

A ZooKeeper-mode Kafka finalizes no feature; here each feature broker_lite implements is listed
with its range, and finalized at the level the broker's settings switch on:

===============  =========  ==================================================================
feature          levels     finalized level
===============  =========  ==================================================================
group.version    0-1        1 when ``group.coordinator.rebalance.protocols`` has ``consumer``
                            (the consumer group protocol, KIP-848), else 0
share.version    0-1        1 with ``group.share.enable=true`` (share groups, KIP-932), else 0
===============  =========  ==================================================================

A finalized level of 0 is not listed, as Kafka leaves it out. ApiVersions v3 cannot carry a
supported range starting at 0 (KAFKA-17011, fixed by v4): such a feature is left out of v3's
``SupportedFeatures``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Feature:
    name: str
    min_version: int
    max_version: int
    level: int  # finalized


def features(config) -> list[Feature]:
    return [
        Feature("group.version", 0, 1,
                1 if "consumer" in config["group.coordinator.rebalance.protocols"] else 0),
        Feature("share.version", 0, 1, 1 if config["group.share.enable"] else 0),
    ]


def api_versions_fields(listed: Sequence[Feature], version: int) -> dict:
    """The feature fields of an ApiVersions response of ``version`` for the features
    ``listed`` (:func:`features`)."""
    if version < 3:
        return {}
    finalized = [f for f in listed if f.level > 0]
    return {
        "supported_features": [{"name": f.name, "min_version": f.min_version,
                                 "max_version": f.max_version}
                                for f in listed if version >= 4 or f.min_version > 0],
        "finalized_features_epoch": 0 if finalized else -1,
        "finalized_features": [{"name": f.name, "max_version_level": f.level,
                                "min_version_level": f.level} for f in finalized],
    }
